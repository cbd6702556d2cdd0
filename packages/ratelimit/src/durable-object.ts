/**
 * `@svc/ratelimit/durable-object`: the rate limit's store for Cloudflare Workers, a Durable
 * Object per limiter key. The Worker exports {@link RateLimitObject} and hands
 * {@link DurableObjectStore} the namespace binding; no Node.js module is imported.
 *
 * @packageDocumentation
 */

// The shapes of the Workers API the store and its object take, as the other stores' are.
export type {
  DurableObjectIdLike,
  DurableObjectNamespaceLike,
  DurableObjectStateLike,
  DurableObjectStorageLike,
  DurableObjectStubLike,
} from "@svc/kernel/internal";
export { DurableObjectStore, type DurableObjectStoreOptions } from "./durable-object-store.js";
export { RateLimitObject, type RateLimitObjectCall } from "./rate-limit-object.js";
