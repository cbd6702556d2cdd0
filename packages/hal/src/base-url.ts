import { isIP, isIPv4 } from "node:net";
import {
  checkBooleanOption,
  checkOptionNames,
  HttpError,
  parseParameters,
  splitList,
  trustedHops,
  trustedListValue,
} from "@svc/errors";
import { type Authority, parseHost } from "./host.js";
import { optionError } from "./option-error.js";
import { isOriginPath } from "./origin-path.js";
import { isTrusted, type TrustProxy, type TrustRequest, trustFunction } from "./trust.js";
import { uriChars } from "./uri-chars.js";

/** The parts of a plain `node:http` (or Express) request the base URL is built from. */
export type BaseUrlRequest = TrustRequest;

/** Options of {@link externalOrigin} and {@link hrefFor}. */
export interface BaseUrlOptions {
  /**
   * Whether forwarded headers from the peer may be believed: `false`, `true` (every peer, right
   * only when the server cannot be reached except through the proxy), or a function of the peer's
   * address; `compileTrust("loopback, 10.0.0.0/8")` compiles the other forms of Express's
   * `trust proxy` setting into one, once.
   * @default under Express, the app's `trust proxy` setting (`req.app.get("trust proxy fn")`); else false
   */
  trustProxy?: boolean | TrustProxy;
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
}

function header(headers: OriginInput["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
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

/** One element of a `Forwarded` header, as read. */
type ForwardedElement = ForwardedValues & { for?: string };

function forwardedElements(value: string | undefined): ForwardedElement[] {
  if (!value) return [];
  const list = splitList(value);
  // A trusted chain's Forwarded that cannot be read (a quoted-string left open, a list past the
  // parser's bounds: what a client's own element can do to the header a proxy appends to) names
  // no element; falling through to X-Forwarded-Host or Host would let that client pick the source.
  if (list === undefined) {
    throw HttpError.badRequest("The Forwarded header is not valid", { code: "invalid_forwarded" });
  }
  const elements: ForwardedElement[] = [];
  for (const element of list) {
    const out: ForwardedElement = {};
    for (const [key, v] of parseParameters(`;${element}`) ?? []) {
      if (key === "for" && out.for === undefined) out.for = v;
      if (key === "proto" && out.proto === undefined) out.proto = v.toLowerCase();
      if (key === "host" && out.host === undefined) out.host = v;
    }
    elements.push(out);
  }
  return elements;
}

/**
 * RFC 7239 §6: `node = nodename [ ":" node-port ]`, `nodename = IPv4address / "[" IPv6address "]" /
 * "unknown" / obfnode`; the address, or undefined for "unknown" and obfuscated identifiers, which
 * name no node that could be trusted.
 */
function nodeAddress(node: string | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (node.startsWith("[")) {
    const close = node.indexOf("]");
    const address = close === -1 ? "" : node.slice(1, close);
    return isIP(address) === 6 ? address : undefined;
  }
  const colon = node.indexOf(":");
  const address = colon === -1 ? node : node.slice(0, colon);
  return isIPv4(address) ? address : undefined;
}

/**
 * The `Forwarded` element the trusted chain vouches for. RFC 7239 §4: a proxy "can either append
 * it to the last existing Forwarded header field after a comma separator or add a new field at
 * the end of the header block", so the last element is the trusted peer's, and the one before it
 * only counts when the node that added it, named by the `for` of the element after it, is trusted
 * at its hop (as proxy-addr walks `X-Forwarded-For`). Elements a client sent itself come first and
 * are never read unless the operator trusts every hop.
 */
function trustedForwarded(value: string | undefined, trust: TrustProxy | undefined): ForwardedValues {
  const elements = forwardedElements(value);
  let i = elements.length - 1;
  if (i < 0) return {};
  for (let hop = 1; i > 0 && trust !== undefined; hop++) {
    const address = nodeAddress(elements[i]?.for);
    if (address === undefined || !trust(address, hop)) break;
    i--;
  }
  const { proto, host } = elements[i] ?? {};
  return { ...(proto === undefined ? {} : { proto }), ...(host === undefined ? {} : { host }) };
}

/** The trusted values of the de facto headers, the hops walked once, only for a list. */
function trustedXForwarded(
  headers: OriginInput["headers"],
  trust: TrustProxy | undefined,
): { proto: string | undefined; host: string | undefined } {
  let hops: number | undefined;
  const walk = () => {
    hops ??= trustedHops(header(headers, "x-forwarded-for"), trust);
    return hops;
  };
  return {
    proto: trustedListValue(header(headers, "x-forwarded-proto"), walk)?.toLowerCase(),
    host: trustedListValue(header(headers, "x-forwarded-host"), walk),
  };
}

/**
 * The origin (`scheme://host[:port]`) the client used, as a pure function of the request's
 * headers. When the proxy is trusted, RFC 7239 `Forwarded` wins over `X-Forwarded-Proto` /
 * `X-Forwarded-Host` (the de facto headers Express reads), which win over the connection itself;
 * untrusted forwarded headers are ignored, so a client cannot make the service emit links to a host
 * of its choosing (RFC 7239 §8.1: a forwarded header is only as trustworthy as the proxy that set it).
 * Of `Forwarded`, the element the trusted chain added is read (proxies append, RFC 7239 §4: the
 * last element, and earlier ones while `trustProxy` trusts the hop that added them); of the de facto
 * headers, the value the trusted chain appended likewise (see `trustedListValue` of @svc/errors). An
 * absolute-form `target` names the host in place of `Host` (RFC 9112 §3.2.2).
 *
 * A `Host` that is not a valid host name (see {@link parseHost}: DNS label and name lengths, a port
 * from 1 to 65535, an IPv6 literal that parses) is a 400, never a link or a document built from it.
 *
 * @example resolveOrigin({ headers: { host: "api.example.com" }, encrypted: true, trusted: false }) // "https://api.example.com"
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-5.3
 */
export function resolveOrigin(input: OriginInput): string {
  let proto = input.encrypted ? "https" : "http";
  let forwardedHost: string | undefined;
  if (input.trusted) {
    const forwarded = trustedForwarded(header(input.headers, "forwarded"), input.trustProxy);
    const xForwarded = trustedXForwarded(input.headers, input.trustProxy);
    const fProto = forwarded.proto ?? xForwarded.proto;
    if (fProto === "http" || fProto === "https") proto = fProto;
    forwardedHost = forwarded.host ?? xForwarded.host;
  }
  const authority = authorityOf(input.headers, forwardedHost, input.target);
  if (authority === undefined)
    throw HttpError.badRequest("The request has no Host header", { code: "missing_host" });
  const { port } = authority;
  // RFC 3986 §6.2.3: the default port is left out of the normal form.
  const defaultPort = proto === "https" ? 443 : 80;
  return `${proto}://${authority.host}${port === undefined || port === defaultPort ? "" : `:${port}`}`;
}

/**
 * The authority the client named: the host a trusted proxy forwarded (`Forwarded`, then
 * `X-Forwarded-Host`, each as {@link resolveOrigin} reads it), else `Host`; undefined when there is none (an HTTP/1.0 request may carry no
 * `Host`). One that is not a valid authority (see {@link parseHost}) is a 400 `invalid_host`.
 */
export function requestAuthority(
  headers: OriginInput["headers"],
  trusted: boolean,
  target?: string,
  trust?: TrustProxy,
): Authority | undefined {
  const forwardedHost = trusted
    ? (trustedForwarded(header(headers, "forwarded"), trust).host ?? trustedXForwarded(headers, trust).host)
    : undefined;
  return authorityOf(headers, forwardedHost, target);
}

// RFC 9112 §3.2.2 absolute-form; the scheme is case-insensitive (RFC 3986 §3.1).
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)/i;

/**
 * `forwardedHost` is the host a trusted proxy forwarded (`Forwarded`, else `X-Forwarded-Host`),
 * undefined when there is none or the peer is not trusted.
 * `target` is the request-target: RFC 9112 §3.2.2, "When an origin server receives a request with
 * an absolute-form of request-target, the origin server MUST ignore the received Host header
 * field (if any) and instead use the host information of the request-target", so a client cannot
 * name one authority in the target and pass an allowlist with another in `Host`.
 */
function authorityOf(
  headers: OriginInput["headers"],
  forwardedHost: string | undefined,
  target: string | undefined,
): Authority | undefined {
  let host = header(headers, "host");
  const absolute = target === undefined || target.startsWith("/") ? null : ABSOLUTE_FORM.exec(target);
  if (absolute !== null) {
    host = absolute[1] ?? "";
    // RFC 9110 §4.2.1: a recipient of an http URI with an empty host MUST reject it as invalid.
    if (host === "") {
      throw HttpError.badRequest("The request's Host header is not a valid host", { code: "invalid_host" });
    }
  }
  if (forwardedHost !== undefined) host = forwardedHost;
  if (host === undefined || host === "") return undefined;
  const authority = parseHost(host);
  if (authority === undefined) {
    throw HttpError.badRequest("The request's Host header is not a valid host", { code: "invalid_host" });
  }
  return authority;
}

// RFC 3986 §3.3: path segments of pchar; no empty segment, so no "//" that would change the authority.
const PREFIX = /^(?:\/[A-Za-z0-9\-._~!$&'()*+,;=:@%]+)+$/;

/**
 * The path prefix a trusted gateway announces in `X-Forwarded-Prefix` (`/api`), normalised
 * without a trailing slash; `""` when absent or not trusted. A prefix that is not a clean absolute
 * path is a 400, never part of a link.
 *
 * @example resolvePrefix({ headers: { "x-forwarded-prefix": "/api/" }, encrypted: false, trusted: true }) // "/api"
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function resolvePrefix(input: OriginInput): string {
  if (!input.trusted) return "";
  // The value the trusted chain appended, as for X-Forwarded-Host (see trustedListValue).
  const raw = trustedListValue(header(input.headers, "x-forwarded-prefix"), () =>
    trustedHops(header(input.headers, "x-forwarded-for"), input.trustProxy),
  );
  if (raw === undefined || raw === "/") return "";
  const prefix = raw.endsWith("/") ? raw.slice(0, -1) : raw;
  // A dot segment, also percent-encoded: %2E is "." (RFC 3986 §2.3, §6.2.2.2), and the WHATWG URL
  // parser removes "/%2e%2e" as it removes "/..", so such a prefix would climb out of itself.
  if (!PREFIX.test(prefix) || /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i.test(prefix)) {
    throw HttpError.badRequest("The X-Forwarded-Prefix header is not a valid path");
  }
  return prefix;
}

/**
 * The externally visible origin of the service for this request: what clients behind a gateway,
 * load balancer or proxy must use in links and `Location` headers. Honours Express's
 * `app.set("trust proxy", ...)` unless `trustProxy` is given.
 *
 * @example
 * app.set("trust proxy", "loopback");
 * externalOrigin(req) // "https://api.example.com" behind the proxy
 * @see https://expressjs.com/en/guide/behind-proxies.html
 */
export function externalOrigin(req: BaseUrlRequest, options: BaseUrlOptions = {}): string {
  checkBaseUrlOptions("externalOrigin", options, BASE_URL_OPTIONS);
  return resolveOrigin(originInput(req, options));
}

const BASE_URL_OPTIONS = ["trustProxy", "forwardedPrefix"] as const;
const HREF_OPTIONS = [...BASE_URL_OPTIONS, "absolute"] as const;

/**
 * Refuses options of the base URL functions that would otherwise be misread: an unknown name, a
 * `trustProxy` in a form only {@link compileTrust} takes (`"loopback"` would silently fall back to
 * the app's setting), a `"false"` string where a boolean belongs.
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
  checkBooleanOption("hal", "forwardedPrefix", options.forwardedPrefix, `${owner}: forwardedPrefix`);
  checkBooleanOption("hal", "absolute", options.absolute, `${owner}: absolute`);
}

function originInput(req: BaseUrlRequest, options: BaseUrlOptions): OriginInput {
  return {
    headers: req.headers,
    encrypted: Boolean((req.socket as { encrypted?: boolean } | undefined)?.encrypted),
    trusted: isTrusted(req, options.trustProxy),
    target: req.originalUrl ?? req.url,
    trustProxy: trustFunction(req, options.trustProxy),
  };
}

/**
 * The externally visible base URL: {@link externalOrigin} plus the path prefix a trusted gateway
 * strips (`X-Forwarded-Prefix`), so `https://example.com/api` when the gateway maps `/api/*` to
 * the service. Pass it as `origin` to `pageModel`.
 *
 * @example externalBaseUrl(req) // "https://example.com/api"
 * @see https://www.rfc-editor.org/rfc/rfc7239
 */
export function externalBaseUrl(req: BaseUrlRequest, options: BaseUrlOptions = {}): string {
  checkBaseUrlOptions("externalBaseUrl", options, BASE_URL_OPTIONS);
  const input = originInput(req, options);
  return `${resolveOrigin(input)}${options.forwardedPrefix === false ? "" : resolvePrefix(input)}`;
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
  if (!reference.includes(".") && !/%2e/i.test(reference)) return false;
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
export function hrefFor(req: BaseUrlRequest, path: string, options: HrefOptions = {}): string {
  // RFC 9110 §10.2.2 (Location is a URI-reference), draft-kelly-json-hal-11 §5.1 (an href is a
  // URI): a route parameter in the path is decoded (Express decodes req.params), so what no URI
  // carries is percent-encoded; "?", "#" and percent-encodings stay as given.
  const reference = typeof path === "string" ? uriChars(path, true) : undefined;
  if (reference === undefined || !reference.startsWith("/")) {
    throw optionError("hrefFor", "path", path, 'a path starting with "/"');
  }
  checkBaseUrlOptions("hrefFor", options, HREF_OPTIONS);
  const input = originInput(req, options);
  const prefix = options.forwardedPrefix === false ? "" : resolvePrefix(input);
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
  if (options.absolute === false) return `${prefix}${reference}`;
  return `${resolveOrigin(input)}${prefix}${reference}`;
}
