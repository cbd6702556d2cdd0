export {
  type CacheControlOptions,
  cacheControl,
  formatCacheControl,
  setLastModified,
} from "./cache-control.js";
export { type ConditionalOptions, conditional } from "./conditional.js";
export { parseEtagList, strongEtag, strongMatch, weakMatch } from "./entity-tag.js";
export {
  type CurrentState,
  type CurrentValidators,
  checkPreconditions,
  evaluateIfRange,
  evaluatePreconditions,
  type PreconditionOutcome,
  preconditionFailed,
  type RepresentationTags,
} from "./preconditions.js";
export { type PreconditionsOptions, preconditions } from "./preconditions-middleware.js";
export { representationTag, type ValidatorsOptions, validators } from "./validators.js";
