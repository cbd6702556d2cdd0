import { createHash } from "node:crypto";
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { reply } from "@svc/kernel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compression, representations, selectEncoding } from "../src/index.js";
import { type Client, inMemory, onExpress, type Route } from "./core.js";

/** Body coding with node:zlib (RFC 9110 §8.4): the coding sent is the one `selectEncoding` chooses. */
const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `Employee ${i}`, department: "R&D" }));
const big = `${JSON.stringify(rows)}`;
const CODINGS = ["br", "gzip", "deflate"];
let dir: string;
/** 32 KiB of text zlib cannot shrink much: every chunk passes the coder's high-water mark. */
const noise = (seed: number) => createHash("sha512").update(String(seed)).digest("hex").repeat(256);

const routes: Record<string, Route> = {
  "/decision": () => rows.slice(0, 100),
  "/stream": () =>
    reply(rows, {
      representations: [
        {
          mediaType: "application/json",
          // A stream of many small chunks: the coder must keep backpressure and order.
          serialize: () => Readable.from(big.match(/.{1,1000}/gs) ?? []),
        },
      ],
    }),
  "/file": () => reply.bytes(createReadStream(join(dir, "big.json")), "application/json"),
  // Text, bytes and text again, as write(), write(Buffer) and end(chunk, encoding) sent them.
  "/written": () =>
    reply.bytes(
      Readable.from(["a".repeat(600), Buffer.from("b".repeat(600)), "c".repeat(600)]),
      "text/plain",
    ),
  "/drained": () =>
    reply.bytes(
      Readable.from(
        (function* () {
          for (let i = 0; i < 40; i++) yield noise(i);
        })(),
      ),
      "text/plain",
    ),
  "/no-content": () => reply.empty({ headers: { "Content-Type": "application/json" } }),
};
const steps = { representations: representations(), coding: compression() };
let server: Awaited<ReturnType<typeof onExpress>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-negotiate-coding-"));
  writeFileSync(join(dir, "big.json"), big);
  server = await onExpress(steps, routes);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const clients: [string, () => Client][] = [
  ["in memory", () => inMemory(steps, routes)],
  ["Express", () => (path, init) => server.raw(path, init)],
];

describe.each(clients)("%s", (via, client) => {
  async function raw(path: string, acceptEncoding: string) {
    const res = await client()(path, { headers: { "accept-encoding": acceptEncoding } });
    return {
      status: res.status,
      headers: Object.fromEntries(res.headers) as Record<string, unknown>,
      body: Buffer.from(await res.arrayBuffer()),
    };
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
    ])("Accept-Encoding: %j → Content-Encoding %s, as selectEncoding chooses", async (ae, coding) => {
      const res = await raw("/decision", ae);
      expect(selectEncoding(ae, CODINGS)).toBe(coding);
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
      expect(selectEncoding(ae, CODINGS)).toBe(coding);
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
      // A stream is coded as it is read: no length ahead of it.
      expect(res.headers["content-length"]).toBeUndefined();
      expect((decode[coding] as (b: Buffer) => Buffer)(res.body).toString()).toBe(big);
    });

    it("a stream of text, bytes and text → one gzip body", async () => {
      const res = await raw("/written", "gzip");
      expect(res.headers["content-encoding"]).toBe("gzip");
      expect(gunzipSync(res.body).toString()).toBe(`${"a".repeat(600)}${"b".repeat(600)}${"c".repeat(600)}`);
    });

    it.runIf(via === "Express")(
      "a client gone mid-body → the coder is released and the server keeps serving",
      async () => {
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
      },
    );

    // 40 chunks each past the coder's high-water mark: the coded stream is read with backpressure
    // to its end.
    it("a long stream of incompressible chunks, gzip → coded whole", async () => {
      const res = await raw("/drained", "gzip");
      expect(res.headers["content-encoding"]).toBe("gzip");
      expect(gunzipSync(res.body).length).toBe(40 * 32 * 1024);
    });

    it("a 204 is never given a Content-Encoding, even when identity is refused", async () => {
      const res = await raw("/no-content", "identity;q=0, gzip");
      expect(res.status).toBe(204);
      expect(res.headers["content-encoding"]).toBeUndefined();
    });
  });
});

describe("option errors carry a code", () => {
  it.each([
    [{ offers: [] }, "ERR_SVC_NEGOTIATE_OFFERS"],
    [{ offers: [{ mediaType: "*/*", serialize: () => "" }] }, "ERR_SVC_NEGOTIATE_OFFERS"],
    [{ languages: ["not a tag"] }, "ERR_SVC_NEGOTIATE_LANGUAGES"],
  ])("representations(%j) → %s", (options, code) => {
    expect(() => representations(options as never)).toThrow(
      expect.objectContaining({ name: "TypeError", code }),
    );
  });
  it.each([
    [{ threshold: -1 }, "ERR_SVC_NEGOTIATE_THRESHOLD"],
    [{ level: 12 }, "ERR_SVC_NEGOTIATE_LEVEL"],
  ])("compression(%j) → %s", (options, code) => {
    expect(() => compression(options as never)).toThrow(expect.objectContaining({ name: "TypeError", code }));
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
    const body = new Readable({ read() {} });
    body.push("data: one\n\n");
    void released.then(() => {
      body.push("data: two\n\n");
      body.push(null);
    });
    const events = await onExpress(
      { representations: representations(), coding: compression({ threshold: 0 }) },
      {
        "/events": () => reply.bytes(body, "text/event-stream", { headers: { "Cache-Control": "no-cache" } }),
      },
    );
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
      body.destroy();
      await events.close();
    }
  });
});
