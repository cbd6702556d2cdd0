export {
  type CurrentState,
  type CurrentValidators,
  checkPreconditions,
  evaluateIfRange,
  evaluatePreconditions,
  type PreconditionOutcome,
  preconditionFailed,
  type RepresentationTags,
} from "./core.js";
export {
  type ConditionalDiagnostic,
  conditionalChannel,
  type PreconditionField,
} from "./diagnostics.js";
export { parseEtagList, strongMatch, weakMatch } from "./entity-tag.js";
export { type ConditionalOpenApiOptions, conditionalOpenApi } from "./openapi.js";
export { type CacheControlOptions, formatCacheControl, type ValidatorsOptions } from "./options.js";
export {
  lastModifiedFields,
  type PreconditionsDecision,
  type PreconditionsOptions,
  preconditionsDecision,
  preconditionsGate,
} from "./preconditions.js";
export { representationTag, validators } from "./validators.js";
