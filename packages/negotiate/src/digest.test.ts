import { createHash } from "node:crypto";
import { request } from "node:http";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { negotiate } from "./negotiate.js";

const body = `${"integrity matters ".repeat(300)}\n`;
const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("base64");

let server: Listening;
beforeAll(async () => {
  const app = express();
  app.use(negotiate());
  // RFC 9530: a digest of the bytes the handler sends, as an app signing its responses sets it.
  for (const field of ["Content-Digest", "Repr-Digest"]) {
    app.get(`/${field.toLowerCase()}`, (_req, res) => {
      res.setHeader(field, `sha-256=:${sha256(body)}:`);
      res.type("text/plain").send(body);
    });
  }
  app.get("/digest", (_req, res) => {
    res.setHeader("Digest", `SHA-256=${sha256(body)}`);
    res.type("text/plain").send(body);
  });
  server = await listen(app);
});
afterAll(() => server.close());

function raw(method: string, path: string): Promise<{ headers: Record<string, unknown>; bytes: Buffer }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, method, path, headers: { "accept-encoding": "gzip" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ headers: res.headers, bytes: Buffer.concat(chunks) }));
    })
      .on("error", reject)
      .end();
  });
}

describe("a response carrying a digest of its bytes (RFC 9530)", () => {
  it.each([
    ["GET", "/content-digest"],
    ["GET", "/repr-digest"],
    ["GET", "/digest"],
    ["HEAD", "/content-digest"],
  ])(
    "%s %s, Accept-Encoding: gzip → sent uncoded, the digest still names the bytes",
    async (method, path) => {
      const { headers, bytes } = await raw(method, path);
      expect(headers["content-encoding"]).toBeUndefined();
      if (method === "GET") {
        expect(bytes.toString()).toBe(body);
        expect(sha256(bytes)).toBe(sha256(body));
      }
    },
  );
});
