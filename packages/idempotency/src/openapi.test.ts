import { composeOpenApi } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { idempotencyOpenApi } from "./openapi.js";
import { parseIdempotencyKey } from "./parse-key.js";

type Op = { parameters?: unknown[]; responses: Record<string, { headers?: unknown }> };
const doc = () => ({
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  paths: {
    "/payments": { post: { responses: { "201": { description: "created" } } } },
    "/orders": {
      post: { responses: { "201": { description: "created" }, "422": { description: "a rule is broken" } } },
      get: { responses: { "200": { description: "ok" } } },
    },
    "/orders/{id}": { patch: { responses: { "200": { description: "ok" } } } },
  },
});
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const paths = (options?: Parameters<typeof idempotencyOpenApi>[0]) =>
  (composeOpenApi(doc(), [idempotencyOpenApi(options)]) as { paths: Record<string, Record<string, Op>> })
    .paths;

describe("idempotencyOpenApi", () => {
  it("describes the key, the replay field, 409 and 422 on the methods it guards, and keeps an operation's own 422", () => {
    const p = paths({ required: ({ path }) => path === "/payments" });
    expect(p["/payments"]?.post?.parameters).toEqual([ref("parameters", "RequiredIdempotencyKey")]);
    expect(p["/orders"]?.post?.parameters).toEqual([ref("parameters", "IdempotencyKey")]);
    expect(p["/orders"]?.post?.responses["409"]).toEqual(ref("responses", "IdempotencyKeyInFlight"));
    expect(p["/orders"]?.post?.responses["422"]).toEqual({ description: "a rule is broken" });
    expect(p["/payments"]?.post?.responses["422"]).toEqual(ref("responses", "IdempotencyKeyReused"));
    expect(p["/payments"]?.post?.responses["201"]?.headers).toEqual({
      "Idempotent-Replayed": ref("headers", "IdempotentReplayed"),
    });
    expect(p["/orders"]?.get?.parameters).toBeUndefined();
    expect(p["/orders/{id}"]?.patch?.parameters).toBeUndefined();
  });

  it("follows `methods` and `applies`", () => {
    const p = paths({ methods: ["PATCH"], applies: ({ path }) => path.startsWith("/orders") });
    expect(p["/orders/{id}"]?.patch?.parameters).toEqual([ref("parameters", "IdempotencyKey")]);
    expect(p["/orders"]?.post?.parameters).toBeUndefined();
  });

  it("documents the key the middleware reads: quoted or bare, 1 to 255 characters", () => {
    const doc = composeOpenApi({ openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} }, [
      idempotencyOpenApi(),
    ]) as { components: { parameters: Record<string, { schema: { pattern: string } }> } };
    const pattern = new RegExp(doc.components.parameters.IdempotencyKey?.schema.pattern ?? "");
    const samples = [
      "a",
      "k".repeat(255),
      '"a b"',
      `"${"k".repeat(255)}"`,
      '"say \\"hi\\""',
      "8e03978e-40d5",
    ];
    samples.push(
      "",
      " ",
      "a b",
      "a,b",
      "k".repeat(256),
      `"${"k".repeat(256)}"`,
      '""',
      '"a',
      'a"',
      "é",
      '"é"',
      "a\tb",
    );
    for (const key of samples) expect(pattern.test(key), key).toBe(parseIdempotencyKey(key).kind === "valid");
  });

  it.each([
    [{ method: ["POST"] }, /unknown option "method" \(did you mean "methods"\?\)/],
    [{ methods: [] }, /methods/],
    [{ required: true }, /required/],
  ])("refuses %j", (options, message) => {
    expect(() => idempotencyOpenApi(options as never)).toThrow(message);
  });
});
