import type { IncomingHttpHeaders } from "node:http";
import { absoluteFormOrigin } from "@svc/errors";
import {
  type ApiVersion,
  exchangeIfAny,
  type Fields,
  type FieldValue,
  HttpError,
  isHttpError,
  MAX_FIELD_LENGTH,
  type PipelineRequest,
  type VersionDecision,
  type Versioner,
} from "@svc/kernel";
import { publishDecision } from "@svc/kernel/internal";
import { type AcceptedTypes, resolveConfig, type VersioningConfig } from "./config.js";
import { type VersioningDiagnostic, versioningChannel } from "./diagnostics.js";
import type { ApiVersioningOptions, VersionResolution, VersionSource } from "./options.js";
import {
  hasContent,
  parseHeaderVersion,
  parseVendorContentType,
  parseVersionValue,
  queryValues,
  readUriPrefix,
  type VendorMediaType,
} from "./parse.js";

/** A version some strategy named; `label` says where, for error messages. */
interface Named {
  /**
   * The version, or for a path prefix that is no version of the scheme (`/v99999999999999999999`,
   * `/v2026-02-30`) its spelling as sent, a string no supported version equals.
   */
  version: ApiVersion;
  source: Exclude<VersionSource, "default">;
  /** The `/v<N>` prefix, the header name or the media type. */
  label: string;
  /** Where, for messages, when not `WHERE[source]`: `Content-Type` for the request's own type. */
  where?: string;
}

const WHERE = {
  uri: "path",
  query: "query parameter",
  header: "header",
  custom: "custom extractor",
  "media-type": "media type",
} as const;

/**
 * The most characters of a client's spelling (a version, a `/v<N>` prefix, a media type) that a
 * message quotes: a refusal's message is logged and echoed, and a path prefix of 8,000 digits
 * would otherwise make each line 16 KB.
 * @see https://owasp.org/API-Security/editions/2023/en/0xa4-unrestricted-resource-consumption/
 */
const QUOTED = 32;

/** The characters a message shows escaped: controls, format characters (bidi overrides), line and paragraph separators. */
const UNPRINTED = /^[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]$/u;

/**
 * `text` as a message quotes it: each character of {@link UNPRINTED} escaped (`\u001b`), at most
 * {@link QUOTED} characters of that, then `…`. Reads no further than it quotes.
 */
export function excerpt(text: string): string {
  let quoted = "";
  for (const char of text) {
    const shown = UNPRINTED.test(char)
      ? `\\u${(char.codePointAt(0) as number).toString(16).padStart(4, "0")}`
      : char;
    if (quoted.length + shown.length > QUOTED) return `${quoted}…`;
    quoted += shown;
  }
  return quoted;
}

function described(named: Named): string {
  const where = named.where ?? WHERE[named.source];
  return named.label === "" ? where : `${where} ${excerpt(named.label)}`;
}

/** The version as the request wrote it, as a message quotes it. */
function spelled(named: Named): string {
  return excerpt(String(named.version));
}

/** The `vary` of a resolution under construction: each entry point sets its own (see `varyOf`). */
const PENDING: string[] = [];

/**
 * The request fields any decision depended on (RFC 9110 §12.5.5), the same for every answer:
 * every field that can name a version, and with content its Content-Type, which was read and
 * could have named it (a refusal of vnd.svc.v9+json content is a 415).
 */
function varyOf(config: VersioningConfig, headers: IncomingHttpHeaders): readonly string[] {
  return config.mediaType !== undefined && hasContent(headers) ? config.varyWithContent : config.varyAll;
}

const NO_TYPES: AcceptedTypes = Object.freeze({ ranges: Object.freeze([]), unversioned: false });

/**
 * Parsed vendor ranges of an `Accept` value, from the configuration's own cache (its vendor is
 * fixed, so the value alone is the key): clients send the same few values again and again.
 * Bounded: at most `ACCEPT_CACHE_LIMIT` (500) entries, each an `Accept` value of at most
 * `MAX_FIELD_LENGTH` (8192) characters and its vendor ranges (at most `MAX_LIST_MEMBERS`, 128).
 */
function vendorRanges(config: VersioningConfig, accept: string | undefined): AcceptedTypes {
  if (!accept) return NO_TYPES;
  // The shared grammar disregards a longer value (no ranges, so no vendor type and nothing
  // unversioned): answered without a cache entry, whose key would otherwise be as large as the
  // server's header limit allows (a raised maxHeaderSize: 500 values of 1 MB held 500 MB).
  if (accept.length > MAX_FIELD_LENGTH) return NO_TYPES;
  return config.accepted.get(accept);
}

/**
 * Whether a request is a CORS preflight: an `OPTIONS` carrying `Access-Control-Request-Method`
 * (Fetch standard §3.2.2, "CORS-preflight request"). A browser sends it without the client's own
 * headers, so it cannot carry a version header and must not fail for a missing or unknown one.
 *
 * @example isCorsPreflight("OPTIONS", { "access-control-request-method": "GET" }) // true
 * @see https://fetch.spec.whatwg.org/#cors-preflight-request
 */
export function isCorsPreflight(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  return method === "OPTIONS" && headers["access-control-request-method"] !== undefined;
}

/**
 * Version-neutral: a CORS preflight, or a path (after the `/v<N>` prefix, without the query) that
 * `neutral` lists, compared as the router compares paths (case-insensitively unless
 * `caseSensitive`). Only asked when no supported version was named (most requests never need it).
 */
function isNeutral(
  config: VersioningConfig,
  rest: string,
  method: string | undefined,
  headers: IncomingHttpHeaders,
  caseSensitive: boolean,
): boolean {
  if (isCorsPreflight(method, headers)) return true;
  if (config.neutral.length === 0) return false;
  const cut = rest.indexOf("?");
  const path = cut === -1 ? rest : rest.slice(0, cut);
  const folded = caseSensitive ? undefined : path.toLowerCase();
  return config.neutral.some((match) => match(path, folded));
}

function unsupported(config: VersioningConfig, status: number, what: string): HttpError {
  return new HttpError(status, `${what} is not supported; supported versions: ${config.list}`, {
    code: "unsupported_api_version",
    headers: config.supported,
  });
}

/** What a version field must hold, for messages: `number` for integers (as ever), else an example. */
function oneOf(config: VersioningConfig): string {
  const { name, example } = config.scheme;
  return name === "integer" ? "number" : `(${name}, such as ${example})`;
}

function badRequest(config: VersioningConfig, message: string, code: string): HttpError {
  return HttpError.badRequest(message, { code, headers: config.supported });
}

/**
 * The URI strategy: strips a `/v<N>` prefix off the target, into `url` and `pathPrefix`. A number
 * beyond any version (`/v99999999999999999999`, more digits than the options allow) still names
 * a version, one the API does not have: RFC 9110 §15.5.5, 404 for a target resource with no
 * current representation, as `/v9`, with the package's record. Left to the router it was served
 * as the default version, whose Deprecation and Sunset then answered a request that never named it.
 */
function readUri(config: VersioningConfig, resolution: VersionResolution, named: Named[]): void {
  if (!config.uri) return;
  const found = readUriPrefix(resolution.url, config.uri.prefix, config.scheme);
  if (!found) return;
  resolution.url = found.rest;
  resolution.pathPrefix = `/${config.uri.prefix}${found.digits}`;
  // More than 9 digits (at most 999999999 is a version) or a date that is none: the spelling as
  // sent, never a supported version, which the message quotes.
  const version = config.scheme.read(found.digits) ?? found.digits;
  named.push({ version, source: "uri", label: resolution.pathPrefix });
}

/** The header strategy: each configured header that is present names a version. */
function readHeaders(config: VersioningConfig, headers: IncomingHttpHeaders, named: Named[]): void {
  if (!config.header) return;
  const { names, keys } = config.header;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    // Own fields only: Node's req.headers inherits from Object.prototype, so a configured name
    // such as `constructor` or `toString` would otherwise read a function when the field is absent.
    // An absent field (the usual case) reads undefined without asking.
    const read = headers[key];
    const value = parseHeaderVersion(
      read !== undefined && Object.hasOwn(headers, key) ? read : undefined,
      config.scheme.name,
    );
    if (value === "malformed") {
      throw malformed(config, `Header ${names[i]} must be one API version ${oneOf(config)}`, "header");
    }
    if (value !== undefined) named.push({ version: value, source: "header", label: names[i] as string });
  }
}

/**
 * The query strategy: `?api-version=2`. The parameter sent more than once must name one version
 * (`?api-version=1&api-version=2` contradicts itself: 400, as two headers that disagree).
 */
function readQuery(config: VersioningConfig, url: string, named: Named[]): void {
  if (!config.query) return;
  const { name } = config.query;
  let version: ApiVersion | undefined;
  for (const value of queryValues(url, name)) {
    const read = parseVersionValue(value, config.scheme);
    if (read === "malformed" || (version !== undefined && version !== read)) {
      throw malformed(config, `Query parameter ${name} must be one API version ${oneOf(config)}`, "query");
    }
    version = read;
  }
  if (version !== undefined) named.push({ version, source: "query", label: name });
}

/** The custom strategy: the application's `extract` reads the version off the request. */
function readCustom(
  config: VersioningConfig,
  method: string | undefined,
  url: string,
  headers: IncomingHttpHeaders,
  named: Named[],
): void {
  if (!config.custom) return;
  const value = config.custom.extract({ method: method ?? "GET", url, headers });
  if (value === undefined) return;
  const version = typeof value === "string" ? parseVersionValue(value, config.scheme) : "malformed";
  if (version === "malformed") {
    throw malformed(
      config,
      `The custom version extractor must read one API version ${oneOf(config)}`,
      "custom",
    );
  }
  named.push({ version, source: "custom", label: "" });
}

/**
 * The media type strategy, for a request with content: a vendor `Content-Type` names the version
 * its content is in. RFC 9110 §8.3: Content-Type "indicates the media type of the associated
 * representation", here the enclosed one, and in the vendor tree (RFC 6838 §3.2) that type is the
 * version: a v2 body read as the default version was validated against the wrong schema. It names
 * a version as the path or a header does (a different one anywhere else → 400 in `conclude`; an
 * unknown one → 415 there). A type of the tree naming no version cannot be read: 415 (RFC 9110
 * §15.5.16), except on a version-neutral path.
 */
function readContentType(
  config: VersioningConfig,
  named: Named[],
  headers: IncomingHttpHeaders,
  neutral: () => boolean,
): void {
  if (!config.mediaType || !hasContent(headers)) return;
  const found = parseVendorContentType(headers["content-type"], config.mediaType.vendor, config.scheme);
  if (found === undefined) return;
  if (found.version !== undefined) {
    named.push({ version: found.version, source: "media-type", label: found.mediaType, where: CONTENT_TYPE });
  } else if (!neutral()) {
    throw unsupported(config, 415, `Content-Type ${excerpt(found.mediaType)} (no API version)`);
  }
}

const CONTENT_TYPE = "Content-Type";

/**
 * The media type strategy: the most acceptable vendor range naming a supported version, else
 * the most acceptable vendor range (an unknown version). When the path, a header or the content's
 * type named the version already, `Accept` is negotiation only: returns its best vendor range
 * when it takes no representation of that version (→ 406 in `conclude`).
 */
function readMediaType(
  config: VersioningConfig,
  resolution: VersionResolution,
  named: Named[],
  headers: IncomingHttpHeaders,
  neutral: () => boolean,
): VendorMediaType | undefined {
  if (!config.mediaType) return undefined;
  const { ranges, unversioned } = vendorRanges(config, headers.accept);
  // The path, a header or the content's type named a version already. RFC 9110 §12.5.1: `Accept`
  // lists every media range the client accepts, not one choice: a client that speaks v1 and v2
  // (`vnd.svc.v1+json, vnd.svc.v2+json`) asking for `/v2/...` accepts the v2 type, and a client
  // that also accepts a type naming no version (`application/json`, `*/*`) accepts v2's
  // representation under it. An `Accept` that takes neither names no version against the other
  // field: it says that none of the version's representations is acceptable (→ 406 in `conclude`).
  const elsewhere = named[0]?.version;
  if (elsewhere !== undefined) {
    const same = ranges.find((r) => r.version === elsewhere);
    if (same !== undefined) {
      named.push({ version: elsewhere, source: "media-type", label: same.mediaType });
      if (!neutral()) resolution.mediaType = same.mediaType;
      return undefined;
    }
    return unversioned ? undefined : ranges[0];
  }
  const known = ranges.find((r) => r.version !== undefined && config.versions.has(r.version));
  // RFC 9110 §15.5.7: a 406 says no representation is acceptable. A client that names only
  // versions this API does not have in the vendor tree but also accepts a type naming none
  // (`application/json`, `*/*`, §12.5.1) accepts the default version's: its vendor ranges
  // name no version.
  if (known === undefined && unversioned) return undefined;
  const chosen = known ?? ranges[0];
  if (chosen === undefined) return undefined;
  if (chosen.version !== undefined) {
    named.push({ version: chosen.version, source: "media-type", label: chosen.mediaType });
    // A version-neutral route (`/health`) has no versioned representation: labelling its body
    // with the vendor type would name a type it is not (RFC 9110 §8.3).
    if (!neutral()) resolution.mediaType = chosen.mediaType;
  } else if (!neutral()) {
    // A JSON/XML type in our tree that names no version (`vnd.svc.vx+json`) cannot be served:
    // a response labelled with it would claim a version it is not (RFC 9110 §12.5.1, §15.5.7).
    const what = `Media type ${excerpt(chosen.mediaType)} (no API version)`;
    throw unsupported(config, config.mediaType.unknownVersionStatus, what);
  }
  return undefined;
}

/** No version named, or an unknown one on a neutral path: the default (none when `required`). */
function useDefault(
  config: VersioningConfig,
  resolution: VersionResolution,
  neutral: () => boolean,
): VersionResolution {
  const version = config.defaultVersion;
  resolution.version = version;
  resolution.source = version === undefined ? undefined : "default";
  resolution.mediaType = undefined;
  // A deprecated default is still deprecated: its responses say so too. Not on a version-neutral
  // path (`/health`), which no version's retirement takes away: RFC 8594 §3, Sunset "indicate[s]
  // that a URI is likely to become unresponsive at a specified point in the future", and RFC 9745
  // §2, Deprecation says "the resource in context of the message is or will be deprecated".
  const deprecation = version === undefined ? undefined : config.deprecated.get(version);
  resolution.deprecation = deprecation === undefined || neutral() ? undefined : deprecation;
  return resolution;
}

/** A refusal's message on `svc:versioning`, but its `request`. */
type Refusal = VersioningDiagnostic extends infer T
  ? T extends { decision: "chosen" }
    ? never
    : Omit<T, "request">
  : never;

/**
 * A refusal as the decision throws it to {@link decideOrRefuse}: the error to answer with, and
 * what `svc:versioning` says of it (the strategy that named an unsupported version or read a
 * malformed one, the two that disagreed), built where the refusal is made.
 */
class Refused {
  constructor(
    readonly error: HttpError,
    /** `undefined` for a refusal `svc:versioning` says nothing of (a version required, a custom extractor's own error). */
    readonly decision: Refusal | undefined,
  ) {}
}

const REPORTING = ["media-type", "header", "query", "custom", "uri"] as const;

function unknownStatus(config: VersioningConfig, source: Named["source"]): number {
  switch (source) {
    case "media-type":
      return config.mediaType?.unknownVersionStatus ?? 406;
    case "header":
      return config.header?.unknownVersionStatus ?? 400;
    case "query":
      return config.query?.unknownVersionStatus ?? 400;
    case "custom":
      return config.custom?.unknownVersionStatus ?? 400;
    default:
      return config.uri?.unknownVersionStatus ?? 404;
  }
}

/** A version field that holds no version (or several): 400 `malformed_api_version`. */
function malformed(config: VersioningConfig, message: string, source: Named["source"]): Refused {
  return new Refused(badRequest(config, message, "malformed_api_version"), {
    decision: "malformed",
    strategy: STRATEGY[source],
  });
}

/** An unknown version: the status of the strategy that named it, the media type's first. */
function refuseUnknown(config: VersioningConfig, named: readonly Named[], first: Named): Refused {
  // RFC 9110 §15.5.16: 415 when "the content is in a format not supported by this method on the
  // target resource": a request whose content is in an unknown version cannot be read at all.
  const content = named.find((n) => n.where === CONTENT_TYPE);
  if (content) {
    const refusal = unsupported(config, 415, `API version ${spelled(content)} (${described(content)})`);
    return new Refused(refusal, { decision: "unsupported", strategy: "media-type" });
  }
  // The strategy that says most of what the client wants decides the status: the media type
  // (no acceptable representation), then a header, the query, the custom extractor, the path.
  const reported =
    REPORTING.map((source) => named.find((n) => n.source === source)).find((n) => n !== undefined) ?? first;
  const status = unknownStatus(config, reported.source);
  const refusal = unsupported(config, status, `API version ${spelled(reported)} (${described(reported)})`);
  return new Refused(refusal, { decision: "unsupported", strategy: STRATEGY[reported.source] });
}

/**
 * RFC 9110 §15.5.7: 406 "indicates that the target resource does not have a current
 * representation that would be acceptable to the user agent, according to the proactive
 * negotiation header fields received in the request". The path (the target resource), a header or
 * the content's type named the version; `Accept` (§12.5.1) takes none of its representations.
 * Not a 400: two fields naming different versions contradict each other, while `Accept` lists
 * what the client can take, and here that is nothing this version has.
 */
function notAcceptable(config: VersioningConfig, named: Named, accepted: VendorMediaType): Refused {
  const message = `Accept takes no representation of API version ${spelled(named)} (${described(named)}); it names ${excerpt(accepted.mediaType)}`;
  return new Refused(
    HttpError.notAcceptable(message, { code: "not_acceptable", headers: config.supported }),
    {
      decision: "not-acceptable",
      strategy: STRATEGY[named.source],
    },
  );
}

/** Which strategy a decision names when several named the same version: the first of these. */
const CHOOSING = ["uri", "query", "header", "custom", "media-type"] as const;

/** From the versions the strategies named to the decision, or the error to answer with. */
function conclude(
  config: VersioningConfig,
  resolution: VersionResolution,
  named: readonly Named[],
  neutral: () => boolean,
  unacceptable: VendorMediaType | undefined,
): VersionResolution {
  const first = named[0];
  if (first === undefined) {
    // The absence of every version-bearing header chose the default, so caches must key on them
    // too: `vary` stays every version field (see `varyOf`).
    if (config.defaultVersion === undefined && !neutral()) {
      throw badRequest(
        config,
        `An API version is required; supported versions: ${config.list}`,
        "missing_api_version",
      );
    }
    return useDefault(config, resolution, neutral);
  }
  // Two fields naming different versions (the path, a version header, the content's type, or
  // `Accept` when nothing else named one): the request contradicts itself (→ 400).
  const other = named.find((n) => n.version !== first.version);
  if (other) {
    const message = `The request names API version ${spelled(first)} (${described(first)}) and ${spelled(other)} (${described(other)})`;
    throw new Refused(badRequest(config, message, "conflicting_api_version"), {
      decision: "conflicting",
      strategies: [STRATEGY[first.source], STRATEGY[other.source]],
    });
  }
  // RFC 9110 §12.5.5: Vary lists the request fields that "might have influenced the origin
  // server's process for selecting the content of this response". Every version field is read
  // whichever strategy named the version, and any of them could have changed the answer: a
  // conflicting `API-Version` with `/v2/x` or with `Accept: vnd.svc.v2+json` is a 400, the other
  // header name could name another version, and a vendor range in `Accept` labels the response.
  // So a cache keeps this answer only for requests with the same values of all of them: `vary`
  // is every version field, whatever named the version (see `varyOf`).
  if (!config.versions.has(first.version)) {
    if (neutral()) return useDefault(config, resolution, neutral);
    throw refuseUnknown(config, named, first);
  }
  // A version-neutral route (`/health`) serves no versioned representation to negotiate.
  if (unacceptable !== undefined && !neutral()) throw notAcceptable(config, first, unacceptable);
  resolution.version = first.version;
  resolution.source = CHOOSING.find((source) => named.some((n) => n.source === source)) ?? "media-type";
  resolution.deprecation = config.deprecated.get(first.version);
  return resolution;
}

/**
 * The scheme and authority of a request target in absolute-form (`http://api.example/v2/x`),
 * which "a server MUST accept" (RFC 9112 §3.2.2) and Express routes by its path, when a path
 * follows them; `""` for the origin-form (`/v2/x`) and anything else.
 */
function originBeforePath(url: string): string {
  const origin = absoluteFormOrigin(url);
  return origin !== "" && url[origin.length] === "/" ? origin : "";
}

/**
 * The decision, one implementation for every entry point: the version a request asks for (URI,
 * then headers, then media type; they must agree), or throws the `HttpError` to answer with.
 * `caseSensitive`: how the router compares paths (for `neutral`).
 */
export function decide(
  config: VersioningConfig,
  method: string | undefined,
  url: string,
  headers: IncomingHttpHeaders,
  caseSensitive = config.caseSensitive === true,
): VersionResolution {
  const decided = decideOrRefuse(config, method, url, headers, caseSensitive);
  if (decided instanceof Refused) throw decided.error;
  return decided;
}

/** {@link decide}'s decision, or its refusal as a {@link Refused}. */
function decideOrRefuse(
  config: VersioningConfig,
  method: string | undefined,
  url: string,
  headers: IncomingHttpHeaders,
  caseSensitive: boolean,
): VersionResolution | Refused {
  try {
    return decideOrThrow(config, method, url, headers, caseSensitive);
  } catch (err) {
    if (err instanceof Refused) return err;
    if (isHttpError(err)) return new Refused(err, undefined);
    throw err;
  }
}

/** {@link decide}'s decision, or throws a {@link Refused} or an `HttpError`. */
function decideOrThrow(
  config: VersioningConfig,
  method: string | undefined,
  url: string,
  headers: IncomingHttpHeaders,
  caseSensitive: boolean,
): VersionResolution {
  // The version prefix and the neutral paths are read off the path of an absolute-form target;
  // the scheme and authority go back in front of `url` for the router.
  const origin = originBeforePath(url);
  const resolution: VersionResolution = {
    version: undefined,
    source: undefined,
    url: origin === "" ? url : url.slice(origin.length),
    pathPrefix: "",
    vary: PENDING,
    mediaType: undefined,
    deprecation: undefined,
  };
  const named: Named[] = [];
  readUri(config, resolution, named);
  readQuery(config, resolution.url, named);
  readHeaders(config, headers, named);
  readCustom(config, method, url, headers, named);
  const neutral = () => isNeutral(config, resolution.url, method, headers, caseSensitive);
  readContentType(config, named, headers, neutral);
  const unacceptable = readMediaType(config, resolution, named, headers, neutral);
  const decided = conclude(config, resolution, named, neutral, unacceptable);
  if (origin !== "") decided.url = `${origin}${decided.url}`;
  return decided;
}

/**
 * The decision {@link versions} makes, as a pure function of the request target, headers and
 * method: options are validated once, the returned function throws the `HttpError` to answer
 * with. Pass the method so a CORS preflight is treated as the pipeline treats it (version-neutral).
 *
 * @example
 * const resolveVersion = versionResolver({ versions: [1, 2], defaultVersion: 1 });
 * resolveVersion("/v2/employees", {}) // { version: 2, source: "uri", url: "/employees", pathPrefix: "/v2", ... }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function versionResolver(
  options: ApiVersioningOptions,
): (url: string, headers: IncomingHttpHeaders, method?: string) => VersionResolution {
  const config = resolveConfig(options);
  return (url, headers, method) => {
    const resolution = decide(config, method, url, headers);
    // The caller's own list, free to change.
    resolution.vary = [...varyOf(config, headers)];
    return resolution;
  };
}

/** A field value as one list (RFC 9110 §5.3: lines of a list field combine with commas). */
function fieldList(value: FieldValue): string {
  return Array.isArray(value) ? value.join(", ") : String(value);
}

/** Field names in lower case, as the pipeline keeps them. */
function lowerCased(fields: Readonly<Record<string, string>>): Fields {
  const out: Fields = {};
  for (const name of Object.keys(fields)) out[name.toLowerCase()] = fields[name] as string;
  return out;
}

/**
 * The fields every response of each version carries, made once: the supported versions, and for
 * a deprecated version `Deprecation` (RFC 9745 §2), `Sunset` (RFC 8594 §3) and their `Link`s.
 */
function fieldsByVersion(config: VersioningConfig): {
  supported: Fields;
  byVersion: Map<ApiVersion, Fields>;
} {
  const supported = Object.freeze(lowerCased(config.supported));
  const byVersion = new Map<ApiVersion, Fields>();
  for (const [version, deprecation] of config.deprecated) {
    const fields: Fields = { ...supported, deprecation: deprecation.deprecation };
    if (deprecation.sunset !== undefined) fields.sunset = deprecation.sunset;
    if (deprecation.links.length > 0) fields.link = deprecation.links.join(", ");
    byVersion.set(version, Object.freeze(fields));
  }
  return { supported, byVersion };
}

/**
 * The pipeline's versioning step (`createPipeline({ versioning: versions({...}) })` of
 * `@svc/kernel`, mounted with its adapter's `prepare` in front of the routes): the version a
 * request asks for by URI `/v<N>` prefix, `API-Version` / `Accept-Version` header or vendor
 * media type (they must agree), decided before routing. The decision carries the version, the
 * target without its prefix, the vendor type that labels the response's JSON or XML (RFC 6838
 * §3.2; the representation step labels only the representation of its suffix, so JSON is never
 * sent under a `+xml` type), the fields every response carries (`API-Supported-Versions`, and for
 * a deprecated version `Deprecation`, `Sunset` and their `Link`s) and the request fields it
 * depended on; a refusal (404, 400, 406, 415) carries the same fields.
 *
 * @example
 * const svc = expressAdapter(createPipeline({ versioning: versions({ versions: [1, 2], defaultVersion: 2 }) }));
 * app.use(svc.prepare); // /v1/employees is routed as /employees, requestState(req).version 1
 * @see https://www.rfc-editor.org/rfc/rfc9745
 */
export function versions(options: ApiVersioningOptions): Versioner {
  const config = resolveConfig(options);
  const { supported, byVersion } = fieldsByVersion(config);
  return {
    resolve(request: PipelineRequest, target: string): VersionDecision {
      const caseSensitive =
        config.caseSensitive ??
        (typeof request.native === "object" &&
          request.native !== null &&
          exchangeIfAny(request.native)?.routing?.caseSensitive === true);
      const decided = decideOrRefuse(
        config,
        request.view.method ?? "GET",
        target,
        request.view.headers,
        caseSensitive,
      );
      if (decided instanceof Refused) {
        if (decided.decision !== undefined && versioningChannel.hasSubscribers)
          publishDecision(versioningChannel, { request: nativeOf(request.native), ...decided.decision });
        return {
          target,
          version: undefined,
          prefix: "",
          label: undefined,
          fields: supported,
          // RFC 9110 §12.5.5: a refusal depended on the same fields.
          vary: varyOf(config, request.view.headers),
          error: decided.error,
        };
      }
      const resolution = decided;
      const deprecation = resolution.deprecation;
      let fields = supported;
      if (deprecation !== undefined) {
        fields = byVersion.get(resolution.version as ApiVersion) ?? supported;
        // RFC 8288 §3.5: links set in front of the pipeline stay; the version's are appended.
        const links = fields.link;
        const preset = links === undefined ? undefined : request.preset?.("link");
        if (preset !== undefined) fields = { ...fields, link: `${fieldList(preset)}, ${links}` };
      }
      if (versioningChannel.hasSubscribers) chosen(request.native, resolution);
      return {
        target: resolution.url,
        version: resolution.version,
        prefix: resolution.pathPrefix,
        label: resolution.mediaType,
        fields,
        vary: varyOf(config, request.view.headers),
        error: undefined,
      };
    },
  };
}

const STRATEGY = {
  uri: "path",
  query: "query",
  header: "header",
  custom: "custom",
  "media-type": "media-type",
  default: "default",
} as const;

/** The framework's request the pipeline keys the exchange by, as a message's `request`. */
function nativeOf(native: unknown): object | undefined {
  return typeof native === "object" && native !== null ? native : undefined;
}

/** `chosen` on `svc:versioning`, for a request that got a version. */
function chosen(native: unknown, resolution: VersionResolution): void {
  if (resolution.version === undefined || resolution.source === undefined) return;
  // What the response says: a deprecated version's responses carry Deprecation (and Sunset).
  const deprecation = resolution.deprecation;
  publishDecision(versioningChannel, {
    request: nativeOf(native),
    decision: "chosen",
    version: String(resolution.version),
    strategy: STRATEGY[resolution.source],
    deprecated: deprecation !== undefined,
    sunset: deprecation?.sunset !== undefined,
  });
}
