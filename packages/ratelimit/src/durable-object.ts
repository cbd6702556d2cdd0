/**
 * `@svc/ratelimit/durable-object`: the rate limit's store for Cloudflare Workers, a Durable
 * Object per limiter key. The Worker exports {@link RateLimitObject} and hands
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
export { RateLimitObject, type RateLimitObjectCall } from "./rate-limit-object.js";
