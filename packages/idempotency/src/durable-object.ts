/**
 * `@svc/idempotency/durable-object`: the idempotency step's store for Cloudflare Workers, a
 * Durable Object per scoped key. The Worker exports {@link IdempotencyObject} and hands
 * {@link DurableObjectStore} the namespace binding; no Node.js module is imported.
 *
 * @packageDocumentation
 */

export { DurableObjectStore, type DurableObjectStoreOptions } from "./durable-object-store.js";
export type {
  DurableObjectIdLike,
  DurableObjectNamespaceLike,
  DurableObjectStateLike,
  DurableObjectStorageLike,
  DurableObjectStubLike,
} from "./durable-object-types.js";
export {
  IdempotencyObject,
  type IdempotencyObjectCall,
  type IdempotencyObjectClaim,
} from "./idempotency-object.js";
