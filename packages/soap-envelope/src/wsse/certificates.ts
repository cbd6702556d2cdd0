import { X509Certificate } from "node:crypto";
import { optionError } from "../options.js";

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
