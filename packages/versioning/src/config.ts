import { type ApiVersion, isToken, MAX_FIELD_LENGTH } from "@svc/kernel";
import { BoundedMemo, checkBooleanOption, checkOptionNames } from "@svc/kernel/internal";
import { type DeprecationHeaders, deprecationHeaders } from "./deprecation.js";
import { optionError } from "./option-error.js";
import type {
  ApiVersioningOptions,
  CustomStrategyOptions,
  HeaderStrategyOptions,
  MediaTypeStrategyOptions,
  QueryStrategyOptions,
  UriStrategyOptions,
} from "./options.js";
import { acceptsUnversioned, parseVendorMediaTypes, type VendorMediaType } from "./parse.js";
import { keyVersion, SCHEMES, type SchemeRules, schemeOf, type VersionScheme } from "./scheme.js";

/** The options of {@link versions}, validated and resolved once, at construction. */
export interface VersioningConfig {
  versions: ReadonlySet<ApiVersion>;
  /** How the versions are spelled and ordered. */
  scheme: SchemeRules;
  /** `1, 2`: the value of `API-Supported-Versions`, and the list in error messages. */
  list: string;
  defaultVersion: ApiVersion | undefined;
  uri: Required<UriStrategyOptions> | undefined;
  /** `names` as configured (for `Vary` and messages), `keys` lower-cased (to read the headers). */
  header: { names: readonly string[]; keys: readonly string[]; unknownVersionStatus: number } | undefined;
  query: Required<QueryStrategyOptions> | undefined;
  custom: Required<CustomStrategyOptions> | undefined;
  mediaType: Required<MediaTypeStrategyOptions> | undefined;
  deprecated: ReadonlyMap<ApiVersion, DeprecationHeaders>;
  /**
   * Version-neutral path tests: each is given the path as sent and, when the comparison ignores
   * case, the path lower-cased.
   */
  neutral: readonly NeutralMatch[];
  /** The `routing.caseSensitive` option; `undefined`: the app's setting, else false. */
  caseSensitive: boolean | undefined;
  /** `API-Supported-Versions` and, when any, `API-Deprecated-Versions`: on every response. */
  supported: Readonly<Record<string, string>>;
  /** Every request field that can name a version: the `Vary` of every answer (RFC 9110 §12.5.5). */
  varyAll: readonly string[];
  /** `varyAll`, then `Content-Type` when the media type strategy reads a request's content type. */
  varyWithContent: readonly string[];
  /**
   * What each `Accept` value says to the media type strategy, parsed once per value: at most
   * {@link ACCEPT_CACHE_LIMIT} values of at most `MAX_FIELD_LENGTH` characters (see `vendorRanges`).
   */
  accepted: BoundedMemo<AcceptedTypes>;
}

/** What an `Accept` value says to the media type strategy. */
export interface AcceptedTypes {
  /** Its vendor ranges, best first. */
  readonly ranges: readonly VendorMediaType[];
  /** Whether it also accepts a type that names no version (see `acceptsUnversioned`). */
  readonly unversioned: boolean;
}

/** The most `Accept` values one configuration keeps parsed (clients send the same few again and again). */
export const ACCEPT_CACHE_LIMIT = 500;

const VERSIONS =
  'a non-empty array of versions of one scheme: integers from 1 to 999999999 ([1, 2]), major.minor strings (["1.0", "1.2"]) or ISO 8601 dates (["2025-01-15", "2026-11-25"])';

/**
 * The part of a strategy option that is an object: `true` gives the defaults; anything else but
 * `false` (handled by the caller) and an object of the known fields is refused.
 */
function settings<T>(option: boolean | T | undefined, name: string, fields: readonly string[]): Partial<T> {
  if (option === true) return {};
  if (option === null || typeof option !== "object" || Array.isArray(option)) {
    throw optionError(name, option, `true, false or an object { ${fields.map((f) => `${f}?`).join(", ")} }`);
  }
  checkOptionNames("versioning", option, fields, "versions", name);
  return option;
}

function checkStatus(value: number | undefined, fallback: number, option: string): number {
  const status = value ?? fallback;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 400 || status > 499) {
    throw optionError(option, value, "a 4xx status");
  }
  return status;
}

function uriConfig(option: ApiVersioningOptions["uri"]): VersioningConfig["uri"] {
  if (option === false) return undefined;
  const { prefix = "v", unknownVersionStatus } = settings(option, "uri", ["prefix", "unknownVersionStatus"]);
  if (typeof prefix !== "string" || !/^[A-Za-z]+$/.test(prefix)) {
    throw optionError("uri.prefix", prefix, "letters (A-Z, a-z)");
  }
  return { prefix, unknownVersionStatus: checkStatus(unknownVersionStatus, 404, "uri.unknownVersionStatus") };
}

function headerConfig(option: boolean | HeaderStrategyOptions | undefined): VersioningConfig["header"] {
  if (option === false) return undefined;
  const { names: given = ["API-Version", "Accept-Version"], unknownVersionStatus } = settings(
    option,
    "header",
    ["names", "unknownVersionStatus"],
  );
  const names = typeof given === "object" && given !== null && Symbol.iterator in given ? [...given] : [];
  if (names.length === 0 || !names.every((n) => typeof n === "string" && isToken(n))) {
    throw optionError("header.names", given, "a non-empty list of header field names (RFC 9110 §5.1)");
  }
  // `__proto__` is a token (RFC 9110 §5.1), but Node.js never stores a field of that name in
  // req.headers (the assignment sets the object's prototype instead, a no-op for a string), so
  // such a header could not be read at all: refused here rather than silently never matching.
  if (names.some((n) => n.toLowerCase() === "__proto__")) {
    throw optionError(
      "header.names",
      given,
      "a non-empty list of header field names (RFC 9110 §5.1) other than __proto__, which Node.js cannot receive",
    );
  }
  return {
    names,
    keys: names.map((n) => n.toLowerCase()),
    unknownVersionStatus: checkStatus(unknownVersionStatus, 400, "header.unknownVersionStatus"),
  };
}

function queryConfig(option: ApiVersioningOptions["query"]): VersioningConfig["query"] {
  if (option === undefined || option === false) return undefined;
  const { name = "api-version", unknownVersionStatus } = settings(option, "query", [
    "name",
    "unknownVersionStatus",
  ]);
  // RFC 3986 §3.4: a query is pchar, "/" and "?"; a name that needs percent-encoding, or holds
  // the "&" and "=" that separate form pairs, could never be matched as written.
  if (typeof name !== "string" || !/^[A-Za-z0-9\-._~!$'()*,;:@/?]+$/.test(name)) {
    throw optionError("query.name", name, "a query parameter name (RFC 3986 §3.4, no & = + or %)");
  }
  return { name, unknownVersionStatus: checkStatus(unknownVersionStatus, 400, "query.unknownVersionStatus") };
}

const CUSTOM = "an object { extract, vary, unknownVersionStatus? }";

function customConfig(option: CustomStrategyOptions | undefined): VersioningConfig["custom"] {
  if (option === undefined) return undefined;
  if (option === null || typeof option !== "object" || Array.isArray(option)) {
    throw optionError("custom", option, CUSTOM);
  }
  checkOptionNames("versioning", option, ["extract", "vary", "unknownVersionStatus"], "versions", "custom");
  const { extract, vary, unknownVersionStatus } = option;
  if (typeof extract !== "function") {
    throw optionError("custom.extract", extract, "a function (request) => string | undefined");
  }
  // Required, even empty: what the extractor reads decides the answer, and a cache that does not
  // key on it serves one client's version to another (RFC 9110 §12.5.5).
  if (!Array.isArray(vary) || !vary.every((n) => typeof n === "string" && isToken(n))) {
    throw optionError(
      "custom.vary",
      vary,
      "the list of header field names extract reads (RFC 9110 §12.5.5), [] when it reads only the URL",
    );
  }
  return {
    extract,
    vary: Object.freeze([...vary]),
    unknownVersionStatus: checkStatus(unknownVersionStatus, 400, "custom.unknownVersionStatus"),
  };
}

function mediaTypeConfig(option: MediaTypeStrategyOptions | undefined): VersioningConfig["mediaType"] {
  if (option === undefined) return undefined;
  if (option === null || typeof option !== "object") {
    throw optionError("mediaType", option, "an object { vendor, unknownVersionStatus? }");
  }
  checkOptionNames("versioning", option, ["vendor", "unknownVersionStatus"], "versions", "mediaType");
  const { vendor, unknownVersionStatus } = option;
  // RFC 6838 §3.2: the vendor tree `vnd.<producer>[.<name>...]`.
  if (typeof vendor !== "string" || !/^[a-z0-9][a-z0-9-]*(?:\.[a-z0-9][a-z0-9-]*)*$/i.test(vendor)) {
    throw optionError("mediaType.vendor", vendor, 'a vendor tree name such as "svc"');
  }
  return {
    vendor,
    unknownVersionStatus: checkStatus(unknownVersionStatus, 406, "mediaType.unknownVersionStatus"),
  };
}

function deprecatedConfig(
  option: ApiVersioningOptions["deprecated"],
  versions: ReadonlySet<ApiVersion>,
  scheme: SchemeRules,
  list: string,
): Map<ApiVersion, DeprecationHeaders> {
  const deprecated = new Map<ApiVersion, DeprecationHeaders>();
  if (option !== undefined && (option === null || typeof option !== "object" || Array.isArray(option))) {
    throw optionError(
      "deprecated",
      option,
      "an object { <version>: { deprecation, sunset?, link?, sunsetLink? } }",
    );
  }
  for (const [key, policy] of Object.entries(option ?? {})) {
    // A version's one spelling only (as `versioned` keys): Number() also read "01", "1.0", " 1" and
    // "0x1" as 1, and two such keys silently replaced each other's policy.
    const version = keyVersion(key, scheme);
    if (version === undefined || !versions.has(version)) {
      throw optionError(
        "deprecated",
        key,
        `one of the supported versions (${list})`,
        "versions: a deprecated version",
      );
    }
    deprecated.set(version, deprecationHeaders(policy, `versions: deprecated.${key}`));
  }
  return deprecated;
}

/** `path` as sent; `folded` lower-cased when the comparison ignores case, else `undefined`. */
export type NeutralMatch = (path: string, folded: string | undefined) => boolean;

function neutralMatcher(pattern: string | RegExp): NeutralMatch {
  // A RegExp carries its own flags: it is tested as given.
  // With the `g` or `y` flag, `test` starts at `lastIndex` and moves it past a match (ECMA-262
  // RegExpBuiltinExec): the next request for the same path failed and got a 400. A copy of our
  // own (no other code moves its `lastIndex`), tested from the start every time.
  if (pattern instanceof RegExp) {
    const own = new RegExp(pattern.source, pattern.flags);
    return (path) => {
      own.lastIndex = 0;
      return own.test(path);
    };
  }
  if (typeof pattern !== "string" || !pattern.startsWith("/")) {
    throw optionError("neutral", pattern, NEUTRAL, "versions: each neutral path");
  }
  const base = pattern.length > 1 && pattern.endsWith("/") ? pattern.slice(0, -1) : pattern;
  const below = base === "/" ? "/" : `${base}/`;
  const foldedBase = base.toLowerCase();
  const foldedBelow = below.toLowerCase();
  // Express routes `/HEALTH` to `app.get("/health")` unless `case sensitive routing` is on: a
  // neutral path that the router reaches in another case must be neutral too.
  return (path, folded) =>
    folded === undefined
      ? path === base || path.startsWith(below)
      : folded === foldedBase || folded.startsWith(foldedBelow);
}

function routingConfig(option: ApiVersioningOptions["routing"]): boolean | undefined {
  if (option === undefined) return undefined;
  checkOptionNames("versioning", option, ["caseSensitive"], "versions", "routing");
  const { caseSensitive } = option;
  checkBooleanOption("versioning", "routing.caseSensitive", caseSensitive, "versions: routing.caseSensitive");
  return caseSensitive;
}

const NEUTRAL = 'a list of paths starting with "/" or RegExps';
const VERSIONING_OPTIONS = [
  "versions",
  "defaultVersion",
  "required",
  "uri",
  "header",
  "query",
  "custom",
  "mediaType",
  "deprecated",
  "neutral",
  "routing",
];

/** Field names once each, compared case-insensitively (RFC 9110 §5.1), the first spelling kept. */
function distinct(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.filter((n) => {
    const key = n.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function neutralMatchers(neutral: unknown): VersioningConfig["neutral"] {
  if (neutral === undefined) return [];
  // A lone string has no .map: "/health" would fail as "neutral.map is not a function".
  if (!Array.isArray(neutral)) throw optionError("neutral", neutral, NEUTRAL);
  return neutral.map(neutralMatcher);
}

function supportedVersions(options: ApiVersioningOptions): { sorted: ApiVersion[]; scheme: SchemeRules } {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw optionError("options", options, "an object { versions, ... }", "versions: options");
  }
  checkOptionNames("versioning", options, VERSIONING_OPTIONS, "versions");
  checkBooleanOption("versioning", "required", options.required, "versions: required");
  const { versions } = options;
  if (!Array.isArray(versions) || versions.length === 0) throw optionError("versions", versions, VERSIONS);
  const schemes = new Set<VersionScheme | undefined>(versions.map(schemeOf));
  const [name] = schemes;
  if (name === undefined) {
    const bad = versions.find((v) => schemeOf(v) === undefined);
    // A number with a fraction loses its spelling (`1.10` is the number 1.1): major.minor
    // versions are strings.
    const hint = typeof bad === "number" ? ' (major.minor versions are strings: "1.2")' : "";
    throw optionError("versions", bad, `${VERSIONS}${hint}`);
  }
  if (schemes.size > 1) {
    throw optionError("versions", versions, `${VERSIONS}; these mix ${[...schemes].join(" and ")}`);
  }
  const scheme = SCHEMES[name];
  return { sorted: [...new Set<ApiVersion>(versions)].sort(scheme.compare), scheme };
}

/**
 * The version of a request that names none when `defaultVersion` is not given: the only one.
 * With several versions there is no default to assume. The lowest keeps old clients working but
 * answers them with its `Deprecation` and `Sunset` once it is deprecated; the latest changes the
 * answer under every client that never named a version each time a version ships. Which one a
 * request without a version gets is the API's contract, so it is said, at construction.
 */
function onlyVersion(
  sorted: readonly ApiVersion[],
  scheme: SchemeRules,
  options: ApiVersioningOptions,
): ApiVersion {
  const [lowest] = sorted;
  if (sorted.length === 1 && lowest !== undefined) return lowest;
  const deprecated = new Set(Object.keys(options.deprecated ?? {}).map((key) => keyVersion(key, scheme)));
  const current = sorted.filter((v) => !deprecated.has(v)).at(-1);
  const spell = (v: ApiVersion) => (typeof v === "string" ? JSON.stringify(v) : String(v));
  const hint =
    `did you mean defaultVersion: ${spell(lowest as ApiVersion)} (what clients naming no version were written against)` +
    (current !== undefined && current !== lowest
      ? ` or defaultVersion: ${spell(current)} (the latest version not deprecated)`
      : "") +
    ", or required: true (400 for a request naming no version)?";
  throw optionError(
    "defaultVersion",
    undefined,
    `given when versions lists more than one (${sorted.join(", ")}): it is the version of every request that names none; ${hint}`,
  );
}

/**
 * Validates the options once and resolves them into the config every request reads. A refused
 * option is a `TypeError` naming it, with `code` `ERR_SVC_VERSIONING_<OPTION>`.
 *
 * @example resolveConfig({ versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "svc" } }).list // "1, 2"
 */
export function resolveConfig(options: ApiVersioningOptions): VersioningConfig {
  const { sorted, scheme } = supportedVersions(options);
  const versions = new Set(sorted);
  const list = sorted.join(", ");
  // "latest": the highest version in the scheme's order, so adding a version moves the default.
  const given = options.defaultVersion === "latest" ? sorted.at(-1) : options.defaultVersion;
  if (given !== undefined && !versions.has(given)) {
    throw optionError(
      "defaultVersion",
      options.defaultVersion,
      `one of the supported versions (${list}) or "latest"`,
    );
  }
  const defaultVersion = options.required ? undefined : (given ?? onlyVersion(sorted, scheme, options));
  const uri = uriConfig(options.uri ?? true);
  const header = headerConfig(options.header ?? true);
  const query = queryConfig(options.query);
  const custom = customConfig(options.custom);
  const mediaType = mediaTypeConfig(options.mediaType);
  if (!uri && !header && !query && !custom && !mediaType) {
    throw optionError(
      "strategies",
      "all off",
      "on for one of uri, header, query, custom and mediaType at least",
      "versions: strategies",
    );
  }
  const deprecated = deprecatedConfig(options.deprecated, versions, scheme, list);
  const deprecatedList = [...deprecated.keys()].sort(scheme.compare).join(", ");
  // The query is part of the URI, the cache key already (RFC 9111 §2): it adds nothing to Vary.
  const varyAll = distinct([
    ...(header?.names ?? []),
    ...(custom?.vary ?? []),
    ...(mediaType ? ["Accept"] : []),
  ]);
  const supported: Record<string, string> = { "API-Supported-Versions": list };
  if (deprecatedList) supported["API-Deprecated-Versions"] = deprecatedList;
  return {
    versions,
    scheme,
    list,
    defaultVersion,
    uri,
    header,
    query,
    custom,
    mediaType,
    deprecated,
    neutral: neutralMatchers(options.neutral),
    caseSensitive: routingConfig(options.routing),
    supported: Object.freeze(supported),
    varyAll: Object.freeze(varyAll),
    varyWithContent: mediaType ? Object.freeze([...varyAll, "Content-Type"]) : Object.freeze(varyAll),
    accepted: new BoundedMemo(
      (accept) => {
        const vendor = mediaType?.vendor ?? "";
        return Object.freeze({
          ranges: Object.freeze(parseVendorMediaTypes(accept, vendor, scheme.name)),
          unversioned: acceptsUnversioned(accept, vendor),
        });
      },
      { limit: ACCEPT_CACHE_LIMIT, maxKeyLength: MAX_FIELD_LENGTH },
    ),
  };
}
