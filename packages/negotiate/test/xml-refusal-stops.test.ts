import { SaxesParser } from "saxes";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { useEchoServer } from "./echo-server.js";

/**
 * XML 1.0 §1.2: once a fatal error is found the processor "MUST NOT continue normal processing";
 * a policy refusal (a DOCTYPE, nesting deeper than `depth`, a version other than 1.0) decides the
 * response just as finally. The first of them decides, so whatever follows in the body cannot
 * change the answer: parsing stops there, instead of running saxes over the rest of a hostile
 * body (up to `limit` bytes of elements) for nothing. The response is the same as before.
 *
 * What saxes reports is counted by wrapping the handlers parseXmlBody registers, on the parser
 * the real server uses.
 */
const server = useEchoServer();

const events: string[] = [];
beforeAll(() => {
  const on = SaxesParser.prototype.on;
  vi.spyOn(SaxesParser.prototype, "on").mockImplementation(function (
    this: SaxesParser,
    name: Parameters<SaxesParser["on"]>[0],
    handler: (...args: never[]) => unknown,
  ) {
    const counted = (...args: never[]) => {
      events.push(name);
      return handler(...args);
    };
    return on.call(this, name, counted as Parameters<SaxesParser["on"]>[1]);
  } as SaxesParser["on"]);
});
afterAll(() => vi.restoreAllMocks());
beforeEach(() => {
  events.length = 0;
});

const post = async (xml: string) => {
  const before = server.reached;
  const res = await fetch(`${server.url}/echo`, {
    method: "POST",
    body: xml,
    headers: { "content-type": "application/xml" },
  });
  return { status: res.status, body: (await res.json()) as unknown, reached: server.reached - before };
};

const tail = "<x/>".repeat(2000);
const count = (name: string) => events.filter((e) => e === name).length;

describe("parseBody: XML parsing stops at the first refusal, the response unchanged", () => {
  it("a DOCTYPE, then 2000 elements → 400 DOCTYPE refused, no element parsed", async () => {
    const res = await post(`<!DOCTYPE a><a>${tail}</a>`);
    expect(res).toMatchObject({
      status: 400,
      body: { status: 400, message: "XML body: a document type declaration (DOCTYPE) is not accepted" },
      reached: 0,
    });
    expect(events).toEqual(["doctype"]);
  });

  it("33 levels (depth 32), then 2000 elements → 400 depth refused, nothing after the 33rd open tag", async () => {
    const deep = `${"<d>".repeat(33)}${tail}${"</d>".repeat(33)}`;
    const res = await post(deep);
    expect(res).toMatchObject({
      status: 400,
      body: { status: 400, message: "XML body: nesting deeper than 32 levels is not accepted" },
      reached: 0,
    });
    // The 33rd start tag is refused as its name is read, before its attributes or its end.
    expect(count("opentagstart")).toBe(33);
    expect(count("opentag")).toBe(32);
    expect(events).toHaveLength(65);
  });

  it("an XML 1.1 declaration, then 2000 elements → 400 version refused, no element parsed", async () => {
    const res = await post(`<?xml version="1.1"?><a>${tail}</a>`);
    expect(res).toMatchObject({
      status: 400,
      body: {
        status: 400,
        message: "XML body: only XML 1.0 is accepted; the XML declaration names another version",
      },
      reached: 0,
    });
    expect(events).toEqual(["xmldecl"]);
  });

  it("a well-formedness error, then 2000 elements → 400 at the first error, nothing after it", async () => {
    const res = await post(`<a><b></c>${tail}</a>`);
    expect(res).toMatchObject({
      status: 400,
      body: { status: 400, message: "Malformed XML body: not well-formed XML (line 1, column 10)" },
      reached: 0,
    });
    expect(count("opentag")).toBe(2);
    expect(events.at(-1)).toBe("error");
    expect(count("error")).toBe(1);
  });

  it("an xsi:nil breach first, then a well-formedness error → the well-formedness error, as before", async () => {
    const xsi = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
    const res = await post(`<a ${xsi}><b xsi:nil="maybe"/>${tail}<c></a>`);
    expect(res).toMatchObject({ status: 400, reached: 0 });
    expect((res.body as { message: string }).message).toMatch(/^Malformed XML body: not well-formed XML /);
    expect(count("opentag")).toBeGreaterThan(2000);
  });

  it("the same 2000 elements well-formed, the deepest at level 32 → parsed whole, as before", async () => {
    const ok = `${"<d>".repeat(30)}<a>${tail}</a>${"</d>".repeat(30)}`;
    const res = await post(ok);
    expect(res.status).toBe(201);
    expect(res.reached).toBe(1);
    expect(count("opentag")).toBe(31 + 2000);
    expect(count("closetag")).toBe(31 + 2000);
  });
});
