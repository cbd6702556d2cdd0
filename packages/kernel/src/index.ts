export { type Authority, parseHost } from "./authority.js";
export { ipAddressOf, ipBucket } from "./client-bucket.js";
export {
  createPipeline,
  type HandlerContext,
  Pipeline,
  type PipelineOptions,
  type Prepared,
  type RouteOptions,
} from "./core.js";
export {
  type DecisionChannel,
  type DecisionMessage,
  type DiagnosticChannel,
  type DiagnosticListener,
  decisionChannel,
  type LiteralDecisions,
  publishDecision,
  subscribeDiagnostics,
  type TracedCall,
  tracedCall,
  unsubscribeDiagnostics,
} from "./diagnostics.js";
export {
  type Authentication,
  type AuthenticationRealm,
  type Exchange,
  exchangeIfAny,
  exchangeOf,
  type FactsEntry,
  MAX_RECORDED_DECISIONS,
  type ParsedBody,
  type Principal,
  principalFor,
  principalKey,
  type RateLimitState,
  type RecordedDecision,
  type RoutingRules,
  recordAuthentication,
} from "./exchange.js";
export { type ForwardedHeaders, type TrustHop, trustedHops, trustedListValue } from "./forwarded.js";
export {
  type Answer,
  type Gate,
  type GateOutcome,
  isAnswer,
  type Passage,
  type RequestView,
} from "./gate.js";
export {
  CACHE_LIMIT,
  CACHE_MAX_BYTES,
  CACHEABLE_LENGTH,
  fieldLines,
  fieldValue,
  isChallengeList,
  isToken,
  isToken68,
  MAX_FIELD_LENGTH,
  MAX_LIST_MEMBERS,
  type MediaRange,
  type MediaType,
  type MediaTypeMatch,
  matchMediaType,
  type Parameter,
  type ParseCacheUsage,
  parseCacheUsage,
  parseMediaRanges,
  parseMediaType,
  parseParameters,
  parseQList,
  parseQValue,
  type QItem,
  quoteString,
  repeatsField,
  selectMediaType,
  splitList,
  trimOws,
} from "./grammar.js";
// Held in the main entry, as the exchanges are: one table in a process, however it is loaded.
export { headlessMiddleware, isHeadlessMiddleware } from "./headless.js";
export { type FieldError, HttpError, type HttpErrorOptions, isHttpError } from "./http-error.js";
export { stringifyJson } from "./json.js";
export { MEDIA_TYPE, type MediaTyped } from "./media-type.js";
export {
  addOpenApiParameter,
  addOpenApiResponse,
  addOpenApiResponseHeaders,
  composeOpenApi,
  type OpenApiComponents,
  type OpenApiFragment,
  type OpenApiObject,
  type OpenApiOperationContext,
  openApiErrorResponse,
  openApiRef,
} from "./openapi.js";
export type { OptionError } from "./option-error.js";
export {
  type FactsHeaders,
  type FactsInput,
  type ForwardedValues,
  type RequestFacts,
  requestFacts,
  resolveFacts,
} from "./request-facts.js";
export { type RequestHead, type RequestRule, refuseRequest } from "./request-rule.js";
export {
  addVary,
  type Body,
  type Fields,
  type FieldValue,
  fieldText,
  isReply,
  Reply,
  type ReplyInit,
  type Representation,
  type RepresentationBody,
  type RepresentContext,
  type ResponseValue,
  reply,
} from "./response.js";
export {
  canonicalPath,
  type RouteRecord,
  recordRouteTemplate,
  routedPath,
  routeOf,
} from "./route.js";
export { type RequestState, requestState, UNSUPPORTED_VERSION } from "./state.js";
export { isErrorStatus, reasonPhrase } from "./status.js";
export type {
  ApiVersion,
  Choice,
  Claim,
  Coder,
  CurrentState,
  Idempotency,
  PipelineRequest,
  PreconditionOutcome,
  Replay,
  Represented,
  Representer,
  Validators,
  VersionDecision,
  Versioner,
} from "./steps.js";
export { absoluteOrigin, malformedEscape, targetPath } from "./target.js";
export { compileTrust, type TrustOption } from "./trust.js";
export {
  MAX_UNREAD_BODY_BYTES,
  UNREAD_BODY_DEFAULTS,
  type UnreadBodyBounds,
  type UnreadBodyOptions,
} from "./unread-body.js";
export { appendVary, appendVaryList, appendVaryValue, mergeVary } from "./vary.js";
export { xmlDeclaredEncoding } from "./xml-declaration.js";
