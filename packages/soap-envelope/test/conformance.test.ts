import { conformance, errorStatus, type Row } from "@svc/test-utils/conformance";
import { expect } from "vitest";
import { envelope, getCustomer, TNS } from "./helpers.js";
import { PATH, soapMounts } from "./mounts.js";

const SOAP12 = "application/soap+xml; charset=utf-8";
const SOAP11 = "text/xml; charset=utf-8";
const ENV11 = "http://schemas.xmlsoap.org/soap/envelope/";
const logEvent = `<c:LogEventRequest xmlns:c="${TNS}"><c:event><c:type>audit</c:type><c:severity>WARN</c:severity><c:message>m</c:message></c:event></c:LogEventRequest>`;

const post = (body: string, headers: Record<string, string> = {}) => ({
  method: "POST",
  path: PATH,
  headers: { "Content-Type": SOAP12, ...headers },
  body,
});

/** The text of the response contains `pattern`. */
const contains = (pattern: RegExp) => (r: { text: string }) => expect(r.text).toMatch(pattern);

const rows: Row[] = [
  {
    name: "SOAP 1.2 getCustomer → 200, the response envelope, no-store",
    request: post(envelope(getCustomer("42"))),
    status: 200,
    headers: { "content-type": SOAP12, "cache-control": "no-store", "content-length": /^\d+$/ },
    body: contains(/<[\w:]*GetCustomerResponse[\s\S]*Ada Lovelace/),
  },
  {
    name: "GET ?wsdl → the WSDL, its addresses rewritten to the request's Host",
    request: { path: `${PATH}?wsdl`, headers: { Host: "soap.example:8080" } },
    status: 200,
    headers: {
      "content-type": "application/wsdl+xml; charset=utf-8",
      etag: /^"[^"]+"$/,
      "cache-control": "no-cache",
    },
    body: (r) => {
      expect(r.text).toContain('soap12:address location="http://soap.example:8080/ws/customer"');
      expect(r.text).toContain('soap:address location="http://soap.example:8080/ws/customer"');
    },
  },
  {
    // The same contract bytes, and so the same ETag, whichever framework serves it: the host as
    // the client wrote it, not as a URL parser would normalise it.
    name: "GET ?wsdl with Host: Soap.Example:8080 → the address spells the host as received",
    request: { path: `${PATH}?wsdl`, headers: { Host: "Soap.Example:8080" } },
    status: 200,
    body: (r) => expect(r.text).toContain('soap12:address location="http://Soap.Example:8080/ws/customer"'),
  },
  {
    // RFC 9112 §3.2.2: the origin server "MUST ignore the received Host header field (if any) and
    // instead use the host information of the request-target".
    name: "GET http://shop.example:8080/ws/customer?wsdl, another Host → the target's host in the address",
    request: { path: `http://shop.example:8080${PATH}?wsdl`, headers: { Host: "soap.example" } },
    status: 200,
    body: (r) => {
      expect(r.text).toContain('soap12:address location="http://shop.example:8080/ws/customer"');
      expect(r.text).not.toContain("soap.example/");
    },
  },
  {
    name: "HEAD ?wsdl → the GET's fields, no content",
    request: { method: "HEAD", path: `${PATH}?wsdl` },
    status: 200,
    headers: { "content-type": "application/wsdl+xml; charset=utf-8", "content-length": /^[1-9]\d+$/ },
    body: "",
  },
  {
    name: "GET ?wsdl with If-None-Match: * → 304 with its ETag",
    request: { path: `${PATH}?wsdl`, headers: { "If-None-Match": "*" } },
    status: 304,
    headers: { etag: /^"[^"]+"$/, "content-type": null },
    body: "",
  },
  {
    name: "GET ?xsd=customer.xsd → the imported schema",
    request: { path: `${PATH}?xsd=customer.xsd` },
    status: 200,
    headers: { "content-type": "application/xml; charset=utf-8" },
    body: contains(/<xs:schema/),
  },
  {
    name: "GET ?xsd= of no schema of the contract → 404 through the error handler",
    request: { path: `${PATH}?xsd=other.xsd` },
    status: 404,
    body: errorStatus(404),
  },
  {
    name: "schema-invalid payload → 400 env:Sender fault",
    request: post(envelope(getCustomer("not-a-number"))),
    status: 400,
    headers: { "content-type": SOAP12, "cache-control": "no-store" },
    body: contains(/<env:Fault>[\s\S]*<env:Value>env:Sender<\/env:Value>/),
  },
  {
    name: "a Body element of no operation → 400 env:Sender fault",
    request: post(envelope(`<c:NoSuchRequest xmlns:c="${TNS}"/>`)),
    status: 400,
    headers: { "content-type": SOAP12 },
    body: contains(/env:Sender/),
  },
  {
    name: "Content-Type: application/json → 415 with Accept-Post, a fault",
    request: post("{}", { "Content-Type": "application/json" }),
    status: 415,
    headers: { "content-type": SOAP12, "accept-post": /application\/soap\+xml/ },
    body: contains(/env:Sender/),
  },
  {
    name: "Content-Encoding: gzip → 415 with Accept-Encoding: identity",
    request: post(envelope(getCustomer("42")), { "Content-Encoding": "gzip" }),
    status: 415,
    headers: { "accept-encoding": "identity", "content-type": SOAP12 },
  },
  {
    name: "a body over limits.maxBytes → 413 fault",
    request: post(envelope(`<!--${"x".repeat(9000)}-->${getCustomer("42")}`)),
    status: 413,
    headers: { "content-type": SOAP12 },
    body: contains(/env:Sender/),
  },
  {
    name: "one-way logEvent → 202, no content",
    request: post(envelope(logEvent)),
    status: 202,
    headers: { "content-length": "0", "content-type": null },
    body: "",
  },
  {
    name: "PUT → 405 with Allow: POST, a fault",
    request: { method: "PUT", path: PATH, headers: { "Content-Type": SOAP12 }, body: envelope(logEvent) },
    status: 405,
    headers: { allow: "POST", "content-type": SOAP12 },
    body: contains(/env:Sender/),
  },
  {
    name: "two Host lines → 400 fault, the message unread",
    request: {
      method: "POST",
      path: PATH,
      headers: [
        ["Host", "a.example"],
        ["Host", "b.example"],
        ["Content-Type", SOAP12],
      ],
      body: envelope(getCustomer("42")),
    },
    status: 400,
    headers: { "content-type": SOAP12 },
    body: contains(/env:Sender/),
  },
  {
    name: "SOAP 1.1 getCustomer with SOAPAction → 200 text/xml, a 1.1 envelope",
    request: post(envelope(getCustomer("42"), undefined, ENV11), {
      "Content-Type": SOAP11,
      SOAPAction: '"getCustomer"',
    }),
    status: 200,
    headers: { "content-type": SOAP11 },
    body: contains(/schemas\.xmlsoap\.org\/soap\/envelope[\s\S]*Ada Lovelace/),
  },
  {
    name: "SOAP 1.1 schema-invalid payload → 500 text/xml Client fault",
    request: post(envelope(getCustomer("x"), undefined, ENV11), {
      "Content-Type": SOAP11,
      SOAPAction: '"getCustomer"',
    }),
    status: 500,
    headers: { "content-type": SOAP11 },
    body: contains(/<faultcode>[\w:-]*Client<\/faultcode>/),
  },
];

conformance("@svc/soap-envelope endpoint", soapMounts(), rows);
