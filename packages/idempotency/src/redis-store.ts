import {
  evalScript,
  isNoScript,
  type RedirectingCluster,
  type RedisScript,
  type RedisSend,
  redisScript,
  redisSender,
  withinTime,
} from "@svc/kernel/internal";
import { randomHex } from "./bytes.js";
import { type IdempotencyStoreCall, storeCalls } from "./diagnostics.js";
import { STORE_TIMEOUT_MS, storeMaxRecordBytes, storeOptions } from "./option-error.js";
import { decodeRecord, encodeRecordWithin } from "./record-json.js";
import type { ClaimResult, IdempotencyStore, StoredResponse } from "./store.js";

/** The one `ioredis` method the store uses (an `ioredis` `Redis` or `Cluster` fits). */
export interface IoRedisLike {
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
}

/** The one `redis` (node-redis v4+) method the store uses (a `createClient()` client fits). */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * The `redis` (node-redis v4+) cluster client (`createCluster()`): its `sendCommand` takes the
 * key that picks the node first. Told apart from a plain client by `getSlotMaster`. Its masters by
 * `host:port` and their clients (`nodeByAddress`, `nodeClient`) are where an `ASK` or `MOVED`
 * redirection the cluster gave up on is followed.
 */
export interface NodeRedisClusterLike extends RedirectingCluster {
  sendCommand(firstKey: string, isReadonly: boolean, args: string[]): Promise<unknown>;
  getSlotMaster(slot: number): unknown;
}

/**
 * Options of {@link RedisStore}.
 *
 * @example new RedisStore({ client: redis, prefix: "orders-idem:", timeoutMs: 500 })
 * @see https://redis.io/docs/latest/develop/interact/programmability/eval-intro/
 */
export interface RedisStoreOptions {
  /**
   * A connected client; the store never connects or quits it: an `ioredis` `Redis` or
   * `Cluster`, or a `redis` (node-redis) `createClient()` or `createCluster()`.
   */
  client: IoRedisLike | NodeRedisLike | NodeRedisClusterLike;
  /**
   * Prefix of every key the store writes. Each record is one key, `prefix + key`, so on Redis
   * Cluster records spread over the masters by their own key; a `{hash tag}` in the prefix would
   * put them all on one slot (one hot shard), and is refused.
   * @default "idempotency:"
   */
  prefix?: string;
  /**
   * Largest record kept whole, in bytes as sent to Redis (the body is base64 inside JSON, so
   * about 4/3 of its size plus the headers). A larger response is stored without its body
   * (`bodyOmitted`): a replay sends the status and headers only, and the handler never runs twice.
   * One whose replayed headers alone pass it (a long `Location`) is stored with its status alone,
   * so no record passes it.
   * @example new RedisStore({ client, maxRecordBytes: 256 * 1024 })
   * @default 1048576 (1 MiB)
   */
  maxRecordBytes?: number;
  /**
   * Longest wait for one Redis round trip before the store gives up (the middleware then answers
   * 503, or passes through when configured), at most 2147483647 (the longest `setTimeout`). A
   * command that timed out may still run later.
   * @default 1000
   */
  timeoutMs?: number;
}

/**
 * Claim: one round trip. Returns the live record, or writes an in-flight record holding the
 * caller's fencing token with the lease as its expiry, all in one atomic script. The token is
 * 128 random bits made by the client: tokens are only ever compared for equality, so no counter
 * shared by every record is needed, and the script touches the record's key alone (one slot on
 * Redis Cluster). KEYS[1] record; ARGV[1] fingerprint, ARGV[2] lease ms, ARGV[3] token.
 */
const CLAIM = `
local r = redis.call('HMGET', KEYS[1], 'state', 'fp', 'resp')
if r[1] == 'completed' then return {'completed', r[2], r[3]} end
if r[1] then return {'in-flight', r[2], tostring(redis.call('PTTL', KEYS[1]))} end
redis.call('HSET', KEYS[1], 'state', 'in-flight', 'fp', ARGV[1], 'token', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {'claimed', ARGV[3]}
`;

/** Complete: only while the caller's token is the record's (fencing). ARGV: token, resp, ms. */
const COMPLETE = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'in-flight' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'completed', 'resp', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/** Release: drop an in-flight record the caller still owns. ARGV: token. */
const RELEASE = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'in-flight' then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/**
 * Renew: a fresh lease on an in-flight record the caller still owns (an expired record is gone,
 * so HGET answers nil and the token test fails). ARGV: token, lease ms.
 */
const RENEW = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'in-flight' then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

const SCRIPTS = {
  claim: redisScript(CLAIM),
  complete: redisScript(COMPLETE),
  release: redisScript(RELEASE),
  renew: redisScript(RENEW),
};

/**
 * The store could not answer in time, or Redis answered with an error. The middleware turns it
 * into a 503 (or passes through, per `onStoreError`).
 *
 * @example if (err instanceof StoreUnavailableError) metrics.increment("idempotency.store_down");
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.6.4
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/**
 * An {@link IdempotencyStore} on Redis or Redis Cluster, shared by every instance of the service.
 * Each operation is a single `EVALSHA` on the record's one key (one round trip to claim, one to
 * complete), so two concurrent duplicates can never both claim, and records spread over a
 * cluster's masters. Works with an injected `ioredis` or `redis` client or cluster client.
 * Bounds: no record over `maxRecordBytes`; every record expires (lease, then retention); the
 * total is bounded by Redis's `maxmemory` (see the README).
 *
 * @example
 * import { Redis } from "ioredis";
 * const store = new RedisStore({ client: new Redis(process.env.REDIS_URL), prefix: "orders:idem:" });
 * app.post("/orders", idempotency({ store }), createOrder);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export class RedisStore implements IdempotencyStore {
  /** Sends one command whose key (for cluster routing) is `key`. */
  readonly #send: RedisSend;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #maxRecordBytes: number;

  constructor(options: RedisStoreOptions) {
    const o = storeOptions("RedisStore", options, ["client", "prefix", "timeoutMs", "maxRecordBytes"]);
    const send = redisSender(options.client);
    if (send === undefined) {
      throw o.refused(
        "client",
        options.client,
        "an ioredis Redis or Cluster, or a redis (node-redis) client or cluster",
      );
    }
    this.#send = send;
    const prefix = options.prefix ?? "idempotency:";
    if (typeof prefix !== "string" || /[{}]/.test(prefix)) {
      throw o.refused(
        "prefix",
        prefix,
        "a string without { or } (a hash tag would put every record on one cluster slot)",
      );
    }
    this.#prefix = prefix;
    this.#timeoutMs = o.timeoutMs(STORE_TIMEOUT_MS);
    this.#maxRecordBytes = storeMaxRecordBytes("RedisStore", options.maxRecordBytes);
  }

  claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult> {
    return this.#traced("claim", key, () => this.#claim(key, fingerprint, leaseMs));
  }

  complete(key: string, token: string, response: StoredResponse, retentionMs: number): Promise<boolean> {
    return this.#traced("complete", key, async () => {
      const encoded = encodeRecordWithin(response, this.#maxRecordBytes);
      const reply = await this.#eval(SCRIPTS.complete, this.#prefix + key, [
        token,
        encoded,
        String(Math.ceil(retentionMs)),
      ]);
      return Number(reply) === 1;
    });
  }

  release(key: string, token: string): Promise<boolean> {
    return this.#traced("release", key, async () => {
      const reply = await this.#eval(SCRIPTS.release, this.#prefix + key, [token]);
      return Number(reply) === 1;
    });
  }

  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.#traced("renew", key, async () => {
      const reply = await this.#eval(SCRIPTS.renew, this.#prefix + key, [token, String(Math.ceil(leaseMs))]);
      return Number(reply) === 1;
    });
  }

  /** One call of the store's API on the `svc:idempotency:store` tracing channels. */
  #traced<T>(operation: IdempotencyStoreCall["operation"], key: string, call: () => Promise<T>): Promise<T> {
    return storeCalls.traced({ store: "redis", operation, key: this.#prefix + key }, call);
  }

  async #claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult> {
    const token = randomHex(16);
    const reply = await this.#eval(SCRIPTS.claim, this.#prefix + key, [
      fingerprint,
      String(Math.ceil(leaseMs)),
      token,
    ]);
    if (!Array.isArray(reply)) throw new StoreUnavailableError("RedisStore: unexpected claim reply");
    const [outcome, a, b] = reply.map((v) => (v === null || v === undefined ? "" : String(v)));
    if (outcome === "claimed") return { outcome, token: a ?? "" };
    if (outcome === "in-flight") {
      return { outcome, fingerprint: a ?? "", leaseRemainingMs: Math.max(0, Number(b)) };
    }
    if (outcome === "completed") {
      return { outcome, fingerprint: a ?? "", response: decodeResponse(b ?? "") };
    }
    throw new StoreUnavailableError("RedisStore: unexpected claim reply");
  }

  /**
   * One script on the record's one key: on a cluster, the node that owns its slot runs it. Each
   * round trip waits at most `timeoutMs`.
   */
  #eval(s: RedisScript, key: string, args: string[]): Promise<unknown> {
    return evalScript((k, words) => this.#bounded(this.#send(k, words)), s, key, args);
  }

  async #bounded<T>(promise: Promise<T>): Promise<T> {
    try {
      return await withinTime(
        promise,
        this.#timeoutMs,
        () => new StoreUnavailableError(`RedisStore: no answer within ${this.#timeoutMs} ms`),
      );
    } catch (err) {
      if (err instanceof StoreUnavailableError || isNoScript(err)) throw err;
      throw new StoreUnavailableError(`RedisStore: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
  }
}

function decodeResponse(text: string): StoredResponse {
  const response = decodeRecord(text);
  if (response === undefined)
    throw new StoreUnavailableError("RedisStore: a stored response is not readable");
  return response;
}
