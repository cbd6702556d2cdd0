import { request } from "node:http";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { negotiate } from "./negotiate.js";

const row = { id: 42, name: "Ada Lovelace", department: "Engineering", salary: 1000 };
let server: Listening;

beforeAll(async () => {
  const app = express();
  app.use(negotiate());
  app.get("/big", (_req, res) => res.represent(Array.from({ length: 50 }, () => row)));
  app.get("/small", (_req, res) => res.represent(row));
  app.get("/no-transform", (_req, res) => {
    res.setHeader("Cache-Control", "no-transform");
    return res.represent(Array.from({ length: 50 }, () => row));
  });
  app.get("/json", (_req, res) => {
    res.json(Array.from({ length: 50 }, () => row));
  });
  server = await listen(app);
});
afterAll(() => server.close());

/** Headers only, with no client-side decoding or added Accept-Encoding. */
function headers(method: string, path: string, acceptEncoding: string): Promise<Record<string, unknown>> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: hostname,
      port,
      method,
      path,
      headers: { "accept-encoding": acceptEncoding },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.headers));
    });
    req.on("error", reject);
    req.end();
  });
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
        if (head["content-length"] !== undefined) expect(head["content-length"]).toBe(get["content-length"]);
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
describe("res.represent(data, { status: 204 })", () => {
  it("DELETE → 204 without Content-Length or Content-Type", async () => {
    const app = express();
    app.use(negotiate());
    app.delete("/employees/42", (_req, res) => res.represent({ deleted: 42 }, { status: 204 }));
    const deleting = await listen(app);
    try {
      const res = await fetch(`${deleting.url}/employees/42`, { method: "DELETE" });
      expect(res.status).toBe(204);
      expect(res.headers.get("content-length")).toBeNull();
      expect(res.headers.get("content-type")).toBeNull();
      expect(await res.text()).toBe("");
    } finally {
      await deleting.close();
    }
  });
});

// RFC 9110 §15.3.6: "a server MUST NOT generate content in a 205 response", and it says so with
// "a Content-Length header field with a value of 0". fetch() hides a 205's content (a null body
// status), so the bytes are read with node:http.
describe("res.represent(data, { status: 205 })", () => {
  it("POST → 205 with Content-Length: 0 and no content", async () => {
    const app = express();
    app.use(negotiate());
    app.post("/forms", (_req, res) => res.represent({ reset: true }, { status: 205 }));
    const resetting = await listen(app);
    try {
      const res = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
        (resolve, reject) => {
          const req = request(`${resetting.url}/forms`, { method: "POST" }, (r) => {
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
    } finally {
      await resetting.close();
    }
  });
});
