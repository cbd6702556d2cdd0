import type { X509Certificate } from "node:crypto";
import { optionError as codedOptionError } from "@svc/kernel/internal";
import { checkObject, optionError } from "../options.js";
import { host } from "../platform/host.js";
import type { ResolvedSignature, ResolvedWsSecurity } from "./resolved.js";

export type { ResolvedSignature, ResolvedWsSecurity } from "./resolved.js";

/**
 * WS-Security processing of the `wsse:Security` header block targeted at this node: its
 * `wsu:Timestamp` (WS-Security 1.1 §10) and an X.509 signature over the message (§8, XML-DSig).
 * Both are checked before the `authenticate` hook runs and before the Body is decoded.
 *
 * @example
 * wsSecurity: {
 *   timestamp: { clockSkewMs: 60_000 },
 *   signature: { trustedCertificates: [readFileSync("partners-ca.pem", "utf8")] },
 * }
 * @see https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-SOAPMessageSecurity-v1.1.1-os.html
 */
export interface WsSecurityOptions {
  /**
   * The `wsu:Timestamp` check (§10); `false` to leave timestamps unread.
   * @default {} (a Timestamp is required, 5 minutes of skew, 5 minutes of age)
   */
  timestamp?: WsTimestampOptions | false;
  /**
   * Refusing a message already accepted (§13): each accepted message's key (the digest of its
   * canonical `ds:SignedInfo`, what its signature covers, whatever `ds:SignatureValue` it carries;
   * the digest of its bytes when unsigned) is kept until its Timestamp would be refused anyway,
   * so a copy sent again within that window is refused with `wsse:InvalidSecurity`.
   * Needs `timestamp`. `false` to turn it off (a replay is then accepted while fresh).
   * @default { maxEntries: 10000 }
   */
  replay?: WsReplayOptions | false;
  /**
   * The X.509 signature check (XML-DSig with exclusive C14N); without it, signatures are not
   * checked (a `ds:Signature` in the header is then ignored, as any unknown child).
   * @default undefined
   */
  signature?: WsSignatureOptions;
}

/** Options of the `wsu:Timestamp` check. */
export interface WsTimestampOptions {
  /**
   * Whether a message without a `wsu:Timestamp` is refused (`wsse:InvalidSecurity`).
   * @default true
   */
  required?: boolean;
  /**
   * How far the sender's clock may be off, in ms: `Created` up to this far in the future and
   * `Expires` up to this far in the past are accepted.
   * @default 300000
   */
  clockSkewMs?: number;
  /**
   * The oldest `Created` accepted, in ms before now (plus the skew), whatever `Expires` says:
   * also how long a message is remembered for replay detection.
   * @default 300000
   */
  maxAgeMs?: number;
  /**
   * Whether a Timestamp without `Expires` is refused.
   * @default false
   */
  requireExpires?: boolean;
}

/** Options of replay detection. */
export interface WsReplayOptions {
  /**
   * Most messages remembered at once (about 150 bytes each). When that many unexpired messages
   * are remembered, another message is refused with a Receiver fault (503) rather than forgetting
   * one that could then be replayed.
   * @default 10000
   */
  maxEntries?: number;
}

/** Options of the X.509 signature check. */
export interface WsSignatureOptions {
  /**
   * The certificates a signing certificate must equal or be issued by (a CA certificate with
   * `basicConstraints` CA), as PEM text (one or several), DER bytes or `X509Certificate`s.
   */
  trustedCertificates: ReadonlyArray<string | Uint8Array | X509Certificate>;
  /**
   * Whether a message without a signature is refused (`wsse:InvalidSecurity`).
   * @default true
   */
  required?: boolean;
  /**
   * What the signature must cover: `"Body"` (the envelope's own `env:Body`), `"Timestamp"` (the
   * `wsu:Timestamp` of the processed `wsse:Security` block) and header blocks by Clark name
   * (`"{http://www.w3.org/2005/08/addressing}To"`), each of which, when present, must be signed.
   * @default ["Body", "Timestamp"]
   */
  signedParts?: readonly string[];
  /**
   * Most `ds:Reference`s in `ds:SignedInfo`.
   * @default 16
   */
  maxReferences?: number;
  /**
   * Most `ds:Transform`s in one reference.
   * @default 2
   */
  maxTransforms?: number;
  /**
   * Largest `ds:SignatureValue`, in bytes once decoded (RSA 4096 is 512; ECDSA P-521 132).
   * @default 1024
   */
  maxSignatureBytes?: number;
  /**
   * Largest `wsse:BinarySecurityToken` certificate, in bytes once decoded.
   * @default 16384
   */
  maxTokenBytes?: number;
}

const CLARK_NAME = /^\{[^{}]+\}[^{}\s]+$/;

/** Checks the `wsSecurity` option once, at construction; undefined when not given. */
export function resolveWsSecurity(value: unknown): ResolvedWsSecurity | undefined {
  if (value === undefined) return undefined;
  checkObject(value, "wsSecurity", ["timestamp", "replay", "signature"]);
  const options = value as WsSecurityOptions;
  let timestamp: ResolvedWsSecurity["timestamp"];
  if (options.timestamp !== false) {
    const t = options.timestamp;
    checkObject(t, "wsSecurity.timestamp", ["required", "clockSkewMs", "maxAgeMs", "requireExpires"]);
    timestamp = {
      required: flag(t?.required, "wsSecurity.timestamp.required", true),
      clockSkewMs: count(t?.clockSkewMs, "wsSecurity.timestamp.clockSkewMs", 300_000, 0),
      maxAgeMs: count(t?.maxAgeMs, "wsSecurity.timestamp.maxAgeMs", 300_000, 1),
      requireExpires: flag(t?.requireExpires, "wsSecurity.timestamp.requireExpires", false),
    };
  }
  let replay: ResolvedWsSecurity["replay"];
  if (options.replay !== false) {
    checkObject(options.replay, "wsSecurity.replay", ["maxEntries"]);
    if (options.replay !== undefined && timestamp === undefined) {
      // The window is the timestamp's: without one a message would be remembered forever.
      throw optionError("wsSecurity.replay", options.replay, "false or left out when timestamp is false");
    }
    if (timestamp !== undefined) {
      replay = { maxEntries: count(options.replay?.maxEntries, "wsSecurity.replay.maxEntries", 10_000, 1) };
    }
  }
  return { timestamp, replay, signature: resolveSignature(options.signature) };
}

function resolveSignature(value: unknown): ResolvedSignature | undefined {
  if (value === undefined) return undefined;
  const signatures = host.signatures;
  if (signatures === undefined) {
    // Refused here rather than per request: every message would otherwise be refused.
    throw codedOptionError(
      "soap-envelope",
      "wsSecurity.signature",
      "@svc/soap-envelope: wsSecurity.signature needs X.509 signature verification (node:crypto's X509Certificate and xml-crypto's exclusive C14N), which this build, for workerd, workers and browsers, does not have: verify signatures on Node.js, Bun or Deno (@svc/soap-envelope/node, /express, /fastify, or /fetch there), or leave signature out (timestamp and replay are checked here)",
    );
  }
  const keys = [
    "trustedCertificates",
    "required",
    "signedParts",
    "maxReferences",
    "maxTransforms",
    "maxSignatureBytes",
    "maxTokenBytes",
  ];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw optionError("wsSecurity.signature", value, `an object with ${keys.join(", ")}`);
  }
  checkObject(value, "wsSecurity.signature", keys);
  const options = value as WsSignatureOptions;
  const signedParts = options.signedParts ?? ["Body", "Timestamp"];
  if (
    !Array.isArray(signedParts) ||
    !signedParts.every(
      (p) => p === "Body" || p === "Timestamp" || (typeof p === "string" && CLARK_NAME.test(p)),
    )
  ) {
    throw optionError(
      "wsSecurity.signature.signedParts",
      options.signedParts,
      'a list of "Body", "Timestamp" and header block names as "{namespace}local"',
    );
  }
  return {
    trusted: signatures.trustedCertificates(options.trustedCertificates),
    required: flag(options.required, "wsSecurity.signature.required", true),
    body: signedParts.includes("Body"),
    timestamp: signedParts.includes("Timestamp"),
    headers: signedParts.filter((p) => p !== "Body" && p !== "Timestamp"),
    maxReferences: count(options.maxReferences, "wsSecurity.signature.maxReferences", 16, 1),
    maxTransforms: count(options.maxTransforms, "wsSecurity.signature.maxTransforms", 2, 1),
    maxSignatureBytes: count(options.maxSignatureBytes, "wsSecurity.signature.maxSignatureBytes", 1024, 1),
    maxTokenBytes: count(options.maxTokenBytes, "wsSecurity.signature.maxTokenBytes", 16_384, 1),
  };
}

function flag(value: unknown, option: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw optionError(option, value, "true or false");
  return value;
}

function count(value: unknown, option: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < min) {
    throw optionError(option, value, min === 0 ? "a non-negative integer" : "a positive integer");
  }
  return value as number;
}
