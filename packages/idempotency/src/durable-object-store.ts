import {
  type ClaimResult,
  type IdempotencyStore,
  type StoredResponse,
  StoreUnavailableError,
} from "@svc/idempotency";
import { callDurableObject, type DurableObjectNamespaceLike } from "@svc/kernel/internal";
import { randomHex } from "./bytes.js";
import { storeCalls } from "./diagnostics.js";
import {
  type IdempotencyObjectCall,
  type IdempotencyObjectClaim,
  MAX_RECORD_CHUNKS,
  RECORD_CHUNK_CHARS,
} from "./idempotency-object.js";
import { STORE_TIMEOUT_MS, storeMaxRecordBytes, storeOptions } from "./option-error.js";
import { decodeRecord, encodeRecordWithin } from "./record-json.js";

/** The largest `maxRecordBytes`: what one object's record spans at most (2 MiB). */
const MAX_RECORD_BYTES = RECORD_CHUNK_CHARS * MAX_RECORD_CHUNKS;

/**
 * Options of {@link DurableObjectStore}.
 *
 * @example new DurableObjectStore({ namespace: env.IDEMPOTENCY, prefix: "orders:", timeoutMs: 1000 })
 * @see https://developers.cloudflare.com/durable-objects/api/namespace/
 */
export interface DurableObjectStoreOptions {
  /**
   * The Durable Object namespace binding whose class is {@link IdempotencyObject} (`env.IDEMPOTENCY`
   * with `[[durable_objects.bindings]] name = "IDEMPOTENCY", class_name = "IdempotencyObject"`).
   */
  namespace: DurableObjectNamespaceLike;
  /**
   * Prepended to each scoped key to name its object: two steps on one namespace with different
   * prefixes keep their records apart.
   * @default "idempotency:"
   */
  prefix?: string;
  /**
   * Largest record kept whole, in bytes as stored (the body is base64 inside JSON, so about 4/3 of
   * its size plus the headers), as `RedisStore` counts it; at most 2097152 (2 MiB, what one object
   * keeps of a record). A larger response is stored without its body (`bodyOmitted`): a replay
   * sends the status and headers only, and the handler never runs twice. One whose replayed headers
   * alone pass it is stored with its status alone, so no record passes it.
   * @example new DurableObjectStore({ namespace: env.IDEMPOTENCY, maxRecordBytes: 256 * 1024 })
   * @default 1048576 (1 MiB)
   */
  maxRecordBytes?: number;
  /**
   * Longest wait for one call to an object before the store gives up (the middleware then answers
   * 503, or passes through when configured), at most 2147483647 (the longest `setTimeout`). A call
   * that timed out may still be applied later.
   * @default 1000
   */
  timeoutMs?: number;
}

/**
 * An {@link IdempotencyStore} for Cloudflare Workers: each scoped key's record lives in a Durable
 * Object of its own ({@link IdempotencyObject}, named `prefix + key`), so every Worker instance,
 * in every location, claims and replays a key in the one place. Each operation is one call to the
 * key's object, which runs it atomically, as the Redis store's scripts do: two concurrent
 * duplicates can never both claim, and `complete`/`release`/`renew` act only while the caller's
 * fencing token (128 random bits) is the record's.
 *
 * Bounds: no record over `maxRecordBytes` (counted as `RedisStore` counts it); every record
 * expires (lease, then retention), and its object's alarm then deletes it. A call that fails (the
 * object unreachable, overloaded or reset, a storage error, no answer within `timeoutMs`) rejects
 * with {@link StoreUnavailableError}, which the middleware answers as any store failure
 * (`onStoreError`: a 503 with `Retry-After`, or an unprotected run), as for a Redis outage.
 *
 * @example
 * export { IdempotencyObject } from "@svc/idempotency/durable-object";
 * const keys = idempotency({ store: new DurableObjectStore({ namespace: env.IDEMPOTENCY }), required: true });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 * @see https://developers.cloudflare.com/durable-objects/best-practices/error-handling/
 */
export class DurableObjectStore implements IdempotencyStore {
  readonly #namespace: DurableObjectNamespaceLike;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #maxRecordBytes: number;

  constructor(options: DurableObjectStoreOptions) {
    const o = storeOptions("DurableObjectStore", options, [
      "namespace",
      "prefix",
      "timeoutMs",
      "maxRecordBytes",
    ]);
    this.#namespace = o.namespace("env.IDEMPOTENCY, bound to the class IdempotencyObject in wrangler.toml");
    this.#prefix = o.prefix("idempotency:");
    this.#timeoutMs = o.timeoutMs(STORE_TIMEOUT_MS);
    const maxRecordBytes = storeMaxRecordBytes("DurableObjectStore", options.maxRecordBytes);
    if (maxRecordBytes > MAX_RECORD_BYTES) {
      throw o.refused(
        "maxRecordBytes",
        maxRecordBytes,
        `an integer from 1024 to ${MAX_RECORD_BYTES} (bytes; what one object keeps of a record)`,
      );
    }
    this.#maxRecordBytes = maxRecordBytes;
  }

  async claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult> {
    const token = randomHex(16);
    const reply = (await this.#call(key, {
      op: "claim",
      fingerprint,
      leaseMs: Math.ceil(leaseMs),
      token,
    })) as Partial<IdempotencyObjectClaim> | null;
    if (reply?.outcome === "claimed" && typeof reply.token === "string")
      return { outcome: "claimed", token: reply.token };
    if (reply?.outcome === "in-flight" && typeof reply.fingerprint === "string") {
      return {
        outcome: "in-flight",
        fingerprint: reply.fingerprint,
        leaseRemainingMs: Math.max(0, Number(reply.leaseRemainingMs)),
      };
    }
    if (reply?.outcome === "completed" && typeof reply.fingerprint === "string") {
      const response = typeof reply.record === "string" ? decodeRecord(reply.record) : undefined;
      if (response === undefined)
        throw new StoreUnavailableError("DurableObjectStore: a stored response is not readable");
      return { outcome: "completed", fingerprint: reply.fingerprint, response };
    }
    throw new StoreUnavailableError("DurableObjectStore: unexpected claim answer");
  }

  complete(key: string, token: string, response: StoredResponse, retentionMs: number): Promise<boolean> {
    const record = encodeRecordWithin(response, this.#maxRecordBytes);
    return this.#done(key, { op: "complete", token, record, retentionMs: Math.ceil(retentionMs) });
  }

  release(key: string, token: string): Promise<boolean> {
    return this.#done(key, { op: "release", token });
  }

  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.#done(key, { op: "renew", token, leaseMs: Math.ceil(leaseMs) });
  }

  /** Whether the object did what `call` asks (it answers `true`), only while the token is the record's. */
  async #done(key: string, call: IdempotencyObjectCall): Promise<boolean> {
    return (await this.#call(key, call)) === true;
  }

  /** One call to the object of `key`, answered within `timeoutMs`, never sent twice. */
  #call(key: string, call: IdempotencyObjectCall): Promise<unknown> {
    const name = this.#prefix + key;
    return storeCalls.traced({ store: "durable-object", operation: call.op, key: name }, () =>
      this.#send(name, call),
    );
  }

  async #send(name: string, call: IdempotencyObjectCall): Promise<unknown> {
    try {
      return await callDurableObject(this.#namespace, name, call, {
        url: "https://idempotency.invalid/",
        timeoutMs: this.#timeoutMs,
        timedOut: () =>
          new StoreUnavailableError(`DurableObjectStore: no answer within ${this.#timeoutMs} ms`),
        label: "",
      });
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err;
      throw new StoreUnavailableError(
        `DurableObjectStore: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  }
}
