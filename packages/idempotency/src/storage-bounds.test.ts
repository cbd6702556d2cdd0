import { errorHandler } from "@svc/errors/express";
import { recordAuthentication, reply } from "@svc/kernel";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { post } from "../test/helpers.js";
import { keyClaim, keyed } from "../test/pipeline-app.js";
import { MemoryStore, ScopeFullError, StoreFullError } from "./memory-store.js";

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A route whose 400 echoes the unknown fields it got (as a strict validator would), ~100 KB. */
async function echoingValidator(store: MemoryStore, options: { started: boolean }) {
  let runs = 0;
  const app = express();
  app.post(
    "/transfers",
    express.json({ limit: "1mb" }),
    keyed({ store, maxStoredBytes: 1_048_576 }, (req, context) => {
      runs += 1;
      if (options.started) keyClaim(context)?.markStarted();
      return reply({ title: "unknown fields", fields: Object.keys(req.body as object) }, { status: 400 });
    }),
  );
  app.use(errorHandler({ logger: { error() {} } }));
  server = await listen(app);
  return { url: server.url, runs: () => runs };
}

const unknownFields = Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`unknown_field_${i}`, 1]));

describe("storage bounds through a real server", () => {
  it("30 keys, each a ~100 KB 400 from validation (no markStarted()) → nothing stored", async () => {
    const store = new MemoryStore();
    const { url, runs } = await echoingValidator(store, { started: false });
    for (let i = 0; i < 30; i += 1) {
      const res = await post(`${url}/transfers`, `k-${i}`, unknownFields);
      expect(res.status).toBe(400);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(80_000);
    }
    expect(runs()).toBe(30);
    expect(store.size).toBe(0);
    expect(store.bytes).toBe(0);
  }, 120_000);

  it("40 keys, each a ~100 KB stored 400 (after markStarted()) → the store stays within maxBytes: 1 MiB", async () => {
    const store = new MemoryStore({ maxBytes: 1_048_576 });
    const { url } = await echoingValidator(store, { started: true });
    let peak = 0;
    for (let i = 0; i < 40; i += 1) {
      await (await post(`${url}/transfers`, `k-${i}`, unknownFields)).arrayBuffer();
      peak = Math.max(peak, store.bytes);
    }
    expect(peak).toBeLessThanOrEqual(1_048_576);
    expect(store.size).toBeGreaterThan(5);
    expect(store.size).toBeLessThan(40);
    // The newest is still replayed; the oldest went first.
    const newest = await post(`${url}/transfers`, "k-39", unknownFields);
    expect(newest.headers.get("idempotent-replayed")).toBe("true");
  }, 120_000);
});

/**
 * Two clients (principals a and b) on one route whose handler counts its runs per client and key.
 * draft-ietf-httpapi-idempotency-key-header §2.6: a retry of a completed request gets its result;
 * another client's traffic must not make it run again.
 */
async function twoClients(store: MemoryStore, options: { bodyBytes?: number; gate?: Promise<void> } = {}) {
  const runs = new Map<string, number>();
  const app = express();
  app.use((req, _res, next) => {
    recordAuthentication(req, { id: String(req.get("x-user")) });
    next();
  });
  app.post(
    "/transfers",
    express.json(),
    keyed({ store, logger: { warn() {} } }, async (req) => {
      const run = `${req.get("x-user")} ${req.get("idempotency-key")}`;
      runs.set(run, (runs.get(run) ?? 0) + 1);
      if (options.gate && req.get("x-user") === "a") await options.gate;
      return reply({ run, pad: "x".repeat(options.bodyBytes ?? 0) }, { status: 201 });
    }),
  );
  app.use(errorHandler({ logger: { error() {} } }));
  server = await listen(app);
  const url = `${server.url}/transfers`;
  const send = async (user: string, key: string) => {
    const res = await post(url, key, { amount: 1 }, { "x-user": user });
    await res.arrayBuffer();
    return res;
  };
  return { send, runs: (user: string, key: string) => runs.get(`${user} ${key}`) ?? 0 };
}

describe("MemoryStore: one client's keys cannot evict another's records", () => {
  it("maxEntries 100: client b's key, then 300 distinct keys from client a → b's retry is replayed, its handler ran once", async () => {
    const store = new MemoryStore({ maxEntries: 100 });
    const { send, runs } = await twoClients(store);
    expect((await send("b", "b-1")).status).toBe(201);
    for (let i = 0; i < 300; i += 1) expect((await send("a", `a-${i}`)).status).toBe(201);
    expect(store.size).toBeLessThanOrEqual(100);
    const retry = await send("b", "b-1");
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(runs("b", "b-1")).toBe(1);
    // a's newest records are kept, its oldest went.
    expect((await send("a", "a-299")).headers.get("idempotent-replayed")).toBe("true");
    expect(runs("a", "a-0")).toBe(1);
  });

  it("maxBytes 64 KiB: client b's key, then 100 distinct keys from client a with 2 KB bodies → b's retry is replayed, its handler ran once", async () => {
    const store = new MemoryStore({ maxBytes: 65_536 });
    const { send, runs } = await twoClients(store, { bodyBytes: 2000 });
    expect((await send("b", "b-1")).status).toBe(201);
    for (let i = 0; i < 100; i += 1) {
      expect((await send("a", `a-${i}`)).status).toBe(201);
      expect(store.bytes).toBeLessThanOrEqual(65_536);
    }
    const retry = await send("b", "b-1");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(runs("b", "b-1")).toBe(1);
  });

  it("maxEntries 100, one client alone: 100 keys → all kept (a client uses the room nobody else needs)", async () => {
    const store = new MemoryStore({ maxEntries: 100 });
    const { send, runs } = await twoClients(store);
    for (let i = 0; i < 100; i += 1) await send("a", `a-${i}`);
    expect(store.size).toBe(100);
    expect((await send("a", "a-0")).headers.get("idempotent-replayed")).toBe("true");
    expect(runs("a", "a-0")).toBe(1);
  });

  it("maxEntriesPerScope 2: client a holds 2 keys in flight, a third key from a → 503 with Retry-After; client b's key → 201", async () => {
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const store = new MemoryStore({ maxEntries: 100, maxEntriesPerScope: 2 });
    const { send, runs } = await twoClients(store, { gate });
    const held = [send("a", "a-1"), send("a", "a-2")];
    while (runs("a", "a-1") + runs("a", "a-2") < 2) await new Promise((r) => setImmediate(r));
    const third = await send("a", "a-3");
    expect(third.status).toBe(503);
    expect(third.headers.get("retry-after")).toBe("1");
    expect(runs("a", "a-3")).toBe(0);
    expect((await send("b", "b-1")).status).toBe(201);
    open();
    for (const res of await Promise.all(held)) expect(res.status).toBe(201);
    // Completed, a's records no longer hold its in-flight share.
    expect((await send("a", "a-3")).status).toBe(201);
  });
});

describe("MemoryStore shares, store level", () => {
  const done = async (store: MemoryStore, key: string) => {
    const claim = await store.claim(key, "fp", 60_000);
    if (claim.outcome !== "claimed") throw new Error(`${key}: ${claim.outcome}`);
    await store.complete(key, claim.token, { status: 201, headers: {}, body: new Uint8Array(8) }, 60_000);
  };
  const kept = async (store: MemoryStore, key: string) => (await store.claim(key, "fp", 60_000)).outcome;

  it("maxEntriesPerScope 2, a past its share, b within: b's new key takes a's oldest record, not b's own", async () => {
    const store = new MemoryStore({ maxEntries: 4, maxEntriesPerScope: 2 });
    await done(store, "b:1");
    for (const key of ["a:1", "a:2", "a:3"]) await done(store, key);
    await done(store, "b:2");
    expect(await kept(store, "b:1")).toBe("completed");
    expect(await kept(store, "a:1")).toBe("claimed");
  });

  it("maxEntriesPerScope 2, every client within its share and the store full: the oldest completed record goes", async () => {
    const store = new MemoryStore({ maxEntries: 4, maxEntriesPerScope: 2 });
    for (const key of ["a:1", "b:1", "a:2", "b:2"]) await done(store, key);
    await done(store, "c:1");
    expect(await kept(store, "b:1")).toBe("completed");
    expect(await kept(store, "a:1")).toBe("claimed");
  });

  it("maxEntriesPerScope 1, a holding one key in flight: a second key from a → ScopeFullError (a StoreFullError); from b → claimed", async () => {
    const store = new MemoryStore({ maxEntries: 4, maxEntriesPerScope: 1 });
    expect(await kept(store, "a:1")).toBe("claimed");
    const refused = store.claim("a:2", "fp", 60_000);
    await expect(refused).rejects.toBeInstanceOf(ScopeFullError);
    await expect(refused).rejects.toBeInstanceOf(StoreFullError);
    await expect(refused).rejects.toMatchObject({ scope: "a" });
    expect(await kept(store, "b:1")).toBe("claimed");
  });

  it("maxEntriesPerScope 1, a's in-flight record past its lease: a's next key → claimed (swept, not refused)", async () => {
    let now = 0;
    const store = new MemoryStore({ maxEntries: 4, maxEntriesPerScope: 1, now: () => now });
    expect((await store.claim("a:1", "fp", 100)).outcome).toBe("claimed");
    now = 100;
    expect((await store.claim("a:2", "fp", 100)).outcome).toBe("claimed");
    expect(store.size).toBe(1);
  });
});

describe("MemoryStore byte budget", () => {
  const claimAndComplete = async (store: MemoryStore, key: string, bodyBytes: number) => {
    const claim = await store.claim(key, "fp", 60_000);
    if (claim.outcome !== "claimed") throw new Error(`${key}: ${claim.outcome}`);
    const response = {
      status: 201,
      headers: { "content-type": "text/plain" },
      body: new Uint8Array(bodyBytes),
    };
    return store.complete(key, claim.token, response, 60_000);
  };

  it("maxBytes: 64 KiB, twenty 10 KiB records → the oldest completed go, bytes never past 64 KiB", async () => {
    const store = new MemoryStore({ maxBytes: 65_536 });
    for (let i = 0; i < 20; i += 1) {
      await claimAndComplete(store, `k${i}`, 10_240);
      expect(store.bytes).toBeLessThanOrEqual(65_536);
    }
    expect(store.size).toBe(6);
    expect((await store.claim("k0", "fp", 60_000)).outcome).toBe("claimed");
    expect((await store.claim("k19", "fp", 60_000)).outcome).toBe("completed");
  });

  it("a record over maxRecordBytes → kept without its body (bodyOmitted), never dropped", async () => {
    const store = new MemoryStore({ maxRecordBytes: 4096 });
    expect(await claimAndComplete(store, "big", 8192)).toBe(true);
    const replay = await store.claim("big", "fp", 60_000);
    expect(replay).toEqual({
      outcome: "completed",
      fingerprint: "fp",
      response: { status: 201, headers: {}, body: new Uint8Array(), bodyOmitted: true },
    });
    expect(store.bytes).toBeLessThan(4096);
  });

  it("in-flight claims are never evicted to make room for a completed body", async () => {
    const store = new MemoryStore({ maxBytes: 8192, maxRecordBytes: 8192 });
    const held = await store.claim("held", "fp", 60_000);
    expect(held.outcome).toBe("claimed");
    expect(await claimAndComplete(store, "fat", 7900)).toBe(true);
    expect((await store.claim("held", "fp", 60_000)).outcome).toBe("in-flight");
    const fat = await store.claim("fat", "fp", 60_000);
    expect(fat.outcome === "completed" && fat.response.bodyOmitted).toBe(true);
    expect(store.bytes).toBeLessThanOrEqual(8192);
  });

  // draft-ietf-httpapi-idempotency-key-header §2.7: "If the request is retried, while the
  // original request is still being processed, the resource server SHOULD reply with an HTTP 409".
  it("maxEntries 1 held by an in-flight key k1: a new key k2 → 503 (k1 not evicted); k1's retry → 409, its handler ran once", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const runs: Record<string, number> = {};
    const app = express();
    app.post(
      "/transfers",
      express.json(),
      keyed({ store: new MemoryStore({ maxEntries: 1 }), logger: { warn() {} } }, async (req) => {
        const key = String(req.get("idempotency-key"));
        runs[key] = (runs[key] ?? 0) + 1;
        if (key === "k1" && runs[key] === 1) await gate;
        return reply({ key, run: runs[key] }, { status: 201 });
      }),
    );
    app.use(errorHandler({ logger: { error() {} } }));
    server = await listen(app);
    const url = `${server.url}/transfers`;
    const first = post(url, "k1", { amount: 1 });
    // The first request has claimed k1 once its handler runs.
    while (runs.k1 !== 1) await new Promise((r) => setImmediate(r));
    const other = await post(url, "k2", { amount: 2 });
    expect(other.status).toBe(503);
    expect(other.headers.get("retry-after")).toBe("1");
    const retry = await post(url, "k1", { amount: 1 });
    expect(retry.status).toBe(409);
    expect(runs.k1).toBe(1);
    release();
    expect((await first).status).toBe(201);
    const replay = await post(url, "k1", { amount: 1 });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(runs.k1).toBe(1);
  });

  it("release and expiry give their bytes back", async () => {
    let now = 0;
    const store = new MemoryStore({ now: () => now });
    const claim = await store.claim("k", "fp", 1000);
    if (claim.outcome !== "claimed") throw new Error("claim");
    expect(store.bytes).toBeGreaterThan(0);
    await store.release("k", claim.token);
    expect(store.bytes).toBe(0);
    await claimAndComplete(store, "k2", 100);
    now = 86_400_000;
    expect((await store.claim("k2", "fp", 1000)).outcome).toBe("claimed");
    expect(store.size).toBe(1);
    expect(store.bytes).toBeLessThan(1024);
  });

  it.each([
    [{ maxBytes: 0 }, "ERR_SVC_IDEMPOTENCY_MAX_BYTES"],
    [{ maxBytes: 1.5e6 + 0.5 }, "ERR_SVC_IDEMPOTENCY_MAX_BYTES"],
    [{ maxRecordBytes: 100 }, "ERR_SVC_IDEMPOTENCY_MAX_RECORD_BYTES"],
    [{ maxBytes: 65_536, maxRecordBytes: 65_537 }, "ERR_SVC_IDEMPOTENCY_MAX_RECORD_BYTES"],
    [{ maxEntries: 0 }, "ERR_SVC_IDEMPOTENCY_MAX_ENTRIES"],
    [{ now: 5 }, "ERR_SVC_IDEMPOTENCY_NOW"],
  ])("%o → TypeError %s", (options, code) => {
    expect(() => new MemoryStore(options as never)).toThrow(
      expect.objectContaining({ code, name: "TypeError" }),
    );
  });
});
