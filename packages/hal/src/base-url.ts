import type { IncomingMessage } from "node:http";
import { isIPv6 } from "node:net";
import { HttpError, parseParameters, splitList } from "@svc/errors";

/** The parts of an Express (or plain `node:http`) request the base URL is built from. */
export interface BaseUrlRequest extends IncomingMessage {
  /** Express's app, read for its `trust proxy fn` setting. */
  app?: { get(setting: string): unknown };
}

/** Decides whether the peer at `address`, `hop` proxies away from the server, may be believed. */
export type TrustProxy = (address: string, hop: number) => boolean;

/** Options of {@link externalOrigin} and {@link hrefFor}. */
export interface BaseUrlOptions {
  /**
   * Whether forwarded headers from the peer may be believed. `true` trusts every peer, which is
   * right only when the server cannot be reached except through the proxy.
   * @default the Express app's `trust proxy` setting (`req.app.get("trust proxy fn")`), else false
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
}

// RFC 1035 §2.3.1 / RFC 1123 §2.1: letters, digits and hyphens, 1 to 63 characters a label.
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
// RFC 1035 §2.3.4: 255 octets on the wire, 253 characters as text without the root's dot.
const MAX_NAME = 253;
// The longest valid authority: a bracketed IPv6 literal or a 253-character name with its root
// dot, then ":65535". Longer input is refused before any other work is done on it.
const MAX_AUTHORITY = MAX_NAME + 1 + 6;

/**
 * Splits and checks a `Host` (or forwarded host) value: RFC 9110 §7.2 `uri-host [ ":" port ]`,
 * where RFC 3986 §3.2.2 `host` is an IP-literal (IPv6 only here; RFC 3986 IPvFuture and
 * RFC 6874 zone identifiers are refused) or a reg-name held to DNS syntax, labels of at most 63
 * characters and a name of at most 253 (RFC 1035 §2.3.4), and §3.2.3 `port` is 1 to 65535.
 * Returns the lower-cased host and the port, or undefined when the value is not a valid authority.
 */
export function parseHost(value: string): { host: string; port: number | undefined } | undefined {
  if (value.length === 0 || value.length > MAX_AUTHORITY) return undefined;
  let host: string;
  let rest: string;
  if (value.startsWith("[")) {
    const close = value.indexOf("]");
    if (close === -1) return undefined;
    host = value.slice(0, close + 1);
    rest = value.slice(close + 1);
    const address = host.slice(1, -1);
    // Hex digits, colons and dots only: no RFC 6874 zone ("%25eth0"), which isIPv6 would take.
    if (!/^[0-9A-Fa-f:.]+$/.test(address) || !isIPv6(address)) return undefined;
  } else {
    const colon = value.lastIndexOf(":");
    host = colon === -1 ? value : value.slice(0, colon);
    rest = colon === -1 ? "" : value.slice(colon);
    const name = host.endsWith(".") ? host.slice(0, -1) : host;
    if (name.length === 0 || name.length > MAX_NAME) return undefined;
    for (const label of name.split(".")) if (!LABEL.test(label)) return undefined;
  }
  let port: number | undefined;
  if (rest !== "") {
    if (!/^:\d{1,5}$/.test(rest)) return undefined;
    port = Number(rest.slice(1));
    if (port < 1 || port > 65_535) return undefined;
  }
  return { host: host.toLowerCase(), port };
}

function header(headers: OriginInput["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

function firstListValue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const first = value.split(",")[0]?.trim();
  return first ? first : undefined;
}

/**
 * Reads `proto` and `host` from the first element of an RFC 7239 `Forwarded` header: the one the
 * proxy nearest the client added, which saw the URL the client used.
 */
export function parseForwarded(value: string | undefined): { proto?: string; host?: string } {
  if (!value) return {};
  const out: { proto?: string; host?: string } = {};
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

/**
 * The origin (`scheme://host[:port]`) the client used, as a pure function of the request's
 * headers. When the proxy is trusted, RFC 7239 `Forwarded` wins over `X-Forwarded-Proto` /
 * `X-Forwarded-Host` (the de facto headers Express reads), which win over the connection itself;
 * untrusted forwarded headers are ignored, so a client cannot make the service emit links to a host
 * of its choosing (RFC 7239 §8.1: a forwarded header is only as trustworthy as the proxy that set it).
 *
 * A `Host` that is not a valid host name (see {@link parseHost}: DNS label and name lengths, a port
 * from 1 to 65535, an IPv6 literal that parses) is a 400, never a link or a document built from it.
 *
 * @example resolveOrigin({ headers: { host: "api.example.com" }, encrypted: true, trusted: false }) // "https://api.example.com"
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-5.3
 */
export function resolveOrigin(input: OriginInput): string {
  let proto = input.encrypted ? "https" : "http";
  let host = header(input.headers, "host");
  if (input.trusted) {
    const forwarded = parseForwarded(header(input.headers, "forwarded"));
    const xProto = firstListValue(header(input.headers, "x-forwarded-proto"))?.toLowerCase();
    const xHost = firstListValue(header(input.headers, "x-forwarded-host"));
    const fProto = forwarded.proto ?? xProto;
    if (fProto === "http" || fProto === "https") proto = fProto;
    host = forwarded.host ?? xHost ?? host;
  }
  if (host === undefined || host === "")
    throw HttpError.badRequest("The request has no Host header", { code: "missing_host" });
  const authority = parseHost(host);
  if (authority === undefined) {
    throw HttpError.badRequest("The request's Host header is not a valid host", { code: "invalid_host" });
  }
  const { port } = authority;
  // RFC 3986 §6.2.3: the default port is left out of the normal form.
  const defaultPort = proto === "https" ? 443 : 80;
  return `${proto}://${authority.host}${port === undefined || port === defaultPort ? "" : `:${port}`}`;
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
  const raw = firstListValue(header(input.headers, "x-forwarded-prefix"));
  if (raw === undefined || raw === "/") return "";
  const prefix = raw.endsWith("/") ? raw.slice(0, -1) : raw;
  if (!PREFIX.test(prefix) || /(?:^|\/)\.{1,2}(?:\/|$)/.test(prefix)) {
    throw HttpError.badRequest("The X-Forwarded-Prefix header is not a valid path");
  }
  return prefix;
}

function isTrusted(req: BaseUrlRequest, option: BaseUrlOptions["trustProxy"]): boolean {
  const address = req.socket?.remoteAddress ?? "";
  if (typeof option === "boolean") return option;
  if (typeof option === "function") return option(address, 0);
  const fromApp = req.app?.get("trust proxy fn");
  return typeof fromApp === "function" ? Boolean((fromApp as TrustProxy)(address, 0)) : false;
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
  return resolveOrigin(originInput(req, options));
}

function originInput(req: BaseUrlRequest, options: BaseUrlOptions): OriginInput {
  return {
    headers: req.headers,
    encrypted: Boolean((req.socket as { encrypted?: boolean } | undefined)?.encrypted),
    trusted: isTrusted(req, options.trustProxy),
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
  const input = originInput(req, options);
  return `${resolveOrigin(input)}${options.forwardedPrefix === false ? "" : resolvePrefix(input)}`;
}

/**
 * The href for a path of this service: absolute from the external base URL (the default), or the
 * path (behind any trusted `X-Forwarded-Prefix`) with `absolute: false`. Use it for `_links` and
 * for `Location`.
 *
 * @example res.location(hrefFor(req, `/employees/${id}`)).status(201).json(employee);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.2
 */
export function hrefFor(req: BaseUrlRequest, path: string, options: HrefOptions = {}): string {
  if (typeof path !== "string" || !path.startsWith("/") || path.startsWith("//")) {
    throw new TypeError(`hrefFor: path must start with a single "/", got ${String(path)}`);
  }
  const input = originInput(req, options);
  const prefix = options.forwardedPrefix === false ? "" : resolvePrefix(input);
  if (options.absolute === false) return `${prefix}${path}`;
  return `${resolveOrigin(input)}${prefix}${path}`;
}
