import { describe, expect, it } from "vitest";
import { useEchoServer } from "./echo-server.js";

/**
 * RFC 7303 §3.2 and XML 1.0 Appendix F: the byte order mark at the start of an XML body names its
 * encoding, and parseBody reads UTF-8 only, so a body whose mark names another one is refused
 * with 415 naming it. The mark of UTF-32LE (FF FE 00 00) begins with UTF-16LE's (FF FE); read two
 * bytes at a time it was reported as "utf-16". Appendix F reads the four bytes first: FF FE 00 00
 * is UCS-4 (UTF-32) little-endian and FE FF 00 00 UCS-4 in the 3412 octet order, never UTF-16
 * (U+0000 is no XML character, so no UTF-16 document starts with it). The status stays as it was.
 */
const server = useEchoServer();

const utf16le = (text: string) => Buffer.from(text, "utf16le");
const utf16be = (text: string) => Buffer.from(text, "utf16le").swap16();
const utf32le = (text: string) => {
  const out = Buffer.alloc(text.length * 4);
  for (let i = 0; i < text.length; i++) out.writeUInt32LE(text.charCodeAt(i), i * 4);
  return out;
};
/** UCS-4 in the octet order 3412 of XML 1.0 Appendix F: each UTF-16BE unit preceded by 00 00. */
const ucs4In3412 = (text: string) =>
  Buffer.concat([...text].map((c) => Buffer.concat([utf16be(c), Buffer.alloc(2)])));

const post = async (body: Uint8Array, contentType: string) => {
  const before = server.reached;
  const res = await fetch(`${server.url}/echo`, {
    method: "POST",
    body,
    headers: { "content-type": contentType },
  });
  return {
    status: res.status,
    acceptPost: res.headers.get("accept-post"),
    body: (await res.json()) as unknown,
    reached: server.reached - before,
  };
};

describe("parseBody: an XML body with a byte order mark other than UTF-8's → 415 naming what the mark shows", () => {
  it.each<[string, Buffer, string, string]>([
    ["UTF-32LE (FF FE 00 00)", utf32le("\ufeff<a>x</a>"), "application/xml", "utf-32le"],
    ["UTF-32LE under charset=utf-8", utf32le("\ufeff<a>x</a>"), "application/xml; charset=utf-8", "utf-32le"],
    ["UTF-32LE, text/xml", utf32le("\ufeff<a/>"), "text/xml", "utf-32le"],
    [
      "UCS-4 in octet order 3412 (FE FF 00 00)",
      ucs4In3412("\ufeff<a>x</a>"),
      "application/xml",
      "ucs-4 (3412)",
    ],
    ["UTF-16LE (FF FE)", utf16le("\ufeff<a>x</a>"), "application/xml", "utf-16le"],
    ["UTF-16BE (FE FF)", utf16be("\ufeff<a>x</a>"), "application/xml", "utf-16be"],
    [
      "UTF-16LE whose first character is U+0100 (FF FE 00 01)",
      utf16le("\ufeff\u0100<a/>"),
      "application/xml",
      "utf-16le",
    ],
  ])("%s → 415, the encoding named, nothing handed on", async (_label, body, type, encoding) => {
    const res = await post(body, type);
    expect(res).toEqual({
      status: 415,
      acceptPost: "application/json, application/xml",
      body: expect.objectContaining({
        status: 415,
        message: `XML encoding "${encoding}" is not supported; send UTF-8`,
      }),
      reached: 0,
    });
  });

  it("a UTF-8 byte order mark → parsed, as before", async () => {
    const res = await post(Buffer.from("\ufeff<a>x</a>"), "application/xml");
    expect(res).toMatchObject({ status: 201, body: { received: { a: "x" } }, reached: 1 });
  });
});

describe("parseBody: a JSON body with a UTF-16 or UTF-32 byte order mark → 400 not valid UTF-8, as before", () => {
  it.each<[string, Buffer]>([
    ["UTF-32LE", utf32le('\ufeff{"a":1}')],
    ["UTF-16LE", utf16le('\ufeff{"a":1}')],
    ["UTF-16BE", utf16be('\ufeff{"a":1}')],
  ])("%s → 400, no encoding misnamed", async (_label, body) => {
    const res = await post(body, "application/json");
    expect(res).toMatchObject({
      status: 400,
      body: { status: 400, message: "Malformed JSON body: not valid UTF-8" },
      reached: 0,
    });
  });
});
