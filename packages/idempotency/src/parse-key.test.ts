import { createServer } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { reply } from "@svc/kernel";
import { listenOn } from "@svc/test-utils";
import express from "express";
import { describe, expect, it } from "vitest";
import { keyed } from "../test/pipeline-app.js";
import { parseIdempotencyKey } from "./parse-key.js";

describe("parseIdempotencyKey", () => {
  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', "8e03978e-40d5-43e8-bc93-6894a57f9324"],
    ["8e03978e-40d5-43e8-bc93-6894a57f9324", "8e03978e-40d5-43e8-bc93-6894a57f9324"],
    ['  "abc"  ', "abc"],
    ['"with space"', "with space"],
    ['"esc\\"aped"', 'esc"aped'],
    ['"abc";v=1', "abc"],
    ["token*with/odd:chars", "token*with/odd:chars"],
    [`"${"x".repeat(255)}"`, "x".repeat(255)],
  ])("%s → valid key", (header, key) => {
    expect(parseIdempotencyKey(header)).toEqual({ kind: "valid", key });
  });

  it.each([
    ['""', "empty sf-string"],
    ["", "empty"],
    ["   ", "only spaces"],
    ['"unterminated', "unterminated string"],
    ['"a", "b"', "a list of two"],
    ["a b", "a space in a bare key"],
    ["a,b", "a comma in a bare key"],
    ['"caf\u00e9"', "non-ASCII in a string"],
    ["caf\u00e9", "non-ASCII bare"],
    [`"${"x".repeat(256)}"`, "256 characters quoted"],
    ["x".repeat(256), "256 characters bare"],
    ['"tab\there"', "a control character"],
  ])("%s (%s) → invalid", (header) => {
    expect(parseIdempotencyKey(header).kind).toBe("invalid");
  });

  it("no header → absent", () => {
    expect(parseIdempotencyKey(undefined)).toEqual({ kind: "absent" });
  });

  it("two field lines → invalid", () => {
    expect(parseIdempotencyKey(['"a"', '"b"']).kind).toBe("invalid");
    expect(parseIdempotencyKey(['"a"'])).toEqual({ kind: "valid", key: "a" });
  });
});

// Trimming with /^[ \t]+|[ \t]+$/ retried from every space of an inner run: quadratic, about
// 150 ms of CPU for 16,000 spaces (Node.js's default header size), and 300,000 spaces kept the
// event loop busy for about a minute. The runs below are refused after one pass.
describe("Idempotency-Key with a long inner run of spaces", () => {
  const hostile = `a${" \t".repeat(150_000)}b`;

  it("300,000 spaces and tabs between two characters → invalid, in one pass", () => {
    expect(parseIdempotencyKey(hostile).kind).toBe("invalid");
    expect(parseIdempotencyKey(`"a"${" ".repeat(300_000)}x`).kind).toBe("invalid");
    expect(parseIdempotencyKey(`${" ".repeat(300_000)}"k"${" ".repeat(300_000)}`)).toEqual({
      kind: "valid",
      key: "k",
    });
  });

  it("through a server (maxHeaderSize 1 MiB): POST with that key → 400 idempotency_key_invalid, the handler never runs", async () => {
    let ran = 0;
    const app = express();
    app.post(
      "/orders",
      express.json(),
      keyed({}, () => {
        ran++;
        return reply.empty({ status: 201 });
      }),
    );
    app.use(errorHandler({ problemTypeBase: "https://errors.example/", logger: { error() {} } }));
    const server = await listenOn(createServer({ maxHeaderSize: 1 << 20 }, app));
    try {
      const res = await fetch(`${server.url}/orders`, {
        method: "POST",
        headers: {
          "Idempotency-Key": hostile,
          "Content-Type": "application/json",
          Accept: "application/problem+json",
        },
        body: "{}",
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { type?: string }).type).toBe(
        "https://errors.example/idempotency_key_invalid",
      );
      expect(ran).toBe(0);
    } finally {
      await server.close();
    }
  });
});
