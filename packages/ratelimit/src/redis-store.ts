import { DECIDE_SCRIPT, DECIDE_SHA } from "./redis-script.js";
import type { Decision, RateLimitPolicy, RateLimitStore } from "./types.js";

/**
 * An `ioredis` client (`Redis` or `Cluster`), structurally: only `call` and `options` are used.
 * Create it with `enableOfflineQueue: false`, `autoResendUnfulfilledCommands: false` and a
 * `commandTimeout`.
 * @example
 * const client: IoRedisLike = new Redis(url, { enableOfflineQueue: false, autoResendUnfulfilledCommands: false });
 * @see https://github.com/redis/ioredis/blob/main/API.md
 */
export interface IoRedisLike {
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
  options?: {
    enableOfflineQueue?: boolean | undefined;
    autoResendUnfulfilledCommands?: boolean | undefined;
  };
}

/**
 * A `redis` (node-redis v4/v5) client, structurally: only `sendCommand` and `options` are used.
 * Create it with `disableOfflineQueue: true`.
 * @example
 * const client: NodeRedisLike = createClient({ url, disableOfflineQueue: true });
 * @see https://github.com/redis/node-redis/blob/master/docs/client-configuration.md
 */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
  options?: { disableOfflineQueue?: boolean | undefined } | undefined;
}

/**
 * Options of {@link RedisStore}.
 * @example
 * new RedisStore({ client, prefix: "api:rl:", timeoutMs: 200 });
 * @see https://redis.io/docs/latest/commands/evalsha/
 */
export interface RedisStoreOptions {
  /** A connected `ioredis` or `redis` client, configured as described in the README. */
  client: IoRedisLike | NodeRedisLike;
  /**
   * Prepended to every Redis key, before the hash-tagged limiter key.
   * @default "rl:"
   */
  prefix?: string;
  /**
   * The longest a decision may wait for Redis before it fails (and `failMode` applies). The
   * script may still run on Redis after the timeout; it is never sent again, so nothing is counted
   * twice.
   * @default 500
   */
  timeoutMs?: number;
}

/**
 * Thrown when Redis does not answer within `timeoutMs`.
 * @example
 * limiter.consume(key).catch((err) => { if (err instanceof StoreTimeoutError) metrics.redisSlow(); });
 * @see https://redis.io/docs/latest/develop/clients/nodejs/produsage/
 */
export class StoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer the rate limit script within ${ms} ms`);
    this.name = "StoreTimeoutError";
  }
}

function isIoRedis(client: IoRedisLike | NodeRedisLike): client is IoRedisLike {
  return typeof (client as IoRedisLike).call === "function";
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith("NOSCRIPT");
}

/**
 * The fleet store: all instances sharing one Redis (or Redis Cluster) count together.
 *
 * - One atomic Lua script per decision, sent with `EVALSHA`: exactly one round trip. After a
 *   Redis restart or `SCRIPT FLUSH` Redis answers `NOSCRIPT` without running anything, and the
 *   store sends the script once with `EVAL` (which also caches it again): still one count.
 * - Time is Redis's `TIME`, so application clocks may drift.
 * - Keys are `<prefix>{<limiter key>}`: the hash tag keeps each client's key on one cluster slot.
 * - A decision waits at most `timeoutMs`; the client must not queue commands while disconnected
 *   (checked at construction), so an absent Redis fails fast instead of stalling requests.
 *
 * @example
 * const client = new Redis(process.env.REDIS_URL, {
 *   enableOfflineQueue: false, autoResendUnfulfilledCommands: false,
 *   commandTimeout: 500, maxRetriesPerRequest: 0,
 * });
 * app.use(rateLimit({ limit: 100, windowMs: 60_000, store: new RedisStore({ client }) }));
 * @see https://redis.io/docs/latest/commands/evalsha/
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags
 */
export class RedisStore implements RateLimitStore {
  readonly prefix: string;
  readonly timeoutMs: number;
  readonly #send: (args: string[]) => Promise<unknown>;

  constructor(options: RedisStoreOptions) {
    const { client } = options;
    if (!client || typeof client !== "object")
      throw new TypeError("RedisStore: client must be an ioredis or redis client");
    if (isIoRedis(client)) {
      if (client.options?.enableOfflineQueue !== false)
        throw new TypeError(
          "RedisStore: create the ioredis client with enableOfflineQueue: false, or requests stall while Redis is down",
        );
      if (client.options.autoResendUnfulfilledCommands !== false)
        throw new TypeError(
          "RedisStore: create the ioredis client with autoResendUnfulfilledCommands: false, or a reconnect may count a request twice",
        );
      this.#send = (args) => client.call(args[0] as string, ...args.slice(1));
    } else if (typeof client.sendCommand === "function") {
      if (client.options && client.options.disableOfflineQueue !== true)
        throw new TypeError(
          "RedisStore: create the redis client with disableOfflineQueue: true, or requests stall while Redis is down",
        );
      this.#send = (args) => client.sendCommand(args);
    } else {
      throw new TypeError("RedisStore: client must be an ioredis or redis client");
    }
    this.prefix = options.prefix ?? "rl:";
    this.timeoutMs = options.timeoutMs ?? 500;
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0)
      throw new TypeError(
        `RedisStore: timeoutMs must be a positive number, got ${String(options.timeoutMs)}`,
      );
  }

  /** The Redis key of a limiter key. */
  redisKey(key: string): string {
    return `${this.prefix}{${key}}`;
  }

  /** @inheritdoc */
  async consume(key: string, cost: number, policy: RateLimitPolicy): Promise<Decision> {
    const tail = [
      "1",
      this.redisKey(key),
      policy.algorithm,
      String(policy.limit),
      String(policy.windowMs),
      String(cost),
      String(policy.burst),
    ];
    const reply = await this.#bounded(async () => {
      try {
        return await this.#send(["EVALSHA", DECIDE_SHA, ...tail]);
      } catch (err) {
        // NOSCRIPT means the script did not run, so sending it once in full cannot double count.
        if (!isNoScript(err)) throw err;
        return this.#send(["EVAL", DECIDE_SCRIPT, ...tail]);
      }
    });
    if (!Array.isArray(reply) || reply.length !== 5)
      throw new Error(`RedisStore: unexpected script reply ${JSON.stringify(reply)}`);
    const [allowed, remaining, resetAt, retryAfterMs, now] = reply.map(Number) as [
      number,
      number,
      number,
      number,
      number,
    ];
    return {
      allowed: allowed === 1,
      limit: policy.algorithm === "gcra" ? policy.burst : policy.limit,
      remaining,
      resetAt,
      retryAfterMs,
      now,
    };
  }

  /** @inheritdoc */
  async reset(key: string): Promise<void> {
    await this.#bounded(() => this.#send(["DEL", this.redisKey(key)]));
  }

  #bounded<T>(run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new StoreTimeoutError(this.timeoutMs)), this.timeoutMs);
      run().then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }
}
