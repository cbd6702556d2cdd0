/** @deprecated Use `NextFunction` from `@svc/errors` (the same type). */
export type { NextFunction as AuthNext } from "@svc/errors";
export type { AuthView } from "./auth-view.js";
export {
  type AuthContext,
  type AuthenticateOptions,
  type Authenticator,
  type AuthRealm,
  type AuthRequest,
  createAuthenticator,
} from "./authenticate.js";
export {
  type AuthorizationCredentials,
  challenge,
  isToken68,
  parseAuthorization,
} from "./authorization-header.js";
export {
  type AuthCheck,
  type AuthGuard,
  type AuthorizePredicate,
  type PredicateCheck,
  predicateCheck,
  predicateGuard,
  recordedAuthContext,
  roleCheck,
  roleGuard,
  scopeCheck,
  scopeGuard,
} from "./authorize.js";
export { type BasicCredentials, decodeBasicCredentials } from "./basic.js";
export {
  type BasicCacheOptions,
  type BasicLogger,
  type BasicOptions,
  type BasicOutcome,
  type BasicVerifier,
  createBasicVerifier,
  type FailureLimitOptions,
  type VerifyPassword,
} from "./basic-verifier.js";
export {
  type BearerCacheOptions,
  type BearerIssuerOptions,
  type BearerOptions,
  type BearerVerifier,
  createBearerVerifier,
  InvalidTokenError,
  KeySourceUnavailableError,
  type RemoteJwksOptions,
} from "./bearer.js";
export type { AuthDiagnostic, AuthRefusal } from "./diagnostics.js";
export {
  type DiscoverIssuerOptions,
  DiscoveryError,
  type DiscoveryErrorCode,
  type DiscoveryFetch,
  type DiscoveryOptions,
  discoverIssuer,
  type IssuerMetadata,
} from "./discovery.js";
export type { DpopAlgorithm, DpopNonceOptions, DpopOptions } from "./dpop.js";
export type { FailureDecision, FailureLimiter } from "./failure-budget.js";
export {
  type MemoryNonceStoreOptions,
  memoryNonceStore,
  type NonceStore,
  NonceStoreFullError,
  NonceStoreTimeoutError,
  type RedisNonceClient,
  type RedisNonceStoreOptions,
  redisNonceStore,
} from "./nonce-store.js";
export { type AuthOpenApiOptions, type AuthOpenApiScheme, authOpenApi } from "./openapi.js";
export type { OptionError } from "./options.js";
export {
  createPasswordHasher,
  hashPassword,
  type PasswordHasher,
  type PasswordHashOptions,
  verifyPassword,
} from "./password-hash.js";
export type { Principal, PrincipalInit } from "./principal.js";
export { pinoRedaction, REDACTED, redactUrl } from "./redaction.js";
export {
  createSoapCredentialsVerifier,
  PASSWORD_DIGEST,
  PASSWORD_TEXT,
  SoapAuthError,
  type SoapAuthErrorCode,
  type SoapClient,
  type SoapCredentialsOptions,
  type SoapCredentialsVerifier,
  type SoapHookContext,
  type StoredPassword,
  verifySoapCredentials,
  WSSE_NS,
  WSU_NS,
  type XmlElement,
} from "./soap.js";
export {
  createTokenIssuer,
  type SigningAlgorithm,
  type TokenIssuer,
  type TokenIssuerOptions,
  type TokenResponse,
} from "./token-issuer.js";
