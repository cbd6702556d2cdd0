/**
 * `@svc/ratelimit/express`: the rate limit as Express (4 and 5) middleware, the same `rateLimit()`
 * as the main entry's.
 *
 * @packageDocumentation
 */
export {
  type RateLimitExceeded,
  type RateLimitHandler,
  type RateLimitInfo,
  type RateLimitOptions,
  type RateLimitRequest,
  rateLimit,
} from "@svc/ratelimit";
