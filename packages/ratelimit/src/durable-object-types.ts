/**
 * The parts of the Cloudflare Workers Durable Object API the stores use, structurally: the
 * namespace binding a Worker is given (`env.RATE_LIMIT`), and the state its object is built with.
 * `@cloudflare/workers-types`' `DurableObjectNamespace` and `DurableObjectState` fit them.
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
 * What the runtime builds an object with (its first constructor argument).
 * @see https://developers.cloudflare.com/durable-objects/api/state/
 */
export interface DurableObjectStateLike {
  /** The object's own transactional storage. */
  readonly storage: DurableObjectStorageLike;
  /** Runs `callback` with no other event delivered to the object until it settles. */
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
}
