import { createHash } from "node:crypto";
import { type Listening, listen, serviceUrl, throwawayRedis, uniquePrefix } from "@svc/test-utils";
import { Redis } from "ioredis";
import { createClient, type RedisClientType } from "redis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { buildApp, gate, post, retriesDuringSlowHandler, sleep } from "../test/helpers.js";
import { RedisStore } from "./redis-store.js";
import type { IdempotencyOptions } from "./step.js";

const redisUrl = serviceUrl("REDIS_URL");

type NodeRedis = RedisClientType;

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

describe.skipIf(!redisUrl)("RedisStore on a shared Redis", () => {
  const prefix = uniquePrefix("idempotency");
  let io: Redis;
  let node: NodeRedis;

  beforeAll(async () => {
    io = new Redis(redisUrl ?? "");
    node = createClient({ url: redisUrl ?? "" }) as unknown as NodeRedis;
    node.on("error", () => {});
    await node.connect();
  });

  afterAll(async () => {
    let cursor = "0";
    do {
      const [next, keys] = await io.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) await io.del(...keys);
    } while (cursor !== "0");
    io.disconnect();
    await node.quit();
  });

  const clients = [
    ["ioredis", () => io],
    ["redis", () => node],
  ] as const;

  describe("a node-redis cluster that gave up on a redirection: the store follows it", () => {
    /** A cluster whose own `sendCommand` always ends on `first`; its nodes are the shared Redis. */
    function gaveUp(first: string) {
      const sent: string[] = [];
      const cluster = {
        getSlotMaster: () => undefined,
        nodeByAddress: new Map([["10.0.0.2:6379", "10.0.0.2:6379"]]),
        nodeClient: (address: never) => ({
          sendCommand: (args: string[]) => {
            sent.push(`${address} ${args[0]}`);
            return args[0] === "ASKING" ? Promise.resolve("OK") : node.sendCommand(args);
          },
        }),
        sendCommand: () => Promise.reject(new Error(first)),
      };
      return { cluster, sent };
    }

    it.each([
      ["MOVED", []],
      ["ASK", ["10.0.0.2:6379 ASKING"]],
    ])("%s to a known node → the claim made there, once", async (redirection, asking) => {
      const { cluster, sent } = gaveUp(`${redirection} 1234 10.0.0.2:6379`);
      const store = new RedisStore({ client: cluster, prefix: `${prefix}redirected:${redirection}:` });
      expect((await store.claim("k", "f", 60_000)).outcome).toBe("claimed");
      expect((await store.claim("k", "f", 60_000)).outcome).toBe("in-flight");
      expect(sent.filter((line) => line.endsWith("ASKING"))).toEqual([...asking, ...asking]);
    });

    it("MOVED to a node the cluster does not know → the error, not a claim", async () => {
      const { cluster } = gaveUp("MOVED 1234 10.9.9.9:6379");
      const store = new RedisStore({ client: cluster, prefix: `${prefix}redirected:lost:` });
      await expect(store.claim("k", "f", 60_000)).rejects.toThrow("MOVED 1234 10.9.9.9:6379");
    });
  });

  describe.each(clients)("with the %s client", (name, client) => {
    const store = (label: string, extra: Partial<ConstructorParameters<typeof RedisStore>[0]> = {}) =>
      new RedisStore({ client: client(), prefix: `${prefix}${name}:${label}:`, ...extra });

    it("50 concurrent identical POSTs with one key → the handler runs once; the rest are 409 or faithful replays", async () => {
      const { url, calls } = await start({ store: store("burst") }, { before: () => sleep(50) });
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => post(`${url}/orders`, '"burst-1"', { item: "book", qty: 1 })),
      );
      const bodies = await Promise.all(responses.map((r) => r.text()));
      expect(calls.orders).toBe(1);
      const originals = responses.filter((r) => r.status === 201 && !r.headers.get("idempotent-replayed"));
      expect(originals).toHaveLength(1);
      const original = bodies[responses.indexOf(originals[0] as Response)];
      responses.forEach((r, i) => {
        if (r.status === 409) {
          expect(r.headers.get("retry-after")).toBe("1");
          return;
        }
        expect(r.status).toBe(201);
        expect(r.headers.get("location")).toBe("/orders/1");
        expect(bodies[i]).toBe(original);
      });
    });

    it("the same burst across two app instances sharing one Redis → the handler runs once in total", async () => {
      const shared = `${prefix}${name}:fleet:`;
      const a = await start(
        { store: new RedisStore({ client: io, prefix: shared }) },
        { before: () => sleep(50) },
      );
      const b = await start(
        { store: new RedisStore({ client: node, prefix: shared }) },
        { before: () => sleep(50) },
      );
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) => post(`${i % 2 ? a.url : b.url}/orders`, "fleet-1", { qty: 1 })),
      );
      await Promise.all(responses.map((r) => r.arrayBuffer()));
      expect((a.calls.orders ?? 0) + (b.calls.orders ?? 0)).toBe(1);
      expect(responses.every((r) => r.status === 201 || r.status === 409)).toBe(true);
      const later = await post(`${a.url}/orders`, "fleet-1", { qty: 1 });
      expect(later.headers.get("idempotent-replayed")).toBe("true");
      const fromB = await post(`${b.url}/orders`, "fleet-1", { qty: 1 });
      expect(await fromB.text()).toBe(await later.text());
    });

    it("waitMs: a duplicate on another instance waits for the result and replays it", async () => {
      const shared = `${prefix}${name}:wait:`;
      const entered = gate();
      const a = await start(
        { store: new RedisStore({ client: client(), prefix: shared }), waitMs: 5000 },
        {
          before: async () => {
            entered.open();
            await sleep(150);
          },
        },
      );
      const b = await start({ store: new RedisStore({ client: client(), prefix: shared }), waitMs: 5000 });
      const first = post(`${a.url}/orders`, "k", { a: 1 });
      await entered.promise;
      const dup = await post(`${b.url}/orders`, "k", { a: 1 });
      expect(dup.status).toBe(201);
      expect(dup.headers.get("idempotent-replayed")).toBe("true");
      expect(await dup.text()).toBe(await (await first).text());
      expect(a.calls.orders).toBe(1);
      expect(b.calls.orders).toBeUndefined();
    });

    it("replay fidelity: 201, Location, same body, Idempotent-Replayed: true; different payload → 422", async () => {
      const { url, calls } = await start({ store: store("fidelity") });
      const first = await post(`${url}/orders`, "k", { a: 1, b: [1, 2] });
      const body = await first.text();
      const again = await post(`${url}/orders`, "k", '{ "b": [1, 2], "a": 1 }');
      expect(again.status).toBe(201);
      expect(again.headers.get("location")).toBe("/orders/1");
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("set-cookie")).toBeNull();
      expect(await again.text()).toBe(body);
      expect((await post(`${url}/orders`, "k", { a: 2 })).status).toBe(422);
      expect(calls.orders).toBe(1);
    });

    it("user scoping: two principals with one key → two records", async () => {
      const { url, calls } = await start({ store: store("scope") });
      await post(`${url}/orders`, "k", {}, { "x-user": "alice" });
      const bob = await post(`${url}/orders`, "k", {}, { "x-user": "bob" });
      expect(bob.headers.get("idempotent-replayed")).toBeNull();
      expect(calls.orders).toBe(2);
    });

    it("streamed binary body of 256 KiB → replayed byte for byte", async () => {
      const { url, calls } = await start({ store: store("stream"), maxStoredBytes: 1_048_576 });
      const digest = async (r: Response) =>
        createHash("sha256")
          .update(Buffer.from(await r.arrayBuffer()))
          .digest("hex");
      const first = await digest(await post(`${url}/stream`, "k", {}));
      const again = await post(`${url}/stream`, "k", {});
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await digest(again)).toBe(first);
      expect(calls.stream).toBe(1);
    });

    it("response over maxStoredBytes → the retry gets the status without the body, Idempotent-Body-Omitted: true; ran once", async () => {
      const { url, calls } = await start({ store: store("big"), maxStoredBytes: 100, logger: { warn() {} } });
      await (await post(`${url}/big`, "k", { size: 101 })).arrayBuffer();
      const again = await post(`${url}/big`, "k", { size: 101 });
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("idempotent-body-omitted")).toBe("true");
      expect(await again.text()).toBe("");
      expect(calls.big).toBe(1);
    });

    it("record over the store's maxRecordBytes → kept without its body, never released", async () => {
      const s = store("record-cap", { maxRecordBytes: 2048 });
      const claim = await s.claim("r", "fp", 60_000);
      if (claim.outcome !== "claimed") throw new Error("claim failed");
      const body = new Uint8Array(4096).fill(7);
      const response = { status: 201, headers: { location: "/r/1", "content-type": "text/plain" }, body };
      expect(await s.complete("r", claim.token, response, 60_000)).toBe(true);
      const replay = await s.claim("r", "fp", 60_000);
      expect(replay).toEqual({
        outcome: "completed",
        fingerprint: "fp",
        response: { status: 201, headers: { location: "/r/1" }, body: new Uint8Array(), bodyOmitted: true },
      });
    });

    it("a validation 400 (before claim.markStarted()) → not stored in Redis: a retry with a valid body runs", async () => {
      const { url, calls } = await start({ store: store("validate") });
      expect((await post(`${url}/validate`, "k", { qty: 0, pad: "y".repeat(80_000) })).status).toBe(400);
      expect((await post(`${url}/validate`, "k", { qty: 1 })).status).toBe(201);
      expect(calls.validate).toBe(1);
    });

    it("handler 500 → not stored, the retry runs", async () => {
      const { url, calls } = await start({ store: store("flaky") });
      expect((await post(`${url}/flaky`, "k", {})).status).toBe(500);
      expect((await post(`${url}/flaky`, "k", {})).status).toBe(201);
      expect(calls.flaky).toBe(2);
    });

    it("lease expired (worker stalled, no renewal) → the retry re-executes, and the stale worker cannot overwrite its result", async () => {
      const hold = gate();
      const entered = gate();
      const warnings: string[] = [];
      const { url, calls } = await start(
        {
          store: store("lease"),
          leaseMs: 60_000,
          renewLease: false,
          logger: { warn: (_o, m) => warnings.push(m ?? "") },
        },
        {
          before: async (n) => {
            if (n !== 1) return;
            entered.open();
            await hold.promise;
          },
        },
      );
      const stale = post(`${url}/orders`, "k", { a: 1 });
      await entered.promise;
      expect((await post(`${url}/orders`, "k", { a: 1 })).status).toBe(409);
      // The stalled worker's lease runs out in Redis (its own expiry, 1 ms from now), whatever
      // the machine's load: no lease short enough to pass during the test has to outlast the 409.
      const [, records] = await io.scan("0", "MATCH", `${prefix}${name}:lease:*`, "COUNT", 1000);
      expect(records).toHaveLength(1);
      expect(await io.pexpire(records[0] as string, 1)).toBe(1);
      const deadline = { timeout: 10_000, interval: 5 };
      await vi.waitFor(async () => expect(await io.exists(records[0] as string)).toBe(0), deadline);
      const fresh = await post(`${url}/orders`, "k", { a: 1 });
      expect(fresh.headers.get("location")).toBe("/orders/2");
      hold.open();
      expect((await stale).headers.get("location")).toBe("/orders/1");
      await vi.waitFor(() => expect(warnings.some((w) => w.includes("lease lost"))).toBe(true), deadline);
      const replay = await post(`${url}/orders`, "k", { a: 1 });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.headers.get("location")).toBe("/orders/2");
      expect(calls.orders).toBe(2);
      expect(warnings.some((w) => w.includes("lease lost"))).toBe(true);
    });

    /**
     * A store whose records age when the test says: `age(ms)` takes `ms` off the TTL of every
     * record under its prefix (Redis's clock cannot be moved; the lease is a minute, so the real
     * time a test takes is no part of it).
     */
    const aging = (label: string) => {
      const own = `${prefix}${name}:${label}:`;
      const age = async (ms: number) => {
        for (const key of await io.keys(`${own}*`)) {
          const ttl = await io.pttl(key);
          if (ttl <= 0) continue;
          if (ttl <= ms) await io.del(key);
          else await io.pexpire(key, ttl - ms);
        }
      };
      return { store: new RedisStore({ client: client(), prefix: own }), age };
    };

    it("handler slower than leaseMs, retries during it → runs once: 409, 409, then the replay", async () => {
      const { store: s, age } = aging("slow");
      const run = await retriesDuringSlowHandler(start, s, age);
      expect(run.first).toEqual({ status: 201, location: "/orders/1" });
      expect(run.retries.map(([status]) => status)).toEqual([409, 409]);
      expect(run.after).toEqual({ status: 201, location: "/orders/1", replayed: "true" });
      expect(run.calls.orders).toBe(1);
    });

    it("the same with renewLease: false → the lease ends under the handler and a retry runs it again", async () => {
      const { store: s, age } = aging("slow-off");
      const run = await retriesDuringSlowHandler(start, s, age, { renewLease: false, logger: { warn() {} } });
      expect(run.retries).toEqual([
        [201, "/orders/2"],
        [201, "/orders/2"],
      ]);
      expect(run.after).toEqual({ status: 201, location: "/orders/2", replayed: "true" });
      expect(run.calls.orders).toBe(2);
    });

    it("renew: the owner gets a fresh lease; a foreign token, a completed or an expired record → false", async () => {
      const s = store("renew");
      const a = await s.claim("a", "fp", 200);
      if (a.outcome !== "claimed") throw new Error("claim failed");
      expect(await s.renew("a", `${a.token}0`, 60_000)).toBe(false);
      expect(await s.renew("a", a.token, 60_000)).toBe(true);
      const inFlight = await s.claim("a", "fp", 200);
      if (inFlight.outcome !== "in-flight") throw new Error(`not in flight: ${inFlight.outcome}`);
      expect(inFlight.leaseRemainingMs).toBeGreaterThan(50_000);
      const response = { status: 201, headers: {}, body: new Uint8Array([1]) };
      expect(await s.complete("a", a.token, response, 60_000)).toBe(true);
      expect(await s.renew("a", a.token, 60_000)).toBe(false);
      const completed = await s.claim("a", "fp", 200);
      expect(completed.outcome).toBe("completed");

      const b = await s.claim("b", "fp", 50);
      if (b.outcome !== "claimed") throw new Error("claim failed");
      await sleep(80);
      expect(await s.renew("b", b.token, 60_000)).toBe(false);
      // The failed renewal did not bring the record back: the key is free.
      const again = await s.claim("b", "fp", 60_000);
      expect(again.outcome).toBe("claimed");
      if (again.outcome === "claimed") expect(await s.renew("b", b.token, 60_000)).toBe(false);
    });

    it("store calls: fencing tokens are 128 random bits, each new; a foreign token can neither complete nor release", async () => {
      const s = store("tokens");
      const a = await s.claim("a", "fp", 60_000);
      const b = await s.claim("b", "fp", 60_000);
      if (a.outcome !== "claimed" || b.outcome !== "claimed") throw new Error("claim failed");
      expect(a.token).toMatch(/^[0-9a-f]{32}$/);
      expect(b.token).toMatch(/^[0-9a-f]{32}$/);
      expect(b.token).not.toBe(a.token);
      const response = { status: 201, headers: { location: "/x" }, body: new Uint8Array([0, 255, 10]) };
      expect(await s.complete("a", b.token, response, 60_000)).toBe(false);
      expect(await s.release("a", b.token)).toBe(false);
      expect(await s.complete("a", a.token, response, 60_000)).toBe(true);
      expect(await s.release("a", a.token)).toBe(false);
      const replay = await s.claim("a", "fp", 60_000);
      expect(replay).toEqual({ outcome: "completed", fingerprint: "fp", response });
      const inFlight = await s.claim("b", "fp", 60_000);
      expect(inFlight.outcome).toBe("in-flight");
      if (inFlight.outcome === "in-flight") expect(inFlight.leaseRemainingMs).toBeGreaterThan(50_000);
    });
  });
});

describe.skipIf(!redisUrl)("RedisStore with Redis down (a private redis-server)", () => {
  it.each(["ioredis", "redis"] as const)(
    "%s: Redis stopped → 503 with Retry-After, handler not run; Redis back → requests succeed again",
    async (kind) => {
      const redis = await throwawayRedis();
      let client: Redis | NodeRedis;
      if (kind === "ioredis") {
        client = new Redis(redis.url);
        client.on("error", () => {});
      } else {
        client = createClient({ url: redis.url });
        client.on("error", () => {});
        await client.connect();
      }
      try {
        const store = new RedisStore({ client, timeoutMs: 300 });
        const { url, calls } = await start({ store, retryAfterSeconds: 2, logger: { warn() {} } });
        expect((await post(`${url}/orders`, "before", {})).status).toBe(201);

        await redis.stop();
        const down = await post(`${url}/orders`, "during", {}, { accept: "application/problem+json" });
        expect(down.status).toBe(503);
        expect(down.headers.get("retry-after")).toBe("2");
        expect(calls.orders).toBe(1);

        await redis.start();
        // The client reconnects with backoff; the empty script cache exercises the EVAL fallback.
        let status = 0;
        for (let i = 0; i < 60 && status !== 201; i++) {
          status = (await post(`${url}/orders`, `after-${i}`, {})).status;
          if (status !== 201) await sleep(100);
        }
        expect(status).toBe(201);
      } finally {
        if (kind === "ioredis") (client as Redis).disconnect();
        else await (client as NodeRedis).disconnect().catch(() => {});
        await redis.stop();
      }
    },
  );
});
