/**
 * The parts of the Cloudflare Workers Durable Object API the stores use, structurally: the
 * namespace binding a Worker is given (`env.RATE_LIMIT`, `env.IDEMPOTENCY`), and the state its
 * object is built with. `@cloudflare/workers-types`' `DurableObjectNamespace` and
 * `DurableObjectState` fit them. Then the plumbing both stores share: the store's one call to the
 * object of a key, and the object's reading of its storage and of each call.
 *
 * @see https://developers.cloudflare.com/durable-objects/api/namespace/
 * @see https://developers.cloudflare.com/durable-objects/api/state/
 */

import { withinTime } from "./within-time.js";

/** An object's id, from {@link DurableObjectNamespaceLike.idFromName}. */
export interface DurableObjectIdLike {
  /** The id in hex. */
  toString(): string;
}

/**
 * A stub of one object: its `fetch` reaches the object's own `fetch` handler.
 * @see https://developers.cloudflare.com/durable-objects/api/stub/
 */
export interface DurableObjectStubLike {
  /** Sends a request to the object's `fetch` handler. */
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

/**
 * A Durable Object namespace binding (`[[durable_objects.bindings]]` in `wrangler.toml`).
 * @example const store = new DurableObjectStore({ namespace: env.RATE_LIMIT });
 * @see https://developers.cloudflare.com/durable-objects/api/namespace/
 */
export interface DurableObjectNamespaceLike {
  /** The id of the object named `name`: the same name reaches the same object, worldwide. */
  idFromName(name: string): DurableObjectIdLike;
  /** The stub of the object `id` names (created on its first call). */
  get(id: DurableObjectIdLike): DurableObjectStubLike;
}

/**
 * An object's transactional storage: the key-value methods and its alarm.
 * @see https://developers.cloudflare.com/durable-objects/api/storage-api/
 */
export interface DurableObjectStorageLike {
  /** The value stored under `key`, or undefined. */
  get<T = unknown>(key: string): Promise<T | undefined>;
  /** Stores `value` under `key`. */
  put<T>(key: string, value: T): Promise<void>;
  /** Deletes every key of the object. */
  deleteAll(): Promise<void>;
  /** The time the alarm is set for (epoch ms), or null. */
  getAlarm(): Promise<number | null>;
  /** Sets the alarm (one per object): the object's `alarm()` runs then. */
  setAlarm(scheduledTime: number | Date): Promise<void>;
}

/**
 * {@link DurableObjectStorageLike} with the methods that read and write many keys at once.
 * @see https://developers.cloudflare.com/durable-objects/api/storage-api/
 */
export interface DurableObjectBatchStorageLike extends DurableObjectStorageLike {
  /** The value stored under `key`, or undefined. */
  get<T = unknown>(key: string): Promise<T | undefined>;
  /** The values stored under `keys` (at most 128), those present. */
  get<T = unknown>(keys: string[]): Promise<Map<string, T>>;
  /** Stores `value` under `key`. */
  put<T>(key: string, value: T): Promise<void>;
  /** Stores each entry (at most 128), all or none. */
  put<T>(entries: Record<string, T>): Promise<void>;
}

/**
 * What the runtime builds an object with (its first constructor argument), with the storage
 * methods the object uses.
 * @see https://developers.cloudflare.com/durable-objects/api/state/
 */
export interface DurableObjectStateLike<Storage extends DurableObjectStorageLike = DurableObjectStorageLike> {
  /** The object's own transactional storage. */
  readonly storage: Storage;
  /** Runs `callback` with no other event delivered to the object until it settles. */
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
}

/** What the runtime builds an object that reads and writes many keys at once with. */
export type DurableObjectBatchStateLike = DurableObjectStateLike<DurableObjectBatchStorageLike>;

/** Whether `value` is a namespace binding (what a store's `namespace` option must be). @internal */
export function isDurableObjectNamespace(value: unknown): value is DurableObjectNamespaceLike {
  const namespace = value as Partial<DurableObjectNamespaceLike> | null;
  return (
    typeof namespace === "object" &&
    namespace !== null &&
    typeof namespace.idFromName === "function" &&
    typeof namespace.get === "function"
  );
}

/** How {@link callDurableObject} reaches an object and when it gives up. @internal */
export interface DurableObjectCallOptions {
  /** The URL the call is posted to (the object reads the body alone). */
  readonly url: string;
  /** The longest the answer is waited for. */
  readonly timeoutMs: number;
  /** The error the call rejects with once `timeoutMs` has passed. */
  timedOut(): Error;
  /** Put before the message of an answer that is not a 2xx. */
  readonly label: string;
}

/**
 * One call to the object named `name`: `call` as a JSON `POST` to its `fetch` handler, its JSON
 * answer back, within `timeoutMs`. Never sent twice: Cloudflare marks some errors `retryable`,
 * but a call that reached the object may have been applied, and a retry would apply it twice. A
 * late failure after the timeout is dropped.
 * @see https://developers.cloudflare.com/durable-objects/best-practices/error-handling/
 *
 * @internal For the Durable Object stores of `@svc/ratelimit` and `@svc/idempotency`.
 */
export async function callDurableObject(
  namespace: DurableObjectNamespaceLike,
  name: string,
  call: unknown,
  options: DurableObjectCallOptions,
): Promise<unknown> {
  const answer = (async () => {
    const stub = namespace.get(namespace.idFromName(name));
    const response = await stub.fetch(options.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call),
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`${options.label}the object answered ${response.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as unknown;
  })();
  return withinTime(answer, options.timeoutMs, options.timedOut);
}

/** What an object built on {@link DurableObjectShell} reads and accepts. @internal */
export interface DurableObjectShellOptions<Call, Value> {
  /** Reads the object's value from storage: undefined when it holds none. */
  read(): Promise<Value | undefined>;
  /** The call a request's JSON body holds, or undefined when it holds none. */
  callOf(body: unknown): Call | undefined;
  /** The `error` of the 400 answer to a request that holds no call. */
  readonly refusal: string;
  /** The instant (epoch ms) `value` stops mattering: from then on it is gone, as an expired Redis key. */
  expiresAt(value: Value): number;
}

/**
 * The part of a store's Durable Object that is not its own logic: its one value (a key's count, a
 * record), read from storage, kept, and deleted once it has expired. The value is read once, when
 * the object starts (`blockConcurrencyWhile`, so no request is delivered before it), and again
 * before the next call or alarm only after a write failed (a write not kept leaves the object's
 * copy ahead of storage). A failed first read resets the object (the runtime's rule); were it not
 * to, the first call reads.
 * @see https://developers.cloudflare.com/durable-objects/api/state/#blockconcurrencywhile
 *
 * @internal For the Durable Objects of `@svc/ratelimit` and `@svc/idempotency`.
 */
export class DurableObjectShell<Call, Value> {
  readonly #options: DurableObjectShellOptions<Call, Value>;
  readonly #storage: DurableObjectStorageLike;
  /** The value as last read or kept: what the object answers from. */
  #value: Value | undefined;
  /** Whether `#value` is what storage holds (false after a failed write). */
  #loaded = false;

  constructor(ctx: DurableObjectStateLike, options: DurableObjectShellOptions<Call, Value>) {
    this.#options = options;
    this.#storage = ctx.storage;
    ctx.blockConcurrencyWhile(() => this.#load()).catch(() => {});
  }

  /**
   * The call `request` holds (a JSON `POST`), with the value read, or the 400 answer to a request
   * that holds none.
   */
  async receive(request: Request): Promise<Call | Response> {
    let call: Call | undefined;
    try {
      call = this.#options.callOf(await request.json());
    } catch {
      call = undefined;
    }
    if (call === undefined) return Response.json({ error: this.#options.refusal }, { status: 400 });
    await this.ready();
    return call;
  }

  /** Reads the value again when a write failed since it was last read (or it never was). */
  async ready(): Promise<void> {
    if (!this.#loaded) await this.#load();
  }

  /** Whether the object holds a value, live or not yet deleted by its alarm. */
  get held(): boolean {
    return this.#value !== undefined;
  }

  /** The value while it lives at `now`, else undefined. */
  live(now: number): Value | undefined {
    const value = this.#value;
    return value !== undefined && this.#options.expiresAt(value) > now ? value : undefined;
  }

  /**
   * The alarm the object set for the end of its value: the value has expired (forget it and delete
   * all of storage, as the Redis key's `PEXPIRE` would) or was extended since (set the alarm again
   * for its end, one alarm at a time). Returns when the alarm is set for now, or null.
   * @see https://developers.cloudflare.com/durable-objects/api/alarms/
   */
  async alarm(): Promise<number | null> {
    await this.ready();
    const value = this.#value;
    const at = value === undefined ? undefined : this.#options.expiresAt(value);
    if (at !== undefined && at > Date.now()) {
      await this.#storage.setAlarm(at);
      return at;
    }
    this.#value = undefined;
    await this.#storage.deleteAll();
    return null;
  }

  /**
   * Makes `value` the object's value, synchronously (the next call answers from it, with no await
   * in between), then writes it with `write`, or deletes all of storage when it is undefined and
   * then runs `deleted`. When the write fails, the next call reads the value again rather than
   * answer from one storage lost.
   */
  async keep(
    value: Value | undefined,
    write: (value: Value) => Promise<void>,
    deleted?: () => Promise<void>,
  ): Promise<void> {
    this.#value = value;
    try {
      if (value !== undefined) await write(value);
      else {
        await this.#storage.deleteAll();
        await deleted?.();
      }
    } catch (err) {
      this.#loaded = false;
      throw err;
    }
  }

  async #load(): Promise<void> {
    this.#value = await this.#options.read();
    this.#loaded = true;
  }
}
