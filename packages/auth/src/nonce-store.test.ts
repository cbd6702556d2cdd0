import { randomBytes } from "node:crypto";
import {
  closeNodeRedisCluster,
  connectIoredisCluster,
  connectNodeRedisCluster,
  type RedisCluster,
  redisCluster,
  serviceUrl,
  throwawayRedis,
} from "@svc/test-utils";
import { Cluster, Redis } from "ioredis";
import { createCluster, type RedisClusterType } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  memoryNonceStore,
  type NonceStore,
  NonceStoreFullError,
  NonceStoreTimeoutError,
  redisNonceStore,
} from "./nonce-store.js";

describe("memoryNonceStore when full", () => {
  it("expired nonces behind a live one go first: a live nonce is not dropped, so its replay is refused", async () => {
    // Two SOAP configurations share the process-wide store with different maxAge: a long-lived
    // nonce at the front, short-lived ones (now expired) behind it.
    let t = 0;
    const store = memoryNonceStore({ max: 3, now: () => t });
    expect(await store.claim("long", 60_000)).toBe(true);
    expect(await store.claim("short-1", 10)).toBe(true);
    expect(await store.claim("short-2", 10)).toBe(true);
    t = 100;
    expect(await store.claim("next", 60_000)).toBe(true);
    // "long" is within its window: a replay of it must still be refused.
    expect(await store.claim("long", 60_000)).toBe(false);
    expect(await store.claim("next", 60_000)).toBe(false);
  });

  it("max 2, two live nonces, a third → rejects NonceStoreFullError; both replays still refused", async () => {
    let t = 0;
    const store = memoryNonceStore({ max: 2, now: () => t });
    expect(await store.claim("a", 3000)).toBe(true);
    t = 1;
    expect(await store.claim("b", 3000)).toBe(true);
    t = 2;
    const full = store.claim("c", 3000);
    await expect(full).rejects.toBeInstanceOf(NonceStoreFullError);
    // "a" leaves at 3000: the client is told to come back then, in whole seconds.
    await expect(full).rejects.toMatchObject({ name: "NonceStoreFullError", retryAfter: 3 });
    expect(await store.claim("a", 3000)).toBe(false);
    expect(await store.claim("b", 3000)).toBe(false);
    // Once "a" has left its window there is room again, and "c" was never taken in.
    t = 3000;
    expect(await store.claim("c", 3000)).toBe(true);
    expect(await store.claim("b", 3000)).toBe(false);
  });
});

describe("redisNonceStore on a node-redis cluster that gave up on a redirection: the store follows it", () => {
  /** A cluster whose own `sendCommand` always ends on `first`; its one node keeps keys in a map. */
  function gaveUp(first: string) {
    const sent: string[] = [];
    const keys = new Set<string>();
    const cluster = {
      masters: [],
      nodeByAddress: new Map([["10.0.0.2:6379", "10.0.0.2:6379"]]),
      nodeClient: (address: never) => ({
        sendCommand: async (args: string[]) => {
          sent.push(`${address} ${args[0]}`);
          if (args[0] === "ASKING") return "OK";
          const key = args[1] as string;
          if (keys.has(key)) return null;
          keys.add(key);
          return "OK";
        },
      }),
      sendCommand: () => Promise.reject(new Error(first)),
    };
    return { cluster, sent };
  }

  it.each([
    ["MOVED", ["10.0.0.2:6379 set", "10.0.0.2:6379 set"]],
    ["ASK", ["10.0.0.2:6379 ASKING", "10.0.0.2:6379 set", "10.0.0.2:6379 ASKING", "10.0.0.2:6379 set"]],
  ])(
    "%s to a known node → the nonce claimed there; its replay refused there",
    async (redirection, expected) => {
      const { cluster, sent } = gaveUp(`${redirection} 1234 10.0.0.2:6379`);
      const store = redisNonceStore({ client: cluster });
      expect(await store.claim("n-1", 60_000)).toBe(true);
      expect(await store.claim("n-1", 60_000)).toBe(false);
      expect(sent).toEqual(expected);
    },
  );

  it("a node the cluster does not know → the claim rejects with the cluster's error (fail closed)", async () => {
    const { cluster, sent } = gaveUp("MOVED 1234 10.0.0.9:6379");
    await expect(redisNonceStore({ client: cluster }).claim("n-2", 60_000)).rejects.toThrow(
      "MOVED 1234 10.0.0.9:6379",
    );
    expect(sent).toEqual([]);
  });
});

describe("redisNonceStore options", () => {
  const client = { call: async () => "OK" };
  it("client: {} → TypeError ERR_SVC_AUTH_REDIS_NONCE_STORE_CLIENT", () => {
    // @ts-expect-error neither call nor sendCommand
    expect(() => redisNonceStore({ client: {} })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_AUTH_REDIS_NONCE_STORE_CLIENT" }),
    );
  });
  it("timeoutMs: 0 → TypeError ERR_SVC_AUTH_REDIS_NONCE_STORE_TIMEOUT_MS", () => {
    expect(() => redisNonceStore({ client, timeoutMs: 0 })).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_AUTH_REDIS_NONCE_STORE_TIMEOUT_MS" }),
    );
  });
  it('timeoutMs: 2^31 ("forever") → TypeError, since a Node timer overflows it to 1 ms and every claim would time out', () => {
    expect(() => redisNonceStore({ client, timeoutMs: 2 ** 31 })).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_AUTH_REDIS_NONCE_STORE_TIMEOUT_MS" }),
    );
    expect(() => redisNonceStore({ client, timeoutMs: 2 ** 31 - 1 })).not.toThrow();
  });
  it("timeoutMs: NaN → TypeError naming what it got", () => {
    expect(() => redisNonceStore({ client, timeoutMs: Number.NaN })).toThrow(/timeoutMs .* got NaN/);
  });
  it("prefix: 42 → TypeError ERR_SVC_AUTH_REDIS_NONCE_STORE_PREFIX", () => {
    // @ts-expect-error prefix is a string
    expect(() => redisNonceStore({ client, prefix: 42 })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_AUTH_REDIS_NONCE_STORE_PREFIX" }),
    );
  });
  it("a client that never answers → NonceStoreTimeoutError after timeoutMs", async () => {
    const store = redisNonceStore({ client: { call: () => new Promise(() => {}) }, timeoutMs: 50 });
    await expect(store.claim("n", 1000)).rejects.toBeInstanceOf(NonceStoreTimeoutError);
  });
});

const redisUrl = serviceUrl("REDIS_URL");
describe.skipIf(!redisUrl)("redisNonceStore against a throw-away redis-server", () => {
  it("Redis paused (CLIENT PAUSE 10000) → the claim fails after timeoutMs, not when Redis answers", async () => {
    const server = await throwawayRedis();
    const client = new Redis(server.url);
    const admin = new Redis(server.url);
    try {
      // Connected before the first claim, and a timeout a loaded machine's connect and first
      // command fit in: the claim under test is the one the pause holds.
      await client.ping();
      const store = redisNonceStore({ client, timeoutMs: 1000 });
      expect(await store.claim("before", 1000)).toBe(true);
      await admin.call("CLIENT", "PAUSE", "10000", "ALL");
      const started = Date.now();
      await expect(store.claim("during", 1000)).rejects.toBeInstanceOf(NonceStoreTimeoutError);
      // Redis answers only when the pause ends: a rejection well before that came from the
      // timeout, however slowly a loaded machine ran the timer.
      expect(Date.now() - started).toBeLessThan(8000);
    } finally {
      // The server is thrown away paused: nothing waits for the pause to end.
      client.disconnect();
      admin.disconnect();
      await server.stop();
    }
  });
});

const cluster = await redisCluster({ masters: 3 });

describe.skipIf(!cluster)("redisNonceStore on a 3-master Redis Cluster", () => {
  const c = cluster as RedisCluster;
  let io: Cluster;
  let nr: NodeRedisCluster;
  const prefix = `svc-test:auth-nonce:${randomBytes(4).toString("hex")}:`;

  type NodeRedisCluster = RedisClusterType;

  beforeAll(async () => {
    io = await connectIoredisCluster(c, Cluster);
    nr = await connectNodeRedisCluster<NodeRedisCluster>(c, createCluster);
  });
  afterAll(async () => {
    io?.disconnect();
    await closeNodeRedisCluster(nr);
    await c.stop();
  });

  const stores = (): [string, NonceStore][] => [
    ["ioredis Cluster", redisNonceStore({ client: io, prefix, timeoutMs: 500 })],
    ["redis createCluster", redisNonceStore({ client: nr, prefix, timeoutMs: 500 })],
  ];

  for (const [i, kind] of ["ioredis Cluster", "redis createCluster"].entries()) {
    it(`${kind}: 40 concurrent claims of one nonce → exactly one winner`, async () => {
      const store = stores()[i]?.[1] as NonceStore;
      const nonce = randomBytes(16).toString("base64");
      const results = await Promise.all(Array.from({ length: 40 }, () => store.claim(nonce, 60_000)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  }

  it("claims of one nonce raced through both clients (two instances) → exactly one winner", async () => {
    const [[, a], [, b]] = stores() as [[string, NonceStore], [string, NonceStore]];
    for (let round = 0; round < 20; round++) {
      const nonce = randomBytes(16).toString("base64");
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, n) => (n % 2 ? a : b).claim(nonce, 60_000)),
      );
      expect(results.filter(Boolean), `round ${round}`).toHaveLength(1);
    }
  });

  it("600 nonces → spread over every master, each claimable once", async () => {
    // 1,200 claims at once: what is checked is where they land and that each is claimed once, not
    // how fast a loaded machine answers them all (the timeout has its own tests above).
    const a = redisNonceStore({ client: io, prefix, timeoutMs: 10_000 });
    const b = redisNonceStore({ client: nr, prefix, timeoutMs: 10_000 });
    const nonces = Array.from({ length: 600 }, () => randomBytes(16).toString("base64"));
    expect((await Promise.all(nonces.map((n, k) => (k % 2 ? a : b).claim(n, 60_000)))).every(Boolean)).toBe(
      true,
    );
    expect((await Promise.all(nonces.map((n, k) => (k % 2 ? b : a).claim(n, 60_000)))).some(Boolean)).toBe(
      false,
    );
    const owners = await c.slotsByNode();
    const expected = owners.map((slots) => nonces.filter((n) => slots.includes(c.slotOf(prefix + n))).length);
    const stored: number[] = [];
    for (const [k, node] of c.nodes.entries()) {
      const direct = new Redis(node.port, node.host);
      stored[k] = (await direct.keys(`${prefix}*`)).length;
      direct.disconnect();
    }
    console.warn(`[cluster] 600 nonces per master: ${stored.join(" / ")}`);
    // the earlier tests' nonces are under the same prefix: at least the 600 on the expected masters
    for (const [k, n] of expected.entries()) expect(stored[k]).toBeGreaterThanOrEqual(n);
    expect(expected.every((n) => n >= 100)).toBe(true);
  });

  // Last: it stops and restarts a master, which empties it.
  it("the master owning a nonce stops → the claim rejects (fail closed) within timeoutMs; other masters still claim; restarted → claims again", async () => {
    let down = "";
    const up: string[] = [];
    while (!down || up.length < 2) {
      const n = randomBytes(16).toString("base64");
      if ((await c.masterOf(prefix + n)) === 0) down ||= n;
      else up.push(n);
    }
    await c.stopNode(0);
    try {
      for (const [k, [kind, store]] of stores().entries()) {
        const started = Date.now();
        await expect(store.claim(down, 60_000), kind).rejects.toThrow();
        expect(Date.now() - started, kind).toBeLessThan(2000);
        expect(await store.claim(up[k] as string, 60_000), kind).toBe(true);
      }
    } finally {
      await c.startNode(0);
    }
    // Restarted (empty): the nonce refused during the outage is claimable once, then a replay.
    const [[, a], [, b]] = stores() as [[string, NonceStore], [string, NonceStore]];
    const deadline = Date.now() + 10_000;
    let claimed: boolean | undefined;
    while (claimed === undefined && Date.now() < deadline) {
      claimed = await a.claim(down, 60_000).catch(() => undefined);
      if (claimed === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(claimed, "first claim after the restart").toBe(true);
    let replay: boolean | undefined;
    while (replay === undefined && Date.now() < deadline) {
      replay = await b.claim(down, 60_000).catch(() => undefined);
      if (replay === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(replay, "the other client after the restart").toBe(false);
  });
});
