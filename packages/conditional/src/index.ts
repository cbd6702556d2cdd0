export {
  type CacheControlOptions,
  cacheControl,
  formatCacheControl,
  setLastModified,
} from "./cache-control.js";
export { type ConditionalOptions, conditional } from "./conditional.js";
export { parseEtagList, strongEtag, strongMatch, weakMatch } from "./entity-tag.js";
export {
  type CurrentValidators,
  evaluatePreconditions,
  type PreconditionOutcome,
  type PreconditionsOptions,
  preconditions,
} from "./preconditions.js";
