import type { IncomingMessage, ServerResponse } from "node:http";
import { appendVary, HttpError, isToken, type NextFunction } from "@svc/errors";
import { type DeprecationHeaders, type DeprecationPolicy, deprecationHeaders } from "./deprecation.js";
import { parseHeaderVersion, parseUriVersion, parseVendorMediaTypes, type VendorMediaType } from "./parse.js";

declare global {
  // Express declares its request type in this global namespace; this adds req.apiVersion to it.
  namespace Express {
    interface Request {
      /** The API version @svc/versioning resolved for this request. */
      apiVersion?: number | undefined;
      /** The `/v<N>` prefix stripped from the path, or `""`; see `versionedPath`. */
      apiVersionPrefix?: string | undefined;
    }
  }
}

/** The parts of an Express (or plain `node:http`) request the middleware reads and writes. */
export interface VersioningRequest extends IncomingMessage {
  /** The resolved version; undefined on a version-neutral path that named none and has no default. */
  apiVersion?: number | undefined;
  /** The `/v<N>` prefix stripped from the path, or `""`. */
  apiVersionPrefix?: string | undefined;
  originalUrl?: string;
}

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

/** The media type strategy: `Accept: application/vnd.<vendor>.v<N>+json` (or `+xml`). */
export interface MediaTypeStrategyOptions {
  /** The vendor tree name: `svc` for `application/vnd.svc.v2+json`. */
  vendor: string;
  /**
   * Status of an unknown version named by the media type (no acceptable representation).
   * @default 406
   */
  unknownVersionStatus?: number;
}

/** Options of {@link apiVersioning}. */
export interface ApiVersioningOptions {
  /** The supported versions (positive integers). */
  versions: readonly number[];
  /**
   * The version of a request that names none. Clients that never named a version were written
   * against the first one, so that is what they keep getting.
   * @default the lowest supported version, unless `required`
   */
  defaultVersion?: number;
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
   * The media type strategy, on when given.
   * @default undefined (off)
   */
  mediaType?: MediaTypeStrategyOptions;
  /**
   * Deprecated versions and their dates; listed in `API-Deprecated-Versions`, and responses for
   * them carry `Deprecation`, `Sunset` and `Link`.
   * @default {}
   */
  deprecated?: Readonly<Record<number, DeprecationPolicy>>;
  /**
   * Version-neutral paths (after any `/v<N>` prefix): `"/health"` matches that path and below it,
   * a `RegExp` is tested against the path. They never fail for a missing or unknown version.
   * @default []
   */
  neutral?: readonly (string | RegExp)[];
}

/** Which strategy chose a request's version. */
export type VersionSource = "uri" | "header" | "media-type" | "default";

/** The decision for one request: a pure function of its target and headers. */
export interface VersionResolution {
  version: number | undefined;
  source: VersionSource | undefined;
  /** The request target with the `/v<N>` prefix stripped. */
  url: string;
  /** The stripped `/v<N>` prefix, or `""`: links put it back so clients stay in their version. */
  pathPrefix: string;
  /** Request headers the decision depended on, for `Vary`. */
  vary: string[];
  /** The vendor media type to echo as Content-Type, when the media type chose. */
  mediaType: string | undefined;
}

interface Config {
  versions: ReadonlySet<number>;
  list: string;
  deprecatedList: string;
  defaultVersion: number | undefined;
  uri: Required<UriStrategyOptions> | undefined;
  header: { names: string[]; unknownVersionStatus: number } | undefined;
  mediaType: Required<MediaTypeStrategyOptions> | undefined;
  deprecated: ReadonlyMap<number, DeprecationHeaders>;
  neutral: ((path: string) => boolean)[];
}

function checkStatus(value: number | undefined, fallback: number, what: string): number {
  const status = value ?? fallback;
  if (!Number.isInteger(status) || status < 400 || status > 499) {
    throw new TypeError(`apiVersioning: ${what} must be a 4xx status, got ${String(value)}`);
  }
  return status;
}

function isVersion(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 999_999_999;
}

function neutralMatcher(pattern: string | RegExp): (path: string) => boolean {
  if (pattern instanceof RegExp) return (path) => pattern.test(path);
  if (typeof pattern !== "string" || !pattern.startsWith("/")) {
    throw new TypeError(`apiVersioning: neutral paths must start with "/", got ${String(pattern)}`);
  }
  const base = pattern.length > 1 && pattern.endsWith("/") ? pattern.slice(0, -1) : pattern;
  const below = base === "/" ? "/" : `${base}/`;
  return (path) => path === base || path.startsWith(below);
}

function resolveConfig(options: ApiVersioningOptions): Config {
  if (options === null || typeof options !== "object")
    throw new TypeError("apiVersioning: options are required");
  const { versions } = options;
  if (!Array.isArray(versions) || versions.length === 0 || !versions.every(isVersion)) {
    throw new TypeError("apiVersioning: versions must be a non-empty array of positive integers");
  }
  const sorted = [...new Set(versions)].sort((a, b) => a - b);
  const set = new Set(sorted);
  const required = options.required ?? false;
  if (options.defaultVersion !== undefined && !set.has(options.defaultVersion)) {
    throw new TypeError(
      `apiVersioning: defaultVersion ${String(options.defaultVersion)} is not a supported version`,
    );
  }
  const defaultVersion = required ? undefined : (options.defaultVersion ?? sorted[0]);

  const uriOpt = options.uri ?? true;
  const uri =
    uriOpt === false
      ? undefined
      : {
          prefix: (uriOpt === true ? undefined : uriOpt.prefix) ?? "v",
          unknownVersionStatus: checkStatus(
            uriOpt === true ? undefined : uriOpt.unknownVersionStatus,
            404,
            "uri.unknownVersionStatus",
          ),
        };
  if (uri && !/^[A-Za-z]+$/.test(uri.prefix))
    throw new TypeError("apiVersioning: uri.prefix must be letters");

  const headerOpt = options.header ?? true;
  const header =
    headerOpt === false
      ? undefined
      : {
          names: [
            ...((headerOpt === true ? undefined : headerOpt.names) ?? ["API-Version", "Accept-Version"]),
          ],
          unknownVersionStatus: checkStatus(
            headerOpt === true ? undefined : headerOpt.unknownVersionStatus,
            400,
            "header.unknownVersionStatus",
          ),
        };
  if (
    header &&
    (header.names.length === 0 || !header.names.every((n) => typeof n === "string" && isToken(n)))
  ) {
    throw new TypeError("apiVersioning: header.names must be a non-empty list of header field names");
  }

  let mediaType: Config["mediaType"];
  if (options.mediaType !== undefined) {
    const { vendor } = options.mediaType;
    if (typeof vendor !== "string" || !/^[a-z0-9][a-z0-9-]*(?:\.[a-z0-9][a-z0-9-]*)*$/i.test(vendor)) {
      throw new TypeError(
        `apiVersioning: mediaType.vendor must be a vendor tree name such as "svc", got ${String(vendor)}`,
      );
    }
    mediaType = {
      vendor,
      unknownVersionStatus: checkStatus(
        options.mediaType.unknownVersionStatus,
        406,
        "mediaType.unknownVersionStatus",
      ),
    };
  }
  if (!uri && !header && !mediaType) throw new TypeError("apiVersioning: at least one strategy must be on");

  const deprecated = new Map<number, DeprecationHeaders>();
  for (const [key, policy] of Object.entries(options.deprecated ?? {})) {
    const version = Number(key);
    if (!set.has(version))
      throw new TypeError(`apiVersioning: deprecated version ${key} is not a supported version`);
    deprecated.set(version, deprecationHeaders(policy, `apiVersioning: version ${key}`));
  }

  return {
    versions: set,
    list: sorted.join(", "),
    deprecatedList: [...deprecated.keys()].sort((a, b) => a - b).join(", "),
    defaultVersion,
    uri,
    header,
    mediaType,
    deprecated,
    neutral: (options.neutral ?? []).map(neutralMatcher),
  };
}

interface Named {
  version: number;
  source: Exclude<VersionSource, "default">;
  what: string;
}

/** Parsed vendor ranges by vendor and `Accept` value: clients send the same few values again and again. */
const rangeCache = new Map<string, readonly VendorMediaType[]>();
const RANGE_CACHE_LIMIT = 500;

function vendorRanges(accept: string | undefined, vendor: string): readonly VendorMediaType[] {
  if (!accept) return [];
  const key = `${vendor}\n${accept}`;
  let ranges = rangeCache.get(key);
  if (ranges === undefined) {
    ranges = Object.freeze(parseVendorMediaTypes(accept, vendor));
    // Bounded: a client sending a new Accept on every request only ever costs a clear().
    if (rangeCache.size >= RANGE_CACHE_LIMIT) rangeCache.clear();
    rangeCache.set(key, ranges);
  }
  return ranges;
}

function pathOf(url: string): string {
  const cut = url.indexOf("?");
  return cut === -1 ? url : url.slice(0, cut);
}

/**
 * The pure core: decides the version of a request from its target and headers, or throws the
 * `HttpError` to answer with. Exposed for frameworks other than Express.
 */
function resolve(
  config: Config,
  url: string,
  headers: IncomingMessage["headers"],
  preflight = false,
): VersionResolution {
  const named: Named[] = [];
  let rest = url;
  let pathPrefix = "";
  const unknown = (status: number, what: string) =>
    new HttpError(status, `${what} is not supported; supported versions: ${config.list}`, {
      code: "unsupported_api_version",
      headers: supportedHeaders(config),
    });
  const bad = (message: string, code: string) =>
    HttpError.badRequest(message, { code, headers: supportedHeaders(config) });

  if (config.uri) {
    const m = parseUriVersion(url, config.uri.prefix);
    if (m) {
      named.push({ version: m.version, source: "uri", what: `path /${config.uri.prefix}${m.version}` });
      rest = m.rest;
      pathPrefix = `/${config.uri.prefix}${m.version}`;
    }
  }
  const path = pathOf(rest);
  // A CORS preflight cannot carry the client's version headers (Fetch standard, CORS-preflight
  // request), so it must not fail for a missing or unknown one.
  // Only asked when no supported version was named (most requests never need it).
  const isNeutral = () => preflight || config.neutral.some((match) => match(path));

  if (config.header) {
    for (const name of config.header.names) {
      const value = parseHeaderVersion(headers[name.toLowerCase()]);
      if (value === "malformed")
        throw bad(`Header ${name} must be one API version number`, "malformed_api_version");
      if (value !== undefined) named.push({ version: value, source: "header", what: `header ${name}` });
    }
  }
  let mediaType: string | undefined;
  if (config.mediaType) {
    const ranges = vendorRanges(headers.accept, config.mediaType.vendor);
    const known = ranges.find((r) => r.version !== undefined && config.versions.has(r.version));
    const chosen = known ?? ranges[0];
    if (chosen?.version === undefined) {
      // A JSON/XML type in our tree that names no version (`vnd.svc.vx+json`) cannot be served:
      // a response labelled with it would claim a version it is not (RFC 9110 §12.5.1, §15.5.7).
      if (chosen && !isNeutral()) {
        throw unknown(
          config.mediaType.unknownVersionStatus,
          `Media type ${chosen.mediaType} (no API version)`,
        );
      }
    } else {
      named.push({ version: chosen.version, source: "media-type", what: `media type ${chosen.mediaType}` });
      mediaType = chosen.mediaType;
    }
  }

  const vary: string[] = [];
  const first = named[0];
  // Two strategies naming different versions: the request contradicts itself (issue: "→ 400").
  const other = named.find((n) => first !== undefined && n.version !== first.version);
  if (first && other) {
    throw bad(
      `The request names API version ${first.version} (${first.what}) and ${other.version} (${other.what})`,
      "conflicting_api_version",
    );
  }
  if (first === undefined) {
    // The absence of every version-bearing header chose the default, so caches must key on them too.
    if (config.header) vary.push(...config.header.names);
    if (config.mediaType) vary.push("Accept");
    if (config.defaultVersion === undefined && !isNeutral()) {
      throw bad(`An API version is required; supported versions: ${config.list}`, "missing_api_version");
    }
    return {
      version: config.defaultVersion,
      source: config.defaultVersion === undefined ? undefined : "default",
      url: rest,
      pathPrefix,
      vary,
      mediaType: undefined,
    };
  }

  const sources = new Set(named.map((n) => n.source));
  // RFC 9110 §12.5.5: Vary lists the request fields that selected the representation. All the
  // version header names, not only the one sent: a request naming another version through the
  // other name must not be answered from this cache entry.
  if (sources.has("header") && config.header) vary.push(...config.header.names);
  if (sources.has("media-type")) vary.push("Accept");

  if (!config.versions.has(first.version)) {
    if (isNeutral())
      return {
        version: config.defaultVersion,
        source: config.defaultVersion === undefined ? undefined : "default",
        url: rest,
        pathPrefix,
        vary,
        mediaType: undefined,
      };
    const status =
      sources.has("media-type") && config.mediaType
        ? config.mediaType.unknownVersionStatus
        : sources.has("header") && config.header
          ? config.header.unknownVersionStatus
          : (config.uri?.unknownVersionStatus ?? 404);
    const reported =
      named.find((n) => n.source === "media-type") ?? named.find((n) => n.source === "header") ?? first;
    throw unknown(status, `API version ${reported.version} (${reported.what})`);
  }
  const source: VersionSource = sources.has("uri") ? "uri" : sources.has("header") ? "header" : "media-type";
  return { version: first.version, source, url: rest, pathPrefix, vary, mediaType };
}

function supportedHeaders(config: Config): Record<string, string> {
  const out: Record<string, string> = { "API-Supported-Versions": config.list };
  if (config.deprecatedList) out["API-Deprecated-Versions"] = config.deprecatedList;
  return out;
}

/**
 * API versioning middleware with three strategies, each switchable:
 *
 * - **URI**: `/v2/employees` is routed as `/employees` (the prefix is stripped before routing, so
 *   routes are mounted once; `req.originalUrl` keeps it). Unknown version → 404.
 * - **Header**: `API-Version: 2` or `Accept-Version: 2` (names configurable). Unknown → 400.
 * - **Media type**: `Accept: application/vnd.<vendor>.v2+json` (or `+xml`); the response's
 *   Content-Type is set to that vendor type before the handler runs. Unknown → 406.
 *
 * A request that names no version gets the default (or 400 when `required`); strategies naming
 * different versions → 400. Every response, errors included, carries `API-Supported-Versions` and
 * (when any) `API-Deprecated-Versions`; responses for a deprecated version carry `Deprecation`
 * (RFC 9745), `Sunset` (RFC 8594) and their `Link`s. `Vary` names the headers the decision
 * depended on. Failures go to `next(err)` as `HttpError`s.
 *
 * @example
 * app.use(apiVersioning({
 *   versions: [1, 2],
 *   mediaType: { vendor: "svc" },
 *   deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: "2026-07-01T00:00:00Z", link: "https://docs.example.com/v1" } },
 *   neutral: ["/health"],
 * }));
 * app.get("/employees", versioned({ 1: listV1, 2: listV2 }));
 * @see https://www.rfc-editor.org/rfc/rfc6838#section-3.2
 * @see https://www.rfc-editor.org/rfc/rfc9745
 * @see https://www.rfc-editor.org/rfc/rfc8594
 */
export function apiVersioning(options: ApiVersioningOptions) {
  const config = resolveConfig(options);
  const supported = Object.entries(supportedHeaders(config));

  return function svcApiVersioning(req: VersioningRequest, res: ServerResponse, next: NextFunction): void {
    // Set before anything can fail, so the error handler's response keeps them.
    for (const [name, value] of supported) res.setHeader(name, value);
    let resolution: VersionResolution;
    try {
      const preflight =
        req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
      resolution = resolve(config, req.url ?? "/", req.headers, preflight);
    } catch (err) {
      if (config.header || config.mediaType) {
        const fields = [...(config.header?.names ?? []), ...(config.mediaType ? ["Accept"] : [])];
        appendVary(res, ...fields);
      }
      next(err);
      return;
    }
    if (resolution.vary.length > 0) appendVary(res, ...resolution.vary);
    req.url = resolution.url;
    req.apiVersion = resolution.version;
    req.apiVersionPrefix = resolution.pathPrefix;
    const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
    if (locals) locals.apiVersion = resolution.version;
    if (resolution.mediaType !== undefined) res.setHeader("Content-Type", resolution.mediaType);
    const deprecation =
      resolution.version === undefined ? undefined : config.deprecated.get(resolution.version);
    if (deprecation) {
      res.setHeader("Deprecation", deprecation.deprecation);
      if (deprecation.sunset !== undefined) res.setHeader("Sunset", deprecation.sunset);
      if (deprecation.links.length > 0) appendLink(res, deprecation.links);
    }
    next();
  };
}

/**
 * Puts the request's `/v<N>` prefix back in front of a path, so links in a response to
 * `/v2/employees` point at `/v2/...` and the client stays in its version; with the header or media
 * type strategy the path is returned unchanged (the version lives outside the URL). Compose it with
 * `hrefFor` of @svc/hal.
 *
 * @example hrefFor(req, versionedPath(req, `/employees/${id}`)) // ".../v2/employees/7" for /v2 requests
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function versionedPath(req: { apiVersionPrefix?: string | undefined }, path: string): string {
  if (typeof path !== "string" || !path.startsWith("/")) {
    throw new TypeError(`versionedPath: path must start with "/", got ${String(path)}`);
  }
  return `${req.apiVersionPrefix ?? ""}${path}`;
}

function appendLink(res: ServerResponse, links: readonly string[]): void {
  const current = res.getHeader("Link");
  const existing = current === undefined ? [] : Array.isArray(current) ? current : [String(current)];
  res.setHeader("Link", [...existing, ...links].join(", "));
}

/**
 * The decision {@link apiVersioning} makes, as a pure function of the request target and headers,
 * for frameworks other than Express: options are validated once, the returned function throws the
 * `HttpError` to answer with.
 *
 * @example
 * const resolveVersion = versionResolver({ versions: [1, 2] });
 * resolveVersion("/v2/employees", {}) // { version: 2, source: "uri", url: "/employees", vary: [], mediaType: undefined }
 * @see apiVersioning
 */
export function versionResolver(
  options: ApiVersioningOptions,
): (url: string, headers: IncomingMessage["headers"]) => VersionResolution {
  const config = resolveConfig(options);
  return (url, headers) => resolve(config, url, headers);
}
