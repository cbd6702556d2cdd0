import { describe, expect, it } from "vitest";
import { useEchoServer } from "./echo-server.js";

/**
 * RFC 8259 §8.1: "Implementations MUST NOT add a byte order mark (U+FEFF) to the beginning of a
 * networked-transmitted JSON text. In the interests of interoperability, implementations that
 * parse JSON texts MAY ignore the presence of a byte order mark rather than treating it as an
 * error." Clients do add one (PowerShell 5's `Out-File -Encoding utf8` then `Invoke-RestMethod
 * -InFile`, .NET writers using `Encoding.UTF8`), and `express.json()` and fetch's `json()` drop
 * it: one UTF-8 BOM at the very start is dropped. Anywhere else U+FEFF is not JSON white space,
 * and a UTF-16 BOM still means a body that is not UTF-8.
 */
const server = useEchoServer();

const BOM = [0xef, 0xbb, 0xbf];
const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));
const post = async (body: Uint8Array, contentType = "application/json") => {
  const res = await fetch(`${server.url}/echo`, {
    method: "POST",
    body,
    headers: { "content-type": contentType },
  });
  return { status: res.status, body: (await res.json()) as unknown };
};

describe("parseBody: a JSON body starting with a UTF-8 byte order mark", () => {
  it.each<[string, Buffer, string, unknown]>([
    ["an object", bytes(BOM, '{"name":"Ada"}'), "application/json", { name: "Ada" }],
    ["white space after the BOM", bytes(BOM, ' \r\n{"a":1}\n'), "application/json", { a: 1 }],
    ["charset=utf-8", bytes(BOM, "[1,2]"), "application/json; charset=utf-8", [1, 2]],
    ["a +json type", bytes(BOM, '{"a":null}'), "application/merge-patch+json", { a: null }],
    ["a bare string", bytes(BOM, '"x"'), "application/json", "x"],
    // Only the mark before the text is dropped; U+FEFF inside a string is data.
    ["U+FEFF inside a string kept", bytes(BOM, '{"a":"', BOM, 'x"}'), "application/json", { a: "\ufeffx" }],
  ])("%s → parsed without it", async (_label, body, type, expected) => {
    const res = await post(body, type);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ received: expected });
  });

  it.each<[string, Buffer]>([
    ["two BOMs", bytes(BOM, BOM, '{"a":1}')],
    ["a BOM after white space", bytes(" ", BOM, '{"a":1}')],
    ["a BOM between tokens", bytes('{"a":', BOM, "1}")],
    ["a BOM at the end", bytes('{"a":1}', BOM)],
    ["a BOM and nothing else", bytes(BOM)],
    ["a BOM and white space only", bytes(BOM, "  ")],
  ])("%s → 400 not valid JSON, the handler never server.reached", async (_label, body) => {
    const before = server.reached;
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 400, message: "Malformed JSON body: not valid JSON" });
    expect(server.reached).toBe(before);
  });

  it.each<[string, Buffer]>([
    ["UTF-16LE with its BOM", Buffer.from('\ufeff{"a":1}', "utf16le")],
    ["UTF-16BE with its BOM", Buffer.from('\ufeff{"a":1}', "utf16le").swap16()],
    ["a UTF-8 BOM cut short (EF BB)", bytes([0xef, 0xbb], '{"a":1}')],
  ])("%s → 400 not valid UTF-8", async (_label, body) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 400, message: "Malformed JSON body: not valid UTF-8" });
  });

  it("a UTF-8 BOM under charset=utf-16 → 415, the charset refused as before", async () => {
    const res = await post(bytes(BOM, '{"a":1}'), "application/json; charset=utf-16");
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ status: 415, message: 'charset "utf-16" is not supported; send UTF-8' });
  });

  it("XML with a UTF-8 BOM → parsed, as before (XML 1.0 §4.3.3)", async () => {
    const res = await post(bytes(BOM, "<a>x</a>"), "application/xml");
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ received: { a: "x" } });
  });
});
