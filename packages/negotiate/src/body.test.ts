import { request } from "node:http";
import { connect } from "node:net";
import { errorHandler } from "@svc/errors/express";
import { createPipeline } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseXmlBody } from "./body.js";
import { parseBody } from "./express.js";
import { representations } from "./representer.js";

let server: Listening;
beforeAll(async () => {
  const app = express();
  app.post("/echo", parseBody({ others: "refuse" }), (req, res) => {
    res.status(201).json({ received: req.body });
  });
  const svc = expressAdapter(createPipeline({ representations: representations() }));
  app.get(
    "/employee",
    svc.handle(() => ({ id: 1, managerId: null, note: "" })),
  );
  app.get(
    "/team",
    svc.handle(() => ({ name: "ops", lead: { id: 2, deputy: null }, members: [null, "ann"] })),
  );
  app.use(errorHandler());
  server = await listen(app);
});
afterAll(() => server.close());

const post = (body: Uint8Array, contentType: string) =>
  fetch(`${server.url}/echo`, { method: "POST", body, headers: { "content-type": contentType } });
const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

/** RFC 8259 §8.1 and XML 1.0 §4.3.3: the body is UTF-8; anything else is refused, not repaired. */
describe("parseBody: invalid UTF-8 → 400", () => {
  it.each([
    ["a truncated sequence (C3 28)", [0xc3, 0x28]],
    ["an overlong slash (C0 AF)", [0xc0, 0xaf]],
    ["an encoded surrogate (ED A0 80)", [0xed, 0xa0, 0x80]],
    ["a byte never valid (FF)", [0xff]],
    ["a sequence cut at the end (E2 82)", [0xe2, 0x82]],
  ])("JSON with %s → 400 malformed body, nothing handed on", async (_label, bad) => {
    const res = await post(bytes('{"name":"x', bad, '"}'), "application/json");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe("Malformed JSON body: not valid UTF-8");
  });

  it("XML with invalid UTF-8 → 400", async () => {
    const res = await post(bytes("<a>", [0xc3, 0x28], "</a>"), "application/xml");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe("Malformed XML body: not valid UTF-8");
  });

  it("valid multi-byte UTF-8 split anywhere by the transport → parsed", async () => {
    const res = await post(bytes('{"name":"Zoë 𝄞 日本"}'), "application/json; charset=utf-8");
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { name: "Zoë 𝄞 日本" } });
  });
});

/**
 * An error record carries a stable text of its own, never a parser's exception message: V8's
 * JSON.parse quotes the client's bytes (`Unexpected token 'h', "{"secret":hunter2}" is not
 * valid JSON`) and its wording changes between Node versions; saxes names the client's tags.
 */
describe("parseBody: the 400's message is ours, not the parser's", () => {
  it.each([
    ['{"secret":hunter2}', "Malformed JSON body: not valid JSON"],
    ['{"secret":"hunter2"', "Malformed JSON body: not valid JSON"],
    ["hunter2", "Malformed JSON body: not valid JSON"],
  ])("JSON %s → %j", async (body, message) => {
    const res = await post(bytes(body), "application/json");
    expect(res.status).toBe(400);
    const record = (await res.json()) as { message: string };
    expect(record.message).toBe(message);
    expect(JSON.stringify(record)).not.toMatch(/hunter2|Unexpected|position/);
  });

  it.each([
    ["<a><hunter2></a>", "Malformed XML body: not well-formed XML (line 1, column 16)"],
    ["<a>&hunter2;</a>", "Malformed XML body: not well-formed XML (line 1, column 12)"],
    ["<hunter2>", "Malformed XML body: not well-formed XML (line 1, column 9)"],
    ["hunter2", "Malformed XML body: not well-formed XML (line 1, column 7)"],
  ])("XML %s → %j", async (body, message) => {
    const res = await post(bytes(body), "application/xml");
    expect(res.status).toBe(400);
    const record = (await res.json()) as { message: string };
    expect(record.message).toBe(message);
    expect(JSON.stringify(record)).not.toMatch(/hunter2/);
  });
});

/**
 * A document refused by policy, not by the grammar: a DOCTYPE (well-formed, XML 1.0 §2.8, but an
 * open door to entity expansion and external entities) and nesting past `depth` (well-formed JSON,
 * RFC 8259 §9 lets a parser limit it). The message never calls such a document malformed; the
 * status and code stay those of any refused body.
 */
describe("parseBody: well-formed documents refused by policy are not called malformed", () => {
  const deepXml = (n: number) => `${"<a>".repeat(n)}${"</a>".repeat(n)}`;
  const DOCTYPE = "XML body: a document type declaration (DOCTYPE) is not accepted";
  it.each([
    ["<!DOCTYPE a><a/>", "<!DOCTYPE a><a/>", DOCTYPE],
    [
      "an internal subset with an entity",
      '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>',
      DOCTYPE,
    ],
    ["an external DTD", '<!DOCTYPE a SYSTEM "http://127.0.0.1/a.dtd"><a/>', DOCTYPE],
    ["<a> 33 deep", deepXml(33), "XML body: nesting deeper than 32 levels is not accepted"],
    ["<a> 1000 deep", deepXml(1000), "XML body: nesting deeper than 32 levels is not accepted"],
  ])("XML, %s → 400 refused, not called malformed", async (_label, body, message) => {
    const res = await post(bytes(body), "application/xml");
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 400, message });
  });

  it.each([
    ["[ 33 deep", `${"[".repeat(33)}${"]".repeat(33)}`],
    ['{"a": 40 deep', `${'{"a":'.repeat(40)}1${"}".repeat(40)}`],
  ])("JSON, %s → 400 nesting deeper than 32 levels is not accepted", async (_label, body) => {
    const res = await post(bytes(body), "application/json");
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      status: 400,
      message: "JSON body: nesting deeper than 32 levels is not accepted",
    });
  });

  it.each([
    ["XML 32 deep", deepXml(32), "application/xml"],
    ["JSON 32 deep", `${"[".repeat(32)}${"]".repeat(32)}`, "application/json"],
  ])("%s (the limit) → parsed", async (_label, body, type) => {
    expect((await post(bytes(body), type)).status).toBe(201);
  });

  it("depth: 3, <a><b><c><d/></c></b></a> → 400 naming 3 levels", async () => {
    const app = express();
    app.post("/", parseBody({ depth: 3 }), (_req, res) => res.status(201).end());
    app.use(errorHandler());
    const small = await listen(app);
    try {
      const res = await fetch(`${small.url}/`, {
        method: "POST",
        body: "<a><b><c><d/></c></b></a>",
        headers: { "content-type": "application/xml" },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toBe(
        "XML body: nesting deeper than 3 levels is not accepted",
      );
    } finally {
      await small.close();
    }
  });
});

/**
 * XML 1.0 §2.3: white space is `S ::= (#x20 | #x9 | #xD | #xA)+`, nothing else. The insignificant
 * space around mixed content is those four only; U+00A0, U+3000, U+FEFF and the other characters
 * String.prototype.trim() also strips are text, and a client's `&#xA0;` is data.
 */
describe("parseBody: XML text keeps every character that is not XML white space", () => {
  const kept: Array<[string, string]> = [
    ["U+00A0 NO-BREAK SPACE", "\u00a0"],
    ["U+1680 OGHAM SPACE MARK", "\u1680"],
    ["U+2003 EM SPACE", "\u2003"],
    ["U+2028 LINE SEPARATOR", "\u2028"],
    ["U+2029 PARAGRAPH SEPARATOR", "\u2029"],
    ["U+202F NARROW NO-BREAK SPACE", "\u202f"],
    ["U+3000 IDEOGRAPHIC SPACE", "\u3000"],
    ["U+FEFF ZERO WIDTH NO-BREAK SPACE", "\ufeff"],
  ];

  it.each(kept)('<a x="1">%s</a> → "#text" is that character', async (_label, ch) => {
    const res = await post(bytes(`<a x="1">${ch}</a>`), "application/xml");
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { a: { "@x": "1", "#text": ch } } });
  });

  it.each(kept)('<a x="1">&#x…; of %s</a> → "#text" is that character', async (_label, ch) => {
    const ref = `&#x${ch.codePointAt(0)?.toString(16)};`;
    const res = await post(bytes(`<a x="1">${ref}</a>`), "application/xml");
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { a: { "@x": "1", "#text": ch } } });
  });

  it('<name lang="ja">\\u3000Tanaka</name> → the ideographic space kept', async () => {
    const res = await post(bytes('<name lang="ja">\u3000Tanaka</name>'), "application/xml");
    expect(await res.json()).toEqual({ received: { name: { "@lang": "ja", "#text": "\u3000Tanaka" } } });
  });

  it("<p>\\u00A0<b>x</b>\\u00A0</p> (mixed content) → both no-break spaces kept", async () => {
    const res = await post(bytes("<p>\u00a0<b>x</b>\u00a0</p>"), "application/xml");
    expect(await res.json()).toEqual({ received: { p: { b: "x", "#text": "\u00a0\u00a0" } } });
  });

  it("<p>\\n\\t\\u00A0x\\u3000\\r\\n <b/></p> → XML white space trimmed, the rest kept", async () => {
    const res = await post(bytes("<p>\n\t\u00a0x\u3000\r\n <b/></p>"), "application/xml");
    expect(await res.json()).toEqual({ received: { p: { b: "", "#text": "\u00a0x\u3000" } } });
  });

  it.each([
    ["spaces", "   "],
    ["tabs", "\t\t"],
    ["CR LF", "\r\n"],
    ["LF and spaces", "\n  "],
  ])('<a x="1">%s</a> → XML white space only: no "#text"', async (_label, space) => {
    const res = await post(bytes(`<a x="1">${space}</a>`), "application/xml");
    expect(await res.json()).toEqual({ received: { a: { "@x": "1" } } });
  });

  it("indented children → no #text", async () => {
    const res = await post(bytes("<e>\n  <n>x</n>\n  <n>y</n>\n</e>"), "application/xml");
    expect(await res.json()).toEqual({ received: { e: { n: ["x", "y"] } } });
  });
});

/** RFC 8259 §2: JSON's insignificant white space is the same four characters; JSON.parse agrees. */
describe("parseBody: JSON white space is space, tab, CR and LF only", () => {
  it.each([
    ["U+00A0", "\u00a0"],
    ["U+3000", "\u3000"],
    ["U+FEFF inside", "\ufeff"],
    ["U+2028", "\u2028"],
  ])('{"a":1}%s around the value → 400 not valid JSON', async (_label, ch) => {
    const res = await post(bytes(`{"a":${ch}1}`), "application/json");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe("Malformed JSON body: not valid JSON");
  });

  it('{"name":"\\u3000Tanaka\\u00A0"} → the string as sent', async () => {
    const res = await post(bytes('{"name":"\u3000Tanaka\u00a0"}'), "application/json");
    expect(await res.json()).toEqual({ received: { name: "\u3000Tanaka\u00a0" } });
  });

  it(' \\t\\r\\n{"a":1}\\n → parsed', async () => {
    const res = await post(bytes(' \t\r\n{"a":1}\n'), "application/json");
    expect(await res.json()).toEqual({ received: { a: 1 } });
  });
});

/**
 * RFC 7303 §3.2 with XML 1.0 §4.3.3: the encoding of an XML body is its byte order mark, else the
 * charset parameter, else its encoding declaration. parseBody reads UTF-8 only, so a body that
 * says it is in another encoding is refused with 415, never decoded as UTF-8 regardless.
 */
describe("parseBody: XML in an encoding other than UTF-8 → 415", () => {
  const latin1Decl = '<?xml version="1.0" encoding="ISO-8859-1"?>';
  it.each([
    // "Ã©" in ISO-8859-1 is the two bytes C3 A9, which UTF-8 would read as "é".
    ["declared ISO-8859-1", bytes(latin1Decl, "<a>", [0xc3, 0xa9], "</a>"), "iso-8859-1"],
    [
      "declared windows-1252, ASCII only",
      bytes("<?xml version='1.0' encoding='windows-1252'?><a>x</a>"),
      "windows-1252",
    ],
    ["declared UTF-16", bytes('<?xml version="1.0" encoding="UTF-16"?><a>x</a>'), "utf-16"],
    ["a UTF-16LE byte order mark", Buffer.from("\ufeff<a>x</a>", "utf16le"), "utf-16le"],
    ["a UTF-16BE byte order mark", Buffer.from("\ufeff<a>x</a>", "utf16le").swap16(), "utf-16be"],
  ])("application/xml %s → 415 naming the encoding, nothing handed on", async (_label, body, encoding) => {
    const res = await post(body, "application/xml");
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("application/json, application/xml");
    expect(((await res.json()) as { message: string }).message).toContain(`"${encoding}"`);
  });

  it.each([
    ["declared UTF-8", '<?xml version="1.0" encoding="UTF-8"?><a>é</a>', "application/xml"],
    [
      "declared utf-8 in single quotes",
      "<?xml version='1.0' encoding='utf-8' standalone='yes'?><a>é</a>",
      "text/xml",
    ],
    ["without an encoding declaration", '<?xml version="1.0"?><a>é</a>', "application/xml"],
    // RFC 7303 §3.2: the charset parameter takes precedence over the encoding declaration.
    ["declared ISO-8859-1 under charset=utf-8", `${latin1Decl}<a>é</a>`, "application/xml; charset=utf-8"],
  ])("%s → parsed as UTF-8", async (_label, body, contentType) => {
    const res = await post(bytes(body), contentType);
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { a: "é" } });
  });
});

/**
 * RFC 6838 §4.3: "It is an error for a specific parameter to be specified more than once." A
 * Content-Type naming charset twice says two things about one body; reading it by the first
 * would decode as UTF-8 what a proxy or logger reading the last takes for UTF-16 or Latin-1.
 */
describe("parseBody: a Content-Type naming charset twice → 415", () => {
  it.each([
    ['{"a":"é"}', "application/json; charset=utf-8; charset=utf-16"],
    ['{"a":"é"}', "application/json; charset=utf-8; charset=iso-8859-1"],
    ['{"a":"é"}', "application/json; charset=utf-16; charset=utf-8"],
    ['{"a":"é"}', 'application/json; charset=utf-8; charset="utf-8"'],
    ['{"a":"é"}', "application/json;charset=utf-8;CHARSET=windows-1252"],
    ["<a>é</a>", "application/xml; charset=utf-8; charset=iso-8859-1"],
    ["<a>é</a>", "text/xml; charset=us-ascii; Charset=utf-8"],
  ])("%s as %s → 415, nothing handed on", async (body, contentType) => {
    const res = await post(bytes(body), contentType);
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("application/json, application/xml");
    expect(((await res.json()) as { message: string }).message).toBe(
      "Content-Type names charset more than once; send one charset, UTF-8",
    );
  });

  it.each([
    ['{"a":"é"}', "application/json; charset=utf-8"],
    ['{"a":"é"}', "application/json; charset=UTF-8; foo=1; foo=2"],
  ])("%s as %s → parsed", async (body, contentType) => {
    const res = await post(bytes(body), contentType);
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { a: "é" } });
  });
});

/**
 * body-parser 1 (Express 4's express.json / express.urlencoded) sets `req.body = {}` on every
 * request, also one whose type it does not parse; only its `req._body` says it read the body.
 */
describe("parseBody after another body parser that did not take the body", () => {
  let mixed: Listening;
  beforeAll(async () => {
    const app = express();
    app.use(express.urlencoded({ extended: false }));
    app.use(parseBody());
    app.post("/echo", (req, res) => {
      res.status(201).json({ received: req.body });
    });
    app.use(errorHandler({ logger: { error() {} } }));
    mixed = await listen(app);
  });
  afterAll(() => mixed.close());

  it.each([
    ["application/json", '{"a":1}', { a: 1 }],
    ["application/xml", "<a>1</a>", { a: "1" }],
    ["application/x-www-form-urlencoded", "a=1", { a: "1" }],
  ])("%s → parsed by the parser for it, once", async (contentType, body, received) => {
    const res = await fetch(`${mixed.url}/echo`, {
      method: "POST",
      body,
      headers: { "content-type": contentType },
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received });
  });

  it("malformed JSON → 400, not an empty body handed on", async () => {
    const res = await fetch(`${mixed.url}/echo`, {
      method: "POST",
      body: "{",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
  });
});

/** A POST with `Transfer-Encoding: chunked` carrying `chunks` (none: the empty content `0\r\n\r\n`). */
function chunkedPost(
  headers: Record<string, string>,
  chunks: string[],
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname,
        port,
        path: "/echo",
        method: "POST",
        headers: { ...headers, "transfer-encoding": "chunked" },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

/**
 * RFC 9112 §7: chunked is a transfer coding, a property of the message and not of its content, so
 * empty content framed by `Transfer-Encoding: chunked` is the same as `Content-Length: 0`: no body.
 */
describe("parseBody: empty content, whatever its framing → no body", () => {
  it.each([
    ["Content-Type: application/json", { "content-type": "application/json" }],
    ["no Content-Type", {}],
    ["Content-Type: text/plain", { "content-type": "text/plain" }],
  ])(
    "chunked, no data, %s → handled with req.body undefined, as with Content-Length: 0",
    async (_label, headers) => {
      const chunked = await chunkedPost(headers, []);
      expect(chunked).toEqual({ status: 201, body: "{}" });
      const lengthZero = await fetch(`${server.url}/echo`, { method: "POST", body: "", headers });
      expect(lengthZero.status).toBe(201);
      expect(await lengthZero.text()).toBe("{}");
    },
  );

  it("chunked JSON with data → parsed", async () => {
    expect(await chunkedPost({ "content-type": "application/json" }, ['{"a"', ":1}"])).toEqual({
      status: 201,
      body: '{"received":{"a":1}}',
    });
  });

  it("chunked with data, Content-Type: text/plain → 415, nothing handed on", async () => {
    const res = await chunkedPost({ "content-type": "text/plain" }, ["hello"]);
    expect(res.status).toBe(415);
  });

  it("chunked with data, no Content-Type → 415", async () => {
    expect((await chunkedPost({}, ["{}"])).status).toBe(415);
  });
});

/** Sends the head and the first part of a body, then nothing: what the server answers before it closes. */
function stalledPost(base: string, path: string, sent: string, length: number): Promise<{ text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = "";
    socket.on("data", (c: Buffer) => {
      text += c.toString("latin1");
    });
    socket.on("error", reject);
    socket.on("close", () => resolve({ text }));
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${sent}`,
    );
  });
}

describe("parseBody: a body that stalls after the headers → 408", () => {
  let slow: Listening;
  let handled = 0;
  beforeAll(async () => {
    const app = express();
    app.post("/short", parseBody({ timeout: 300 }), (_req, res) => {
      handled++;
      res.status(201).end();
    });
    app.post("/default", parseBody(), (_req, res) => {
      res.status(201).end();
    });
    app.use(errorHandler({ logger: { error() {} } }));
    slow = await listen(app);
  });
  afterAll(() => slow.close());

  it("timeout: 300, 10 of 100 bytes sent then silence → 408 JSON error record, Connection: close", async () => {
    const { text } = await stalledPost(slow.url, "/short", '{"name":"', 100);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toMatch(/^Connection: close\r$/im);
    expect(text).toMatch(/^Content-Type: application\/(problem\+)?json/im);
    // The JSON error record says parseBody's timer answered: Node's own request timeout (300 s,
    // past the test's time limit anyway) answers 408 without a body.
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toMatchObject({ status: 408 });
    expect(handled).toBe(0);
  });

  it("timeout: 300, the whole body in time → handled", async () => {
    const res = await fetch(`${slow.url}/short`, {
      method: "POST",
      body: '{"a":1}',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(201);
  });

  it.each([[0], [-1], [1.5], ["30"], [true], [2 ** 31]])(
    "timeout: %j → TypeError ERR_SVC_NEGOTIATE_TIMEOUT",
    (timeout) => {
      expect(() => parseBody({ timeout: timeout as never })).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_NEGOTIATE_TIMEOUT" }),
      );
    },
  );

  it("timeout: false → accepted (no body time-out)", () => {
    expect(() => parseBody({ timeout: false })).not.toThrow();
  });
});

describe("parseXmlBody: element names that are Object.prototype members", () => {
  it("<a><__proto__><x>1</x></__proto__></a> → an own __proto__ key; the object's prototype untouched", () => {
    const { a } = parseXmlBody("<a><__proto__><x>1</x></__proto__></a>") as { a: Record<string, unknown> };
    expect(Object.getPrototypeOf(a)).toBe(Object.prototype);
    expect(Object.hasOwn(a, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(a, "__proto__")?.value).toEqual({ x: "1" });
  });

  it("<a><constructor>1</constructor></a> → the text, no inherited function in the value", () => {
    expect(parseXmlBody("<a><constructor>1</constructor><valueOf>2</valueOf></a>")).toEqual({
      a: { constructor: "1", valueOf: "2" },
    });
  });
});

/**
 * Namespaces in XML 1.0 §3: `xmlns` and `xmlns:p` "declare" a namespace; they are not data, so
 * they never become `@xmlns` keys. Names are the qualified names the document wrote (§4), prefix
 * included, for elements and attributes alike; only `xsi:nil` resolves its prefix.
 */
describe("parseBody: namespace declarations are not data", () => {
  const XSI_URI = "http://www.w3.org/2001/XMLSchema-instance";
  it.each([
    ['<e xmlns="urn:x"><id>1</id></e>', { e: { id: "1" } }],
    ['<e xmlns="urn:x">7</e>', { e: "7" }],
    ['<e xmlns="urn:x"/>', { e: "" }],
    ['<e xmlns:p="urn:x"><id>1</id></e>', { e: { id: "1" } }],
    ['<e><a xmlns:p="urn:x"/><a xmlns="urn:y">2</a></e>', { e: { a: ["", "2"] } }],
    ['<p:e xmlns:p="urn:x"><p:id>1</p:id></p:e>', { "p:e": { "p:id": "1" } }],
    ['<e xmlns:p="urn:x" p:id="1" id="2"/>', { e: { "@p:id": "1", "@id": "2" } }],
    [`<e xmlns:xsi="${XSI_URI}"><m xsi:nil="true"/></e>`, { e: { m: null } }],
    [
      `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body><x xmlns="urn:x">1</x></s:Body></s:Envelope>`,
      { "s:Envelope": { "s:Body": { x: "1" } } },
    ],
    // Not declarations: a reserved prefix other than xmlns, and an attribute named like one.
    ['<e xml:lang="en">hi</e>', { e: { "@xml:lang": "en", "#text": "hi" } }],
    ['<e xmlnsx="1" XMLNS:p="2"/>', { e: { "@xmlnsx": "1", "@XMLNS:p": "2" } }],
  ])("%s → %j", async (body, received) => {
    const res = await post(bytes(body), "application/xml");
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received });
  });

  // managerId null, note "": nil and empty stay apart.
  it.each([
    ["/employee", { resource: { id: "1", managerId: null, note: "" } }],
    [
      "/team",
      { resource: { name: "ops", lead: { id: "2", deputy: null }, members: { item: [null, "ann"] } } },
    ],
  ])("GET %s as application/xml, POSTed back → the same value, no @xmlns:xsi", async (path, received) => {
    const got = await fetch(`${server.url}${path}`, { headers: { accept: "application/xml" } });
    expect(await got.clone().text()).toContain("xmlns:xsi=");
    const res = await post(bytes(await got.text()), "application/xml");
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received });
  });
});

/**
 * XML Schema Part 1 §2.6.2: "An element may be ·valid· without content if it has the attribute
 * xsi:nil with the value true. An element so labeled must be empty". The XML representation writes
 * null that way, so a body read back gives null where the document said nil, and only where the
 * attribute's prefix is bound to the XML Schema instance namespace (Namespaces in XML 1.0 §6).
 */
describe("parseBody: xsi:nil", () => {
  const XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
  const XSI_URI = "http://www.w3.org/2001/XMLSchema-instance";

  it.each([
    [`<e ${XSI}><id>1</id><managerId xsi:nil="true"/></e>`, { id: "1", managerId: null }],
    [`<e ${XSI}><managerId xsi:nil="1"/></e>`, { managerId: null }],
    [`<e ${XSI}><managerId xsi:nil=" true "/></e>`, { managerId: null }],
    [`<e ${XSI}><managerId xsi:nil="true"></managerId></e>`, { managerId: null }],
    [`<e ${XSI}><managerId xsi:nil="true"><!-- none --></managerId></e>`, { managerId: null }],
    [`<e><managerId ${XSI} xsi:nil="true"/></e>`, { managerId: null }],
    [`<e xmlns:i="${XSI_URI}"><managerId i:nil="true"/></e>`, { managerId: null }],
    [`<e ${XSI}><tags><item xsi:nil="true"/><item></item></tags></e>`, { tags: { item: [null, ""] } }],
  ])("%s → null", async (body, e) => {
    const res = await post(bytes(body), "application/xml");
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { e } });
  });

  it(`<e ${XSI} xsi:nil="true"/> → { e: null }`, async () => {
    const res = await post(bytes(`<e ${XSI} xsi:nil="true"/>`), "application/xml");
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { e: null } });
  });

  // Not the XML Schema instance's nil: an attribute like any other.
  it.each([
    [`<e ${XSI}><m xsi:nil="false"/></e>`, { m: { "@xsi:nil": "false" } }],
    [`<e ${XSI}><m xsi:nil="0">7</m></e>`, { m: { "@xsi:nil": "0", "#text": "7" } }],
    ['<e xmlns:xsi="urn:other"><m xsi:nil="true"/></e>', { m: { "@xsi:nil": "true" } }],
    ['<e><m xsi:nil="true"/></e>', { m: { "@xsi:nil": "true" } }],
    [`<e><a ${XSI}/><m xsi:nil="true"/></e>`, { a: "", m: { "@xsi:nil": "true" } }],
    [`<e xmlns="${XSI_URI}"><m nil="true"/></e>`, { m: { "@nil": "true" } }],
    [`<e ${XSI}><m xsi:nil="true" unit="x"/></e>`, { m: { "@xsi:nil": "true", "@unit": "x" } }],
  ])("%s → an attribute like any other", async (body, e) => {
    const res = await post(bytes(body), "application/xml");
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { e } });
  });

  it.each([
    [
      `<e ${XSI}><m xsi:nil="true">7</m></e>`,
      'an element with xsi:nil="true" has content (line 1, column 80); a nil element must be empty',
    ],
    [
      `<e ${XSI}><m xsi:nil="true"><n/></m></e>`,
      'an element with xsi:nil="true" has content (line 1, column 83); a nil element must be empty',
    ],
    [
      `<e ${XSI}><m xsi:nil="true"> </m></e>`,
      'an element with xsi:nil="true" has content (line 1, column 80); a nil element must be empty',
    ],
    [`<e ${XSI}><m xsi:nil="yes"/></e>`, "xsi:nil is not one of true, false, 1, 0 (line 1, column 75)"],
    [
      `<e ${XSI} xmlns:i="${XSI_URI}"><m xsi:nil="1" i:nil="0"/></e>`,
      "two xsi:nil attributes on one element (line 1, column 135)",
    ],
  ])("%s → 400 Invalid XML body (well-formed, against the xsi:nil rules)", async (body, reason) => {
    const res = await post(bytes(body), "application/xml");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe(`Invalid XML body: ${reason}`);
  });

  // XML 1.0 §1.2: a well-formedness error is fatal and is what the message names, also when an
  // xsi:nil rule broke earlier in the document.
  it.each([
    [`<e ${XSI}><m xsi:nil="true">7</m>`, "not well-formed XML (line 1, column 80)"],
    [`<e ${XSI}><m xsi:nil="yes"/><a></b></e>`, "not well-formed XML (line 1, column 82)"],
  ])("%s → 400 Malformed XML body", async (body, reason) => {
    const res = await post(bytes(body), "application/xml");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe(`Malformed XML body: ${reason}`);
  });

  it.each([["application/json"], ["application/problem+json"]])(
    "the xsi:nil refusal's error record, Accept: %s → the shape and code of a malformed body's",
    async (accept) => {
      const send = (body: string) =>
        fetch(`${server.url}/echo`, {
          method: "POST",
          body,
          headers: { "content-type": "application/xml", accept },
        });
      const invalid = await send(`<e ${XSI}><m xsi:nil="true">7</m></e>`);
      const malformed = await send("<e><m></e>");
      const a = (await invalid.json()) as Record<string, unknown>;
      const b = (await malformed.json()) as Record<string, unknown>;
      expect([invalid.status, invalid.headers.get("content-type")]).toEqual([
        malformed.status,
        malformed.headers.get("content-type"),
      ]);
      expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
      expect(a.status).toBe(400);
      expect(a.type).toBe(b.type);
      // RFC 9457 problem details carry the code; the plain record does not.
      const code = accept === "application/problem+json" ? "malformed_body" : undefined;
      expect([a.code, b.code]).toEqual([code, code]);
      expect(a.message ?? a.detail).toMatch(/^Invalid XML body: an element with xsi:nil="true" has content/);
    },
  );
});
