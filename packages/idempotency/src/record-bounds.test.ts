import { errorHandler } from "@svc/errors/express";
import { reply } from "@svc/kernel";
import { type Listening, listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, onTestFinished } from "vitest";
import { gate, post } from "../test/helpers.js";
import { keyed } from "../test/pipeline-app.js";
import { idempotency } from "./express.js";
import { MemoryStore } from "./memory-store.js";
import { RedisStore } from "./redis-store.js";
import type { IdempotencyStore } from "./store.js";

// A record's bound (`maxRecordBytes`) counts its header bytes as well as its body, in MemoryStore
// (key, fingerprint, token, headers, body, 256 B) and in RedisStore (the JSON sent). A response
// whose replayed headers alone pass it (a long Location, a large custom header in replayHeaders)
// must not be stored past it: draft-ietf-httpapi-idempotency-key-header §2.6 wants a retry to get
// the result, but no store may grow without bound for it.
const redisUrl = serviceUrl("REDIS_URL");
const io = redisUrl ? new Redis(redisUrl) : undefined;
const prefix = uniquePrefix("idempotency-record-bounds");
afterAll(async () => {
  if (!io) return;
  const keys = await io.keys(`${prefix}*`);
  if (keys.length > 0) await io.del(...keys);
  io.disconnect();
});

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MAX_RECORD = 1024;

interface Bounded {
  store: IdempotencyStore;
  /** The bytes of every record the store holds, as counted against `maxRecordBytes`. */
  recordBytes(): Promise<number[]>;
}

let made = 0;
const stores: [string, () => Bounded][] = [
  [
    "MemoryStore",
    () => {
      const store = new MemoryStore({ maxRecordBytes: MAX_RECORD });
      return { store, recordBytes: async () => (store.size === 0 ? [] : [store.bytes]) };
    },
  ],
];
if (io) {
  stores.push([
    "RedisStore",
    () => {
      const own = `${prefix}${++made}:`;
      const store = new RedisStore({ client: io, prefix: own, maxRecordBytes: MAX_RECORD });
      const recordBytes = async () => {
        const keys = await io.keys(`${own}*`);
        const records = await Promise.all(keys.map((k) => io.hget(k, "resp")));
        return records.map((r) => Buffer.byteLength(r ?? ""));
      };
      return { store, recordBytes };
    },
  ]);
}

/** A route answering 201 with a Location of `locationBytes` and a body of `bodyBytes`. */
async function start(store: IdempotencyStore, locationBytes: number, bodyBytes: number) {
  let runs = 0;
  const app = express();
  app.post(
    "/orders",
    express.json(),
    keyed({ store, logger: { warn() {} } }, () => {
      runs += 1;
      return reply.bytes("b".repeat(bodyBytes), "text/plain; charset=utf-8", {
        status: 201,
        headers: { location: `/orders/${runs}?${"p".repeat(locationBytes)}` },
      });
    }),
  );
  app.use(errorHandler({ logger: { error() {} } }));
  server = await listen(app);
  return { url: `${server.url}/orders`, runs: () => runs };
}

describe("maxRecordBytes counts the header bytes", () => {
  it.each(stores)(
    "%s, maxRecordBytes 1024: a Location of 6000 bytes, a 20-byte body → the record stays within 1024 bytes (status alone); the retry replays the status, the handler ran once",
    async (_name, make) => {
      const { store, recordBytes } = make();
      const { url, runs } = await start(store, 6000, 20);
      const first = await post(url, "big-headers", {});
      expect(first.status).toBe(201);
      expect(first.headers.get("location")?.length).toBeGreaterThan(6000);
      expect(await first.text()).toBe("b".repeat(20));
      const sizes = await recordBytes();
      expect(sizes).toHaveLength(1);
      expect(sizes[0]).toBeLessThanOrEqual(MAX_RECORD);
      const retry = await post(url, "big-headers", {});
      expect(retry.status).toBe(201);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.headers.get("idempotent-body-omitted")).toBe("true");
      expect(retry.headers.get("location")).toBeNull();
      expect(await retry.text()).toBe("");
      expect(runs()).toBe(1);
    },
  );

  it.each(stores)(
    "%s, maxRecordBytes 1024: a Location of 400 bytes and a 900-byte body → kept without its body, the Location replayed",
    async (_name, make) => {
      const { store, recordBytes } = make();
      const { url, runs } = await start(store, 400, 900);
      const first = await post(url, "over-with-body", {});
      expect(first.status).toBe(201);
      expect(await first.text()).toBe("b".repeat(900));
      const sizes = await recordBytes();
      expect(sizes).toHaveLength(1);
      expect(sizes[0]).toBeLessThanOrEqual(MAX_RECORD);
      const retry = await post(url, "over-with-body", {});
      expect(retry.status).toBe(201);
      expect(retry.headers.get("idempotent-body-omitted")).toBe("true");
      expect(retry.headers.get("location")).toBe(first.headers.get("location"));
      expect(await retry.text()).toBe("");
      expect(runs()).toBe(1);
    },
  );

  it.each(stores)(
    "%s, maxRecordBytes 1024: a Location of 300 bytes and a 100-byte body → kept whole",
    async (_name, make) => {
      const { store } = make();
      const { url, runs } = await start(store, 300, 100);
      const first = await post(url, "fits", {});
      await first.arrayBuffer();
      const retry = await post(url, "fits", {});
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.headers.get("idempotent-body-omitted")).toBeNull();
      expect(retry.headers.get("location")).toBe(first.headers.get("location"));
      expect(await retry.text()).toBe("b".repeat(100));
      expect(runs()).toBe(1);
    },
  );
});

describe("MemoryStore maxBytes counts the header bytes", () => {
  it("maxBytes 4096 with 6 keys in flight: a response with a 2500-byte Location completes → the store stays within 4096 bytes, the in-flight keys kept, the retry replays the status", async () => {
    const store = new MemoryStore({ maxBytes: 4096, maxRecordBytes: 4096 });
    const hold = gate();
    let held = 0;
    let runs = 0;
    const app = express();
    const guard = idempotency({ store, logger: { warn() {} } });
    app.post(
      "/held",
      express.json(),
      keyed(guard, async () => {
        held += 1;
        await hold.promise;
        return reply({ held: true }, { status: 201 });
      }),
    );
    app.post(
      "/orders",
      express.json(),
      keyed(guard, () => {
        runs += 1;
        return reply(
          { run: runs },
          { status: 201, headers: { location: `/orders/${runs}?${"p".repeat(2500)}` } },
        );
      }),
    );
    app.use(errorHandler({ logger: { error() {} } }));
    server = await listen(app);
    const url = server.url;
    const holding = Array.from({ length: 6 }, (_, i) =>
      post(`${url}/held`, `held-${i}`, {}).then(
        (res) => res.status,
        (err: unknown) => err,
      ),
    );
    // However this test ends, the held handlers end first (no request left to the teardown).
    onTestFinished(async () => {
      hold.open();
      await Promise.all(holding);
    });
    while (held < 6) await new Promise((r) => setImmediate(r));
    const first = await post(`${url}/orders`, "heavy", {});
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ run: 1 });
    expect(store.bytes).toBeLessThanOrEqual(4096);
    const retry = await post(`${url}/orders`, "heavy", {});
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.headers.get("idempotent-body-omitted")).toBe("true");
    await retry.arrayBuffer();
    expect(runs).toBe(1);
    // The keys in flight were never evicted: a retry of one gets 409.
    const during = await post(`${url}/held`, "held-0", {});
    expect(during.status).toBe(409);
    await during.arrayBuffer();
    hold.open();
    expect(await Promise.all(holding)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(store.bytes).toBeLessThanOrEqual(4096);
  });
});
