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
import { Redis } from "ioredis";

/** The shared state of the service: in memory by default, in Redis when `REDIS_URL` is set. */
export interface Stores {
  rateLimit: RateLimitStore;
  idempotency: IdempotencyStore;
  redis: Redis | undefined;
  ping(): Promise<void>;
  /** Resolves once Redis is connected, or after `timeoutMs` (the stores' fail modes cover the rest). */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Creates the rate-limit and idempotency stores. With Redis, several instances behind a load
 * balancer share limits and idempotency records. The client never queues commands while
 * disconnected, so a Redis outage is a fast failure (the packages' fail modes), never a stall.
 */
export function createStores(redisUrl: string | undefined, prefix = "svc:"): Stores {
  if (!redisUrl) {
    return {
      rateLimit: new RateLimitMemoryStore(),
      idempotency: new IdempotencyMemoryStore(),
      redis: undefined,
      async ping() {},
      async ready() {},
      async close() {},
    };
  }
  const redis = new Redis(redisUrl, {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    lazyConnect: false,
  });
  // Connection errors surface through the stores' fail modes and /ready; not as crashes.
  redis.on("error", () => {});
  return {
    rateLimit: new RateLimitRedisStore({ client: redis, prefix: `${prefix}rl:` }),
    idempotency: new IdempotencyRedisStore({ client: redis, prefix: `${prefix}idem:` }),
    redis,
    async ping() {
      await redis.ping();
    },
    async ready(timeoutMs) {
      if (redis.status === "ready") return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        redis.once("ready", () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    async close() {
      redis.disconnect();
    },
  };
}
