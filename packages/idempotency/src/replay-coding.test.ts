import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { errorHandler } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import compression from "compression";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { type IdempotencyOptions, idempotency } from "./idempotency.js";
import { MemoryStore } from "./memory-store.js";
import type { ClaimResult } from "./store.js";

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as sent, not decoded (fetch would undo a coding and hide it). */
  body: Buffer;
}

/** A POST with one Idempotency-Key, read without undoing any content coding. */
function rawPost(url: string, key: string, acceptEncoding: string | undefined): Promise<Raw> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "idempotency-key": `"${key}"`,
  };
  if (acceptEncoding !== undefined) headers["accept-encoding"] = acceptEncoding;
  return new Promise((resolve, reject) => {
    const req = request(`${url}/orders`, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(JSON.stringify({ item: "book" }));
  });
}

/** The JSON the handler sends: long enough to compress well, and numbered by execution. */
const order = (n: number) => ({
  id: n,
  lines: Array.from({ length: 40 }, (_, i) => `line ${i} of order ${n}`),
});

/**
 * compression() mounted on the route after the middleware: it encodes the handler's bytes before
 * they reach the capture, so the record is stored gzip (or br) coded, with its Content-Encoding.
 */
async function start(options: IdempotencyOptions = {}, handler?: express.RequestHandler) {
  const app = express();
  let runs = 0;
  const warnings: string[] = [];
  app.post(
    "/orders",
    express.json(),
    idempotency({
      store: new MemoryStore(),
      logger: { warn: (_obj: object, msg?: string) => void warnings.push(msg ?? "") },
      ...options,
    }),
    compression({ threshold: 0 }),
    handler ??
      ((_req, res) => {
        res.status(201).json(order(++runs));
      }),
  );
  app.use(errorHandler({ logger: { error() {} } }));
  server = await listen(app);
  return { url: server.url, runs: () => runs, warnings };
}

const decoded = (raw: Raw): unknown => {
  const coding = raw.headers["content-encoding"];
  const bytes =
    coding === "gzip" ? gunzipSync(raw.body) : coding === "br" ? brotliDecompressSync(raw.body) : raw.body;
  return JSON.parse(bytes.toString("utf8"));
};

describe("replay of a content-coded record (compression on the route, RFC 9110 §12.5.3)", () => {
  it.each([
    ["identity", "identity"],
    ["gzip;q=0", "gzip;q=0"],
    ["br, *;q=0 (gzip excluded by *;q=0)", "br, *;q=0"],
    ["deflate (gzip not listed)", "deflate"],
    ["identity;q=1, gzip;q=0.5 (identity preferred)", "identity;q=1, gzip;q=0.5"],
    ["an empty value", ""],
    ["no Accept-Encoding", undefined],
  ])(
    "stored gzip, retry with Accept-Encoding: %s → identity, correct Content-Length, Vary kept",
    async (_name, retryAccept) => {
      const { url, runs } = await start();
      const first = await rawPost(url, "k", "gzip");
      expect(first.status).toBe(201);
      expect(first.headers["content-encoding"]).toBe("gzip");
      const again = await rawPost(url, "k", retryAccept);
      expect(again.status).toBe(201);
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.headers["content-encoding"]).toBeUndefined();
      expect(again.headers["content-length"]).toBe(String(again.body.byteLength));
      expect(again.headers.vary).toMatch(/accept-encoding/i);
      expect(again.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(JSON.parse(again.body.toString("utf8"))).toEqual(order(1));
      expect(runs()).toBe(1);
    },
  );

  it.each(["gzip", "gzip, deflate, br", "*", "GZIP;q=0.5, identity;q=0.1"])(
    "stored gzip, retry with Accept-Encoding: %s → replayed gzip as stored, Vary: Accept-Encoding",
    async (retryAccept) => {
      const { url } = await start();
      const first = await rawPost(url, "k", "gzip");
      const again = await rawPost(url, "k", retryAccept);
      expect(again.headers["content-encoding"]).toBe("gzip");
      expect(again.body.equals(first.body)).toBe(true);
      expect(again.headers["content-length"]).toBe(String(first.body.byteLength));
      expect(again.headers.vary).toMatch(/accept-encoding/i);
      expect(decoded(again)).toEqual(order(1));
    },
  );

  it("stored br, retry with Accept-Encoding: gzip → identity (br is not accepted)", async () => {
    const { url } = await start();
    const first = await rawPost(url, "k", "br");
    expect(first.headers["content-encoding"]).toBe("br");
    const again = await rawPost(url, "k", "gzip");
    expect(again.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(again.body.toString("utf8"))).toEqual(order(1));
  });

  it("maxDecodedBytes smaller than the decoded body, retry with identity → 406 problem, with gzip → the record", async () => {
    const { url, runs, warnings } = await start({ maxDecodedBytes: 100 });
    await rawPost(url, "k", "gzip");
    const refused = await rawPost(url, "k", "identity");
    expect(refused.status).toBe(406);
    expect(refused.headers["content-encoding"]).toBeUndefined();
    expect(refused.body.toString("utf8")).toMatch(/Accept-Encoding/);
    expect(refused.headers.vary).toMatch(/accept-encoding/i);
    expect(warnings).toEqual([expect.stringContaining("could not be decoded")]);
    const coded = await rawPost(url, "k", "gzip");
    expect(coded.status).toBe(201);
    expect(decoded(coded)).toEqual(order(1));
    expect(runs()).toBe(1);
  });

  it("a coding the middleware cannot decode (x-custom), retry with identity → 406; with x-custom → the record", async () => {
    const { url } = await start({}, (_req, res) => {
      res.status(201).set("Content-Encoding", "x-custom").type("application/octet-stream");
      res.end(Buffer.from("opaque"));
    });
    const first = await rawPost(url, "k", "x-custom");
    expect(first.headers["content-encoding"]).toBe("x-custom");
    expect((await rawPost(url, "k", "identity")).status).toBe(406);
    const again = await rawPost(url, "k", "x-custom");
    expect(again.status).toBe(201);
    expect(again.body.toString("utf8")).toBe("opaque");
  });

  it("a stored gzip body that does not decode, retry with identity → 500 problem, never the coded bytes", async () => {
    // A store whose record was damaged: the bytes are not gzip.
    class Damaged extends MemoryStore {
      override async claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult> {
        const result = await super.claim(key, fingerprint, leaseMs);
        if (result.outcome !== "completed") return result;
        return { ...result, response: { ...result.response, body: Buffer.from("not gzip at all") } };
      }
    }
    const { url } = await start({ store: new Damaged() });
    await rawPost(url, "k", "gzip");
    const again = await rawPost(url, "k", "identity");
    expect(again.status).toBe(500);
    expect(again.headers["content-encoding"]).toBeUndefined();
    expect(again.body.toString("utf8")).not.toContain("not gzip at all");
  });
});
