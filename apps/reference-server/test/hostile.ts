import { STATUS_CODES } from "node:http";
import { parseXmlBody, type XmlValue } from "@svc/negotiate";
import { expect } from "vitest";

/** What a check needs to know about the request that produced a response. */
export interface Sent {
  method: string;
  /** The request target as sent on the wire (path and query, as `URL` normalised it). */
  target: string;
  accept?: string | undefined;
}

export const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
export const SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
export const TNS = "http://svc.example.com/ws/customer/v1";

/** Reason phrases of RFC 9110 §15 (Node's table still has the older names of 413 and 422). */
const REASON: Record<number, string> = {
  ...(STATUS_CODES as Record<number, string>),
  413: "Content Too Large",
  422: "Unprocessable Content",
};
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;
/** What an exception leaking into a client message tends to look like. */
const LEAK =
  /\bat [\w.<>]+ \(|\n\s+at |TypeError|ReferenceError|SQLITE_|syntax error at|node_modules|kysely/i;

const essence = (contentType: string | null) => (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";

/** Fails with the request in the message, so a shrunk fast-check counterexample explains itself. */
function fail(sent: Sent, res: Response, why: string, body = ""): never {
  throw new Error(`${sent.method} ${sent.target} → ${res.status}: ${why}\n${body.slice(0, 400)}`);
}

/** Headers helmet sets, which every response must carry whatever produced it. */
export function expectSecurityHeaders(res: Response, label = ""): void {
  expect(res.headers.get("x-content-type-options"), `${label} X-Content-Type-Options`).toBe("nosniff");
  expect(res.headers.get("x-frame-options"), `${label} X-Frame-Options`).toBe("SAMEORIGIN");
  expect(res.headers.get("content-security-policy"), `${label} Content-Security-Policy`).toMatch(
    /default-src 'self'/,
  );
  // RFC 6797 §7.2: only over TLS (these suites talk plain HTTP unless the URL says https).
  const hsts = res.headers.get("strict-transport-security");
  if (res.url.startsWith("https:")) expect(hsts, `${label} Strict-Transport-Security`).toMatch(/max-age=\d+/);
  else expect(hsts, `${label} Strict-Transport-Security over plain HTTP`).toBeNull();
  expect(res.headers.get("referrer-policy"), `${label} Referrer-Policy`).toBe("no-referrer");
  expect(res.headers.get("x-powered-by"), `${label} X-Powered-By`).toBeNull();
}

/** Whether a media type is acceptable under an `Accept` value (RFC 9110 §12.5.1), or undefined if unparseable. */
export function acceptable(accept: string, mediaType: string): boolean | undefined {
  const q = quality(accept, mediaType);
  return q === undefined ? undefined : q > 0;
}

/** The quality an `Accept` value gives a media type (its most specific matching range), undefined if unparseable. */
export function quality(accept: string, mediaType: string): number | undefined {
  const [type, subtype] = mediaType.split("/");
  let best: { specificity: number; q: number } | undefined;
  let ranges = 0;
  for (const part of accept.split(",")) {
    const [range = "", ...params] = part.split(";").map((s) => s.trim());
    if (range === "") continue;
    ranges++;
    const m = /^([!#$%&'*+.^_`|~0-9a-z-]+)\/([!#$%&'*+.^_`|~0-9a-z-]+)$/i.exec(range);
    if (!m) return undefined;
    const [rt, rs] = [m[1]?.toLowerCase(), m[2]?.toLowerCase()];
    let q = 1;
    let extra = false;
    for (const p of params) {
      const [k, v] = p.split("=").map((s) => s.trim());
      if (k?.toLowerCase() === "q") {
        if (!/^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(v ?? "")) return undefined;
        q = Number(v);
      } else if (k && k.toLowerCase() !== "charset") extra = true;
    }
    // A range with parameters only matches representations with those parameters (§12.5.1);
    // every representation here is UTF-8, so a charset parameter is no restriction.
    if (extra) continue;
    const specificity = rt === "*" && rs === "*" ? 0 : rs === "*" ? 1 : 2;
    const matches = (rt === "*" || rt === type) && (rs === "*" || rs === subtype);
    if (rt === "*" && rs !== "*") return undefined;
    // A range listed twice is ambiguous; like `negotiator`, the higher weight wins.
    if (
      matches &&
      (best === undefined ||
        specificity > best.specificity ||
        (specificity === best.specificity && q > best.q))
    )
      best = { specificity, q };
  }
  // No range at all (`Accept: ;`) states no preference.
  return ranges === 0 ? undefined : (best?.q ?? 0);
}

/**
 * An error rendered other than as the JSON record must be what the client asked for: acceptable
 * under its `Accept`, and at least as wanted as the JSON record.
 */
function expectChosen(sent: Sent, res: Response, type: string, body: string): void {
  const accept = sent.accept ?? "";
  const q = quality(accept, type);
  const json = quality(accept, "application/json");
  if (q === undefined || json === undefined) return;
  if (q === 0) fail(sent, res, `${type} is not acceptable`, body);
  if (q < json) fail(sent, res, `${type} although the JSON record was preferred`, body);
}

/** The element names and text of a parsed XML record, flattened one level. */
function xmlFields(doc: Record<string, XmlValue>, root: string): Record<string, XmlValue | XmlValue[]> {
  const top = doc[root];
  if (top === undefined || top === null || typeof top === "string") return {};
  return top as Record<string, XmlValue | XmlValue[]>;
}

/**
 * The resource API's contract for any response: never a 5xx, helmet's headers, and an error is the
 * error record (spec part 2) in JSON, or problem+json / XML / problem+xml only when the client
 * asked for those; a success honours `Accept`.
 */
export async function expectApiResponse(res: Response, sent: Sent): Promise<string> {
  const body = await res.text();
  if (res.status >= 500) fail(sent, res, "a 5xx", body);
  expectSecurityHeaders(res, `${sent.method} ${sent.target}`);
  const correlation = res.headers.get("x-correlation-id") ?? "";
  if (!/^[\w.:@-]{1,128}$/.test(correlation)) fail(sent, res, `bad X-Correlation-ID ${correlation}`);
  const type = essence(res.headers.get("content-type"));
  if (res.status >= 400) {
    if (sent.method === "HEAD") {
      if (body !== "") fail(sent, res, "a body on HEAD", body);
      return body;
    }
    const path = sent.target.split("?")[0] ?? "";
    if (type === "application/json" || type === "application/problem+json") {
      if (type === "application/problem+json") expectChosen(sent, res, type, body);
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(body) as Record<string, unknown>;
      } catch {
        return fail(sent, res, "an error body that is not JSON", body);
      }
      const keys = type === "application/json" ? ["timestamp", "status", "error", "message", "path"] : [];
      for (const k of keys) if (!(k in record)) fail(sent, res, `error record without ${k}`, body);
      const status = record.status;
      const message = type === "application/json" ? record.message : record.detail;
      const error = type === "application/json" ? record.error : record.title;
      const where = type === "application/json" ? record.path : record.instance;
      if (status !== res.status) fail(sent, res, "record status differs from the HTTP status", body);
      if (error !== REASON[res.status]) fail(sent, res, "error is not the reason phrase", body);
      if (typeof record.timestamp !== "string" || !ISO_UTC.test(record.timestamp))
        fail(sent, res, "timestamp is not ISO 8601 UTC", body);
      if (typeof message !== "string" || message === "") fail(sent, res, "no message", body);
      if (LEAK.test(message)) fail(sent, res, "the message leaks internals", body);
      // The record's path is the request path as sent, without the query.
      if (where !== path) fail(sent, res, `path ${String(where)} is not ${path}`, body);
      return body;
    }
    if (type === "application/xml" || type === "text/xml" || type === "application/problem+xml") {
      expectChosen(sent, res, type, body);
      let doc: Record<string, XmlValue>;
      try {
        doc = parseXmlBody(body);
      } catch (e) {
        return fail(sent, res, `ill-formed XML error: ${(e as Error).message}`, body);
      }
      const root = type === "application/problem+xml" ? "problem" : "error";
      const fields = xmlFields(doc, root);
      const names =
        root === "error"
          ? ["timestamp", "status", "error", "message", "path"]
          : ["type", "title", "status", "detail", "instance", "timestamp"];
      for (const n of names) if (fields[n] === undefined) fail(sent, res, `XML error without <${n}>`, body);
      if (fields.status !== String(res.status)) fail(sent, res, "XML status differs", body);
      return body;
    }
    return fail(sent, res, `an error as ${type || "no Content-Type"}`, body);
  }
  // Operational endpoints answer JSON (the docs HTML) whatever the Accept (RFC 9110 §12.5.1 lets
  // a server disregard it), also behind a `/v<N>` prefix, which a version-neutral path ignores;
  // the resource API negotiates.
  const operational = /^(?:\/v\d+)?\/(?:health|ready|openapi\.json|docs|\.well-known)(?:\/|$)/.test(
    sent.target,
  );
  if (
    res.status >= 200 &&
    res.status < 300 &&
    res.status !== 204 &&
    sent.accept &&
    type !== "" &&
    !operational
  ) {
    const ok = acceptable(sent.accept, type);
    if (ok === false) fail(sent, res, `${type} is not acceptable under Accept: ${sent.accept}`, body);
  }
  return body;
}

/** The fault code of a SOAP 1.2 fault document, or undefined when the body is not one. */
export function faultCode(body: string): string | undefined {
  let doc: Record<string, XmlValue>;
  try {
    doc = parseXmlBody(body, 64);
  } catch {
    return undefined;
  }
  const envelopeName = Object.keys(doc)[0] ?? "";
  const envelope = doc[envelopeName];
  if (typeof envelope !== "object" || envelope === null || !/(^|:)Envelope$/.test(envelopeName))
    return undefined;
  const prefix = envelopeName.includes(":") ? `${envelopeName.split(":")[0]}:` : "";
  // parseXmlBody leaves namespace declarations out of the data (Namespaces in XML 1.0 §3), so the
  // envelope's own start tag must declare its prefix (or the default namespace) as SOAP 1.2.
  const startTag = new RegExp(`<${envelopeName}\\s[^>]*>`).exec(body)?.[0] ?? "";
  const declaration = prefix ? `xmlns:${prefix.slice(0, -1)}` : "xmlns";
  if (!startTag.includes(`${declaration}="${SOAP12}"`) && !startTag.includes(`${declaration}='${SOAP12}'`))
    return undefined;
  const bodyEl = envelope[`${prefix}Body`];
  if (typeof bodyEl !== "object" || bodyEl === null || Array.isArray(bodyEl)) return undefined;
  const fault = bodyEl[`${prefix}Fault`];
  if (typeof fault !== "object" || fault === null || Array.isArray(fault)) return undefined;
  const code = fault[`${prefix}Code`];
  if (typeof code !== "object" || code === null || Array.isArray(code)) return undefined;
  const value = code[`${prefix}Value`];
  if (typeof value !== "string") return undefined;
  const reason = fault[`${prefix}Reason`];
  if (typeof reason !== "object" || reason === null) return undefined;
  return value.replace(/^.*:/, "");
}

/**
 * The SOAP endpoint's contract for any response: a 2xx is SOAP 1.2 (or empty for a one-way
 * operation); an error is a SOAP 1.2 fault whose HTTP status follows SOAP 1.2 Part 2 §7.5.2.2
 * (Sender → 400, the other codes → 500), or an HTTP-level status (401, 405, 413, 415, 429) with a
 * Sender fault; a SOAP 1.1 envelope gets the SOAP 1.1 VersionMismatch fault (Part 2 Appendix A).
 */
export async function expectSoapResponse(res: Response, sent: Sent): Promise<string> {
  const body = await res.text();
  expectSecurityHeaders(res, `${sent.method} ${sent.target}`);
  if (res.status >= 200 && res.status < 300) {
    if (body === "") return body;
    if (essence(res.headers.get("content-type")) !== "application/soap+xml")
      fail(sent, res, "a SOAP answer that is not application/soap+xml", body);
    if (faultCode(body) !== undefined) fail(sent, res, "a fault with a 2xx status", body);
    return body;
  }
  if (res.status < 400) fail(sent, res, "an unexpected 1xx/3xx", body);
  // RFC 9110 §9.3.2: a HEAD answer has the header fields of the GET answer and no content, so its
  // fault is seen only in its Content-Type (a random path can hit HEAD /ws/customer → 405).
  if (sent.method === "HEAD") {
    if (body !== "") fail(sent, res, "a HEAD answer with content", body);
    if (essence(res.headers.get("content-type")) !== "application/soap+xml")
      fail(sent, res, "a fault that is not application/soap+xml", body);
    return body;
  }
  if (body.includes(SOAP11) && body.includes("VersionMismatch")) {
    if (res.status !== 500) fail(sent, res, "SOAP 1.1 VersionMismatch not 500", body);
    return body;
  }
  const code = faultCode(body);
  if (code === undefined) fail(sent, res, "an error that is not a SOAP 1.2 fault", body);
  if (essence(res.headers.get("content-type")) !== "application/soap+xml")
    fail(sent, res, "a fault that is not application/soap+xml", body);
  if (LEAK.test(body)) fail(sent, res, "the fault leaks internals", body);
  const senderStatuses = [400, 401, 403, 405, 413, 415, 429];
  if (code === "Sender" && !senderStatuses.includes(res.status))
    fail(sent, res, "a Sender fault must be 400 (or an HTTP-level 4xx)", body);
  if (code !== "Sender" && res.status !== 500) fail(sent, res, `${code} fault must be 500`, body);
  return body;
}

/** A server that still answers after the abuse. */
export async function expectAlive(base: string): Promise<void> {
  const res = await fetch(`${base}/health`);
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}
