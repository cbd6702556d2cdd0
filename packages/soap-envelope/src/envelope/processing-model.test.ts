import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENV,
  envelope,
  getCustomer,
  post,
  readFault,
  SOAP,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";
import { SERVED_ON } from "../../test/mounts.js";

/**
 * Request/expected-response tables after the W3C SOAP Version 1.2 Specification Assertions and
 * Test Collection, for the cases that apply to a single HTTP SOAP node acting as ultimate
 * receiver (no intermediaries).
 */
const SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
const ROLE = "http://www.w3.org/2003/05/soap-envelope/role/";
const LONG_ROLE = `http://example.org/ts-tests/${"r".repeat(2048 - "http://example.org/ts-tests/".length)}`;
const ok = getCustomer("42");
const block = (attrs: string, name = "Unknown") =>
  `<t:${name} xmlns:t="http://example.org/ts-tests" ${attrs}>x</t:${name}>`;

interface Row {
  name: string;
  body: string | Uint8Array;
  contentType?: string;
  status: number;
  code?: string;
  notUnderstood?: string[];
  upgrade?: boolean;
}

const mustUnderstandRows: Row[] = [
  {
    name: 'unknown block, mustUnderstand="1", no role → MustUnderstand',
    body: envelope(ok, block('env:mustUnderstand="1"')),
    status: 500,
    code: "MustUnderstand",
    notUnderstood: ["{http://example.org/ts-tests}Unknown"],
  },
  {
    name: 'unknown block, mustUnderstand="true", role next → MustUnderstand',
    body: envelope(ok, block(`env:mustUnderstand="true" env:role="${ROLE}next"`)),
    status: 500,
    code: "MustUnderstand",
    notUnderstood: ["{http://example.org/ts-tests}Unknown"],
  },
  {
    name: 'unknown block, mustUnderstand="true", role ultimateReceiver → MustUnderstand',
    body: envelope(ok, block(`env:mustUnderstand="true" env:role="${ROLE}ultimateReceiver"`)),
    status: 500,
    code: "MustUnderstand",
  },
  {
    name: 'unknown block, mustUnderstand=" 1 " (xs:boolean whitespace) → MustUnderstand',
    body: envelope(ok, block('env:mustUnderstand=" 1 "')),
    status: 500,
    code: "MustUnderstand",
  },
  {
    name: 'unknown block, mustUnderstand="1", role none → ignored, 200',
    body: envelope(ok, block(`env:mustUnderstand="1" env:role="${ROLE}none"`)),
    status: 200,
  },
  {
    name: 'unknown block, mustUnderstand="1", another node\'s role → ignored, 200',
    body: envelope(ok, block('env:mustUnderstand="1" env:role="http://example.org/ts-tests/C"')),
    status: 200,
  },
  {
    name: 'unknown block, mustUnderstand="1", 2,048-character role of another node → ignored, 200',
    body: envelope(ok, block(`env:mustUnderstand="1" env:role="${LONG_ROLE}x"`)),
    status: 200,
  },
  {
    name: 'unknown block, mustUnderstand="0" → ignored, 200',
    body: envelope(ok, block('env:mustUnderstand="0"')),
    status: 200,
  },
  {
    name: 'unknown block, mustUnderstand="false" → ignored, 200',
    body: envelope(ok, block('env:mustUnderstand="false"')),
    status: 200,
  },
  { name: "unknown block without mustUnderstand → ignored, 200", body: envelope(ok, block("")), status: 200 },
  {
    name: 'mustUnderstand="yes" (not an xs:boolean) → Sender',
    body: envelope(ok, block('env:mustUnderstand="yes"')),
    status: 400,
    code: "Sender",
  },
  {
    name: 'unqualified mustUnderstand="1" is not the SOAP attribute → 200',
    body: envelope(ok, block('mustUnderstand="1"')),
    status: 200,
  },
  {
    name: "two mandatory unknown blocks → one fault, two NotUnderstood",
    body: envelope(ok, block('env:mustUnderstand="1"', "A") + block('env:mustUnderstand="1"', "B")),
    status: 500,
    code: "MustUnderstand",
    notUnderstood: ["{http://example.org/ts-tests}A", "{http://example.org/ts-tests}B"],
  },
  {
    name: "understood block (understoodHeaders) with mustUnderstand → 200",
    body: envelope(ok, block('env:mustUnderstand="1"', "Understood")),
    status: 200,
  },
  {
    name: "mandatory unknown block and an invalid body → MustUnderstand wins (Part 1 §2.6)",
    body: envelope(getCustomer("bad"), block('env:mustUnderstand="1"')),
    status: 500,
    code: "MustUnderstand",
  },
  // Part 1 §5.4.6: DataEncodingUnknown when "a header or body child element information item
  // targeted at the faulting SOAP node is scoped (see 5.1.1) with a data encoding that the
  // faulting node does not support". A header block this node processes counts like the body.
  {
    name: "understood block scoped with SOAP encoding → DataEncodingUnknown",
    body: envelope(
      ok,
      block(
        'env:mustUnderstand="1" env:encodingStyle="http://www.w3.org/2003/05/soap-encoding"',
        "Understood",
      ),
    ),
    status: 500,
    code: "DataEncodingUnknown",
  },
  {
    name: "understood optional block scoped with an unknown encoding, role next → DataEncodingUnknown",
    body: envelope(
      ok,
      block(`env:role="${ROLE}next" env:encodingStyle="urn:x-unknown-encoding"`, "Understood"),
    ),
    status: 500,
    code: "DataEncodingUnknown",
  },
  {
    name: "understood block with encodingStyle encoding/none → 200",
    body: envelope(
      ok,
      block('env:encodingStyle="http://www.w3.org/2003/05/soap-envelope/encoding/none"', "Understood"),
    ),
    status: 200,
  },
  {
    name: "understood block with an empty encodingStyle (no claims, §5.1.1) → 200",
    body: envelope(ok, block('env:encodingStyle=""', "Understood")),
    status: 200,
  },
  {
    name: "understood block for another node's role, scoped with SOAP encoding → ignored, 200",
    body: envelope(
      ok,
      block(
        'env:role="http://example.org/ts-tests/C" env:encodingStyle="http://www.w3.org/2003/05/soap-encoding"',
        "Understood",
      ),
    ),
    status: 200,
  },
  {
    name: "optional block nobody understands, scoped with SOAP encoding → ignored, 200",
    body: envelope(ok, block('env:encodingStyle="http://www.w3.org/2003/05/soap-encoding"')),
    status: 200,
  },
  {
    name: "mandatory unknown block and an understood block in SOAP encoding → MustUnderstand first (§2.6 step 3)",
    body: envelope(
      ok,
      block('env:mustUnderstand="1"') +
        block('env:encodingStyle="http://www.w3.org/2003/05/soap-encoding"', "Understood"),
    ),
    status: 500,
    code: "MustUnderstand",
  },
  // Part 1 §5.1.1: encodingStyle "MAY appear on ... Any descendent of" a header block or a body
  // child, and scopes that descendant. A payload element declaring no encoding (none, or empty)
  // is as literal as one without the attribute; one in an encoding this node does not decode is
  // DataEncodingUnknown, as on the body child itself. Both were 400 "attribute not allowed".
  {
    name: "body child's descendant with encodingStyle encoding/none → 200",
    body: envelope(
      ok.replace(
        "<c:customerId>",
        '<c:customerId env:encodingStyle="http://www.w3.org/2003/05/soap-envelope/encoding/none">',
      ),
    ),
    status: 200,
  },
  {
    name: "body child's descendant with an empty encodingStyle → 200",
    body: envelope(ok.replace("<c:customerId>", '<c:customerId env:encodingStyle="">')),
    status: 200,
  },
  {
    name: "body child's descendant scoped with SOAP encoding → DataEncodingUnknown",
    body: envelope(
      ok.replace(
        "<c:customerId>",
        '<c:customerId env:encodingStyle="http://www.w3.org/2003/05/soap-encoding">',
      ),
    ),
    status: 500,
    code: "DataEncodingUnknown",
  },
  {
    name: "header block without namespace → Sender",
    body: envelope(ok, "<Plain>x</Plain>"),
    status: 400,
    code: "Sender",
  },
];

const versionRows: Row[] = [
  {
    name: "SOAP 1.1 envelope as text/xml → SOAP/1.1 VersionMismatch with Upgrade (Part 1 Appendix A)",
    body: envelope(ok, undefined, SOAP11).replace(/env:/g, "s:").replace("xmlns:env", "xmlns:s"),
    contentType: "text/xml; charset=utf-8",
    status: 500,
    code: `{${SOAP11}}VersionMismatch`,
    upgrade: true,
  },
  {
    name: "SOAP 1.1 envelope as application/soap+xml → SOAP/1.1 VersionMismatch",
    body: envelope(ok, undefined, SOAP11),
    status: 500,
    code: `{${SOAP11}}VersionMismatch`,
    upgrade: true,
  },
  {
    name: "Envelope in an unknown namespace → VersionMismatch with env:Upgrade",
    body: envelope(ok, undefined, "http://example.org/not-soap"),
    status: 500,
    code: "VersionMismatch",
    upgrade: true,
  },
  {
    // Part 1 §5.4.8: VersionMismatch when "the namespace, local name or both did not match the
    // Envelope element information item".
    name: "document element env:Body instead of env:Envelope → VersionMismatch with env:Upgrade",
    body: `<env:Body xmlns:env="${ENV}">${ok}</env:Body>`,
    status: 500,
    code: "VersionMismatch",
    upgrade: true,
  },
  {
    name: "unqualified document element Envelope → VersionMismatch with env:Upgrade",
    body: `<Envelope><Body>${ok}</Body></Envelope>`,
    status: 500,
    code: "VersionMismatch",
    upgrade: true,
  },
];

const structureRows: Row[] = [
  {
    name: "DOCTYPE → Sender (Part 1 §5: no DTD)",
    body: `<?xml version="1.0"?><!DOCTYPE env:Envelope [<!ELEMENT x ANY>]>${envelope(ok).replace(/^<\?xml[^>]*\?>/, "")}`,
    status: 400,
    code: "Sender",
  },
  {
    name: "processing instruction in Body → Sender",
    body: envelope(`<?app do-something?>${ok}`),
    status: 400,
    code: "Sender",
  },
  {
    name: "processing instruction before Envelope → Sender",
    body: `<?xml version="1.0"?><?app x?>${envelope(ok).replace(/^<\?xml[^>]*\?>/, "")}`,
    status: 400,
    code: "Sender",
  },
  {
    name: "encodingStyle on Envelope → Sender",
    body: envelope(ok).replace(
      `xmlns:env="${ENV}"`,
      `xmlns:env="${ENV}" env:encodingStyle="http://www.w3.org/2003/05/soap-encoding"`,
    ),
    status: 400,
    code: "Sender",
  },
  {
    name: "encodingStyle on Body → Sender",
    body: envelope(ok).replace(
      "<env:Body>",
      '<env:Body env:encodingStyle="http://www.w3.org/2003/05/soap-encoding">',
    ),
    status: 400,
    code: "Sender",
  },
  {
    name: "encodingStyle on Header → Sender",
    body: envelope(ok, "").replace(
      "<env:Header>",
      '<env:Header env:encodingStyle="http://www.w3.org/2003/05/soap-encoding">',
    ),
    status: 400,
    code: "Sender",
  },
  {
    name: "SOAP encoding on the body element → DataEncodingUnknown",
    body: envelope(
      ok.replace(
        "<c:GetCustomerRequest ",
        '<c:GetCustomerRequest xmlns:e="http://www.w3.org/2003/05/soap-envelope" e:encodingStyle="http://www.w3.org/2003/05/soap-encoding" ',
      ),
    ),
    status: 500,
    code: "DataEncodingUnknown",
  },
  {
    name: "encoding/none on the body element → 200",
    body: envelope(
      ok.replace(
        "<c:GetCustomerRequest ",
        '<c:GetCustomerRequest xmlns:e="http://www.w3.org/2003/05/soap-envelope" e:encodingStyle="http://www.w3.org/2003/05/soap-envelope/encoding/none" ',
      ),
    ),
    status: 200,
  },
  {
    name: "env:mustUnderstand, env:role, env:relay on the body element and a descendant → ignored, 200 (Part 1 §5.2.2-§5.2.4)",
    body: envelope(
      ok
        .replace("<c:GetCustomerRequest ", '<c:GetCustomerRequest env:mustUnderstand="1" ')
        .replace(
          "<c:customerId>",
          `<c:customerId env:mustUnderstand="true" env:role="${ROLE}none" env:relay="1">`,
        ),
    ),
    status: 200,
  },
  {
    name: "any other attribute on a body descendant → Sender (the schema decides)",
    body: envelope(ok.replace("<c:customerId>", '<c:customerId env:trace="1">')),
    status: 400,
    code: "Sender",
  },
  {
    name: "missing Body → Sender",
    body: `<env:Envelope xmlns:env="${ENV}"><env:Header/></env:Envelope>`,
    status: 400,
    code: "Sender",
  },
  {
    name: "empty Envelope → Sender",
    body: `<env:Envelope xmlns:env="${ENV}"/>`,
    status: 400,
    code: "Sender",
  },
  {
    name: "element after Body → Sender",
    body: envelope(ok).replace("</env:Body>", '</env:Body><t:Trailer xmlns:t="urn:t"/>'),
    status: 400,
    code: "Sender",
  },
  {
    name: "Header after Body → Sender",
    body: envelope(ok).replace("</env:Body>", "</env:Body><env:Header/>"),
    status: 400,
    code: "Sender",
  },
  {
    name: "two Bodies → Sender",
    body: envelope(ok).replace("</env:Body>", "</env:Body><env:Body/>"),
    status: 400,
    code: "Sender",
  },
  {
    name: "unqualified attribute on Envelope → Sender",
    body: envelope(ok).replace(`xmlns:env="${ENV}"`, `xmlns:env="${ENV}" version="1.2"`),
    status: 400,
    code: "Sender",
  },
  {
    name: "unqualified attribute on Body → Sender (Part 1 §5.3: namespace-qualified attributes only)",
    body: envelope(ok).replace("<env:Body>", '<env:Body id="b1">'),
    status: 400,
    code: "Sender",
  },
  {
    name: "unqualified attribute on Header → Sender (Part 1 §5.2: namespace-qualified attributes only)",
    body: envelope(ok, "").replace("<env:Header>", '<env:Header id="h1">'),
    status: 400,
    code: "Sender",
  },
  {
    name: "foreign qualified attributes on Header and Body → 200",
    body: envelope(ok, "")
      .replace("<env:Header>", '<env:Header xmlns:x="urn:x" x:id="h1">')
      .replace("<env:Body>", '<env:Body xmlns:x="urn:x" x:id="b1">'),
    status: 200,
  },
  {
    name: "foreign qualified attribute on Envelope → 200",
    body: envelope(ok).replace(`xmlns:env="${ENV}"`, `xmlns:env="${ENV}" xmlns:x="urn:x" x:trace="1"`),
    status: 200,
  },
  {
    name: "text directly in Envelope → Sender",
    body: envelope(ok).replace("<env:Body>", "stray<env:Body>"),
    status: 400,
    code: "Sender",
  },
  { name: "empty Body → Sender", body: envelope(""), status: 400, code: "Sender" },
  { name: "two body elements → Sender", body: envelope(ok + ok), status: 400, code: "Sender" },
  {
    name: "unknown body element → Sender",
    body: envelope('<x:Unknown xmlns:x="urn:x"/>'),
    status: 400,
    code: "Sender",
  },
  {
    name: "unqualified body element → Sender",
    body: envelope("<GetCustomerRequest><customerId>42</customerId></GetCustomerRequest>"),
    status: 400,
    code: "Sender",
  },
  {
    name: "not well-formed → Sender",
    body: envelope(ok).replace("</env:Body>", "</env:Bodyy>"),
    status: 400,
    code: "Sender",
  },
  {
    name: "undeclared prefix → Sender",
    body: envelope("<u:GetCustomerRequest/>"),
    status: 400,
    code: "Sender",
  },
  {
    name: "undefined entity reference → Sender",
    body: envelope(getCustomer("&custom;")),
    status: 400,
    code: "Sender",
  },
  {
    name: "comments everywhere → 200",
    body: `<?xml version="1.0"?><!--a--><env:Envelope xmlns:env="${ENV}"><!--b--><env:Body><!--c-->${ok}</env:Body></env:Envelope><!--d-->`,
    status: 200,
  },
];

const encodingRows: Row[] = [
  { name: "no XML declaration → 200", body: envelope(ok).replace(/^<\?xml[^>]*\?>/, ""), status: 200 },
  { name: 'encoding="UTF-8" declaration → 200', body: envelope(ok).replace("utf-8", "UTF-8"), status: 200 },
  {
    name: "UTF-8 byte order mark → 200",
    body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(envelope(ok))]),
    status: 200,
  },
  {
    name: "UTF-16LE with BOM, charset=utf-16 → 200",
    body: Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(envelope(ok).replace("utf-8", "UTF-16"), "utf16le"),
    ]),
    contentType: "application/soap+xml; charset=utf-16",
    status: 200,
  },
  // RFC 7303 §3.2/§3.3 (XML 1.0 Appendix F.2 defers to it): a byte order mark takes precedence
  // over the charset parameter when the two disagree.
  ...(["utf-16", "utf-16le", "utf-16be", "UTF-16"] as const).map(
    (charset): Row => ({
      name: `UTF-8 byte order mark, charset=${charset} → 200 (the BOM wins)`,
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(envelope(ok))]),
      contentType: `application/soap+xml; charset=${charset}`,
      status: 200,
    }),
  ),
  {
    name: "UTF-16BE with BOM, charset=utf-8 → 200 (the BOM wins)",
    body: Buffer.concat([
      Buffer.from([0xfe, 0xff]),
      Buffer.from(envelope(ok).replace("utf-8", "UTF-16"), "utf16le").swap16(),
    ]),
    contentType: "application/soap+xml; charset=utf-8",
    status: 200,
  },
  {
    name: "UTF-16LE with BOM, charset=utf-16be → 200 (the BOM wins)",
    body: Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(envelope(ok).replace("utf-8", "UTF-16"), "utf16le"),
    ]),
    contentType: "application/soap+xml; charset=utf-16be",
    status: 200,
  },
  {
    name: "UTF-8 without a BOM, charset=utf-16 → Sender (no BOM: the charset parameter decides)",
    body: envelope(ok),
    contentType: "application/soap+xml; charset=utf-16",
    status: 400,
    code: "Sender",
  },
  // RFC 7303 §3.2 and SOAP 1.2 Part 2 §7.1.4: the charset parameter names the encoding. US-ASCII
  // (IANA character sets: US-ASCII, its aliases, names compared case-insensitively) is a subset
  // of UTF-8, which XML 1.0 §4.3.3 requires every processor to read; a byte over 7F is not
  // US-ASCII, an error of the message (XML 1.0 §4.3.3: a fatal error).
  ...(
    ["us-ascii", "US-ASCII", '"us-ascii"', "ANSI_X3.4-1968", "iso646-us", "csASCII", "IBM367"] as const
  ).map(
    (charset): Row => ({
      name: `charset=${charset}, an ASCII message → 200`,
      body: envelope(ok),
      contentType: `application/soap+xml; charset=${charset}`,
      status: 200,
    }),
  ),
  {
    name: "charset=us-ascii, a comment holding é as UTF-8 (C3 A9) → Sender, not read as UTF-8",
    body: envelope(`<!--\u00e9-->${ok}`),
    contentType: "application/soap+xml; charset=us-ascii",
    status: 400,
    code: "Sender",
  },
  {
    name: "charset=us-ascii, a comment holding é as Latin-1 (E9) → Sender",
    body: Buffer.from(envelope(`<!--\u00e9-->${ok}`), "latin1"),
    contentType: "application/soap+xml; charset=us-ascii",
    status: 400,
    code: "Sender",
  },
  {
    name: "charset=utf-8, the same comment holding é as UTF-8 → 200",
    body: envelope(`<!--\u00e9-->${ok}`),
    contentType: "application/soap+xml; charset=utf-8",
    status: 200,
  },
  {
    name: "charset=us-ascii, a UTF-8 byte order mark and é in a comment → 200 (the BOM wins)",
    body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(envelope(`<!--\u00e9-->${ok}`))]),
    contentType: "application/soap+xml; charset=us-ascii",
    status: 200,
  },
  {
    name: "pretty-printed with CRLF and tabs → 200",
    body: `<?xml version="1.0"?>\r\n<env:Envelope xmlns:env="${ENV}">\r\n\t<env:Body>\r\n\t\t<c:GetCustomerRequest xmlns:c="${TNS}">\r\n\t\t\t<c:customerId> 42 </c:customerId>\r\n\t\t</c:GetCustomerRequest>\r\n\t</env:Body>\r\n</env:Envelope>\r\n`,
    status: 200,
  },
  {
    name: "whitespace before the XML declaration → Sender",
    body: `  ${envelope(ok)}`,
    status: 400,
    code: "Sender",
  },
  {
    name: "invalid UTF-8 → Sender",
    body: Buffer.concat([
      Buffer.from(envelope(getCustomer("4")).split("4</c:")[0] ?? ""),
      Buffer.from([0xc3, 0x28]),
      Buffer.from("</c:customerId></c:GetCustomerRequest></env:Body></env:Envelope>"),
    ]),
    status: 400,
    code: "Sender",
  },
  { name: "empty request body → Sender", body: "", status: 400, code: "Sender" },
];

describe.each(SERVED_ON)("%s", (framework) => {
  let svc: Awaited<ReturnType<typeof startCustomerService>>;
  beforeAll(async () => {
    svc = await startCustomerService(
      { understoodHeaders: ["{http://example.org/ts-tests}Understood"] },
      framework,
    );
  });
  afterAll(() => svc.close());

  describe.each([
    ["mustUnderstand and roles (Part 1 §2.4, §2.6, §5.2.3)", mustUnderstandRows],
    ["VersionMismatch (Part 1 §5.4.7, Appendix A)", versionRows],
    ["envelope structure (Part 1 §5)", structureRows],
    ["encoding declarations and whitespace", encodingRows],
  ])("%s", (_title, rows) => {
    it.each(rows.map((r) => [r.name, r] as const))("%s", async (_name, row) => {
      const res = await post(svc.endpoint, row.body, row.contentType ?? SOAP);
      expect(res.status).toBe(row.status);
      if (row.status === 200) {
        expect(res.headers.get("content-type")).toBe(SOAP);
        expect(res.text).toContain("<name>Ada Lovelace</name>");
        return;
      }
      const fault = readFault(res.text);
      const expected = row.code?.startsWith("{") ? row.code : `{${ENV}}${row.code}`;
      expect(fault.code).toBe(expected);
      if (row.notUnderstood) expect(fault.notUnderstood).toEqual(row.notUnderstood);
      if (row.upgrade) expect(fault.upgrade).toEqual([`{${ENV}}Envelope`]);
      if (fault.envelopeNs === ENV) {
        expect(res.headers.get("content-type")).toBe(SOAP);
        expect(fault.order).toEqual(["Code", "Reason"]);
        expect(fault.lang).toBe("en");
      } else {
        expect(res.headers.get("content-type")).toBe("text/xml; charset=utf-8");
      }
    });
  });

  describe("roles this node plays", () => {
    it("2,048-character role URI configured on the node, mustUnderstand unknown block → MustUnderstand", async () => {
      const own = await startCustomerService({ roles: [LONG_ROLE] }, framework);
      try {
        const res = await post(
          own.endpoint,
          envelope(ok, block(`env:mustUnderstand="1" env:role="${LONG_ROLE}"`)),
        );
        expect(res.status).toBe(500);
        expect(readFault(res.text).notUnderstood).toEqual(["{http://example.org/ts-tests}Unknown"]);
        const other = await post(
          own.endpoint,
          envelope(ok, block(`env:mustUnderstand="1" env:role="${LONG_ROLE}x"`)),
        );
        expect(other.status).toBe(200);
      } finally {
        await own.close();
      }
    });
  });
});
