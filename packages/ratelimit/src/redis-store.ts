import {
  evalScript,
  type RedirectingCluster,
  type RedisScript,
  type RedisSend,
  redisClientShape,
  redisSender,
  StoreOptions,
  withinTime,
} from "@svc/kernel/internal";
import { storeCalls } from "./diagnostics.js";
import { optionError as refused } from "./option-error.js";
import { DECIDE, REFUND } from "./redis-script.js";
import type { Decision, RateLimitPolicy, RateLimitStore } from "./types.js";

/**
 * An `ioredis` client (`Redis` or `Cluster`), structurally: only `call`, `options` and
 * `isCluster` are used. Create a `Redis` with `enableOfflineQueue: false`,
 * `autoResendUnfulfilledCommands: false` and a `commandTimeout`; a `Cluster` with
 * `enableOfflineQueue: false`, `retryDelayOnFailover: 0` and
 * `redisOptions: { autoResendUnfulfilledCommands: false }` (see the README's "Redis Cluster").
 * @example
 * const client: IoRedisLike = new Redis(url, { enableOfflineQueue: false, autoResendUnfulfilledCommands: false });
 * @see https://github.com/redis/ioredis/blob/main/API.md
 */
export interface IoRedisLike {
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
  /** `true` on an ioredis `Cluster`. */
  isCluster?: boolean | undefined;
  options?: {
    enableOfflineQueue?: boolean | undefined;
    autoResendUnfulfilledCommands?: boolean | undefined;
    /** `Cluster` only: delay before a command whose connection closed is sent again elsewhere. */
    retryDelayOnFailover?: number | undefined;
    /** `Cluster` only: the options of each node's connection. */
    redisOptions?: { autoResendUnfulfilledCommands?: boolean | undefined } | undefined;
  };
}

/**
 * A `redis` (node-redis v4/v5) client from `createClient`, structurally: only `sendCommand` and
 * `options` are used. Create it with `disableOfflineQueue: true`.
 * @example
 * const client: NodeRedisLike = createClient({ url, disableOfflineQueue: true });
 * @see https://github.com/redis/node-redis/blob/master/docs/client-configuration.md
 */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
  options?: { disableOfflineQueue?: boolean | undefined } | undefined;
}

/**
 * A `redis` (node-redis v4/v5) cluster from `createCluster`, structurally: `sendCommand` (whose
 * first two arguments route the command: the key whose slot picks the master, and whether it is
 * read-only), `masters` (what tells it from a single client) and, where visible, the `defaults`
 * its node clients are made with, and its masters by `host:port` with their clients
 * (`nodeByAddress`, `nodeClient`: where an `ASK` or `MOVED` redirection the cluster gave up on is
 * followed). Create it with `defaults: { disableOfflineQueue: true }`.
 * @example
 * const client: NodeRedisClusterLike = createCluster({
 *   rootNodes: [{ url: "redis://10.0.0.1:6379" }, { url: "redis://10.0.0.2:6379" }],
 *   defaults: { disableOfflineQueue: true },
 * });
 * @see https://github.com/redis/node-redis/blob/master/docs/clustering.md
 */
export interface NodeRedisClusterLike extends RedirectingCluster {
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
  ): Promise<unknown>;
  readonly masters: readonly { readonly client?: unknown }[];
  /** node-redis 5+: the options given to `createCluster` (node-redis 4 keeps them private). */
  readonly _options?: { defaults?: { disableOfflineQueue?: boolean | undefined } | undefined } | undefined;
}

/**
 * Options of {@link RedisStore}.
 * @example
 * new RedisStore({ client, prefix: "api:rl:", timeoutMs: 200 });
 * @see https://redis.io/docs/latest/commands/evalsha/
 */
export interface RedisStoreOptions {
  /**
   * A connected `ioredis` (`Redis` or `Cluster`) or `redis` (`createClient` or `createCluster`)
   * client, configured as described in the README.
   */
  client: IoRedisLike | NodeRedisLike | NodeRedisClusterLike;
  /**
   * Prepended to every Redis key, before the hash-tagged limiter key. On a Redis Cluster it may
   * not hold a `{hash tag}` of its own, which would put every client on one slot. One prefix per
   * store on a client: a second store with the same prefix on the same client is refused (until
   * the first is closed with `close()`), since both would count in the same keys.
   * @default "rl:"
   */
  prefix?: string;
  /**
   * The longest a decision may wait for Redis before it fails (and `failMode` applies), at most
   * 2147483647 (the longest `setTimeout`). The script may still run on Redis after the timeout;
   * it is never sent again, so nothing is counted twice.
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

type AnyClient = IoRedisLike | NodeRedisLike | NodeRedisClusterLike;

/** A `TypeError` for a refused option, with a stable `code` (`ERR_SVC_RATELIMIT_<OPTION>`). */
const optionError = (option: string, message: string): TypeError => refused("RedisStore", option, message);

/**
 * How one command reaches Redis, after checking that the client can neither stall a request
 * (offline queue) nor run a decision twice (resend after a reconnect or a closed connection).
 */
function sender(client: AnyClient | undefined): RedisSend {
  if (!client || typeof client !== "object")
    throw optionError(
      "client",
      `client must be an ioredis or redis client, got ${client === null ? "null" : typeof client}`,
    );
  const shape = redisClientShape(client);
  const send = redisSender(client);
  if (shape === undefined || send === undefined)
    throw optionError("client", "client must be an ioredis or redis client (no call or sendCommand method)");
  if (shape === "ioredis") {
    const options = (client as IoRedisLike).options;
    if (options?.enableOfflineQueue !== false)
      throw optionError(
        "client",
        "create the ioredis client with enableOfflineQueue: false, or requests stall while Redis is down",
      );
    if ((client as IoRedisLike).isCluster === true) {
      // A Cluster sends a command whose connection closed to another node after
      // retryDelayOnFailover; the script may already have run, so that would count it twice.
      if (options.retryDelayOnFailover !== 0)
        throw optionError(
          "client",
          `create the ioredis Cluster with retryDelayOnFailover: 0, got ${String(options.retryDelayOnFailover)}: otherwise a decision whose connection closed is sent again and may count twice`,
        );
      if (options.redisOptions?.autoResendUnfulfilledCommands !== false)
        throw optionError(
          "client",
          "create the ioredis Cluster with redisOptions: { autoResendUnfulfilledCommands: false }, or a reconnect may count a request twice",
        );
    } else if (options.autoResendUnfulfilledCommands !== false) {
      throw optionError(
        "client",
        "create the ioredis client with autoResendUnfulfilledCommands: false, or a reconnect may count a request twice",
      );
    }
  } else if (shape === "node-redis cluster") {
    const queues = clusterQueues(client as NodeRedisClusterLike);
    if (queues === undefined)
      throw optionError(
        "client",
        "connect the redis cluster before creating the store: node-redis 4 shows whether it was created with defaults: { disableOfflineQueue: true } only through its connected nodes",
      );
    if (queues)
      throw optionError(
        "client",
        "create the redis cluster with defaults: { disableOfflineQueue: true }, or requests stall while a master is down",
      );
  } else {
    const options = (client as NodeRedisLike).options;
    if (options && options.disableOfflineQueue !== true)
      throw optionError(
        "client",
        "create the redis client with disableOfflineQueue: true, or requests stall while Redis is down",
      );
  }
  return send;
}

/**
 * Whether a node-redis cluster's node clients queue commands while disconnected, or `undefined`
 * when that cannot be seen. node-redis 5+ shows the `createCluster` options as `_options`;
 * node-redis 4 keeps them private, and shows them only on the client of each node it connected
 * to (`masters[].client.options`, with `defaults` merged in).
 */
function clusterQueues(client: NodeRedisClusterLike): boolean | undefined {
  if (client._options) return client._options.defaults?.disableOfflineQueue !== true;
  const nodes = (client.masters ?? [])
    .map((node) => (node.client as Partial<NodeRedisLike> | undefined)?.options)
    .filter((options) => typeof options === "object" && options !== null);
  if (nodes.length === 0) return undefined;
  return nodes.some((options) => options?.disableOfflineQueue !== true);
}

/** An ioredis `Cluster` or a node-redis `createCluster`. */
function isCluster(client: AnyClient): boolean {
  const shape = redisClientShape(client);
  return shape === "ioredis" ? (client as IoRedisLike).isCluster === true : shape === "node-redis cluster";
}

/** Whether the key starts with a non-empty hash tag of its own, so a key after it is not hashed. */
function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf("{");
  if (open === -1) return false;
  const close = prefix.indexOf("}", open + 1);
  return close > open + 1;
}

/**
 * The prefixes taken on each client object by a store not yet closed. Two stores with one prefix on
 * one client write the same keys, so two limiters on them (a global one and a login one) would
 * spend each other's quota without a word.
 */
const taken = new WeakMap<object, Map<string, RedisStore>>();

/**
 * The fleet store: all instances sharing one Redis (or Redis Cluster) count together.
 *
 * - One atomic Lua script per decision, sent with `EVALSHA`: exactly one round trip. After a
 *   Redis restart or `SCRIPT FLUSH` Redis answers `NOSCRIPT` without running anything, and the
 *   store sends the script once with `EVAL` (which also caches it again): still one count.
 * - Time is Redis's `TIME`, so application clocks may drift.
 * - Keys are `<prefix>{<limiter key>}`: the hash tag keeps each client's key on one cluster slot.
 *   Every command names exactly one key, so on a Redis Cluster (ioredis `Cluster`, node-redis
 *   `createCluster`) each decision goes to the master owning that slot, and `MOVED`/`ASK`
 *   redirections (resharding) are followed by the client: they mean the script did not run.
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
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#redirection-and-resharding
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags
 */
export class RedisStore implements RateLimitStore {
  readonly prefix: string;
  readonly timeoutMs: number;
  readonly #send: RedisSend;
  readonly #client: object;
  #closed = false;

  constructor(options: RedisStoreOptions) {
    const o = new StoreOptions("ratelimit", "RedisStore", options, ["client", "prefix", "timeoutMs"]);
    this.#send = sender(options.client);
    const prefix = o.prefix("rl:");
    // Redis Cluster spec, "Hash tags": only the substring between the first "{" and the first "}"
    // after it is hashed, if it is not empty. A tag in the prefix comes before the limiter key's
    // own "{key}", so every client would hash to one slot, on one master.
    if (isCluster(options.client) && hasHashTag(prefix))
      throw o.refused(
        "prefix",
        prefix,
        "a string without a {hash tag} on a Redis Cluster (it would put every client on one slot)",
      );
    this.prefix = prefix;
    // Every decision would time out at once past the longest timer, and failMode "open" let every
    // request pass.
    this.timeoutMs = o.timeoutMs(500);
    // Last, once every option is accepted: a refused store takes no prefix.
    const prefixes = taken.get(options.client) ?? new Map<string, RedisStore>();
    if (prefixes.has(prefix))
      throw optionError(
        "prefix",
        `prefix ${JSON.stringify(prefix)} is already used by another RedisStore on this client, so both would count in the same keys; give each store its own prefix, pass one limiter to every rateLimit() that should share a quota, or close() the old store first (hot reload, tests)`,
      );
    prefixes.set(prefix, this);
    taken.set(options.client, prefixes);
    this.#client = options.client;
  }

  /**
   * Releases this store's prefix on its client, so a new store (after a hot reload, in the next
   * test) may take it; decisions on this store then reject. The client stays open: it is yours.
   * Calling it again does nothing.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const prefixes = taken.get(this.#client);
    if (prefixes?.get(this.prefix) === this) prefixes.delete(this.prefix);
  }

  /** The Redis key of a limiter key. */
  redisKey(key: string): string {
    return `${this.prefix}{${key}}`;
  }

  /** @inheritdoc */
  async consume(key: string, cost: number, policy: RateLimitPolicy): Promise<Decision> {
    const reply = await storeCalls.traced(
      { store: "redis", operation: "consume", key: this.redisKey(key) },
      () => this.#script(key, DECIDE, policy, cost, policy.burst),
    );
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
  async refund(key: string, cost: number, policy: RateLimitPolicy, decision: Decision): Promise<void> {
    if (!decision.allowed || cost === 0) return;
    await storeCalls.traced({ store: "redis", operation: "refund", key: this.redisKey(key) }, () =>
      this.#script(key, REFUND, policy, cost, decision.now),
    );
  }

  /** @inheritdoc */
  async reset(key: string): Promise<void> {
    const redisKey = this.redisKey(key);
    await storeCalls.traced({ store: "redis", operation: "reset", key: redisKey }, () =>
      this.#bounded(() => this.#send(redisKey, ["del", redisKey])),
    );
  }

  /**
   * One script on `key` by `EVALSHA`, within `timeoutMs`, once in full with `EVAL` after
   * `NOSCRIPT`. Both scripts take ARGV `algorithm, limit, windowMs, cost, <last>`.
   */
  #script(
    key: string,
    script: RedisScript,
    policy: RateLimitPolicy,
    cost: number,
    last: number,
  ): Promise<unknown> {
    const args = [
      policy.algorithm,
      String(policy.limit),
      String(policy.windowMs),
      String(cost),
      String(last),
    ];
    // NOSCRIPT means the script did not run, so sending it once in full cannot double count.
    return this.#bounded(() => evalScript(this.#send, script, this.redisKey(key), args));
  }

  #bounded<T>(run: () => Promise<T>): Promise<T> {
    // Another store may hold the prefix now: this one must not keep counting in its keys.
    if (this.#closed) return Promise.reject(new Error(`RedisStore ${JSON.stringify(this.prefix)} is closed`));
    return withinTime(run(), this.timeoutMs, () => new StoreTimeoutError(this.timeoutMs));
  }
}
