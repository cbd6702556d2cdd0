import type { IncomingHttpHeaders } from "node:http";
import type { ApiVersion } from "@svc/kernel";
import type { DeprecationHeaders, DeprecationPolicy } from "./deprecation.js";

/** The URI strategy: `/v<N>/employees`. */
export interface UriStrategyOptions {
  /**
   * The letters before the number in the first path segment.
   * @default "v"
   */
  prefix?: string;
  /**
   * Status of an unknown version named by the path (the resource does not exist).
   * @default 404
   */
  unknownVersionStatus?: number;
}

/** The header strategy: `API-Version: <N>`. */
export interface HeaderStrategyOptions {
  /**
   * Request headers that carry the version; when several are sent they must agree.
   * @default ["API-Version", "Accept-Version"]
   */
  names?: readonly string[];
  /**
   * Status of an unknown version named by a header.
   * @default 400
   */
  unknownVersionStatus?: number;
}

/**
 * The media type strategy: `Accept: application/vnd.<vendor>.v<N>+json` (or `+xml`), and the
 * `Content-Type` of a request with content (an unknown version there → 415, whatever
 * `unknownVersionStatus` says: it is the status of an unknown version in `Accept`).
 */
export interface MediaTypeStrategyOptions {
  /** The vendor tree name: `svc` for `application/vnd.svc.v2+json`. */
  vendor: string;
  /**
   * Status of an unknown version named by the media type (no acceptable representation).
   * @default 406
   */
  unknownVersionStatus?: number;
}

/** The query strategy: `?api-version=<N>` (ASP.NET API Versioning's default). */
export interface QueryStrategyOptions {
  /**
   * The query parameter that carries the version, compared exactly (RFC 3986 §6.2.1: the query
   * is case-sensitive). Sent more than once, its values must agree.
   * @default "api-version"
   */
  name?: string;
  /**
   * Status of an unknown version named by the query.
   * @default 400
   */
  unknownVersionStatus?: number;
}

/** What a {@link CustomStrategyOptions.extract} function is handed: the request before routing. */
export interface VersionRequest {
  /** The request method. */
  readonly method: string;
  /** The request-target as sent (the path and query, any `/v<N>` prefix still on it). */
  readonly url: string;
  /** The request's header fields, lower-cased names (Node's `IncomingHttpHeaders`). */
  readonly headers: IncomingHttpHeaders;
}

/** A strategy of the application's own: a function reads the version off the request. */
export interface CustomStrategyOptions {
  /**
   * Reads the version the request names: its spelling as sent (`"2"`), or `undefined` when the
   * request names none here. Any other spelling (`"v2"`, `""`) is a 400 `malformed_api_version`.
   * Called once per request, before routing; it must not throw for a request it cannot read
   * (return the raw value instead: it is refused as malformed).
   */
  extract: (request: VersionRequest) => string | undefined;
  /**
   * Every request header field `extract` reads: they go in `Vary` (RFC 9110 §12.5.5), so a cache
   * keeps one answer per value. `[]` when it reads only the URL (the cache key already).
   */
  vary: readonly string[];
  /**
   * Status of an unknown version the extractor names.
   * @default 400
   */
  unknownVersionStatus?: number;
}

/** Options of {@link versions} (the pipeline step) and {@link versionResolver}. */
export interface ApiVersioningOptions {
  /**
   * The supported versions, all of one scheme (a mix is refused): positive integers (`[1, 2]`,
   * `/v2/`), `major.minor` strings (`["1.0", "1.2", "2.0"]`, `/v1.2/`; `1` is not `1.0`: one
   * spelling per version) or ISO 8601 dates (`["2025-01-15", "2026-11-25"]`, `/v2026-11-25/`).
   * Ordered by the scheme (`1.10` after `1.9`, dates chronologically) in `API-Supported-Versions`.
   */
  versions: readonly number[] | readonly string[];
  /**
   * The version of a request that names none, or `"latest"` for the highest of `versions` (in
   * the scheme's order): with a deprecated version, also whether such
   * requests get its `Deprecation` and `Sunset`. Must be given when `versions` lists more than
   * one (unless `required`): there the lowest (what clients naming no version were written
   * against) and the latest (a new contract under them) are both reasonable, so neither is
   * assumed, and construction throws `ERR_SVC_VERSIONING_DEFAULT_VERSION` naming both.
   * @default the only version when `versions` lists one; none otherwise (required)
   */
  defaultVersion?: ApiVersion;
  /**
   * Reject a request that names no version with 400 instead of using the default.
   * @default false
   */
  required?: boolean;
  /**
   * The URI strategy; `false` switches it off.
   * @default true (prefix "v", 404 for an unknown version)
   */
  uri?: boolean | UriStrategyOptions;
  /**
   * The header strategy; `false` switches it off.
   * @default true (API-Version and Accept-Version, 400 for an unknown version)
   */
  header?: boolean | HeaderStrategyOptions;
  /**
   * The query strategy: `?api-version=2`; `true` for the defaults.
   * @default false (off)
   */
  query?: boolean | QueryStrategyOptions;
  /**
   * A strategy of the application's own, on when given: `extract` reads the version, `vary` names
   * the header fields it reads.
   * @default undefined (off)
   */
  custom?: CustomStrategyOptions;
  /**
   * The media type strategy, on when given.
   * @default undefined (off)
   */
  mediaType?: MediaTypeStrategyOptions;
  /**
   * Deprecated versions and their dates, keyed by version as `versions` spells it (`1`, `"1.2"`,
   * `"2025-01-15"`); listed in `API-Deprecated-Versions`, and responses for them carry
   * `Deprecation`, `Sunset` and `Link`.
   * @default {}
   */
  deprecated?: Readonly<Record<string, DeprecationPolicy>>;
  /**
   * Version-neutral paths (after any `/v<N>` prefix): `"/health"` matches that path and below it,
   * a `RegExp` is tested against the path. They never fail for a missing or unknown version.
   * @default []
   */
  neutral?: readonly (string | RegExp)[];
  /**
   * How a `neutral` path is compared with the request path: as the router compares it, so every
   * spelling that reaches the `/health` route is version-neutral. Express matches paths
   * case-insensitively unless the app's `case sensitive routing` setting is on, so by default
   * `/HEALTH` is neutral too. A `RegExp` in `neutral` is tested as given (its own `i` flag decides).
   * @default the router's rules the request's exchange records (Express's `case sensitive routing`
   *   setting, recorded by `expressView` of `@svc/kernel/express`), else `{ caseSensitive: false }`
   */
  routing?: NeutralRouting;
}

/** How `neutral` paths are compared with the request path; see {@link ApiVersioningOptions.routing}. */
export interface NeutralRouting {
  /**
   * Compare string `neutral` paths case-sensitively (`/HEALTH` is then not `/health`).
   * @default the app's `case sensitive routing` setting, else false (Express's default)
   */
  caseSensitive?: boolean;
}

/** Which strategy chose a request's version. */
export type VersionSource = "uri" | "query" | "header" | "custom" | "media-type" | "default";

/** The decision for one request: a pure function of its method, target and headers. */
export interface VersionResolution {
  version: ApiVersion | undefined;
  source: VersionSource | undefined;
  /** The request target with the `/v<N>` prefix stripped. */
  url: string;
  /** The stripped `/v<N>` prefix, or `""`: links put it back so clients stay in their version. */
  pathPrefix: string;
  /** Request headers the decision depended on, for `Vary`. */
  vary: string[];
  /** The vendor media type that labels the response, when the media type strategy chose the version. */
  mediaType: string | undefined;
  /**
   * `Deprecation`, `Sunset` and `Link` values of a deprecated version (resolved once, at
   * construction), else undefined.
   */
  deprecation?: DeprecationHeaders | undefined;
}
