import { digest } from "@svc/kernel/internal";
import { WSSE_NS } from "../envelope/fault.js";
import { host } from "../platform/host.js";
import { readBytes, type XmlElement, type XmlSource } from "../xml/reader.js";
import { wsseFault } from "./faults.js";
import { ReplayCache } from "./replay.js";
import type { ResolvedWsSecurity } from "./resolved.js";
import type { WsSignature } from "./signature.js";
import { acceptedUntil, checkTimestamp, type WsTimestamp } from "./timestamp.js";

/**
 * What the `wsSecurity` checks established, in `context.security` for the `authenticate` and
 * `authorize` hooks and the handlers.
 */
export interface WsSecurityResult {
  /** The checked `wsu:Timestamp`; undefined when there was none (and none was required). */
  timestamp: WsTimestamp | undefined;
  /** The verified signature; undefined when unsigned (and no signature was required). */
  signature: WsSignature | undefined;
}

/** The resolved option and its replay cache: one per service. */
export interface WsSecurityProcessor {
  options: ResolvedWsSecurity;
  replay: ReplayCache | undefined;
}

export function wsSecurityProcessor(options: ResolvedWsSecurity): WsSecurityProcessor {
  return { options, replay: options.replay && new ReplayCache(options.replay.maxEntries) };
}

/** A header block of the message, and whether it is targeted at this node (SOAP 1.2 Part 1 §2.2). */
export interface SecurityBlock {
  element: XmlElement;
  targeted: boolean;
}

/**
 * WS-Security 1.1 §6: the one `wsse:Security` block targeted at this node ("MUST NOT ... more
 * than one ... targeted at the same receiver"), its Timestamp (§10), then its signature (§8),
 * then replay (§13). Throws the §12 fault of the first check that fails.
 * @see https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-SOAPMessageSecurity-v1.1.1-os.html
 */
export function processSecurity(
  processor: WsSecurityProcessor,
  message: { raw: string; envelopeNs: string; blocks: readonly SecurityBlock[]; maxDepth: number },
): WsSecurityResult {
  const { options, replay } = processor;
  const now = Date.now();
  const isSecurity = (b: SecurityBlock) =>
    b.targeted && b.element.namespace === WSSE_NS && b.element.localName === "Security";
  const found = message.blocks.filter(isSecurity);
  if (found.length > 1)
    throw wsseFault("InvalidSecurity", "more than one wsse:Security block for this node (§6)");
  const security = found[0]?.element;
  const checked = options.timestamp && checkTimestamp(security, options.timestamp, now);
  // `options.signature` is only set where the host verifies signatures (resolveWsSecurity).
  const verifier = host.signatures;
  const plan = options.signature && verifier?.readSignature(security, options.signature, now);
  // WS-Security 1.1 §13: a signed message is known by its canonical ds:SignedInfo (verifySignature
  // asks before the SignatureValue is verified), an unsigned one by its bytes.
  const cache = replay !== undefined && checked ? replay : undefined;
  let key = cache && !plan ? `m:${digest("sha256", message.raw, "base64")}` : undefined;
  if (key !== undefined) cache?.check(key, now);
  let signature: WsSignature | undefined;
  if (plan && options.signature && verifier) {
    const sign = options.signature;
    const names = new Set(sign.headers);
    const verified = verifier.verifySignature(
      plan,
      {
        raw: message.raw,
        envelopeNs: message.envelopeNs,
        securityIndex: message.blocks.findIndex(isSecurity),
        blocks: message.blocks.map((b) => b.element),
        mustSign: (i) => {
          const b = message.blocks[i];
          return b?.targeted === true && names.has(`{${b.element.namespace}}${b.element.localName}`);
        },
        maxDepth: message.maxDepth,
        checkReplay: cache && ((signedInfo) => cache.check(`s:${signedInfo}`, now)),
      },
      sign,
    );
    signature = verified.signature;
    if (cache) key = `s:${verified.signedInfo}`;
  }
  if (key !== undefined && checked && options.timestamp) {
    cache?.remember(key, acceptedUntil(checked.timestamp, options.timestamp), now);
  }
  return { timestamp: checked ? checked.timestamp : undefined, signature };
}

/**
 * The whole message, as bytes for the parser and as text for the signature check: read within
 * `limits.maxBytes` and `bodyTimeoutMs` as the parser reads it (an {@link XmlError} past them).
 */
export async function wholeMessage(
  body: XmlSource,
  charset: string | undefined,
  config: { limits: { maxBytes: number }; bodyTimeoutMs: number },
): Promise<{ body: XmlSource; raw: string }> {
  if (typeof body === "string") return { body, raw: body };
  const bytes = await readBytes(body, config.limits.maxBytes, config.bodyTimeoutMs);
  return { body: bytes, raw: messageText(bytes, charset) };
}

/** The message's text from its bytes: the BOM, else the `charset` parameter, else UTF-8. */
export function messageText(bytes: Uint8Array, charset: string | undefined): string {
  let encoding = "utf-8";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) encoding = "utf-16be";
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) encoding = "utf-16le";
  else if (charset !== undefined && /^utf-16(be|le)?$/i.test(charset)) encoding = charset.toLowerCase();
  return new TextDecoder(encoding === "utf-16" ? "utf-16be" : encoding).decode(bytes);
}
