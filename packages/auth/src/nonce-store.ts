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
   * Most nonces kept; when full, the oldest are dropped first (they are also the first to
   * expire), so memory stays bounded under a flood.
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
 * An in-process nonce cache: right for one server process. Behind a load balancer, use
 * {@link redisNonceStore} so every instance sees every nonce.
 *
 * @example
 * verifySoapCredentials(blocks, { verify, nonceStore: memoryNonceStore() });
 * @see https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-UsernameTokenProfile-v1.1.1-os.html
 */
export function memoryNonceStore(options: MemoryNonceStoreOptions = {}): NonceStore {
  const max = options.max ?? 100_000;
  const now = options.now ?? Date.now;
  const seen = new Map<string, number>();
  return {
    async claim(nonce, ttlMs) {
      const t = now();
      const expiresAt = seen.get(nonce);
      if (expiresAt !== undefined && expiresAt > t) return false;
      seen.delete(nonce);
      // Entries are inserted in time order with one TTL per store in practice: sweep from the front.
      for (const [key, exp] of seen) {
        if (exp > t && seen.size < max) break;
        seen.delete(key);
      }
      seen.set(nonce, t + ttlMs);
      return true;
    },
  };
}

/**
 * The Redis client shapes {@link redisNonceStore} accepts: ioredis (`call`) or node-redis v4+
 * (`sendCommand`). Only `SET key value PX ttl NX` is sent.
 */
export type RedisNonceClient =
  | { call(command: string, ...args: string[]): Promise<unknown> }
  | { sendCommand(args: string[]): Promise<unknown> };

/** Options of {@link redisNonceStore}. */
export interface RedisNonceStoreOptions {
  /** A connected ioredis or node-redis client. */
  client: RedisNonceClient;
  /**
   * Key prefix for the nonces.
   * @default "svc:auth:nonce:"
   */
  prefix?: string;
}

/**
 * A nonce cache in Redis shared by every instance: `SET prefix+nonce 1 PX ttl NX` claims a nonce
 * atomically, so two instances racing on one replayed message cannot both accept it.
 *
 * @example
 * const nonceStore = redisNonceStore({ client: new Redis(process.env.REDIS_URL) });
 * @see https://redis.io/docs/latest/commands/set/
 */
export function redisNonceStore(options: RedisNonceStoreOptions): NonceStore {
  const client = options?.client;
  const send =
    client && "call" in client && typeof client.call === "function"
      ? (args: string[]) => client.call(args[0] as string, ...args.slice(1))
      : client && "sendCommand" in client && typeof client.sendCommand === "function"
        ? (args: string[]) => client.sendCommand(args)
        : undefined;
  if (!send) throw new TypeError("redisNonceStore: client must be an ioredis or node-redis client");
  const prefix = options.prefix ?? "svc:auth:nonce:";
  return {
    async claim(nonce, ttlMs) {
      const reply = await send([
        "SET",
        prefix + nonce,
        "1",
        "PX",
        String(Math.max(1, Math.ceil(ttlMs))),
        "NX",
      ]);
      return reply === "OK";
    },
  };
}
