import { HttpError } from "@svc/errors";
import {
  type ForwardedHeaders,
  parseParameters,
  type RequestFacts,
  type RequestView,
  requestFacts,
  resolveFacts,
  splitList,
} from "@svc/kernel";
import { checkBooleanOption, checkForwardedHeaders, checkOptionNames } from "@svc/kernel/internal";
import { optionError } from "./option-error.js";
import { isOriginPath } from "./origin-path.js";
import type { TrustProxy } from "./trust.js";
import { uriChars } from "./uri-chars.js";

/** Options of {@link externalOrigin} and {@link hrefFor}. */
export interface BaseUrlOptions {
  /**
   * Whether forwarded headers from the peer may be believed: `false`, `true` (every peer, right
   * only when the server cannot be reached except through the proxy), or a function of the peer's
   * address; `compileTrust("loopback, 10.0.0.0/8")` compiles the other forms of Express's
   * `trust proxy` setting into one, once.
   * @default the framework's trust the request's exchange records: under Express
   *   (`@svc/hal/express`), the app's `trust proxy` setting; under Fastify (`@svc/hal/fastify`), its
   *   `trustProxy` server option; else false
   */
  trustProxy?: boolean | TrustProxy;
  /**
   * The one family of forwarded fields read behind a trusted proxy, the one it sets:
   * `"x-forwarded"` (`X-Forwarded-Proto`, `-Host`, `-Prefix`, `-For`) or `"forwarded"` (RFC 7239
   * `Forwarded`; no prefix). Never a mix: a proxy passes the other family through from the client.
   * @default "x-forwarded" (as Express and Fastify read)
   */
  forwardedHeaders?: ForwardedHeaders;
  /**
   * Read `X-Forwarded-Prefix` (the path a gateway strips before forwarding, such as `/api`) from a
   * trusted proxy into {@link externalBaseUrl} and {@link hrefFor}.
   * @default true
   */
  forwardedPrefix?: boolean;
}

/** Options of {@link hrefFor}. */
export interface HrefOptions extends BaseUrlOptions {
  /**
   * Render absolute links (`https://api.example.com/employees/7`) rather than paths.
   * @default true
   */
  absolute?: boolean;
}

/** Input of {@link resolveOrigin}: header values and connection facts, no request object. */
export interface OriginInput {
  /** Request headers (lower-case names, as node:http gives them). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The connection is TLS. */
  encrypted: boolean;
  /** The forwarded headers come from a trusted proxy. */
  trusted: boolean;
  /**
   * The request-target (`req.originalUrl` or `req.url`): when it is in absolute-form
   * (`http://api.example.com/x`), its authority replaces `Host` (RFC 9112 §3.2.2).
   * @default undefined (`Host` is read)
   */
  target?: string | undefined;
  /**
   * Whether the proxy at `address`, `hop` proxies away from the server, may be believed: lets a
   * chain of trusted proxies name the client's URL in `Forwarded` (see {@link resolveOrigin}).
   * @default undefined (only the element the trusted peer added is read)
   */
  trustProxy?: TrustProxy | undefined;
  /**
   * The one family of forwarded fields read: `"x-forwarded"` or `"forwarded"` (RFC 7239).
   * @default "x-forwarded"
   */
  forwardedHeaders?: ForwardedHeaders | undefined;
}

/** What {@link parseForwarded} reads from a `Forwarded` header. */
type ForwardedValues = { proto?: string; host?: string };

/**
 * Reads `proto` and `host` from the first element of an RFC 7239 `Forwarded` header: the one the
 * proxy nearest the client added, which saw the URL the client used, when every hop is trusted.
 * Proxies append their element (RFC 7239 §4), so the first may also be one the client sent itself:
 * {@link resolveOrigin} reads the element the trusted chain added instead.
 */
export function parseForwarded(value: string | undefined): ForwardedValues {
  if (!value) return {};
  const out: ForwardedValues = {};
  // RFC 7239 §4: forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] ), elements comma
  // separated; values are tokens or quoted-strings, which may hold ";" or "," (IPv6 with port):
  // the parameter grammar of RFC 9110 §5.6.6, read by the shared parser of @svc/errors.
  const first = splitList(value)?.[0];
  const pairs = first === undefined ? undefined : parseParameters(`;${first}`);
  for (const [key, v] of pairs ?? []) {
    if (key === "proto" && out.proto === undefined) out.proto = v.toLowerCase();
    if (key === "host" && out.host === undefined) out.host = v;
  }
  return out;
}

/** The request's facts ({@link requestFacts} of @svc/kernel) from an {@link OriginInput}. */
function factsOf(input: OriginInput): RequestFacts {
  return resolveFacts({
    headers: input.headers,
    encrypted: input.encrypted,
    target: input.target,
    trusted: input.trusted,
    trustHop: input.trustProxy,
    forwardedHeaders: input.forwardedHeaders,
  });
}

/**
 * The origin (`scheme://host[:port]`) the client used, as a pure function of the request's
 * headers. When the proxy is trusted, the one family of forwarded fields it sets
 * (`forwardedHeaders`: `X-Forwarded-Proto` / `X-Forwarded-Host` by default, as Express reads, or
 * RFC 7239 `Forwarded`) wins over the connection itself, and the other family is never read (the
 * proxy passes it through from the client); untrusted forwarded headers are ignored, so a client
 * cannot make the service emit links to a host of its choosing (RFC 7239 §8.1: a forwarded header
 * is only as trustworthy as the proxy that set it). Of `Forwarded`, the element the trusted chain
 * added is read (proxies append, RFC 7239 §4: the last element, and earlier ones while
 * `trustProxy` trusts the hop that added them); of the de facto headers, the value the trusted
 * chain appended likewise (see `trustedListValue` of @svc/kernel). An
 * absolute-form `target` names the host in place of `Host` (RFC 9112 §3.2.2). The reading is
 * `requestFacts` of @svc/kernel, shared with every package that reads forwarded fields.
 *
 * A `Host` that is not a valid host name (see `parseHost` of @svc/kernel: DNS label and name
 * lengths, a port from 1 to 65535, an IPv6 literal that parses) is a 400, never a link or a
 * document built from it.
 *
 * @example resolveOrigin({ headers: { host: "api.example.com" }, encrypted: true, trusted: false }) // "https://api.example.com"
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-5.3
 */
export function resolveOrigin(input: OriginInput): string {
  return factsOf(input).origin;
}

/**
 * The path prefix a trusted gateway announces in `X-Forwarded-Prefix` (`/api`), normalised
 * without a trailing slash; `""` when absent or not trusted. A prefix that is not a clean absolute
 * path is a 400, never part of a link.
 *
 * @example resolvePrefix({ headers: { "x-forwarded-prefix": "/api/" }, encrypted: false, trusted: true }) // "/api"
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function resolvePrefix(input: OriginInput): string {
  return factsOf(input).prefix;
}

/**
 * The externally visible origin of the service for this request: what clients behind a gateway,
 * load balancer or proxy must use in links and `Location` headers. Behind the proxies
 * `trustProxy` trusts, by default the framework's trust the request's exchange records (see
 * `externalOrigin` of `@svc/hal/express` for Express's `trust proxy` setting).
 *
 * @example externalOrigin(req, { trustProxy: compileTrust("loopback") }) // "https://api.example.com" behind the proxy
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-5.3
 */
export function externalOrigin(req: RequestView, options: BaseUrlOptions = {}): string {
  checkBaseUrlOptions("externalOrigin", options, BASE_URL_OPTIONS);
  return requestFacts(req, options.trustProxy, options.forwardedHeaders).origin;
}

const BASE_URL_OPTIONS = ["trustProxy", "forwardedHeaders", "forwardedPrefix"] as const;
const HREF_OPTIONS = [...BASE_URL_OPTIONS, "absolute"] as const;

/**
 * Refuses options of the base URL functions that would otherwise be misread: an unknown name, a
 * `trustProxy` in a form only {@link compileTrust} takes (`"loopback"` would silently fall back to
 * the framework's setting), a `"false"` string where a boolean belongs.
 */
function checkBaseUrlOptions(owner: string, options: HrefOptions, known: readonly string[]): void {
  checkOptionNames("hal", options, known, owner);
  const trust = options.trustProxy;
  if (trust !== undefined && typeof trust !== "boolean" && typeof trust !== "function") {
    throw optionError(
      owner,
      "trustProxy",
      trust,
      "true, false or a function (address, hop) => boolean (compileTrust(value) compiles the other forms)",
    );
  }
  if (options.forwardedHeaders !== undefined) checkForwardedHeaders(options.forwardedHeaders, "hal");
  checkBooleanOption("hal", "forwardedPrefix", options.forwardedPrefix, `${owner}: forwardedPrefix`);
  checkBooleanOption("hal", "absolute", options.absolute, `${owner}: absolute`);
}

/**
 * The facts of the request behind the proxies the options trust (`requestFacts` of
 * @svc/kernel): the origin and prefix links are built from, the client's address, and in `vary`
 * the forwarded fields they were read from, for the response's `Vary` (RFC 9110 §12.5.5: a cache
 * must not give a page whose links name `shop.example` to a request forwarded for another host).
 * Behind the proxies `trustProxy` trusts, by default the framework's trust the exchange records.
 *
 * @example
 * const facts = externalFacts(req);
 * res.setHeader("Location", `${facts.origin}${facts.prefix}/orders/7`);
 * appendVary(res, ...facts.vary);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function externalFacts(req: RequestView, options: BaseUrlOptions = {}): RequestFacts {
  checkBaseUrlOptions("externalFacts", options, BASE_URL_OPTIONS);
  return requestFacts(req, options.trustProxy, options.forwardedHeaders);
}

/**
 * The externally visible base URL: {@link externalOrigin} plus the path prefix a trusted gateway
 * strips (`X-Forwarded-Prefix`), so `https://example.com/api` when the gateway maps `/api/*` to
 * the service. Pass it as `origin` to `pageModel`.
 *
 * @example externalBaseUrl(req) // "https://example.com/api"
 * @see https://www.rfc-editor.org/rfc/rfc7239
 */
export function externalBaseUrl(req: RequestView, options: BaseUrlOptions = {}): string {
  checkBaseUrlOptions("externalBaseUrl", options, BASE_URL_OPTIONS);
  const facts = requestFacts(req, options.trustProxy, options.forwardedHeaders);
  return `${facts.origin}${options.forwardedPrefix === false ? "" : facts.prefix}`;
}

// A "." or ".." segment, also percent-encoded (RFC 3986 §2.3, §6.2.2.2: %2E is "."), which the
// WHATWG URL parser reads as a dot segment too ("A double-dot URL path segment must be ".." or an
// ASCII case-insensitive match for ".%2e", "%2e.", or "%2e%2e""), up to the query or fragment.
/**
 * The 400 for a link path whose first segment is empty ("//host", RFC 3986 §4.2): the link would
 * name another origin. It says nothing of the host, which the client may have chosen.
 */
export function anotherOrigin(): HttpError {
  return HttpError.badRequest('The link\'s path starts with "//", which names another origin', {
    code: "invalid_path",
  });
}

const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=[/?#]|$)/i;

/**
 * Whether the path of `reference` holds a dot segment. RFC 3986 §5.2.4: "remove_dot_segments"
 * removes every "." and ".." segment (with the segment before a "..") from a reference a client
 * resolves, so `/documents/..` is `/`, and no encoding spares one: such a path names no resource
 * of its own. A route parameter Express decoded into one (`%2E%2E`, `..%2F`) would otherwise make
 * the link point outside the collection.
 */
function hasDotSegment(reference: string): boolean {
  // Most paths hold neither a dot nor a percent sign: two scans, and no regular expression run.
  if (!reference.includes(".") && !(reference.includes("%") && /%2e/i.test(reference))) return false;
  const end = reference.search(/[?#]/);
  return DOT_SEGMENT.test(end === -1 ? reference : reference.slice(0, end));
}

/**
 * The href for a path of this service: absolute from the external base URL (the default), or the
 * path (behind any trusted `X-Forwarded-Prefix`) with `absolute: false`. Use it for `_links` and
 * for `Location`. Characters no URI carries (a decoded route parameter's space, `\`, non-ASCII)
 * are percent-encoded; `?`, `#`, template braces and percent-encodings are kept. A path with a dot
 * segment (`/documents/..`, also as `%2e`) is a 400 `HttpError` (code `invalid_path`).
 *
 * @example res.location(hrefFor(req, `/employees/${id}`)).status(201).json(employee);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.2
 */
export function hrefFor(req: RequestView, path: string, options?: HrefOptions): string {
  // RFC 9110 §10.2.2 (Location is a URI-reference), draft-kelly-json-hal-11 §5.1 (an href is a
  // URI): a route parameter in the path is decoded (Express decodes req.params), so what no URI
  // carries is percent-encoded; "?", "#" and percent-encodings stay as given.
  const reference = typeof path === "string" ? uriChars(path, true) : undefined;
  if (reference === undefined || !reference.startsWith("/")) {
    throw optionError("hrefFor", "path", path, 'a path starting with "/"');
  }
  // Most calls give no options (a link per response): nothing to check then.
  if (options !== undefined) checkBaseUrlOptions("hrefFor", options, HREF_OPTIONS);
  const facts = requestFacts(req, options?.trustProxy, options?.forwardedHeaders);
  const prefix = options?.forwardedPrefix === false ? "" : facts.prefix;
  // RFC 3986 §4.2: "//host" would be a network-path reference, another origin. Checked on the
  // encoded path: "\", tab and newlines, which the WHATWG URL parser reads as "/" or drops (so
  // "/\host" was "//host" to a browser), are percent-encoded by then, and a client's route
  // parameter holding one is a link of this origin rather than an error. An empty first segment
  // is the client's doing as often as the application's (a parameter sent as "%2Fhost", which
  // Express decodes, in `/${param}`), so, like a dot segment, it is a 400.
  if (!isOriginPath(reference)) throw anotherOrigin();
  if (hasDotSegment(reference)) {
    throw HttpError.badRequest("The link's path holds a dot segment (. or ..)", { code: "invalid_path" });
  }
  if (options?.absolute === false) return `${prefix}${reference}`;
  return `${facts.origin}${prefix}${reference}`;
}
