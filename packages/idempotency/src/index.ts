export { canonicalPath, type RoutingRules, targetPath } from "@svc/kernel";
export { type CommittedResponse, commitKey } from "./commit-key.js";
export type {
  IdempotencyCoreOptions,
  IdempotencyLogger,
  IdempotencyRequiredRule,
  StoreStatusContext,
} from "./config.js";
export {
  createIdempotency,
  IDEMPOTENCY_ERROR_CODES,
  type IdempotencyAttempt,
  type IdempotencyClaim,
  type IdempotencyCore,
  type IdempotencyDecision,
  type IdempotencyResponse,
} from "./core.js";
export type { IdempotencyDiagnostic, IdempotencyStoreCall } from "./diagnostics.js";
export {
  canonicalJson,
  type FingerprintInput,
  type FingerprintKind,
  type FingerprintOption,
  type FingerprintRequest,
  requestFingerprint,
} from "./fingerprint.js";
export { MemoryStore, type MemoryStoreOptions, ScopeFullError, StoreFullError } from "./memory-store.js";
export { type IdempotencyOpenApiOptions, idempotencyOpenApi } from "./openapi.js";
export type { OptionError } from "./option-error.js";
export { MAX_KEY_LENGTH, type ParsedIdempotencyKey, parseIdempotencyKey } from "./parse-key.js";
export {
  ClaimLostError,
  type CommitClaim,
  type PgQueryable,
  PostgresStore,
  type PostgresStoreOptions,
} from "./postgres-store.js";
export * from "./redis-store.js";
export {
  connectionGone,
  type IdempotencyPrincipal,
  type IdempotencyRequest,
  type IdempotencyRequestFacts,
  type IdempotencyRequestReader,
  type IdempotencyRequired,
} from "./request-reader.js";
export {
  type IdempotencyKeyClaim,
  type IdempotencyOptions,
  type IdempotencyStep,
  idempotency,
  replayValue,
} from "./step.js";
export type { ClaimResult, IdempotencyStore, StoredResponse } from "./store.js";
