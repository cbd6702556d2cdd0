// What a node-soap server needs around xml-crypto to accept only signed requests, since node-soap
// checks no signature of a request it serves: the WS-Security checks of the signed SOAP scenarios
// (`BENCH_WSSE=signature`), written as a team would, in front of node-soap's own listener. The
// same checks as @svc/soap-envelope's `wsSecurity` (with the replay cache off, as here): a
// BinarySecurityToken issued by the trusted CA, the XML-DSig signature over exclusive C14N
// (xml-crypto), the envelope's Body and the Timestamp among the signed references, and the
// Timestamp's window.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DOMParser } from "@xmldom/xmldom";
import { SignedXml } from "xml-crypto";
import { WSSE_FIXTURES, WSSE_MAX_AGE_MS } from "../fixtures.mjs";

const ENV = "http://www.w3.org/2003/05/soap-envelope";
const WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
const WSU = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
const DS = "http://www.w3.org/2000/09/xmldsig#";
const SKEW_MS = 300_000;
const MAX_BYTES = 65_536;

const ca = new X509Certificate(readFileSync(join(WSSE_FIXTURES, "ca.pem")));

/** The one child element of `parent` named `{ns}local`, or undefined (none, or more than one). */
function only(parent, ns, local) {
  let found;
  for (let node = parent?.firstChild; node; node = node.nextSibling) {
    if (node.nodeType !== 1 || node.namespaceURI !== ns || node.localName !== local) continue;
    if (found !== undefined) return undefined;
    found = node;
  }
  return found;
}

/** Why `xml` is not a request signed by a trusted partner, or undefined when it is. */
export function refusal(xml) {
  const doc = new DOMParser({ onError: () => {} }).parseFromString(xml, "text/xml");
  const envelope = doc.documentElement;
  if (envelope?.namespaceURI !== ENV || envelope.localName !== "Envelope") return "not a SOAP 1.2 envelope";
  const security = only(only(envelope, ENV, "Header"), WSSE, "Security");
  const body = only(envelope, ENV, "Body");
  const timestamp = only(security, WSU, "Timestamp");
  const token = only(security, WSSE, "BinarySecurityToken");
  const signature = only(security, DS, "Signature");
  if (!body || !timestamp || !token || !signature) return "no signed Security header";

  const created = Date.parse(only(timestamp, WSU, "Created")?.textContent ?? "");
  const expires = Date.parse(only(timestamp, WSU, "Expires")?.textContent ?? "");
  const now = Date.now();
  if (!(created <= now + SKEW_MS && created >= now - WSSE_MAX_AGE_MS - SKEW_MS)) return "stale Timestamp";
  if (!(expires >= now - SKEW_MS)) return "expired Timestamp";

  let certificate;
  try {
    certificate = new X509Certificate(Buffer.from(token.textContent.trim(), "base64"));
  } catch {
    return "unreadable BinarySecurityToken";
  }
  if (!certificate.checkIssued(ca) || !certificate.verify(ca.publicKey)) return "untrusted certificate";
  if (Date.parse(certificate.validFrom) > now || Date.parse(certificate.validTo) < now)
    return "certificate out of its validity";

  const signed = new SignedXml({ publicCert: certificate.publicKey, idMode: "wssecurity" });
  try {
    signed.loadSignature(signature);
    if (!signed.checkSignature(xml)) return "bad signature";
  } catch {
    return "bad signature";
  }
  // Signature wrapping: the Body and the Timestamp processed must be the ones signed.
  const uris = new Set(signed.getReferences().map((reference) => reference.uri));
  for (const part of [body, timestamp]) {
    const id = part.getAttributeNS(WSU, "Id");
    if (!id || !uris.has(`#${id}`)) return `${part.localName} not signed`;
  }
  return undefined;
}

const FAULT = Buffer.from(
  `<?xml version="1.0" encoding="utf-8"?><env:Envelope xmlns:env="${ENV}"><env:Body><env:Fault>` +
    `<env:Code><env:Value>env:Sender</env:Value><env:Subcode><env:Value xmlns:wsse="${WSSE}">wsse:InvalidSecurity</env:Value></env:Subcode></env:Code>` +
    '<env:Reason><env:Text xml:lang="en">An error was discovered processing the Security header</env:Text></env:Reason>' +
    "</env:Fault></env:Body></env:Envelope>",
);

/**
 * `listener` (node-soap's request listener) behind the checks: the body is read (at most 64 KiB),
 * checked, and handed on as `req.body`, which node-soap reads instead of the stream.
 */
export function verifyingListener(path, listener) {
  return (req, res) => {
    if (req.method !== "POST" || req.url !== path) {
      listener(req, res);
      return;
    }
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BYTES) {
        res.writeHead(413, { Connection: "close" }).end();
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BYTES) return;
      const body = Buffer.concat(chunks);
      if (refusal(body.toString("utf8")) !== undefined) {
        res.writeHead(400, { "Content-Type": "application/soap+xml; charset=utf-8" }).end(FAULT);
        return;
      }
      req.body = body;
      listener(req, res);
    });
  };
}
