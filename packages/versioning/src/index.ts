export type { NextFunction } from "@svc/errors";
export { createVersioning, isCorsPreflight, type Versioning, versionResolver } from "./core.js";
export {
  type DeprecationHeaders,
  type DeprecationPolicy,
  deprecationHeaders,
  formatDeprecation,
  formatSunset,
} from "./deprecation.js";
export { apiVersioning, type VersioningRequest, versionedPath } from "./middleware.js";
export type { VersioningOptionError } from "./option-error.js";
export type {
  ApiVersioningOptions,
  HeaderStrategyOptions,
  MediaTypeStrategyOptions,
  NeutralRouting,
  UriStrategyOptions,
  VersionRequest,
  VersionResolution,
  VersionSource,
} from "./options.js";
export { parseHeaderVersion, parseUriVersion, parseVendorMediaTypes, type VendorMediaType } from "./parse.js";
export { type VersionedOptions, versioned } from "./versioned.js";
export { versions } from "./versions.js";
