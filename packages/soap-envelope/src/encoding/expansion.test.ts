import { join } from "node:path";
import { conformance, type Row, type RowResponse } from "@svc/test-utils/conformance";
import { expect } from "vitest";
import { FIXTURES } from "../../test/helpers.js";
import { PATH, soapMounts } from "../../test/mounts.js";

/**
 * SOAP encoding's references (SOAP 1.1 §5.4.1 `href`/`id`, SOAP 1.2 Part 2 §3.1.5 `enc:ref`/
 * `enc:id`) copy the value they refer to into each accessor: the copies count against
 * `limits.maxExpandedBytes` in bytes, as they count against `limits.maxElements` in elements, on
 * every framework. The rpc/encoded fixture's `greet` answers with the names it was given.
 */
const WSDL = join(FIXTURES, "encoded.wsdl");
const TNS = "urn:svc:encoded";
const ENV11 = "http://schemas.xmlsoap.org/soap/envelope/";
const ENC11 = "http://schemas.xmlsoap.org/soap/encoding/";
const ENV12 = "http://www.w3.org/2003/05/soap-envelope";
const ENC12 = "http://www.w3.org/2003/05/soap-encoding";
const NS = `xmlns:t="${TNS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"`;

const handlers = {
  greet: (p: { person: { name: string }; names: unknown }) => ({
    greeting: `Hello, ${p.person.name}`,
    names: p.names,
  }),
  team: (p: { members: unknown }) => ({ size: 0, members: p.members }),
  echo: (p: { value: unknown }) => ({ value: String(p.value) }),
};

const person = "<person><name>Ann</name><age>3</age></person>";

/** SOAP 1.1 greet: `refs` accessors `href="#s"` to one multiRef string of `bytes` characters. */
function greet11(refs: number, bytes: number) {
  return {
    method: "POST",
    path: PATH,
    headers: { "Content-Type": "text/xml; charset=utf-8", SOAPAction: `"${TNS}#greet"` },
    body:
      `<s:Envelope xmlns:s="${ENV11}" xmlns:enc="${ENC11}" ${NS} s:encodingStyle="${ENC11}"><s:Body>` +
      `<t:greet ${NS}>${person}<names enc:arrayType="xsd:string[${refs}]">${'<i href="#s"/>'.repeat(refs)}</names></t:greet>` +
      `<multiRef id="s" xsi:type="xsd:string">${"x".repeat(bytes)}</multiRef></s:Body></s:Envelope>`,
  };
}

/** SOAP 1.2 greet: a member `enc:id="s"` of `bytes` characters and `refs` members `enc:ref="s"`. */
function greet12(refs: number, bytes: number) {
  return {
    method: "POST",
    path: PATH,
    headers: { "Content-Type": `application/soap+xml; charset=utf-8; action="${TNS}#greet"` },
    body:
      `<e:Envelope xmlns:e="${ENV12}" xmlns:enc="${ENC12}" ${NS}><e:Body>` +
      `<t:greet ${NS} e:encodingStyle="${ENC12}">${person}<names enc:itemType="xsd:string" enc:arraySize="${refs + 1}">` +
      `<i enc:id="s">${"x".repeat(bytes)}</i>${'<i enc:ref="s"/>'.repeat(refs)}</names></t:greet></e:Body></e:Envelope>`,
  };
}

/** A fault naming `limit`, small: nothing was copied into a response. */
const refused = (limit: number) => (r: RowResponse) => {
  expect(r.text).toContain(`the references expand the message past ${limit} bytes (limits.maxExpandedBytes)`);
  expect(r.body.byteLength).toBeLessThan(2048);
};

/** A 200 whose names are `count` copies of the string of `bytes` characters. */
const echoed = (count: number, bytes: number) => (r: RowResponse) => {
  const names = r.text.match(new RegExp(`<item xsi:type="xsd:string">x{${bytes}}</item>`, "g"));
  expect(names?.length).toBe(count);
};

const DEFAULT = 4 * 1_048_576;

const defaults: Row[] = [
  {
    name: "SOAP 1.1, 600 href to one 40 KB multiRef string (a 49 KB request) → 500 Client naming limits.maxExpandedBytes",
    request: greet11(600, 40_000),
    status: 500,
    headers: { "content-type": "text/xml; charset=utf-8" },
    body: (r) => {
      expect(r.text).toContain("<faultcode>SOAP-ENV:Client</faultcode>");
      refused(DEFAULT)(r);
    },
  },
  {
    name: "SOAP 1.1, 3,000 href to one 100 KB multiRef string → 500 Client naming limits.maxExpandedBytes",
    request: greet11(3_000, 100_000),
    status: 500,
    body: refused(DEFAULT),
  },
  {
    name: "SOAP 1.2, 600 enc:ref to one 40 KB member → 400 Sender naming limits.maxExpandedBytes",
    request: greet12(600, 40_000),
    status: 400,
    headers: { "content-type": /^application\/soap\+xml/ },
    body: (r) => {
      expect(r.text).toContain("<env:Value>env:Sender</env:Value>");
      refused(DEFAULT)(r);
    },
  },
  {
    name: "SOAP 1.1, 2 href to one 100-character multiRef string → 200 with both names",
    request: greet11(2, 100),
    status: 200,
    body: echoed(2, 100),
  },
  {
    // Axis writes every struct as a multiRef referred to once: a copy as large as the message.
    name: "SOAP 1.1, 1 href to one 900 KB multiRef string → 200 with the name",
    request: greet11(1, 900_000),
    status: 200,
    body: echoed(1, 900_000),
  },
  {
    name: "SOAP 1.2, 40 enc:ref to one 100 KB member (4 MB of copies) → 200 with 41 names",
    request: greet12(40, 100_000),
    status: 200,
    body: echoed(41, 100_000),
  },
];

conformance(
  "references within limits.maxExpandedBytes (4 × maxBytes)",
  soapMounts({ wsdl: WSDL, handlers, limits: {} }),
  defaults,
);

const lowered: Row[] = [
  {
    name: "maxExpandedBytes 10000, 2 href to one 4 KB multiRef string → 200",
    request: greet11(2, 4_000),
    status: 200,
    body: echoed(2, 4_000),
  },
  {
    name: "maxExpandedBytes 10000, 3 href to one 4 KB multiRef string → 500 Client naming 10000",
    request: greet11(3, 4_000),
    status: 500,
    body: refused(10_000),
  },
];

conformance(
  "references within limits.maxExpandedBytes: 10000",
  soapMounts({ wsdl: WSDL, handlers, limits: { maxExpandedBytes: 10_000 } }),
  lowered,
);
