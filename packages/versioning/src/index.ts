export type { ApiVersion } from "@svc/kernel";
export { isCorsPreflight, versionResolver, versions } from "./core.js";
export {
  type DeprecationHeaders,
  type DeprecationPolicy,
  deprecationHeaders,
  formatDeprecation,
  formatSunset,
} from "./deprecation.js";
export { type VersioningDiagnostic, type VersioningStrategy, versioningChannel } from "./diagnostics.js";
export { type VersioningOpenApiOptions, versionedOpenApi, versioningOpenApi } from "./openapi.js";
export type { VersioningOptionError } from "./option-error.js";
export type {
  ApiVersioningOptions,
  CustomStrategyOptions,
  HeaderStrategyOptions,
  MediaTypeStrategyOptions,
  NeutralRouting,
  QueryStrategyOptions,
  UriStrategyOptions,
  VersionRequest,
  VersionResolution,
  VersionSource,
} from "./options.js";
export { parseHeaderVersion, parseUriVersion, parseVendorMediaTypes, type VendorMediaType } from "./parse.js";
export type { VersionScheme } from "./scheme.js";
export { type VersionedOptions, type VersionHandlers, versionDispatch } from "./versioned.js";
export { routedPrefix, versionedPath } from "./versioned-path.js";
