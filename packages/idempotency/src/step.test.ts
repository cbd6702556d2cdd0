import { connect, type Socket } from "node:net";
import { gunzipSync } from "node:zlib";
import { clientErrorHandler, errorHandler } from "@svc/errors";
import { createPipeline, expressAdapter, reply } from "@svc/kernel";
import { type Listening, listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { gate, post } from "../test/helpers.js";
import { buildStepApp, gzipCoding, PROBLEM_BASE } from "../test/pipeline-app.js";
import { IDEMPOTENCY_ERROR_CODES } from "./core.js";
import { MemoryStore } from "./memory-store.js";
import { RedisStore } from "./redis-store.js";
import { type IdempotencyOptions, idempotency } from "./step.js";
import type { IdempotencyStore } from "./store.js";

// draft-ietf-httpapi-idempotency-key-header, through a response pipeline: the step records the
// pipeline's final response value, and a retry's replay is that value, coded for the retry.
const redisUrl = serviceUrl("REDIS_URL");
const io = redisUrl ? new Redis(redisUrl) : undefined;
afterAll(() => io?.disconnect());
const prefix = uniquePrefix("idempotency-step");

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: IdempotencyOptions = {}, hooks: Parameters<typeof buildStepApp>[1] = {}) {
  const built = buildStepApp(options, hooks);
  server = await listen(built.app);
  return { url: server.url, calls: built.calls };
}

const problem = { accept: "application/problem+json" };

describe("idempotency() step through expressAdapter", () => {
  it("same key and payload twice → one execution, faithful replay with Idempotent-Replayed: true", async () => {
    const { url, calls } = await start();
    const first = await post(`${url}/orders`, '"k-1"', { item: "book", qty: 1 });
    const firstBody = await first.text();
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(first.headers.get("set-cookie")).toContain("session=s1");

    const again = await post(`${url}/orders`, '"k-1"', { item: "book", qty: 1 });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe("/orders/1");
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(await again.text()).toBe(firstBody);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(again.headers.get("x-ratelimit-remaining")).toBeNull();
    expect(calls.orders).toBe(1);
  });

  it("same key, different payload → 422 idempotency_key_reused; the original still replays", async () => {
    const { url, calls } = await start();
    await post(`${url}/orders`, "k", { qty: 1 });
    const res = await post(`${url}/orders`, "k", { qty: 2 }, problem);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { type: string }).type).toBe(
      `${PROBLEM_BASE}${IDEMPOTENCY_ERROR_CODES.mismatch}`,
    );
    const original = await post(`${url}/orders`, "k", { qty: 1 });
    expect(original.status).toBe(201);
    expect(original.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.orders).toBe(1);
  });

  it("no Idempotency-Key on a required route → 400 with Link rel=describedby, the handler does not run", async () => {
    const { url, calls } = await start({
      required: true,
      documentationUrl: "https://docs.example/idempotency",
    });
    const res = await post(`${url}/orders`, undefined, { a: 1 }, problem);
    expect(res.status).toBe(400);
    expect(res.headers.get("link")).toBe(
      '<https://docs.example/idempotency>; rel="describedby"; type="text/html"',
    );
    expect(calls.orders).toBeUndefined();
  });

  it("a duplicate while the first runs → 409 with Retry-After; then the replay", async () => {
    const hold = gate();
    const entered = gate();
    const { url, calls } = await start(
      {},
      {
        before: async () => {
          entered.open();
          await hold.promise;
        },
      },
    );
    const first = post(`${url}/orders`, "busy", { a: 1 });
    await entered.promise;
    const dup = await post(`${url}/orders`, "busy", { a: 1 }, problem);
    expect(dup.status).toBe(409);
    expect(dup.headers.get("retry-after")).toBe("1");
    hold.open();
    expect((await first).status).toBe(201);
    const after = await post(`${url}/orders`, "busy", { a: 1 });
    expect(after.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.orders).toBe(1);
  });

  it("the handler throws → the key is released: the retry runs and its response is the one replayed", async () => {
    const { url, calls } = await start();
    const failed = await post(`${url}/flaky`, "f", {});
    expect(failed.status).toBe(500);
    const retry = await post(`${url}/flaky`, "f", {});
    expect(retry.status).toBe(201);
    expect(await retry.json()).toEqual({ n: 2 });
    const replay = await post(`${url}/flaky`, "f", {});
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual({ n: 2 });
    expect(calls.flaky).toBe(2);
  });

  it("a 400 after markStarted() → stored and replayed; a 400 before it → not stored, a corrected retry runs", async () => {
    const { url, calls } = await start();
    await post(`${url}/reject`, "r", {});
    const again = await post(`${url}/reject`, "r", {});
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.reject).toBe(1);

    const invalid = await post(`${url}/validate`, "v", { qty: 0 });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("idempotent-replayed")).toBeNull();
    const corrected = await post(`${url}/validate`, "v", { qty: 0 });
    expect(corrected.headers.get("idempotent-replayed")).toBeNull();
  });

  it("a streamed body (256 KiB, under maxStoredBytes) → recorded whole, replayed byte for byte", async () => {
    const { url, calls } = await start({ maxStoredBytes: 512 * 1024 });
    const first = Buffer.from(await (await post(`${url}/stream`, "s", {})).arrayBuffer());
    const again = await post(`${url}/stream`, "s", {});
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(Buffer.from(await again.arrayBuffer()).equals(first)).toBe(true);
    expect(first.byteLength).toBe(64 * 4096);
    expect(calls.stream).toBe(1);
  });

  it("a streamed body over maxStoredBytes → sent whole to the first client; the replay has its status, no body", async () => {
    const { url, calls } = await start({ maxStoredBytes: 10_000 });
    const first = Buffer.from(await (await post(`${url}/stream`, "s2", {})).arrayBuffer());
    expect(first.byteLength).toBe(64 * 4096);
    const again = await post(`${url}/stream`, "s2", {});
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-body-omitted")).toBe("true");
    expect((await again.arrayBuffer()).byteLength).toBe(0);
    expect(calls.stream).toBe(1);
  });

  it("recorded identity, replayed in the retry's coding: first identity, retry gzip, and the other way round", async () => {
    const { url, calls } = await start({}, { pipeline: { coding: gzipCoding } });
    const plain = await post(`${url}/write`, "c1", {}, { "accept-encoding": "identity" });
    expect(plain.headers.get("content-encoding")).toBeNull();
    const text = await plain.text();
    const coded = await fetch(`${url}/write`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": "c1", "accept-encoding": "gzip" },
      body: "{}",
    });
    // fetch decodes; the header says what was sent.
    expect(coded.headers.get("content-encoding")).toBe("gzip");
    expect(coded.headers.get("idempotent-replayed")).toBe("true");
    expect(coded.headers.get("vary")).toContain("Accept-Encoding");
    expect(await coded.text()).toBe(text);

    const zipped = await rawPost(url, "/write", "c2", "gzip");
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    const identity = await rawPost(url, "/write", "c2", "identity");
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(identity.headers["idempotent-replayed"]).toBe("true");
    expect(identity.body.toString()).toBe(gunzipSync(zipped.body).toString());
    expect(calls.write).toBe(2);
  });
});

/** A POST whose response is read as sent (no decoding). */
async function rawPost(url: string, path: string, key: string, acceptEncoding: string) {
  const { request } = await import("node:http");
  return new Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = request(
        `${url}${path}`,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "idempotency-key": key,
            "accept-encoding": acceptEncoding,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        },
      );
      req.on("error", reject);
      req.end("{}");
    },
  );
}

let made = 0;
const stores: [string, () => IdempotencyStore][] = [["MemoryStore", () => new MemoryStore()]];
if (io) stores.push(["RedisStore", () => new RedisStore({ client: io, prefix: `${prefix}:${++made}:` })]);

const BODY = '{"amount":5}';

/** Sends raw bytes on a fresh connection; resolves with what came back once the server closed it. */
function rawExchange(port: number, bytes: string, onOpen?: (socket: Socket) => void): Promise<string> {
  return new Promise((resolve) => {
    let got = "";
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(bytes);
      onOpen?.(socket);
    });
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      got += chunk;
    });
    socket.on("error", () => {});
    socket.once("close", () => resolve(got));
  });
}

const keyedPost = (key: string) =>
  `POST /transfers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: "${key}"\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

describe("POST with a key, then a malformed request pipelined on its connection (the server closes it) while the handler runs", () => {
  it.each(stores)(
    "%s: 10 keys → each handler runs once; 409 while it runs, its replay after",
    async (_s, make) => {
      const runs = new Map<string, number>();
      const holds = new Map<string, ReturnType<typeof gate>>();
      const started = new Map<string, ReturnType<typeof gate>>();
      const app = express();
      const svc = expressAdapter(createPipeline());
      app.post(
        "/transfers",
        express.json(),
        svc.handle(
          async (req: express.Request) => {
            const key = String(req.get("idempotency-key"));
            const n = (runs.get(key) ?? 0) + 1;
            runs.set(key, n);
            if (n === 1) {
              started.get(key)?.open();
              await holds.get(key)?.promise;
            }
            return reply(
              { run: n },
              { status: 201, headers: { location: `/transfers/${key.replaceAll('"', "")}-${n}` } },
            );
          },
          { idempotency: idempotency({ store: make(), logger: { warn() {} } }) },
        ),
      );
      app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
      server.server.on("clientError", clientErrorHandler({ logger: { error() {}, warn() {} } as never }));
      const port = Number(new URL(server.url).port);
      const send = (key: string) =>
        fetch(`${server?.url}/transfers`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": `"${key}"` },
          body: BODY,
        });

      const keys = Array.from({ length: 10 }, (_, i) => `${prefix}-k${i}`);
      for (const key of keys) {
        holds.set(`"${key}"`, gate());
        started.set(`"${key}"`, gate());
      }
      const firsts = keys.map((key) =>
        rawExchange(port, keyedPost(key), (socket) => {
          void started.get(`"${key}"`)?.promise.then(() => socket.write("\x01BAD\r\n\r\n"));
        }),
      );
      await Promise.all(firsts);
      const during: number[] = [];
      for (const key of keys) {
        const res = await send(key);
        await res.arrayBuffer();
        during.push(res.status);
      }
      for (const key of keys) holds.get(`"${key}"`)?.open();
      const replays: Array<{
        status: number;
        replayed: string | null;
        location: string | null;
        body: unknown;
      }> = [];
      for (const key of keys) {
        const after = await vi.waitFor(
          async () => {
            const res = await send(key);
            const text = await res.text();
            expect(res.status).not.toBe(409);
            return { res, text };
          },
          { timeout: 10_000, interval: 5 },
        );
        replays.push({
          status: after.res.status,
          replayed: after.res.headers.get("idempotent-replayed"),
          location: after.res.headers.get("location"),
          body: JSON.parse(after.text),
        });
      }
      const twice = keys.filter((key) => (runs.get(`"${key}"`) ?? 0) > 1);
      expect({ during, twice }).toEqual({ during: keys.map(() => 409), twice: [] });
      expect(replays).toEqual(
        keys.map((key) => ({
          status: 201,
          replayed: "true",
          location: `/transfers/${key}-1`,
          body: { run: 1 },
        })),
      );
    },
  );
});
