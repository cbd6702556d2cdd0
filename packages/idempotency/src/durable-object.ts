/**
 * `@svc/idempotency/durable-object`: the idempotency step's store for Cloudflare Workers, a
 * Durable Object per scoped key. The Worker exports {@link IdempotencyObject} and hands
 * {@link DurableObjectStore} the namespace binding; no Node.js module is imported.
 *
 * @packageDocumentation
 */

// The shapes of the Workers API the store and its object take, as the other stores' are; the
// object reads and writes a record's values at once.
export type {
  DurableObjectBatchStateLike as DurableObjectStateLike,
  DurableObjectBatchStorageLike as DurableObjectStorageLike,
  DurableObjectIdLike,
  DurableObjectNamespaceLike,
  DurableObjectStubLike,
} from "@svc/kernel/internal";
export { DurableObjectStore, type DurableObjectStoreOptions } from "./durable-object-store.js";
export {
  IdempotencyObject,
  type IdempotencyObjectCall,
  type IdempotencyObjectClaim,
} from "./idempotency-object.js";
