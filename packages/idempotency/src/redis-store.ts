import { createHash } from "node:crypto";
import type { ClaimResult, IdempotencyStore, StoredResponse } from "./store.js";

/** The one `ioredis` method the store uses (an `ioredis` `Redis` or `Cluster` fits). */
export interface IoRedisLike {
  call(command: string, args: (string | number)[]): Promise<unknown>;
}

/** The one `redis` (node-redis v4+) method the store uses (a `createClient()` client fits). */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * Options of {@link RedisStore}.
 *
 * @example new RedisStore({ client: redis, prefix: "{orders-idem}:", timeoutMs: 500 })
 * @see https://redis.io/docs/latest/develop/interact/programmability/eval-intro/
 */
export interface RedisStoreOptions {
  /** A connected `ioredis` or `redis` client; the store never connects or quits it. */
  client: IoRedisLike | NodeRedisLike;
  /**
   * Prefix of every key the store writes. Use a `{hash tag}` prefix on Redis Cluster, since each
   * script touches the record and the fencing counter together.
   * @default "idempotency:"
   */
  prefix?: string;
  /**
   * Longest wait for one Redis round trip before the store gives up (the middleware then answers
   * 503, or passes through when configured). A command that timed out may still run later.
   * @default 1000
   */
  timeoutMs?: number;
}

/**
 * Claim: one round trip. Returns the live record, or takes the next fencing token from the
 * counter and writes an in-flight record with the lease as its expiry, all in one atomic script.
 * KEYS[1] record, KEYS[2] fencing counter; ARGV[1] fingerprint, ARGV[2] lease ms.
 */
const CLAIM = `
local r = redis.call('HMGET', KEYS[1], 'state', 'fp', 'resp')
if r[1] == 'completed' then return {'completed', r[2], r[3]} end
if r[1] then return {'in-flight', r[2], tostring(redis.call('PTTL', KEYS[1]))} end
local t = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'state', 'in-flight', 'fp', ARGV[1], 'token', t)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {'claimed', tostring(t)}
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

interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({
  source,
  sha: createHash("sha1").update(source).digest("hex"),
});

const SCRIPTS = {
  claim: script(CLAIM),
  complete: script(COMPLETE),
  release: script(RELEASE),
  renew: script(RENEW),
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
 * An {@link IdempotencyStore} on Redis, shared by every instance of the service. Each operation
 * is a single `EVALSHA` (one round trip to claim, one to complete), so two concurrent duplicates
 * can never both claim. Works with an injected `ioredis` or `redis` client.
 *
 * @example
 * import { Redis } from "ioredis";
 * const store = new RedisStore({ client: new Redis(process.env.REDIS_URL), prefix: "orders:idem:" });
 * app.post("/orders", idempotency({ store }), createOrder);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export class RedisStore implements IdempotencyStore {
  readonly #send: (args: string[]) => Promise<unknown>;
  readonly #prefix: string;
  readonly #timeoutMs: number;

  constructor(options: RedisStoreOptions) {
    const client = options?.client as Partial<IoRedisLike & NodeRedisLike> | undefined;
    if (client && typeof client.call === "function") {
      const io = client as IoRedisLike;
      this.#send = ([command, ...args]) => io.call(command ?? "", args);
    } else if (client && typeof client.sendCommand === "function") {
      const node = client as NodeRedisLike;
      this.#send = (args) => node.sendCommand(args);
    } else {
      throw new TypeError("RedisStore: options.client must be an ioredis or redis (node-redis) client");
    }
    this.#prefix = options.prefix ?? "idempotency:";
    this.#timeoutMs = options.timeoutMs ?? 1000;
    if (!Number.isFinite(this.#timeoutMs) || this.#timeoutMs <= 0) {
      throw new TypeError(
        `RedisStore: timeoutMs must be a positive number, got ${String(options.timeoutMs)}`,
      );
    }
  }

  async claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult> {
    const reply = await this.#eval(
      SCRIPTS.claim,
      [this.#prefix + key, `${this.#prefix}fence`],
      [fingerprint, String(Math.ceil(leaseMs))],
    );
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

  async complete(
    key: string,
    token: string,
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean> {
    const reply = await this.#eval(
      SCRIPTS.complete,
      [this.#prefix + key],
      [token, encodeResponse(response), String(Math.ceil(retentionMs))],
    );
    return Number(reply) === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    const reply = await this.#eval(SCRIPTS.release, [this.#prefix + key], [token]);
    return Number(reply) === 1;
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const reply = await this.#eval(SCRIPTS.renew, [this.#prefix + key], [token, String(Math.ceil(leaseMs))]);
    return Number(reply) === 1;
  }

  async #eval(s: Script, keys: string[], args: string[]): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await this.#bounded(this.#send(["EVALSHA", s.sha, ...tail]));
    } catch (err) {
      // The script cache is empty after a restart or failover: load it with the one EVAL.
      if (err instanceof Error && err.message.startsWith("NOSCRIPT")) {
        return this.#bounded(this.#send(["EVAL", s.source, ...tail]));
      }
      throw err;
    }
  }

  async #bounded<T>(promise: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError(`RedisStore: no answer within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
    });
    try {
      return await Promise.race([promise, timeout]);
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err;
      if (err instanceof Error && err.message.startsWith("NOSCRIPT")) throw err;
      throw new StoreUnavailableError(`RedisStore: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    } finally {
      clearTimeout(timer);
      // A late rejection after the timeout must not surface as an unhandled rejection.
      promise.catch(() => {});
    }
  }
}

function encodeResponse(response: StoredResponse): string {
  return JSON.stringify({
    s: response.status,
    h: response.headers,
    b: Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength).toString(
      "base64",
    ),
  });
}

function decodeResponse(text: string): StoredResponse {
  let parsed: { s?: unknown; h?: unknown; b?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (err) {
    throw new StoreUnavailableError("RedisStore: a stored response is not readable", { cause: err });
  }
  if (
    typeof parsed.s !== "number" ||
    typeof parsed.b !== "string" ||
    typeof parsed.h !== "object" ||
    !parsed.h
  ) {
    throw new StoreUnavailableError("RedisStore: a stored response is not readable");
  }
  return {
    status: parsed.s,
    headers: parsed.h as Record<string, string | string[]>,
    body: new Uint8Array(Buffer.from(parsed.b, "base64")),
  };
}
