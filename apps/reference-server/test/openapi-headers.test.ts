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
