import { errorHandler } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "./body.js";

let server: Listening;
beforeAll(async () => {
  const app = express();
  app.post("/echo", parseBody(), (req, res) => {
    res.status(201).json({ received: req.body });
  });
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
