import { randomBytes } from "node:crypto";
import {
  closeNodeRedisCluster,
  connectIoredisCluster,
  connectNodeRedisCluster,
  type Listening,
  listen,
  type RedisCluster,
  redisCluster,
} from "@svc/test-utils";
import { Cluster } from "ioredis";
import { createCluster, type RedisClusterType } from "redis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { buildApp, post, sleep } from "../test/helpers.js";
import { RedisStore } from "./redis-store.js";
import type { IdempotencyOptions } from "./step.js";

const cluster = await redisCluster({ masters: 3 });

const servers: Listening[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(options: IdempotencyOptions, hooks: Parameters<typeof buildApp>[1] = {}) {
  const built = buildApp(options, hooks);
  const server = await listen(built.app);
  servers.push(server);
  return { url: server.url, calls: built.calls };
}

describe.skipIf(!cluster)("RedisStore on a 3-master Redis Cluster", () => {
  const c = cluster as RedisCluster;
  const prefix = `svc-test:idem-cluster:${randomBytes(4).toString("hex")}:`;
  let io: Cluster;
  let nr: RedisClusterType;

  beforeAll(async () => {
    io = await connectIoredisCluster(c, Cluster);
    nr = await connectNodeRedisCluster<RedisClusterType>(c, createCluster);
  });
  afterAll(async () => {
    io?.disconnect();
    await closeNodeRedisCluster(nr);
    await c.stop();
  });

  // A generous bound on a busy test machine; the stopped-master test sets a short one.
  const stores = (label: string, timeoutMs = 5000): [string, RedisStore][] => [
    ["ioredis Cluster", new RedisStore({ client: io, prefix: `${prefix}${label}:`, timeoutMs })],
    ["redis createCluster", new RedisStore({ client: nr, prefix: `${prefix}${label}:`, timeoutMs })],
  ];

  /** A fresh key, optionally one whose record lands in `slot` (found by trying suffixes). */
  const keyIn = (label: string, slot?: number): string => {
    for (;;) {
      const key = `k-${randomBytes(6).toString("hex")}`;
      if (slot === undefined || c.slotOf(`${prefix}${label}:${key}`) === slot) return key;
    }
  };

  for (const [i, kind] of ["ioredis Cluster", "redis createCluster"].entries()) {
    it(`${kind}: 50 concurrent claims of one key → exactly one claimed, 49 in flight`, async () => {
      const store = stores("burst")[i]?.[1] as RedisStore;
      const key = keyIn("burst");
      const results = await Promise.all(Array.from({ length: 50 }, () => store.claim(key, "fp", 60_000)));
      expect(results.filter((r) => r.outcome === "claimed")).toHaveLength(1);
      expect(results.filter((r) => r.outcome === "in-flight")).toHaveLength(49);
    });

    it(`${kind}: 50 concurrent POSTs with one key through the middleware → the handler ran once`, async () => {
      const store = stores(`http-${i}`)[i]?.[1] as RedisStore;
      const { url, calls } = await start({ store }, { before: () => sleep(50) });
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => post(`${url}/orders`, "burst", { qty: 1 })),
      );
      const statuses = await Promise.all(
        responses.map(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      );
      expect(calls.orders).toBe(1);
      expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
      expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    });
  }

  it("one key claimed through both clients at once (two instances) → one winner in each of 20 rounds", async () => {
    const [[, a], [, b]] = stores("race") as [[string, RedisStore], [string, RedisStore]];
    for (let round = 0; round < 20; round++) {
      const key = keyIn("race");
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, n) => (n % 2 ? a : b).claim(key, "fp", 60_000)),
      );
      expect(
        results.filter((r) => r.outcome === "claimed"),
        `round ${round}`,
      ).toHaveLength(1);
    }
  });

  it("600 clients, one key each, through two instances (one per client library) → records on every master", async () => {
    const label = "spread";
    const [[, a], [, b]] = stores(label) as [[string, RedisStore], [string, RedisStore]];
    const one = await start({ store: a });
    const two = await start({ store: b });
    const users = Array.from({ length: 600 }, (_, n) => `user-${n}`);
    for (let at = 0; at < users.length; at += 25) {
      await Promise.all(
        users.slice(at, at + 25).map(async (user, n) => {
          const r = await post(`${(n % 2 ? one : two).url}/orders`, "same-key", { n }, { "x-user": user });
          await r.arrayBuffer();
          expect(r.status).toBe(201);
        }),
      );
    }
    expect((one.calls.orders ?? 0) + (two.calls.orders ?? 0)).toBe(600);
    const perMaster: number[] = [];
    for (const [k] of c.nodes.entries()) {
      perMaster[k] = (await c.command(k, "KEYS", `${prefix}${label}:*`)).split("\n").filter(Boolean).length;
    }
    console.warn(`[cluster] 600 idempotency records per master: ${perMaster.join(" / ")}`);
    expect(perMaster.reduce((n, m) => n + m, 0)).toBe(600);
    expect(perMaster.every((n) => n >= 100)).toBe(true);
    // Replays come back through the other instance, whichever master holds the record.
    const replay = await post(`${two.url}/orders`, "same-key", { n: 1 }, { "x-user": "user-1" });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  }, 60_000);

  it("the key's slot is resharded while the request runs and while retries arrive (ASK, then MOVED) → no second claim, the result lands and replays", async () => {
    const label = "reshard";
    const [[, a], [, b]] = stores(label) as [[string, RedisStore], [string, RedisStore]];
    const key = keyIn(label);
    const slot = c.slotOf(`${prefix}${label}:${key}`);
    const from = await c.ownerOfSlot(slot);
    const to = (from + 1) % 3;
    const first = await a.claim(key, "fp", 60_000);
    if (first.outcome !== "claimed") throw new Error("first claim failed");
    // A key in the same slot that has no record yet: its claim is asked for during the hold.
    const fresh = keyIn(label, slot);
    const inSlot = async () => Number(await c.command(from, "CLUSTER", "COUNTKEYSINSLOT", String(slot)));
    const before = await inSlot();
    const moving = c.reshard(slot, to, { holdMs: 1500, batch: 1 });
    // The hold starts once the first key left the old owner: no guess at how long redis-cli takes.
    await vi.waitFor(async () => expect(await inSlot()).toBeLessThan(before), {
      timeout: 20_000,
      interval: 10,
    });
    const during = await Promise.all(
      Array.from({ length: 20 }, (_, n) => (n % 2 ? a : b).claim(key, "fp", 60_000)),
    );
    expect(during.map((r) => r.outcome)).toEqual(Array.from({ length: 20 }, () => "in-flight"));
    const freshClaims = await Promise.all(
      Array.from({ length: 10 }, (_, n) => (n % 2 ? a : b).claim(fresh, "fp", 60_000)),
    );
    expect(freshClaims.filter((r) => r.outcome === "claimed")).toHaveLength(1);
    await moving;
    expect(await c.ownerOfSlot(slot)).toBe(to);
    // MOVED now: the owner completes through the other client; both replay.
    const response = { status: 201, headers: { location: "/orders/1" }, body: new Uint8Array([1, 2, 3]) };
    expect(await b.complete(key, first.token, response, 60_000)).toBe(true);
    for (const store of [a, b]) {
      expect(await store.claim(key, "fp", 60_000)).toEqual({
        outcome: "completed",
        fingerprint: "fp",
        response,
      });
    }
    expect(await c.command(to, "EXISTS", `${prefix}${label}:${key}`)).toBe("1");
  }, 60_000);

  // Last: it stops and restarts a master, which empties it.
  it("the master owning a key stops → 503 with Retry-After (onStoreError: fail) or the handler runs (pass-through); keys on the other masters still replay", async () => {
    const label = "down";
    const down = 0;
    // A principal whose record lives on the master that will stop, and one whose record does not.
    const userOn = async (wantDown: boolean) => {
      for (let n = 0; ; n++) {
        const user = `u${n}-${randomBytes(3).toString("hex")}`;
        const record = `${prefix}${label}:${encodeURIComponent(user)}:POST:%2Forders:k`;
        if (((await c.masterOf(record)) === down) === wantDown) return user;
      }
    };
    const lost = await userOn(true);
    const kept = await userOn(false);
    const apps = await Promise.all(
      stores(label, 500).flatMap(([, store]) => [
        start({ store, logger: { warn() {} } }),
        start({ store, onStoreError: "pass-through", logger: { warn() {} } }),
      ]),
    );
    for (const app of apps) {
      const r = await post(`${app.url}/orders`, "k", { a: 1 }, { "x-user": kept });
      await r.arrayBuffer();
    }
    await c.stopNode(down);
    try {
      for (const [n, app] of apps.entries()) {
        const passThrough = n % 2 === 1;
        const before = app.calls.orders ?? 0;
        const started = Date.now();
        const r = await post(`${app.url}/orders`, "k", { a: 1 }, { "x-user": lost });
        await r.arrayBuffer();
        expect(Date.now() - started).toBeLessThan(3000);
        if (passThrough) {
          expect(r.status).toBe(201);
          expect(app.calls.orders).toBe(before + 1);
        } else {
          expect(r.status).toBe(503);
          expect(r.headers.get("retry-after")).toBe("1");
          expect(app.calls.orders ?? 0).toBe(before);
        }
        const other = await post(`${app.url}/orders`, "k", { a: 1 }, { "x-user": kept });
        await other.arrayBuffer();
        expect(other.status).toBe(201);
        expect(other.headers.get("idempotent-replayed")).toBe("true");
      }
    } finally {
      await c.startNode(down);
    }
  }, 60_000);
});
