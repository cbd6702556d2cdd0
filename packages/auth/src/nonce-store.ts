import { redisSender } from "@svc/kernel/internal";
import { checkNames, codedError, functionOption, optionError as refused } from "./options.js";
/**
 * Remembers WS-Security nonces for their freshness window, so a captured message cannot be
 * replayed (WS-Security UsernameToken Profile 1.1 §4.1: "the receiver SHOULD maintain a cache of
 * used nonces").
 */
export interface NonceStore {
  /**
   * Records `nonce` for `ttlMs` milliseconds. Resolves `true` when it was not seen before, and
   * `false` when it is a replay.
   */
  claim(nonce: string, ttlMs: number): Promise<boolean>;
}

/** Options of {@link memoryNonceStore}. */
export interface MemoryNonceStoreOptions {
  /**
   * Most nonces kept, each about 100 bytes plus its key (a DPoP proof's is 48 characters, a SOAP
   * nonce's at most 256). When full, expired nonces are dropped; when every one is still in its
   * window, the claim rejects with {@link NonceStoreFullError} rather than forget one, which could
   * then be replayed. Size it for the claims one window sees: claims per second × the window in
   * seconds (a DPoP proof's `maxAge` + `clockTolerance`, a SOAP nonce's `maxAge` + `clockSkew`).
   * @default 100000
   */
  max?: number;
  /**
   * The clock in milliseconds, for tests.
   * @default Date.now
   */
  now?: () => number;
}

/**
 * Thrown (the claim rejects) when a {@link memoryNonceStore} holds `max` nonces all still in their
 * window: the new one is refused, as a store that does not answer is (a DPoP proof gets a 503).
 *
 * @example
 * if (err instanceof NonceStoreFullError) metrics.nonceStoreFull(err.retryAfter);
 * @see https://www.rfc-editor.org/rfc/rfc9449#section-11.1
 */
export class NonceStoreFullError extends Error {
  /** Seconds until the earliest nonce kept leaves its window (at least 1). */
  readonly retryAfter: number;
  constructor(max: number, retryAfter: number) {
    super(`The nonce store holds ${max} nonces, all still in their window`);
    this.name = "NonceStoreFullError";
    this.retryAfter = retryAfter;
  }
}

/**
 * An in-process nonce cache: right for one server process. Behind a load balancer, use
 * {@link redisNonceStore} so every instance sees every nonce. Bounded: at most `max` nonces
 * (about 100 bytes each plus the key), none dropped before its window ends.
 *
 * @example
 * verifySoapCredentials(blocks, { verify, nonceStore: memoryNonceStore() });
 * @see https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-UsernameTokenProfile-v1.1.1-os.html
 */
export function memoryNonceStore(options: MemoryNonceStoreOptions = {}): NonceStore {
  if (typeof options !== "object" || options === null)
    throw refused("memoryNonceStore", options, "an object { max?, now? }");
  checkNames(
    options,
    Object.keys({ max: 0, now: 0 } satisfies Record<keyof MemoryNonceStoreOptions, 0>),
    "memoryNonceStore",
  );
  const max = options.max ?? 100_000;
  if (typeof max !== "number" || !Number.isSafeInteger(max) || max < 1)
    throw refused("memoryNonceStore.max", max, "a positive integer");
  const now = functionOption(
    options.now ?? Date.now,
    "memoryNonceStore.now",
    "a function () => milliseconds",
  );
  const seen = new Map<string, number>();
  // A lower bound of the entries' expiry times: a full sweep is due only once it has passed.
  let earliest = Number.POSITIVE_INFINITY;
  return {
    async claim(nonce, ttlMs) {
      const t = now();
      const expiresAt = seen.get(nonce);
      if (expiresAt !== undefined && expiresAt > t) return false;
      seen.delete(nonce);
      // With one TTL, entries expire in insertion order: the expired ones are at the front.
      for (const [key, exp] of seen) {
        if (exp > t) break;
        seen.delete(key);
      }
      // Full, with TTLs that differ (configurations with different maxAge share the default
      // store): expired entries can sit behind a live one. They go before any live nonce does:
      // dropping a live one reopens its replay (UsernameToken Profile 1.1 §4.1: nonces are kept
      // for the freshness window).
      if (seen.size >= max && earliest <= t) {
        earliest = Number.POSITIVE_INFINITY;
        for (const [key, exp] of seen) {
          if (exp <= t) seen.delete(key);
          else if (exp < earliest) earliest = exp;
        }
      }
      // Full of live nonces: forgetting one would let it be replayed within its window.
      // @see https://www.rfc-editor.org/rfc/rfc9449#section-11.1
      if (seen.size >= max) throw new NonceStoreFullError(max, Math.max(1, Math.ceil((earliest - t) / 1000)));
      const until = t + ttlMs;
      seen.set(nonce, until);
      if (until < earliest) earliest = until;
      return true;
    },
  };
}

/**
 * The Redis client shapes {@link redisNonceStore} accepts: ioredis `Redis` or `Cluster` (`call`),
 * node-redis v4+ `createClient` (`sendCommand(args)`) or `createCluster` (`sendCommand(key,
 * isReadonly, args)`, told apart by its `masters`). Only `SET key value PX ttl NX` is sent.
 */
export type RedisNonceClient =
  | { call(command: string, ...args: string[]): Promise<unknown> }
  | { sendCommand(args: string[]): Promise<unknown> }
  | {
      sendCommand(
        firstKey: string | undefined,
        isReadonly: boolean | undefined,
        args: string[],
      ): Promise<unknown>;
      readonly masters: readonly unknown[];
    };

/** Options of {@link redisNonceStore}. */
export interface RedisNonceStoreOptions {
  /** A connected ioredis or node-redis client (a single node or a cluster). */
  client: RedisNonceClient;
  /**
   * Key prefix for the nonces. Each nonce is its own key, so on a Redis Cluster the nonces spread
   * over every master by hash slot.
   * @default "svc:auth:nonce:"
   */
  prefix?: string;
  /**
   * The longest a claim waits for Redis. Past it the claim rejects with
   * {@link NonceStoreTimeoutError}, so a stopped Redis (or the stopped master owning the nonce's
   * slot) refuses the message at once instead of holding the request.
   * @default 1000
   */
  timeoutMs?: number;
}

/**
 * Thrown when Redis does not answer a nonce claim within `timeoutMs`.
 * @example
 * if (err instanceof NonceStoreTimeoutError) metrics.redisSlow();
 * @see https://redis.io/docs/latest/commands/set/
 */
export class NonceStoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer the nonce claim within ${ms} ms`);
    this.name = "NonceStoreTimeoutError";
  }
}

/** A refused `redisNonceStore` option, coded `ERR_SVC_AUTH_REDIS_NONCE_STORE_<OPTION>`. */
function optionError(option: string, message: string): TypeError {
  return codedError(`redisNonceStore.${option}`, `redisNonceStore: ${message}`);
}

/**
 * A nonce cache in Redis shared by every instance: `SET prefix+nonce 1 PX ttl NX` claims a nonce
 * atomically, so two instances racing on one replayed message cannot both accept it. Works on a
 * Redis Cluster too (one key per command, routed to the master owning its slot; an `ASK` or
 * `MOVED` redirection a node-redis cluster gave up on is followed, as the command did not run).
 *
 * When Redis cannot be reached (or the cluster master owning the nonce is down) the claim rejects,
 * with the client's error or {@link NonceStoreTimeoutError} after `timeoutMs`: the message is
 * refused (fail closed), never accepted unchecked.
 *
 * @example
 * const nonceStore = redisNonceStore({ client: new Redis(process.env.REDIS_URL) });
 * @see https://redis.io/docs/latest/commands/set/
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#key-distribution-model
 */
export function redisNonceStore(options: RedisNonceStoreOptions): NonceStore {
  if (typeof options === "object" && options !== null)
    checkNames(
      options,
      Object.keys({ client: 0, prefix: 0, timeoutMs: 0 } satisfies Record<keyof RedisNonceStoreOptions, 0>),
      "redisNonceStore",
    );
  const client = options?.client;
  const send = redisSender(client);
  if (!send)
    throw optionError(
      "client",
      `client must be an ioredis or node-redis client (with call or sendCommand), got ${client === null ? "null" : typeof client}`,
    );
  const prefix = options.prefix ?? "svc:auth:nonce:";
  if (typeof prefix !== "string")
    throw optionError("prefix", `prefix must be a string, got ${typeof prefix}`);
  const timeoutMs = options.timeoutMs ?? 1000;
  // A Node timer keeps at most 2^31 - 1 ms; beyond, it fires after 1 ms and every claim, so
  // every message with a nonce, would fail.
  if (
    typeof timeoutMs !== "number" ||
    !Number.isFinite(timeoutMs) ||
    timeoutMs <= 0 ||
    timeoutMs > 2_147_483_647
  )
    throw optionError(
      "timeoutMs",
      `timeoutMs must be a positive number of milliseconds up to 2147483647, got ${String(timeoutMs)}`,
    );
  return {
    async claim(nonce, ttlMs) {
      const key = prefix + nonce;
      const args = ["set", key, "1", "PX", String(Math.max(1, Math.ceil(ttlMs))), "NX"];
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new NonceStoreTimeoutError(timeoutMs)), timeoutMs);
      });
      try {
        const reply = await Promise.race([send(key, args), timeout]);
        return reply === "OK";
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
