/** @deprecated Use `NextFunction` from `@svc/errors` (the same type). */
export type { NextFunction as IdempotencyNext } from "@svc/errors";
export { canonicalPath, type RoutingRules, targetPath } from "./canonical-path.js";
export { type CapturedResponse, captureResponse } from "./capture.js";
export { type CommittedResponse, commitKey } from "./commit-key.js";
export type { IdempotencyCoreOptions, IdempotencyRequiredRule } from "./config.js";
export {
  createIdempotency,
  type IdempotencyAttempt,
  type IdempotencyClaim,
  type IdempotencyCore,
  type IdempotencyDecision,
  type IdempotencyResponse,
  writeReplay,
} from "./core.js";
export type { IdempotencyPrincipal, IdempotencyRequest } from "./express.js";
export { canonicalJson, type FingerprintInput, requestFingerprint } from "./fingerprint.js";
export {
  IDEMPOTENCY_ERROR_CODES,
  type IdempotencyLocals,
  type IdempotencyLogger,
  type IdempotencyRequired,
  idempotency as idempotencyMiddleware,
  markStarted,
  type StoreStatusContext,
} from "./idempotency.js";
export { MemoryStore, type MemoryStoreOptions, ScopeFullError, StoreFullError } from "./memory-store.js";
export type { OptionError } from "./option-error.js";
export { MAX_KEY_LENGTH, type ParsedIdempotencyKey, parseIdempotencyKey } from "./parse-key.js";
export {
  ClaimLostError,
  type CommitClaim,
  type PgQueryable,
  PostgresStore,
  type PostgresStoreOptions,
} from "./postgres-store.js";
export {
  type IoRedisLike,
  type NodeRedisClusterLike,
  type NodeRedisLike,
  RedisStore,
  type RedisStoreOptions,
  StoreUnavailableError,
} from "./redis-store.js";
export {
  type IdempotencyKeyClaim,
  type IdempotencyOptions,
  type IdempotencyStep,
  idempotency,
  replayValue,
} from "./step.js";
export type { ClaimResult, IdempotencyStore, StoredResponse } from "./store.js";
