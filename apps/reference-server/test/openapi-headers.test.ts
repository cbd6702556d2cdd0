import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, type Started, sqlite } from "./harness.js";

/**
 * The response headers the OpenAPI document declares are the ones the server sends. The harness
 * checks statuses, media types and bodies of every response; these cases check headers where the
 * document names one per method: a 415 names what a write may carry in `Accept-Post` for a POST
 * and `Accept-Patch` for a PATCH (RFC 9110 §15.5.16, RFC 5789 §3.1), and nothing for a PUT.
 */
type Json = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, Json> }>>;
  components: { responses: Record<string, { headers?: Json }> };
}

describe("response headers as the OpenAPI document declares them", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  let doc: Doc;
  beforeAll(async () => {
    s = await sqlite.start();
    api = client(s.url);
    doc = (await (await api("/openapi.json")).json()) as Doc;
  });
  afterAll(() => s.stop());

  function declared(path: string, method: string, status: number): string[] {
    let res = doc.paths[path]?.[method]?.responses[String(status)] as
      | { $ref?: string; headers?: Json }
      | undefined;
    if (res?.$ref) res = doc.components.responses[res.$ref.split("/").pop() as string];
    return Object.keys(res?.headers ?? {});
  }

  it.each([
    ["post", "/employees", "/employees", "Accept-Post"],
    ["patch", "/employees/{id}", "/employees/1", "Accept-Patch"],
    ["put", "/employees/{id}", "/employees/1", undefined],
    ["put", "/cart", "/cart", undefined],
    ["delete", "/departments/{id}", "/departments/1", undefined],
  ])(
    "%s %s with Content-Type: text/plain → 415 with the headers documented for it",
    async (method, template, path, hint) => {
      const res = await api(path, {
        method: method.toUpperCase(),
        body: "x",
        headers: { "content-type": "text/plain" },
      });
      expect(res.status).toBe(415);
      const headers = declared(template, method, 415);
      for (const name of headers) expect(res.headers.has(name), `${name} is documented`).toBe(true);
      if (hint) {
        expect(headers).toContain(hint);
        expect(res.headers.get(hint)).toMatch(/application\/json/);
      } else {
        expect(headers.filter((h) => h.startsWith("Accept-"))).toEqual([]);
      }
    },
  );
});

describe("the Idempotency-Key parameter as the OpenAPI document declares it", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  let schema: { pattern?: string; minLength?: number; maxLength?: number };
  beforeAll(async () => {
    s = await sqlite.start();
    api = client(s.url);
    const doc = (await (await api("/openapi.json")).json()) as {
      components: { parameters: { IdempotencyKey: { schema: typeof schema } } };
    };
    schema = doc.components.parameters.IdempotencyKey.schema;
  });
  afterAll(() => s.stop());

  /** JSON Schema 2020-12 §6.3: a pattern is an ECMA-262 regular expression, lengths in characters. */
  function documentAllows(value: string): boolean {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) return false;
    if (schema.maxLength !== undefined && length > schema.maxLength) return false;
    return schema.pattern === undefined || new RegExp(schema.pattern, "u").test(value);
  }

  it.each([
    ["abc"],
    ["8e03978e-40d5-43e8-bc93-6894a57f9324"],
    ["a b"],
    ["a,b"],
    ['a"b'],
    ['"a b"'],
    ['"a,b"'],
    ['"a\\"b"'],
    ['""'],
    ["a".repeat(255)],
    ["a".repeat(256)],
    [`"${"b".repeat(255)}"`],
    [`"${"b".repeat(256)}"`],
  ])("Idempotency-Key: %s → accepted exactly when the document allows it", async (key) => {
    // Every case names a key of its own (a key reused with another body would be a 422).
    const res = await api("/customers", {
      method: "POST",
      headers: { "idempotency-key": key },
      json: { name: "Key", email: `key-${Math.random().toString(36).slice(2)}@example.com`, city: "X" },
    });
    expect(res.status === 201, `status ${res.status}`).toBe(documentAllows(key));
  });
});
