import { request } from "node:http";
import { reply } from "@svc/kernel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Client, inMemory, onExpress, type Route } from "../test/core.js";
import { compression } from "./coder.js";
import { representations } from "./representer.js";

const row = { id: 42, name: "Ada Lovelace", department: "Engineering", salary: 1000 };
const fifty = () => Array.from({ length: 50 }, () => row);
const routes: Record<string, Route> = {
  "/big": () => fifty(),
  "/small": () => row,
  "/no-transform": () => reply(fifty(), { headers: { "Cache-Control": "no-transform" } }),
  // JSON only, not negotiated by Accept (what res.json sent).
  "/json": () => reply(fifty(), { only: ["application/json"] }),
  "/employees/42": () => reply({ deleted: 42 }, { status: 204 }),
  "/forms": () => reply({ reset: true }, { status: 205 }),
};
const steps = { representations: representations(), coding: compression() };
let server: Awaited<ReturnType<typeof onExpress>>;

beforeAll(async () => {
  server = await onExpress(steps, routes);
});
afterAll(() => server.close());

const clients: [string, () => Client][] = [
  ["in memory", () => inMemory(steps, routes)],
  // Headers only, with no client-side decoding or added Accept-Encoding.
  ["Express", () => (path, init) => server.raw(path, init)],
];

describe.each(clients)("%s", (_via, client) => {
  /** Headers only, with no client-side decoding or added Accept-Encoding. */
  async function headers(
    method: string,
    path: string,
    acceptEncoding: string,
  ): Promise<Record<string, unknown>> {
    const res = await client()(path, { method, headers: { "accept-encoding": acceptEncoding } });
    await res.arrayBuffer();
    return Object.fromEntries(res.headers);
  }

  /** RFC 9110 §9.3.2: HEAD gets the header fields GET would get (Content-Length may be omitted). */
  describe("HEAD carries GET's content coding", () => {
    for (const path of ["/big", "/small", "/no-transform", "/json"]) {
      it.each([
        "gzip",
        "br",
        "deflate",
        "gzip, br",
        "br;q=0.5, gzip",
        "*",
        "identity",
        "gzip;q=0",
        "",
        "identity;q=0, gzip",
        // Ties that `compression` would break its own way: the coding chosen here is used.
        "identity, deflate",
        "deflate, gzip",
        "gzip;q=0.5, identity;q=0.5",
      ])(
        `${path} with Accept-Encoding: %j → same Content-Encoding, Vary and Content-Length rule`,
        async (ae) => {
          const get = await headers("GET", path, ae);
          const head = await headers("HEAD", path, ae);
          expect(head["content-encoding"], "Content-Encoding").toBe(get["content-encoding"]);
          expect(head.vary, "Vary").toBe(get.vary);
          expect(head["content-type"]).toBe(get["content-type"]);
          // Content-Length only where it is GET's.
          if (head["content-length"] !== undefined)
            expect(head["content-length"]).toBe(get["content-length"]);
        },
      );
    }

    it("a gzipped GET → the HEAD says gzip too, without the identity length", async () => {
      const head = await headers("HEAD", "/big", "gzip");
      expect(head["content-encoding"]).toBe("gzip");
      expect(head["content-length"]).toBeUndefined();
      expect(String(head.vary)).toMatch(/Accept-Encoding/);
    });
  });

  // RFC 9110 §8.6: "A server MUST NOT send a Content-Length header field in any response with a
  // status code of ... 204 (No Content)"; §15.3.5: a 204 has no content, so nothing to label either.
  describe("reply(data, { status: 204 })", () => {
    it("DELETE → 204 without Content-Length or Content-Type", async () => {
      const res = await client()("/employees/42", { method: "DELETE" });
      expect(res.status).toBe(204);
      expect(res.headers.get("content-length")).toBeNull();
      expect(res.headers.get("content-type")).toBeNull();
      expect(await res.text()).toBe("");
    });
  });
});

// RFC 9110 §15.3.6: "a server MUST NOT generate content in a 205 response", and it says so with
// "a Content-Length header field with a value of 0". fetch() hides a 205's content (a null body
// status), so the bytes are read with node:http.
describe("reply(data, { status: 205 })", () => {
  it("POST → 205 with Content-Length: 0 and no content", async () => {
    const res = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
      (resolve, reject) => {
        const req = request(`${server.url}/forms`, { method: "POST" }, (r) => {
          let body = "";
          r.setEncoding("latin1");
          r.on("data", (c: string) => {
            body += c;
          });
          r.on("end", () => resolve({ status: r.statusCode ?? 0, headers: r.headers, body }));
        });
        req.on("error", reject);
        req.end();
      },
    );
    expect(res.status).toBe(205);
    expect(res.headers["content-length"]).toBe("0");
    expect(res.headers["content-type"]).toBeUndefined();
    expect(res.body).toBe("");
  });

  it("in memory → 205 with Content-Length: 0 and no content", async () => {
    const res = await inMemory(steps, routes)("/forms", { method: "POST" });
    expect(res.status).toBe(205);
    expect(res.headers.get("content-length")).toBe("0");
    expect(res.headers.get("content-type")).toBeNull();
  });
});
