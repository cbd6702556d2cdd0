/** @deprecated Use `NextFunction` from `@svc/errors` (the same type). */
export type { NextFunction as RateLimitNext } from "@svc/errors";
export { ipBucket } from "@svc/kernel";
export { type IpMatcher, ipMatcher } from "./client-key.js";
export {
  type Asked,
  after,
  afterResponse,
  type Counted,
  createDecider,
  type State,
  type Verdict,
} from "./core.js";
export type { RateLimitDiagnostic, RateLimitStoreCall } from "./diagnostics.js";
export {
  type ExpressRateLimitHits,
  type ExpressRateLimitStore,
  type ExpressRateLimitStoreOptions,
  expressRateLimitStore,
} from "./express-store.js";
export {
  limitExceeded,
  type RateLimitGate,
  type RateLimitGateOptions,
  type RateLimitResponse,
  rateLimitGate,
} from "./gate.js";
export {
  type HeaderSettings,
  MAX_POLICIES,
  MAX_POLICY_NAME,
  RATELIMIT_DRAFTS,
  type RateLimitDraft,
  type RateLimitFields,
  type ResetFormat,
  setRateLimitHeaders,
} from "./headers.js";
export { createRateLimiter, type RateLimiter, type RateLimiterOptions } from "./limiter.js";
export { MemoryStore, type MemoryStoreOptions, StoreFullError } from "./memory-store.js";
export { type RateLimitOpenApiOptions, rateLimitOpenApi } from "./openapi.js";
export type {
  PerRequest,
  RateLimitExceeded,
  RateLimitHandler,
  RateLimitInfo,
  RateLimitLogger,
  RateLimitMessage,
  RateLimitOptions,
  RateLimitPrincipal,
  RateLimitRequest,
} from "./options.js";
export { type Config, resolveConfig } from "./options.js";
export {
  type IoRedisLike,
  type NodeRedisClusterLike,
  type NodeRedisLike,
  RedisStore,
  type RedisStoreOptions,
  StoreTimeoutError,
} from "./redis-store.js";
// The stores' contract and the algorithms' names, every export of the module.
export * from "./types.js";
