import { errorHandler } from "@svc/errors/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "../src/express.js";

/** parseBody({ types }) with media types: exactly those, and Accept-Post / Accept-Patch naming them. */
describe("parseBody({ types: [media types] }) through a listening server", () => {
  let server: Listening;
  beforeAll(async () => {
    const app = express();
    app.use(parseBody({ types: ["application/json", "application/merge-patch+json"], others: "refuse" }));
    app.all("/things", (req, res) => res.json({ received: req.body }));
    app.use(errorHandler());
    server = await listen(app);
  });
  afterAll(() => server.close());

  const send = (method: string, type: string, body: string) =>
    fetch(`${server.url}/things`, { method, headers: { "content-type": type }, body });

  it.each([
    ["POST", "application/json"],
    ["PATCH", "application/merge-patch+json"],
    ["PATCH", "Application/Merge-Patch+JSON; charset=utf-8"],
  ])("%s as %s → parsed", async (method, type) => {
    const res = await send(method, type, '{"a":1}');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: { a: 1 } });
  });

  it.each([
    ["PATCH", "application/json-patch+json", "accept-patch"],
    ["POST", "application/vnd.x+json", "accept-post"],
    ["POST", "application/xml", "accept-post"],
  ])("%s as %s → 415 naming the two types", async (method, type, field) => {
    const res = await send(method, type, "[]");
    expect(res.status).toBe(415);
    expect(res.headers.get(field)).toBe("application/json, application/merge-patch+json");
    expect(((await res.json()) as { message: string }).message).toBe(
      `Content-Type "${type}" is not supported; accepted: application/json, application/merge-patch+json`,
    );
  });
});

describe("parseBody({ exactNumbers: true }) through a listening server (RFC 8259 §6)", () => {
  let server: Listening;
  beforeAll(async () => {
    const app = express();
    app.use(parseBody({ exactNumbers: true }));
    app.post("/things", (req, res) => res.json({ received: req.body }));
    app.use(errorHandler());
    server = await listen(app);
  });
  afterAll(() => server.close());

  const post = (body: string) =>
    fetch(`${server.url}/things`, { method: "POST", headers: { "content-type": "application/json" }, body });

  it('{"amount":1.0000000000000001,"lines":[{"price":1e400}]} → 400 inexact_number naming both', async () => {
    const res = await post('{"amount":1.0000000000000001,"lines":[{"price":1e400}]}');
    expect(res.status).toBe(400);
    const record = (await res.json()) as {
      message: string;
      errors: Array<{ field: string; message: string }>;
    };
    expect(record.message).toBe("JSON body: a number is not held exactly");
    expect(record.errors.map((e) => e.field)).toEqual(["amount", "lines.0.price"]);
    expect(record.errors[0]?.message).toContain("1.0000000000000001");
  });

  it('{"amount":0.1,"n":9007199254740991,"s":"1.0000000000000001"} → parsed', async () => {
    const res = await post('{"amount":0.1,"n":9007199254740991,"s":"1.0000000000000001"}');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      received: { amount: 0.1, n: 9007199254740991, s: "1.0000000000000001" },
    });
  });

  it("without the option, 1.0000000000000001 is read as 1 (JSON.parse)", async () => {
    const app = express();
    app.use(parseBody());
    app.post("/things", (req, res) => res.json({ received: req.body }));
    const plain = await listen(app);
    try {
      const res = await fetch(`${plain.url}/things`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "[1.0000000000000001]",
      });
      expect(await res.json()).toEqual({ received: [1] });
    } finally {
      await plain.close();
    }
  });
});
