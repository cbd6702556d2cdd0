import { listen } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  ENV,
  envelope,
  getCustomer,
  post,
  readFault,
  SOAP,
  silentLogger,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";
import { createSoapService } from "../binding/service.js";

// A fault Reason quotes names and values from the message cut short. XML 1.0 §2.2 Char admits
// a supplementary character (U+10000–U+10FFFF) whole, never one half of its UTF-16 surrogate
// pair: a cut after the high surrogate left a lone one, written as U+FFFD (or, unescaped, as an
// ill-formed document). Each row puts a supplementary character astride the cut.

let svc: Awaited<ReturnType<typeof startCustomerService>>;
beforeAll(async () => {
  svc = await startCustomerService();
});
afterAll(() => svc.close());

/** U+1D49C MATHEMATICAL SCRIPT CAPITAL A: an XML NameStartChar and NameChar, two UTF-16 units. */
const A = "\u{1D49C}";
/** `a` then 300 of {@link A}: cut at any even number of UTF-16 units, a surrogate pair is split. */
const NAME = `a${A.repeat(300)}`;
/** What a Reason shows of {@link NAME} cut to `n` characters (code points). */
const cutTo = (n: number) => `a${A.repeat(n - 1)}`;
const XSI = "http://www.w3.org/2001/XMLSchema-instance";
const withAttribute = (attribute: string) =>
  getCustomer("42").replace("<c:GetCustomerRequest ", `<c:GetCustomerRequest ${attribute} `);

const rows: [string, string, string, string][] = [
  ["the body child", envelope(`<${NAME}/>`), `{${ENV}}Sender`, `${cutTo(100)}…`],
  ["the body child's namespace", envelope(`<x:op xmlns:x="${NAME}"/>`), `{${ENV}}Sender`, `{${cutTo(100)}…}`],
  [
    "an unexpected child",
    envelope(getCustomer("42").replace("</c:GetCustomerRequest>", `<${NAME}/></c:GetCustomerRequest>`)),
    `{${ENV}}Sender`,
    `${cutTo(100)}…`,
  ],
  ["an attribute not allowed", envelope(withAttribute(`${NAME}="1"`)), `{${ENV}}Sender`, `"${cutTo(100)}…"`],
  [
    "an unqualified attribute on env:Envelope",
    envelope(getCustomer("42")).replace("<env:Envelope ", `<env:Envelope ${NAME}="1" `),
    `{${ENV}}Sender`,
    `"${cutTo(100)}…"`,
  ],
  [
    "an unqualified header block",
    envelope(getCustomer("42"), `<${NAME}/>`),
    `{${ENV}}Sender`,
    `"${cutTo(100)}…"`,
  ],
  [
    "an unsupported xsi: attribute",
    envelope(withAttribute(`xmlns:xsi="${XSI}" xsi:${NAME}="1"`)),
    `{${ENV}}Sender`,
    `xsi:${cutTo(100)}…`,
  ],
  [
    "an env:mustUnderstand value",
    envelope(getCustomer("42"), `<h:b xmlns:h="urn:h" env:mustUnderstand="${NAME}"/>`),
    `{${ENV}}Sender`,
    `"${cutTo(40)}…"`,
  ],
  [
    "an xsi:nil value",
    envelope(withAttribute(`xmlns:xsi="${XSI}" xsi:nil="${NAME}"`)),
    `{${ENV}}Sender`,
    `"${cutTo(40)}…"`,
  ],
  [
    "an xsi:type value",
    envelope(withAttribute(`xmlns:xsi="${XSI}" xsi:type="${NAME}"`)),
    `{${ENV}}Sender`,
    `"${cutTo(100)}…"`,
  ],
  [
    "an xs:long value",
    envelope(
      `<c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>${NAME}</c:customerId></c:GetCustomerRequest>`,
    ),
    `{${ENV}}Sender`,
    `"${cutTo(60)}…"`,
  ],
  [
    "a mandatory header block nobody understands",
    envelope(getCustomer("42"), `<h:${NAME} xmlns:h="urn:h" env:mustUnderstand="true"/>`),
    `{${ENV}}MustUnderstand`,
    `{urn:h}${cutTo(100)}…`,
  ],
  [
    "the body child's env:encodingStyle",
    envelope(withAttribute(`env:encodingStyle="${NAME}"`)),
    `{${ENV}}DataEncodingUnknown`,
    `"${cutTo(200)}…"`,
  ],
  [
    "a descendant's env:encodingStyle",
    envelope(getCustomer("42").replace("<c:customerId>", `<c:customerId env:encodingStyle="${NAME}">`)),
    `{${ENV}}DataEncodingUnknown`,
    `"${cutTo(200)}…"`,
  ],
];

describe("a fault Reason cuts names and values on characters, never inside a surrogate pair (XML 1.0 §2.2)", () => {
  it.each(rows)(
    "a long name or value with U+1D49C astride the cut in %s",
    async (_, message, code, shown) => {
      const res = await post(svc.endpoint, message);
      expect(res.status).toBe(code === `{${ENV}}Sender` ? 400 : 500);
      const fault = readFault(res.text);
      expect(fault.code).toBe(code);
      expect(res.text).not.toContain("\uFFFD");
      expect(fault.reason).toContain(shown);
      // Cut, not echoed whole: the next character of the name is not there.
      expect(fault.reason).not.toContain(`${shown.replace("…", "")}${A}`);
    },
  );
  it("a well-formed reply afterwards", async () => {
    expect((await post(svc.endpoint, envelope(getCustomer("42")))).status).toBe(200);
  });
});

describe("header values quoted in a Reason are cut on characters too, on a transport that reads them as UTF-8", () => {
  // RFC 9110 §5.5: a field value is octets; node hands them over as ISO-8859-1, a transport may
  // decode them as UTF-8 (as this one does) before calling service.handle().
  const service = createSoapService({
    wsdl: CUSTOMER_WSDL,
    handlers: customerHandlers(),
    logger: silentLogger,
  });
  const utf8 = (value: string | undefined) =>
    value === undefined ? undefined : Buffer.from(value, "latin1").toString("utf8");
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    server = await listen(async (req, res) => {
      const answer = await service.handle({
        method: "POST",
        contentType: utf8(req.headers["content-type"]),
        contentLength: req.headers["content-length"],
        contentEncoding: utf8(req.headers["content-encoding"]),
        body: req,
      });
      if (answer.unreadBody) req.resume();
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  });
  afterAll(() => server.close());

  /** A header value of UTF-8 octets, as node sends a string's code units below 256. */
  const octets = (value: string) => Buffer.from(value, "utf8").toString("latin1");
  it.each([
    ["the charset parameter", { "content-type": octets(`application/soap+xml; charset=${NAME}`) }],
    ["Content-Encoding", { "content-type": SOAP, "content-encoding": octets(NAME) }],
  ])("%s, 40 characters shown → 415 Sender, the pair astride the cut kept whole", async (_, headers) => {
    const res = await post(server.url, envelope(getCustomer("42")), headers["content-type"], headers);
    expect(res.status).toBe(415);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Sender`);
    expect(res.text).not.toContain("\uFFFD");
    expect(fault.reason).toContain(`"${cutTo(40)}…"`);
  });
});
