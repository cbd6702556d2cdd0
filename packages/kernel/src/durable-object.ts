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
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(options.timedOut()), options.timeoutMs);
  });
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
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
    // A late failure after the timeout must not surface as an unhandled rejection.
    answer.catch(() => {});
  }
}

/** What an object built on {@link DurableObjectShell} reads and accepts. @internal */
export interface DurableObjectShellOptions<Call> {
  /** Reads the object's state from storage into the object. */
  read(): Promise<void>;
  /** The call a request's JSON body holds, or undefined when it holds none. */
  callOf(body: unknown): Call | undefined;
  /** The `error` of the 400 answer to a request that holds no call. */
  readonly refusal: string;
}

/**
 * The part of a store's Durable Object that is not its own logic. The object's state is read
 * once, when the object starts (`blockConcurrencyWhile`, so no request is delivered before it),
 * and again before the next call or alarm only after a write failed (a write not kept leaves the
 * object's copy ahead of storage). A failed first read resets the object (the runtime's rule);
 * were it not to, the first call reads.
 * @see https://developers.cloudflare.com/durable-objects/api/state/#blockconcurrencywhile
 *
 * @internal For the Durable Objects of `@svc/ratelimit` and `@svc/idempotency`.
 */
export class DurableObjectShell<Call> {
  readonly #options: DurableObjectShellOptions<Call>;
  readonly #storage: DurableObjectStorageLike;
  /** Whether the object's state is what storage holds (false after a failed write). */
  #loaded = false;

  constructor(ctx: DurableObjectStateLike, options: DurableObjectShellOptions<Call>) {
    this.#options = options;
    this.#storage = ctx.storage;
    ctx.blockConcurrencyWhile(() => this.#load()).catch(() => {});
  }

  /**
   * The call `request` holds (a JSON `POST`), with the state read, or the 400 answer to a request
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

  /** Reads the state again when a write failed since it was last read (or it never was). */
  async ready(): Promise<void> {
    if (!this.#loaded) await this.#load();
  }

  /**
   * The alarm the object set for the end of its state: the state has expired (`forget` it and
   * delete all of storage, as the Redis key's `PEXPIRE` would) or was extended since (set the
   * alarm again for its end, one alarm at a time). `expiresAt` is read once the state is.
   * Returns when the alarm is set for now, or null.
   * @see https://developers.cloudflare.com/durable-objects/api/alarms/
   */
  async alarm(expiresAt: () => number | undefined, forget: () => void): Promise<number | null> {
    await this.ready();
    const at = expiresAt();
    if (at !== undefined && at > Date.now()) {
      await this.#storage.setAlarm(at);
      return at;
    }
    forget();
    await this.#storage.deleteAll();
    return null;
  }

  /** Runs `write`; when it fails, the next call reads the state again rather than trust it. */
  async write(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      this.#loaded = false;
      throw err;
    }
  }

  async #load(): Promise<void> {
    await this.#options.read();
    this.#loaded = true;
  }
}
