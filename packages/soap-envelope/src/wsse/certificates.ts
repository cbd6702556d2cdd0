import { type KeyObject, X509Certificate } from "node:crypto";
import { optionError } from "../options.js";
import { trimXml } from "../xml/space.js";
import { wsseFault } from "./faults.js";
import type { ResolvedSignature } from "./resolved.js";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** `wsSecurity.signature.trustedCertificates`, each read once, at construction. */
export function trustedCertificates(value: unknown): X509Certificate[] {
  const option = "wsSecurity.signature.trustedCertificates";
  const accepted = "a non-empty list of certificates (PEM text, DER bytes or X509Certificate)";
  if (!Array.isArray(value) || value.length === 0) throw optionError(option, value, accepted);
  const certificates: X509Certificate[] = [];
  for (const item of value) {
    if (item instanceof X509Certificate) {
      certificates.push(item);
      continue;
    }
    try {
      if (typeof item === "string") {
        const pems = item.match(PEM_CERTIFICATE);
        if (pems === null) throw new Error("no PEM certificate");
        for (const pem of pems) certificates.push(new X509Certificate(pem));
      } else if (item instanceof Uint8Array) certificates.push(new X509Certificate(item));
      else throw new Error("not a certificate");
    } catch {
      throw optionError(option, item, accepted);
    }
  }
  return certificates;
}

/** A certificate as a service knows it once read and its trust decided. */
export interface KnownCertificate {
  certificate: X509Certificate;
  key: KeyObject;
  validFrom: number;
  validTo: number;
  /** The trusted certificate it equals or that issued it; undefined when none did. */
  anchor: KnownCertificate | undefined;
}

/** Most certificates a service remembers (each at most `maxTokenBytes` of DER). */
const KNOWN_CERTIFICATES = 64;

/** Per service (its resolved options): the trusted certificates, and the certificates sent of late. */
const known = new WeakMap<
  ResolvedSignature,
  { trusted: KnownCertificate[]; sent: Map<string, KnownCertificate> }
>();

export function knownOf(options: ResolvedSignature) {
  let entry = known.get(options);
  if (entry === undefined) {
    const trusted = options.trusted.map(knownCertificate);
    for (const t of trusted) t.anchor = t;
    entry = { trusted, sent: new Map() };
    known.set(options, entry);
  }
  return entry;
}

/** `certificate` read once: its key and validity dates; no anchor yet. */
function knownCertificate(certificate: X509Certificate): KnownCertificate {
  return {
    certificate,
    key: certificate.publicKey,
    validFrom: Date.parse(certificate.validFrom),
    validTo: Date.parse(certificate.validTo),
    anchor: undefined,
  };
}

/**
 * The certificate of a token's base64 `text`, read, and its trusted anchor found, once per service
 * for the last {@link KNOWN_CERTIFICATES} certificates sent.
 */
export function certificate(text: string, options: ResolvedSignature): KnownCertificate {
  const { trusted, sent } = knownOf(options);
  const kept = sent.get(text);
  if (kept !== undefined) return kept;
  const der = base64(trimXml(text), options.maxTokenBytes, "the X.509 certificate");
  let read: X509Certificate;
  try {
    read = new X509Certificate(der);
  } catch {
    throw wsseFault("InvalidSecurityToken", "the X.509 certificate cannot be read");
  }
  const entry = knownCertificate(read);
  entry.anchor =
    trusted.find((t) => t.certificate.raw.equals(read.raw)) ??
    trusted.find((t) => t.certificate.ca && read.checkIssued(t.certificate) && read.verify(t.key));
  if (sent.size >= KNOWN_CERTIFICATES) sent.delete(sent.keys().next().value as string);
  sent.set(text, entry);
  return entry;
}

/** The certificate equals a trusted one, or a trusted CA certificate issued it; both valid now. */
export function trust(cert: KnownCertificate, now: number): void {
  const valid = (c: KnownCertificate) => c.validFrom <= now && now <= c.validTo;
  if (!valid(cert)) throw wsseFault("InvalidSecurityToken", "the certificate is not valid now");
  if (cert.anchor === undefined || !valid(cert.anchor))
    throw wsseFault("FailedAuthentication", "the signing certificate is not trusted");
}

/** `text` as base64 of at most `maxBytes` bytes, whitespace aside; `what` names it in the fault. */
export function base64(text: string, maxBytes: number, what: string): Buffer {
  const compact = text.replace(/[\t\n\r ]+/g, "");
  if (compact.length > Math.ceil(maxBytes / 3) * 4 || compact.length % 4 !== 0 || !BASE64.test(compact)) {
    throw wsseFault("InvalidSecurity", `${what} is not base64 of at most ${maxBytes} bytes`);
  }
  return Buffer.from(compact, "base64");
}
