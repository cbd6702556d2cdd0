import type {
  DurableObjectNamespaceLike,
  DurableObjectStateLike,
  DurableObjectStorageLike,
} from "../src/durable-object.js";
import { IdempotencyObject } from "../src/idempotency-object.js";

// The store and its object without workerd: the object over an in-memory storage with the
// Durable Object storage API's shape, reached through a namespace that calls its `fetch`. What
// workerd adds (one object per name, input and output gates, alarms that fire, the 409 and the
// replay over HTTP) is tested in apps/conformance (durable-objects.test.ts).

export class FakeStorage implements DurableObjectStorageLike {
  readonly values = new Map<string, unknown>();
  alarm: number | null = null;
  failWrites = false;
  get<T>(key: string): Promise<T | undefined>;
  get<T>(keys: string[]): Promise<Map<string, T>>;
  async get<T>(key: string | string[]): Promise<T | undefined | Map<string, T>> {
    if (typeof key === "string") return structuredClone(this.values.get(key)) as T | undefined;
    return new Map(
      key.filter((k) => this.values.has(k)).map((k) => [k, structuredClone(this.values.get(k)) as T]),
    );
  }
  put<T>(key: string, value: T): Promise<void>;
  put<T>(entries: Record<string, T>): Promise<void>;
  async put<T>(key: string | Record<string, T>, value?: T): Promise<void> {
    if (this.failWrites) throw new Error("storage write failed");
    const entries = typeof key === "string" ? { [key]: value } : key;
    if (Object.keys(entries).length > 128) throw new Error("more than 128 entries in one put");
    for (const [k, v] of Object.entries(entries)) this.values.set(k, structuredClone(v));
  }
  async deleteAll(): Promise<void> {
    if (this.failWrites) throw new Error("storage write failed");
    this.values.clear();
  }
  async getAlarm(): Promise<number | null> {
    return this.alarm;
  }
  async setAlarm(at: number | Date): Promise<void> {
    this.alarm = typeof at === "number" ? at : at.getTime();
  }
}

export function namespace() {
  const objects = new Map<string, { object: IdempotencyObject; storage: FakeStorage }>();
  const of = (name: string) => {
    let found = objects.get(name);
    if (found === undefined) {
      const storage = new FakeStorage();
      const state: DurableObjectStateLike = { storage, blockConcurrencyWhile: (callback) => callback() };
      found = { object: new IdempotencyObject(state), storage };
      objects.set(name, found);
    }
    return found;
  };
  const binding: DurableObjectNamespaceLike = {
    idFromName: (name) => ({ toString: () => name }),
    get: (id) => ({ fetch: (input, init) => of(id.toString()).object.fetch(new Request(input, init)) }),
  };
  return { binding, of };
}
