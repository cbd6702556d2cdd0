import { memoryNonceStore, type NonceStore, redisNonceStore } from "@svc/auth";
import {
  MemoryStore as IdempotencyMemoryStore,
  RedisStore as IdempotencyRedisStore,
  type IdempotencyStore,
} from "@svc/idempotency";
import {
  MemoryStore as RateLimitMemoryStore,
  RedisStore as RateLimitRedisStore,
  type RateLimitStore,
} from "@svc/ratelimit";
import { Cluster, Redis } from "ioredis";
import type { RedisNode } from "./config.js";

/** The shared state of the service: in memory by default, in Redis when `REDIS_URL` is set. */
export interface Stores {
  rateLimit: RateLimitStore;
  idempotency: IdempotencyStore;
  /**
   * WS-Security nonces already seen (replay protection for SOAP UsernameTokens). In Redis when
   * Redis is configured, so a message captured on one instance cannot be replayed on another.
   */
  nonces: NonceStore;
  /** The client: a `Redis` for `REDIS_URL`, a `Cluster` for `REDIS_CLUSTER_NODES`. */
  redis: Redis | Cluster | undefined;
  ping(): Promise<void>;
  /** Resolves once Redis is connected, or after `timeoutMs` (the stores' fail modes cover the rest). */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Where the shared state lives: one Redis (a URL), a Redis Cluster (its seed nodes), or nowhere. */
export type RedisTarget = string | readonly RedisNode[] | undefined;

const HASH_SLOTS = 16384;

/** `host:port` as ioredis keys its cluster nodes. */
const nodeKey = (node: { options: { host?: string | undefined; port?: number | undefined } }) =>
  `${node.options.host}:${node.options.port}`;

function waitForReady(client: Redis | Cluster, timeoutMs: number): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    client.once("ready", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * The Redis Cluster client: the same fail-fast settings as the single client (no offline queue,
 * no resend of a command whose connection closed, no retries), which `RedisStore` checks.
 */
function clusterClient(nodes: readonly RedisNode[]): Cluster {
  const cluster = new Cluster(
    nodes.map((n) => ({ host: n.host, port: n.port })),
    {
      enableOfflineQueue: false,
      // A command whose connection closed may have run: never send it again to another node.
      retryDelayOnFailover: 0,
      // Keep trying to reach the cluster after a total outage, at most every 2 s.
      clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
      slotsRefreshTimeout: 1000,
      // Re-read the slot map every 5 s, so resharding and masters coming back are picked up
      // without waiting for a MOVED.
      slotsRefreshInterval: 5000,
      redisOptions: {
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
        commandTimeout: 500,
        connectTimeout: 1000,
      },
    },
  );
  // ioredis connects each node lazily on its first command and, without an offline queue,
  // refuses the commands that arrive while that connection opens: open every master up front.
  cluster.on("ready", () => {
    for (const node of cluster.nodes("master")) node.ping().catch(() => {});
  });
  return cluster;
}

/** The first hash slot whose master is not a connection of this client, if any. */
function unservedSlot(cluster: Cluster): { slot: number; owner: string | undefined } | undefined {
  const connected = new Set(
    cluster
      .nodes("master")
      .filter((n) => n.status === "ready")
      .map(nodeKey),
  );
  for (let slot = 0; slot < HASH_SLOTS; slot++) {
    const owner = cluster.slots[slot]?.[0];
    if (!owner || !connected.has(owner)) return { slot, owner };
  }
  return undefined;
}

/**
 * Readiness of a cluster: every hash slot has a master this client is connected to, and each of
 * those masters answers `PING`. A stopped master leaves its slots unserved: not ready.
 */
async function pingCluster(cluster: Cluster): Promise<void> {
  if (cluster.status !== "ready") throw new Error(`Redis Cluster client is ${cluster.status}`);
  // ioredis drops a master's connection when it goes away and only opens it again when a command
  // or a slot refresh names it: refresh, so a master that came back is seen (and opened) here.
  if (unservedSlot(cluster)) await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
  await Promise.all(cluster.nodes("master").map((node) => node.ping()));
  const unserved = unservedSlot(cluster);
  if (unserved)
    throw new Error(
      `Redis Cluster slot ${unserved.slot} has no reachable master (${unserved.owner ?? "none"})`,
    );
}

/**
 * Creates the rate-limit and idempotency stores. With Redis (one server, or a Redis Cluster),
 * several instances behind a load balancer share limits and idempotency records. The client
 * never queues commands while disconnected, so a Redis outage is a fast failure (the packages'
 * fail modes), never a stall. `idempotency`, when given, holds the idempotency records instead
 * (PostgreSQL's, whose records commit with the writes they answer).
 */
export function createStores(
  target: RedisTarget,
  prefix = "svc:",
  idempotency: IdempotencyStore | undefined = undefined,
): Stores {
  if (!target || (typeof target !== "string" && target.length === 0)) {
    return {
      rateLimit: new RateLimitMemoryStore(),
      idempotency: idempotency ?? new IdempotencyMemoryStore(),
      nonces: memoryNonceStore(),
      redis: undefined,
      async ping() {},
      async ready() {},
      async close() {},
    };
  }
  let redis: Redis | Cluster;
  let ping: () => Promise<void>;
  if (typeof target === "string") {
    const single = new Redis(target, {
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
      lazyConnect: false,
    });
    redis = single;
    ping = async () => {
      await single.ping();
    };
  } else {
    const cluster = clusterClient(target);
    redis = cluster;
    ping = () => pingCluster(cluster);
  }
  // Connection errors surface through the stores' fail modes and /ready; not as crashes.
  redis.on("error", () => {});
  return {
    // Each rate-limit key is hash-tagged by the store (`<prefix>rl:{<client>}`), so on a cluster
    // every decision is one command on one slot.
    rateLimit: new RateLimitRedisStore({ client: redis, prefix: `${prefix}rl:` }),
    idempotency: idempotency ?? new IdempotencyRedisStore({ client: redis, prefix: `${prefix}idem:` }),
    nonces: redisNonceStore({ client: redis, prefix: `${prefix}nonce:`, timeoutMs: 500 }),
    redis,
    ping,
    async ready(timeoutMs) {
      await waitForReady(redis, timeoutMs);
      if (redis instanceof Cluster) {
        // also wait (within the same budget) for the master connections opened on "ready"
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          Promise.all(redis.nodes("master").map((node) => node.ping().catch(() => {}))),
          new Promise((r) => {
            timer = setTimeout(r, timeoutMs);
          }),
        ]);
        clearTimeout(timer);
      }
    },
    async close() {
      redis.disconnect();
    },
  };
}
