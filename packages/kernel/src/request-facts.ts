import { type Authority, parseHost } from "./authority.js";
import { exchangeOf } from "./exchange.js";
import {
  checkForwardedHeaders,
  type ForwardedHeaders,
  type TrustHop,
  trustedHops,
  trustedListValue,
} from "./forwarded.js";
import type { RequestView } from "./gate.js";
import { parseParameters, splitList } from "./grammar.js";
import { HttpError } from "./http-error.js";
import { isIP, isIPv4 } from "./ip.js";
import { TRUST_ALL } from "./trust.js";

/** Header values as `node:http` gives them: lower-case names, a list for repeated fields. */
export type FactsHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** What {@link resolveFacts} reads: header strings and connection facts, no request object. */
export interface FactsInput {
  /** Request headers (lower-case names, as node:http gives them). */
  headers: FactsHeaders;
  /** The connection's other end (`socket.remoteAddress`). */
  peer?: string | undefined;
  /** The connection is TLS. */
  encrypted: boolean;
  /**
   * The request-target (`req.originalUrl` or `req.url`): when it is in absolute-form
   * (`http://api.example.com/x`), its authority replaces `Host` (RFC 9112 §3.2.2).
   * @default undefined (`Host` is read)
   */
  target?: string | undefined;
  /** Whether the peer itself may be believed about the client's URL and address. */
  trusted: boolean;
  /**
   * Whether the proxy at `address`, `hop` proxies away from the server, may be believed: lets a
   * chain of trusted proxies name the client in `Forwarded` and the `X-Forwarded-*` lists.
   * @default undefined (only what the trusted peer added is read)
   */
  trustHop?: TrustHop | undefined;
  /**
   * The one family of forwarded fields read behind a trusted peer: `"x-forwarded"`
   * (`X-Forwarded-For`, `-Proto`, `-Host`, `-Prefix`) or `"forwarded"` (RFC 7239 `Forwarded`),
   * the one the proxy in front sets. The other is never read: the proxy passes it through from
   * the client.
   * @default "x-forwarded" (as Express and Fastify read)
   */
  forwardedHeaders?: ForwardedHeaders | undefined;
}

/** The scheme and host a trusted chain forwarded, as read from the one family of fields read. */
export interface ForwardedValues {
  /** The scheme, lower-cased, as forwarded: not necessarily `http` or `https`. */
  readonly proto?: string;
  /** The host (with port) as forwarded, not yet checked. */
  readonly host?: string;
}

/** The field names {@link RequestFacts.vary} lists, in the order a `Vary` names them. */
const FIELD_ORDER = [
  "Forwarded",
  "X-Forwarded-Proto",
  "X-Forwarded-Host",
  "X-Forwarded-Prefix",
  "X-Forwarded-For",
] as const;

type FieldName = (typeof FIELD_ORDER)[number];

/** Each field's bit in {@link Facts}'s record of the fields read. */
const FIELD_BIT: Readonly<Record<FieldName, number>> = {
  Forwarded: 1,
  "X-Forwarded-Proto": 2,
  "X-Forwarded-Host": 4,
  "X-Forwarded-Prefix": 8,
  "X-Forwarded-For": 16,
};

const NONE_READ: readonly string[] = Object.freeze([]);

/** No forwarded scheme nor host: what an untrusted peer's request says. */
const NOT_FORWARDED: ForwardedValues = Object.freeze({});

function header(headers: FactsHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/**
 * What a request says about its client once the proxies in front are taken into account: the
 * client's address, the scheme, host and path prefix it used, and the request fields those were
 * read from. One home for the forwarded fields, so links, `Location`, a WSDL's address and a
 * rate-limit bucket read them the same way and name the same fields in `Vary`.
 *
 * Each fact is read when first asked for, once; a forwarded field that is not valid is a 400
 * `HttpError` thrown by the fact that reads it. Untrusted forwarded fields are never read (RFC
 * 7239 §8.1: a forwarded field is only as trustworthy as the proxy that set it).
 */
export interface RequestFacts {
  /** Whether the peer is trusted, so forwarded fields are read at all. */
  readonly trusted: boolean;
  /**
   * The client's address: the peer, or behind a trusted peer the `X-Forwarded-For` member the
   * trusted chain vouches for (as Express's `req.ip` and proxy-addr read it); with
   * `forwardedHeaders: "forwarded"`, the `for` of the `Forwarded` element it vouches for.
   */
  readonly client: string;
  /**
   * The scheme and host the trusted chain forwarded, from the one family read: the
   * `X-Forwarded-Proto` / `X-Forwarded-Host` value the chain appended, or with
   * `forwardedHeaders: "forwarded"` the RFC 7239 `Forwarded` element the chain added. Empty when
   * the peer is not trusted. A `Forwarded` that cannot be parsed is a 400 `invalid_forwarded`.
   */
  readonly forwarded: ForwardedValues;
  /** `http` or `https`: the forwarded scheme when it is one of them, else the connection's. */
  readonly scheme: "http" | "https";
  /**
   * The authority the client named: the forwarded host, else the absolute-form target's, else
   * `Host`; undefined when there is none (an HTTP/1.0 request may carry no `Host`). One that is
   * not a valid authority (see {@link parseHost}) is a 400 `invalid_host`.
   */
  readonly authority: Authority | undefined;
  /**
   * `scheme://host[:port]`, the default port left out (RFC 3986 §6.2.3). No host is a 400
   * `missing_host`.
   */
  readonly origin: string;
  /**
   * The path prefix a trusted gateway announces in `X-Forwarded-Prefix` (`/api`), without a
   * trailing slash; `""` when absent or not trusted, and with `forwardedHeaders: "forwarded"`
   * (RFC 7239 has no prefix). One that is not a clean absolute path is a 400.
   */
  readonly prefix: string;
  /**
   * RFC 9110 §12.5.5: the request fields, besides the target URI (`Host` is part of it, §7.1),
   * the facts read so far were computed from, present or absent, for the response's `Vary`: a
   * cache must not reuse a response built from `X-Forwarded-Host: a` for a request naming `b`.
   * Only fields of the family read; empty when the peer is not trusted.
   */
  readonly vary: readonly string[];
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

/** One element of a `Forwarded` header, as read. */
type ForwardedElement = { for?: string; proto?: string; host?: string };

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
    // RFC 7239 §4: values are tokens or quoted-strings, which may hold ";" or "," (IPv6 with
    // port): the parameter grammar of RFC 9110 §5.6.6.
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
 * The `Forwarded` element the trusted chain vouches for. RFC 7239 §4: a proxy "can either append
 * it to the last existing Forwarded header field after a comma separator or add a new field at
 * the end of the header block", so the last element is the trusted peer's, and the one before it
 * only counts when the node that added it, named by the `for` of the element after it, is trusted
 * at its hop (as proxy-addr walks `X-Forwarded-For`). Elements a client sent itself come first and
 * are never read unless the operator trusts every hop.
 */
function trustedForwarded(value: string | undefined, trust: TrustHop | undefined): ForwardedElement {
  const elements = forwardedElements(value);
  let i = elements.length - 1;
  if (i < 0) return {};
  for (let hop = 1; i > 0 && trust !== undefined; hop++) {
    const address = nodeAddress(elements[i]?.for);
    if (address === undefined || !trust(address, hop)) break;
    i--;
  }
  return elements[i] ?? {};
}

// RFC 9112 §3.2.2 absolute-form; the scheme is case-insensitive (RFC 3986 §3.1).
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)/i;
// RFC 3986 §3.3: path segments of pchar; no empty segment, so no "//" that would change the authority.
const PREFIX = /^(?:\/[A-Za-z0-9\-._~!$&'()*+,;=:@%]+)+$/;

function invalidHost(): HttpError {
  return HttpError.badRequest("The request's Host header is not a valid host", { code: "invalid_host" });
}

/** A fact as resolved, with the fields its computation read (as {@link FIELD_BIT}s). */
interface Resolved<T> {
  readonly value: T;
  readonly bits: number;
}

/**
 * One request's facts behind one trust and family, each computed once when first asked for and
 * kept with the fields it was computed from: what every {@link RequestFacts} over the same
 * request, trust and family reads, so that a second package asking does not read the fields again.
 * A fact that throws (a 400) is not kept: asking again throws again.
 */
class Resolution {
  readonly trusted: boolean;
  readonly #input: FactsInput;
  /** RFC 7239 `Forwarded` is the family read, not `X-Forwarded-*`. */
  readonly #rfc7239: boolean;
  /** The fields read by the computation in progress: a number, not a Set, on every request. */
  #read = 0;
  #hops: Resolved<number> | undefined;
  #element: Resolved<ForwardedElement> | undefined;
  #forwarded: Resolved<ForwardedValues> | undefined;
  #authority: Resolved<Authority | undefined> | undefined;
  #prefix: Resolved<string> | undefined;
  #client: Resolved<string> | undefined;

  constructor(input: FactsInput) {
    this.#input = input;
    this.trusted = input.trusted;
    this.#rfc7239 = input.forwardedHeaders === "forwarded";
  }

  /**
   * `compute`'s value with the fields it read, the fields of what it reuses included; on a throw,
   * the fields read before it are left in {@link pending} for the asker's `vary`.
   */
  #resolve<T>(compute: () => T): Resolved<T> {
    const outer = this.#read;
    this.#read = 0;
    try {
      const value = compute();
      return { value, bits: this.#read };
    } finally {
      this.pending = this.#read;
      this.#read |= outer;
    }
  }

  /** The fields the last computation read, for an asker whose fact threw. */
  pending = 0;

  #use<T>(resolved: Resolved<T>): T {
    this.#read |= resolved.bits;
    return resolved.value;
  }

  #field(name: FieldName): string | undefined {
    this.#read |= FIELD_BIT[name];
    return header(this.#input.headers, name.toLowerCase());
  }

  /** How many hops before the peer the chain vouches for, from `X-Forwarded-For`, walked once. */
  #walk = (): number => {
    this.#hops ??= this.#resolve(() => trustedHops(this.#field("X-Forwarded-For"), this.#input.trustHop));
    return this.#use(this.#hops);
  };

  /** The `Forwarded` element the trusted chain vouches for, read once. */
  #trustedElement(): ForwardedElement {
    this.#element ??= this.#resolve(() => trustedForwarded(this.#field("Forwarded"), this.#input.trustHop));
    return this.#use(this.#element);
  }

  forwarded(): Resolved<ForwardedValues> {
    this.#forwarded ??= this.#resolve(() => {
      let proto: string | undefined;
      let host: string | undefined;
      // RFC 7239 §8.1: one family, the one the proxy sets. A proxy passes the other through as the
      // client sent it, so filling one family's gaps from the other lets the client name the host.
      if (this.trusted && this.#rfc7239) {
        const element = this.#trustedElement();
        proto = element.proto;
        host = element.host;
      } else if (this.trusted) {
        proto = trustedListValue(this.#field("X-Forwarded-Proto"), this.#walk)?.toLowerCase();
        host = trustedListValue(this.#field("X-Forwarded-Host"), this.#walk);
      }
      return proto === undefined && host === undefined
        ? NOT_FORWARDED
        : Object.freeze({
            ...(proto === undefined ? {} : { proto }),
            ...(host === undefined ? {} : { host }),
          });
    });
    return this.#forwarded;
  }

  scheme(forwarded: ForwardedValues): "http" | "https" {
    const proto = forwarded.proto;
    if (proto === "http" || proto === "https") return proto;
    return this.#input.encrypted ? "https" : "http";
  }

  authority(): Resolved<Authority | undefined> {
    this.#authority ??= this.#resolve(() => {
      const forwardedHost = this.#use(this.forwarded()).host;
      let host = header(this.#input.headers, "host");
      const target = this.#input.target;
      // RFC 9112 §3.2.2: "When an origin server receives a request with an absolute-form of
      // request-target, the origin server MUST ignore the received Host header field (if any) and
      // instead use the host information of the request-target", so a client cannot name one
      // authority in the target and pass an allowlist with another in `Host`.
      const absolute = target === undefined || target.startsWith("/") ? null : ABSOLUTE_FORM.exec(target);
      if (absolute !== null) {
        host = absolute[1] ?? "";
        // RFC 9110 §4.2.1: a recipient of an http URI with an empty host MUST reject it as invalid.
        if (host === "") throw invalidHost();
      }
      if (forwardedHost !== undefined) host = forwardedHost;
      let value: Authority | undefined;
      if (host !== undefined && host !== "") {
        value = parseHost(host);
        if (value === undefined) throw invalidHost();
      }
      return value;
    });
    return this.#authority;
  }

  prefix(): Resolved<string> {
    this.#prefix ??= this.#resolve(() => {
      if (!this.trusted || this.#rfc7239) return "";
      // The value the trusted chain appended, as for X-Forwarded-Host (see trustedListValue).
      const raw = trustedListValue(this.#field("X-Forwarded-Prefix"), this.#walk);
      let prefix = "";
      if (raw !== undefined && raw !== "/") {
        prefix = raw.endsWith("/") ? raw.slice(0, -1) : raw;
        // A dot segment, also percent-encoded: %2E is "." (RFC 3986 §2.3, §6.2.2.2), and the WHATWG
        // URL parser removes "/%2e%2e" as it removes "/..", so such a prefix would climb out of itself.
        if (!PREFIX.test(prefix) || /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i.test(prefix)) {
          throw HttpError.badRequest("The X-Forwarded-Prefix header is not a valid path");
        }
      }
      return prefix;
    });
    return this.#prefix;
  }

  client(): Resolved<string> {
    this.#client ??= this.#resolve(() => {
      const peer = this.#input.peer ?? "";
      let client = peer;
      if (this.trusted && this.#rfc7239) {
        // RFC 7239 §5.2: `for` names the node that made the request to the proxy that added the
        // element; "unknown" and obfuscated identifiers (§6) are kept as given, naming no address.
        const node = this.#trustedElement().for;
        client = (node === undefined ? undefined : (nodeAddress(node) ?? node)) || peer;
      } else if (this.trusted) {
        // proxy-addr's walk: from the peer outwards, the first address not trusted at its hop is
        // the client; when every one is trusted, the first the chain names.
        const list = this.#field("X-Forwarded-For")?.split(",") ?? [];
        const hops = this.#walk();
        client = (list.length === 0 ? peer : list[Math.max(0, list.length - 1 - hops)]?.trim()) || peer;
      }
      return client;
    });
    return this.#client;
  }
}

/**
 * One asker's {@link RequestFacts} over a shared {@link Resolution}: the facts are the shared
 * ones, and `vary` names the fields of the facts this asker read (RFC 9110 §12.5.5: what its
 * response was built from, not what another package's was).
 */
class Facts implements RequestFacts {
  readonly #resolution: Resolution;
  /** The fields the facts read through this object were computed from, as {@link FIELD_BIT}s. */
  #read = 0;

  constructor(resolution: Resolution) {
    this.#resolution = resolution;
  }

  get trusted(): boolean {
    return this.#resolution.trusted;
  }

  #take<T>(resolve: () => Resolved<T>): T {
    let resolved: Resolved<T>;
    try {
      resolved = resolve();
    } catch (err) {
      this.#read |= this.#resolution.pending;
      throw err;
    }
    this.#read |= resolved.bits;
    return resolved.value;
  }

  get forwarded(): ForwardedValues {
    return this.#take(() => this.#resolution.forwarded());
  }

  get scheme(): "http" | "https" {
    return this.#resolution.scheme(this.forwarded);
  }

  get authority(): Authority | undefined {
    return this.#take(() => this.#resolution.authority());
  }

  get origin(): string {
    const authority = this.authority;
    if (authority === undefined) {
      throw HttpError.badRequest("The request has no Host header", { code: "missing_host" });
    }
    const scheme = this.scheme;
    const { port } = authority;
    // RFC 3986 §6.2.3: the default port is left out of the normal form.
    const defaultPort = scheme === "https" ? 443 : 80;
    return `${scheme}://${authority.host}${port === undefined || port === defaultPort ? "" : `:${port}`}`;
  }

  get prefix(): string {
    return this.#take(() => this.#resolution.prefix());
  }

  get client(): string {
    return this.#take(() => this.#resolution.client());
  }

  get vary(): readonly string[] {
    const read = this.#read;
    return read === 0 ? NONE_READ : FIELD_ORDER.filter((name) => (read & FIELD_BIT[name]) !== 0);
  }
}

/**
 * The framework-free core of {@link requestFacts}: the facts of one request, from its header
 * values and connection, with the trust already decided.
 *
 * @example resolveFacts({ headers: { host: "api.example.com" }, encrypted: true, trusted: false }).origin // "https://api.example.com"
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-5.3
 */
export function resolveFacts(input: FactsInput): RequestFacts {
  return new Facts(new Resolution(input));
}

/**
 * The facts of one request ({@link RequestFacts}): client address, scheme, host and path prefix,
 * behind the proxies `trust` believes, and the fields they were read from for `Vary`.
 *
 * `trust`: `false` (no forwarded field is read), `true` (every hop: right only when nothing but
 * the proxy can reach the server), or a function of a proxy's address and hop (0 for the peer;
 * `compileTrust` makes one from Express's `trust proxy` forms). Undefined falls back to the
 * framework's trust the request's exchange holds (Express's `trust proxy` setting, which
 * `expressView(req)` of `@svc/kernel/express` records; Fastify's `trustProxy` server option, which
 * `fastifyView(request)` of `@svc/kernel/fastify` records), and to `false` without one.
 *
 * `forwardedHeaders`: the one family of forwarded fields read, the one the proxy in front sets:
 * `"x-forwarded"` (the default, as Express and Fastify read) or `"forwarded"` (RFC 7239). Any
 * other value is a `TypeError` with `code` `ERR_SVC_KERNEL_FORWARDED_HEADERS`.
 *
 * The facts are resolved once per request, trust and family, and kept in the request's exchange
 * (`exchangeOf(req)`): the limiter, the links, the host check and the SOAP address asking the same
 * question read the fields once. So a field changed on the request after the first asker is not
 * seen. Each call's `vary` names the fields of the facts read through it.
 *
 * @example
 * const facts = requestFacts(req, compileTrust("loopback"));
 * const self = `${facts.origin}${facts.prefix}/employees/7`;
 * appendVary(res, ...facts.vary);
 * @see https://www.rfc-editor.org/rfc/rfc7239
 */
export function requestFacts(
  req: RequestView,
  trust?: boolean | TrustHop,
  forwardedHeaders?: ForwardedHeaders,
): RequestFacts {
  const family =
    forwardedHeaders === undefined || forwardedHeaders === "x-forwarded"
      ? undefined
      : checkForwardedHeaders(forwardedHeaders);
  const exchange = exchangeOf(req);
  let hop: TrustHop | undefined;
  if (trust === true) hop = TRUST_ALL;
  else if (typeof trust === "function") hop = trust;
  else if (trust === undefined) {
    const recorded = exchange.trust;
    if (recorded !== undefined && recorded !== false) hop = recorded;
  }
  const { headers, socket } = req;
  const target = req.originalUrl ?? req.url;
  for (const entry of exchange.facts) {
    if (
      entry.headers === headers &&
      entry.socket === socket &&
      entry.target === target &&
      entry.hop === hop &&
      entry.family === family
    )
      return new Facts(entry.resolution as Resolution);
  }
  const peer = socket?.remoteAddress ?? "";
  const resolution = new Resolution({
    headers,
    peer,
    encrypted: socket?.encrypted === true,
    target,
    trusted: hop !== undefined && Boolean(hop(peer, 0)),
    trustHop: hop,
    forwardedHeaders: family,
  });
  exchange.facts.push({ headers, socket, target, hop, family, resolution });
  return new Facts(resolution);
}
