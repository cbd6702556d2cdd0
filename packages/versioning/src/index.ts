export type { NextFunction } from "@svc/errors";
export {
  type DeprecationHeaders,
  type DeprecationPolicy,
  deprecationHeaders,
  formatDeprecation,
  formatSunset,
} from "./deprecation.js";
export { parseHeaderVersion, parseUriVersion, parseVendorMediaTypes, type VendorMediaType } from "./parse.js";
export { type VersionedOptions, versioned } from "./versioned.js";
export {
  type ApiVersioningOptions,
  apiVersioning,
  type HeaderStrategyOptions,
  type MediaTypeStrategyOptions,
  type UriStrategyOptions,
  type VersioningRequest,
  type VersionResolution,
  type VersionSource,
  versionedPath,
  versionResolver,
} from "./versioning.js";
