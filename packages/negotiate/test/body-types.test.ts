import { errorHandler } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "../src/index.js";

/** parseBody({ types }) with media types: exactly those, and Accept-Post / Accept-Patch naming them. */
describe("parseBody({ types: [media types] }) through a listening server", () => {
  let server: Listening;
  beforeAll(async () => {
    const app = express();
    app.use(parseBody({ types: ["application/json", "application/merge-patch+json"] }));
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
