import { createHash } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNegotiator, negotiate } from "../src/index.js";

/** Body coding with node:zlib (RFC 9110 §8.4): the coding sent is the one `res.negotiation` reports. */
const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `Employee ${i}`, department: "R&D" }));
const big = `${JSON.stringify(rows)}`;
let server: Listening;
let dir: string;
/** Calls of a 'drain' listener removed after the first drain, and the drains awaited. */
const drainProbe = { calls: 0, drains: 0 };
/** 32 KiB of text zlib cannot shrink much: every write passes the coder's high-water mark. */
const noise = (seed: number) => createHash("sha512").update(String(seed)).digest("hex").repeat(256);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-negotiate-coding-"));
  writeFileSync(join(dir, "big.json"), big);
  const app = express();
  app.use(negotiate());
  app.get("/decision", (_req, res) => {
    res.setHeader("X-Encoding", res.negotiation.encoding);
    res.json(rows.slice(0, 100));
  });
  app.get("/stream", (_req, res) =>
    res.represent(rows, {
      representations: [
        {
          mediaType: "application/json",
          // A stream of many small chunks: the coder must keep backpressure and order.
          serialize: () => Readable.from(big.match(/.{1,1000}/gs) ?? []),
        },
      ],
    }),
  );
  app.get("/file", (_req, res) => res.sendFile(join(dir, "big.json")));
  app.get("/written", (_req, res) => {
    res.setHeader("Content-Type", "text/plain");
    res.write("a".repeat(600));
    res.write(Buffer.from("b".repeat(600)));
    res.end("c".repeat(600), "utf8");
  });
  // The backpressure idiom of Node's stream docs: wait for 'drain' whenever write says so.
  app.get("/drained", async (_req, res) => {
    res.setHeader("Content-Type", "text/plain");
    const probe = () => drainProbe.calls++;
    res.on("drain", probe);
    let drains = 0;
    for (let i = 0; i < 40; i++) {
      if (!res.write(noise(i))) {
        await once(res, "drain");
        drains++;
      }
      if (drains === 1) res.off("drain", probe);
    }
    drainProbe.drains = drains;
    res.end();
  });
  app.get("/no-content", (_req, res) => {
    res.setHeader("Content-Type", "application/json");
    res.status(204).end();
  });
  server = await listen(app);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function raw(path: string, acceptEncoding: string) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>(
    (resolve, reject) => {
      httpGet(`${server.url}${path}`, { headers: { "accept-encoding": acceptEncoding } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      }).on("error", reject);
    },
  );
}

const decode: Record<string, (b: Buffer) => Buffer> = {
  gzip: gunzipSync,
  br: brotliDecompressSync,
  deflate: inflateSync,
  identity: (b) => b,
};

describe("the coding sent is the one negotiated (RFC 9110 §12.5.3)", () => {
  it.each([
    // Ties the `compression` package broke its own way (identity first): the choice made here wins.
    ["identity, deflate", "deflate"],
    ["deflate, gzip", "gzip"],
    ["gzip;q=0.5, identity;q=0.5", "gzip"],
    ["br;q=0.5, gzip", "gzip"],
    ["*", "br"],
    ["identity", "identity"],
    // RFC 9110 §8.4.1.3: x-gzip is gzip.
    ["x-gzip", "gzip"],
    ["x-gzip, identity;q=0", "gzip"],
    ["x-gzip;q=0.5, deflate", "deflate"],
  ])("Accept-Encoding: %j → Content-Encoding %s, as res.negotiation.encoding", async (ae, coding) => {
    const res = await raw("/decision", ae);
    expect(res.headers["x-encoding"]).toBe(coding);
    expect(res.headers["content-encoding"] ?? "identity").toBe(coding);
    expect(JSON.parse((decode[coding] as (b: Buffer) => Buffer)(res.body).toString())).toHaveLength(100);
  });
});

/**
 * RFC 9110 does not say what a coding listed twice means. Every Accept* field read here takes the
 * lowest weight given to a value, wherever it stands: q=0 is "not acceptable" (§12.4.2, §12.5.3),
 * and a refusal is never overridden by a duplicate, before it or after it. x-gzip is gzip
 * (§8.4.1.3), so the two are one coding listed twice.
 */
describe("Accept-Encoding naming a coding twice: the lowest weight counts", () => {
  it.each([
    ["gzip;q=0, gzip", "identity"],
    ["gzip, gzip;q=0", "identity"],
    ["GZIP;q=0, gzip", "identity"],
    ["br;q=0, gzip;q=0.5, br", "gzip"],
    ["gzip;q=0.1, deflate;q=0.5, gzip", "deflate"],
    ["x-gzip;q=0, gzip", "identity"],
    ["gzip, x-gzip;q=0", "identity"],
    ["deflate;q=0.5, gzip;q=0.1, x-gzip", "deflate"],
    ["*;q=0, *, identity", "identity"],
  ])("Accept-Encoding: %j → Content-Encoding %s", async (ae, coding) => {
    const res = await raw("/decision", ae);
    expect(res.status).toBe(200);
    expect(res.headers["x-encoding"]).toBe(coding);
    expect(res.headers["content-encoding"] ?? "identity").toBe(coding);
  });

  it.each([["identity;q=0, identity"], ["identity, identity;q=0"], ["*, *;q=0"], ["*;q=0, *"]])(
    "Accept-Encoding: %j → 406",
    async (ae) => {
      const res = await raw("/decision", ae);
      expect(res.status).toBe(406);
      expect(res.headers["content-encoding"]).toBeUndefined();
    },
  );
});

describe("large and written bodies decode to the original bytes", () => {
  it.each([
    ["/stream", "gzip"],
    ["/stream", "br"],
    ["/stream", "deflate"],
    ["/file", "gzip"],
    ["/file", "br"],
  ])("%s with %s", async (path, coding) => {
    const res = await raw(path, coding);
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe(coding);
    expect(res.headers["content-length"]).toBeUndefined();
    expect((decode[coding] as (b: Buffer) => Buffer)(res.body).toString()).toBe(big);
  });

  it("write(), write(Buffer), end(chunk, encoding) → one gzip body", async () => {
    const res = await raw("/written", "gzip");
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(res.body).toString()).toBe(`${"a".repeat(600)}${"b".repeat(600)}${"c".repeat(600)}`);
  });

  it("a client gone mid-body → the coder is released and the server keeps serving", async () => {
    await new Promise<void>((resolve, reject) => {
      const req = httpGet(`${server.url}/stream`, { headers: { "accept-encoding": "gzip" } }, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", (err) => (req.destroyed ? undefined : reject(err)));
    });
    const res = await raw("/stream", "br");
    expect(brotliDecompressSync(res.body).toString()).toBe(big);
  });

  // A 'drain' listener lives on the coder; removing it from the response (res.off, or the wrapper
  // of once(res, "drain") removing itself) left it there: called on every later drain, and one
  // more listener kept per await, each drain calling all of them (quadratic over a long body).
  it("res.off('drain') and once(res, 'drain') on a coded body → the listener is gone after its removal", async () => {
    drainProbe.calls = 0;
    const res = await raw("/drained", "gzip");
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(res.body).length).toBe(40 * 32 * 1024);
    expect(drainProbe.drains).toBeGreaterThan(2);
    expect(drainProbe.calls).toBe(1);
  });

  it("a 204 is never given a Content-Encoding, even when identity is refused", async () => {
    const res = await raw("/no-content", "identity;q=0, gzip");
    expect(res.status).toBe(204);
    expect(res.headers["content-encoding"]).toBeUndefined();
  });
});

describe("option errors carry a code", () => {
  it.each([
    [{ representations: [] }, "ERR_SVC_NEGOTIATE_REPRESENTATIONS"],
    [{ representations: [{ mediaType: "*/*", serialize: () => "" }] }, "ERR_SVC_NEGOTIATE_REPRESENTATIONS"],
    [{ languages: ["not a tag"] }, "ERR_SVC_NEGOTIATE_LANGUAGES"],
    [{ compression: { threshold: -1 } }, "ERR_SVC_NEGOTIATE_COMPRESSION_THRESHOLD"],
    [{ compression: { level: 12 } }, "ERR_SVC_NEGOTIATE_COMPRESSION_LEVEL"],
  ])("%j → %s, from negotiate() and createNegotiator()", (options, code) => {
    for (const make of [negotiate, createNegotiator]) {
      expect(() => make(options as never)).toThrow(expect.objectContaining({ name: "TypeError", code }));
    }
  });
});

// HTML Living Standard §9.2 (server-sent events): the client dispatches each event as its lines
// arrive, and a server keeps the stream open between events. A zlib coder holds small writes in
// its window until about 16 KiB gathered or the response ends, so a coded event stream delivered
// nothing: text/event-stream is not coded (nor given Vary: Accept-Encoding, as no client would be).
describe("Content-Type: text/event-stream is sent uncoded", () => {
  it("Accept-Encoding: gzip, br → no Content-Encoding, the first event arrives while the stream is open", async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const app = express();
    app.use(negotiate({ compression: { threshold: 0 } }));
    app.get("/events", (_req, res) => {
      res.setHeader("Content-Type", "text/event-stream");
      res.setHeader("Cache-Control", "no-cache");
      res.flushHeaders();
      res.write("data: one\n\n");
      void released.then(() => res.end("data: two\n\n"));
    });
    const events = await listen(app);
    try {
      const res = await fetch(`${events.url}/events`, { headers: { "accept-encoding": "gzip, br" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding")).toBeNull();
      expect(res.headers.get("vary")).toBeNull();
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toBe("data: one\n\n");
      release();
      await reader.cancel();
    } finally {
      release();
      await events.close();
    }
  });
});
