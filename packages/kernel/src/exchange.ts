import { digest } from "./digest.js";
import type { ForwardedHeaders, TrustHop } from "./forwarded.js";
import type { Passage, RequestView } from "./gate.js";
import { HttpError } from "./http-error.js";
import type { VersionDecision } from "./steps.js";

/**
 * Who made a request, as the packages after authentication need it: a stable identifier, and the
 * issuer that vouches for it when there is one. Compare principals, and key anything by one, with
 * {@link principalKey}: two issuers' `alice` are two users.
 */
export interface Principal {
  /**
   * The subject (a JWT `sub`, a user name): stable, and unique among the callers of its
   * {@link Principal.issuer} (of the application, without one).
   */
  readonly id: string;
  /**
   * Who vouches for `id`: a verified token's `iss`; `undefined` for an identity the application
   * keeps itself (Basic, SOAP credentials, its own sessions).
   * @see https://openid.net/specs/openid-connect-core-1_0.html#ClaimStability `iss` and `sub` together identify a user.
   */
  readonly issuer?: string | undefined;
}

/** The longest subject a key carries as written; a longer one is carried as its digest. */
const KEY_ID_MAX = 128;
/** The longest issuer (percent-encoded) a key carries as written; a longer one is carried as its digest. */
const KEY_ISSUER_MAX = 256;

/**
 * The issuer read last and its part of a key: a service trusts a few issuers, and its requests
 * name the same one again and again, so the encoding is made once, not per request.
 */
let lastIssuer: string | undefined;
let lastIssuerPart = "";

function issuerPart(issuer: string): string {
  if (issuer === lastIssuer) return lastIssuerPart;
  const encoded = encodeURIComponent(issuer);
  const part = `@${encoded.length > KEY_ISSUER_MAX ? `$${digest("sha256", issuer, "base64url")}` : encoded} `;
  lastIssuer = issuer;
  lastIssuerPart = part;
  return part;
}

/**
 * The one key of a principal, for everything kept per principal (the limiter's default key, the
 * `Idempotency-Key` scope, an application's owner column) and for comparing two principals: two
 * principals have the same key exactly when they have the same issuer and the same id.
 *
 * - without an issuer, the id as it is (`alice`), so an application's own users keep the key
 *   they always had; an id that starts with `@` or `#` gets one `@` more in front;
 * - with an issuer, `@` and the issuer percent-encoded, a space, then the id
 *   (`@https%3A%2F%2Fa.example%2F alice`): the issuer's encoding has no space and no `@`, so no
 *   issuer's subject meets another's, nor an application's own user;
 * - an id longer than 128 characters, or one that starts with `#`, is carried as `#` and the
 *   base64url SHA-256 of the id, and an issuer longer than 256 once encoded as `$` and its
 *   digest (`$` is one of the characters the encoding never leaves), so a key stays short
 *   whatever a token's issuer put in `sub` or `iss`.
 *
 * @example principalKey({ id: "alice", issuer: "https://a.example/" }) // "@https%3A%2F%2Fa.example%2F alice"
 * @example if (principalKey(order.owner) !== principalKey(principal)) throw HttpError.forbidden();
 * @see https://openid.net/specs/openid-connect-core-1_0.html#ClaimStability `sub` is unique only within its issuer.
 */
export function principalKey(principal: Principal): string {
  const id = principal.id;
  const issuer = principal.issuer;
  const bounded = id.length > KEY_ID_MAX || id.startsWith("#") ? `#${digest("sha256", id, "base64url")}` : id;
  if (issuer === undefined) return id.startsWith("@") || bounded !== id ? `@${bounded}` : id;
  return `${issuerPart(issuer)}${bounded}`;
}

/**
 * How the framework's router compares paths, as its adapter recorded it: Express's `case sensitive
 * routing` and `strict routing` settings (both off by default), Fastify's `caseSensitive` and
 * `ignoreTrailingSlash`.
 */
export interface RoutingRules {
  /** Whether `/Orders` and `/orders` are different routes. */
  readonly caseSensitive: boolean;
  /** Whether `/orders/` and `/orders` are different routes. */
  readonly strict: boolean;
}

/**
 * The protection space an authentication step checked a request in (RFC 9110 §11.5), for the
 * authorization steps after it: a 401 names it in its challenges, a 403 for a Bearer token in its
 * `insufficient_scope` challenge (RFC 6750 §3.1).
 */
export interface AuthenticationRealm {
  /** The realm named in every challenge. */
  readonly realm: string;
  /** The `WWW-Authenticate` value a 401 for missing credentials sends, one challenge per scheme. */
  readonly challenges: string;
}

/** What an authentication step established about a request. */
export interface Authentication {
  /**
   * Who made the request; `undefined` when the step let it through without credentials (an
   * anonymous request).
   */
  readonly principal: Principal | undefined;
  /**
   * The realm the step checked the request in, with its challenges, when the step has one
   * (`@svc/auth` records its own); `undefined` for a principal the application recorded without
   * one, so a guard has no challenge to answer a missing principal with.
   */
  readonly realm?: AuthenticationRealm | undefined;
}

/** Every decision message: the request it is about, and what was decided. */
export interface DecisionMessage {
  /**
   * The request, as the framework gave it (Express's `req`, Fastify's `request`, a Fetch
   * `Request`): what `exchangeOf` takes. Absent for what concerns no one request (a store's
   * outage and recovery, a key set's refresh).
   */
  readonly request?: object | undefined;
  /** What was decided, one word per package's list (`limited`, `refused`, `replayed`). */
  readonly decision: string;
}

/** One decision published about a request: the channel it went out on, and its message. */
export interface RecordedDecision {
  /** The channel's name (`svc:ratelimit`). */
  readonly channel: string;
  /** The message as published, a member of the package's union. */
  readonly message: DecisionMessage;
}

/**
 * The most decisions one request's exchange keeps ({@link Exchange.decisions}); later ones are
 * still published, not kept: no request can grow its exchange without bound.
 */
export const MAX_RECORDED_DECISIONS = 32;

/** A body parser's result, recorded for the steps after it (`@svc/negotiate` records one). */
export interface ParsedBody {
  /** The content as parsed: a JSON value, a string, bytes; `undefined` for a request without content. */
  readonly value: unknown;
}

/**
 * One limiter's decision on a request, as `@svc/ratelimit` records the tightest of them for what
 * follows (a route that shows the remaining quota, a log line).
 */
export interface RateLimitState {
  /** The policy's name, as in the `RateLimit` field. */
  readonly policy: string;
  /** The quota of the window. */
  readonly limit: number;
  /** Units left in the window, after this request. */
  readonly remaining: number;
  /** When the full quota is back. */
  readonly resetTime: Date;
  /** The bucket the request counted in (`u:<principal>`, `ip:<address>` or the application's key). */
  readonly key: string;
}

/**
 * What one request's steps established for the steps after them, the same on every framework.
 * One per request, kept by the request's own object ({@link exchangeOf}); each slot is filled
 * by the step named and read by those after it, never through a property of the framework's
 * request:
 * - `view`: the request as the cores read it ({@link RequestView}), recorded by its adapter's
 *   view function (`nodeView`, `expressView`, `fastifyView`, `fetchView`), once;
 * - `facts`: what `requestFacts` resolved for the request, by trust and forwarded family, so
 *   that the packages asking the same question read the fields once;
 * - `authentication`: `@svc/auth` (or the application, {@link recordAuthentication}); read by the
 *   limiter's and the `Idempotency-Key` step's defaults and by the SOAP credentials hook;
 * - `trust`: the proxies the framework the request arrived on believes (Express's `trust proxy`,
 *   Fastify's `trustProxy` compiled with Express's meaning), recorded by its adapter's view
 *   (`expressView`, `fastifyView`); read by `requestFacts` when a package is given no trust of
 *   its own;
 * - `routing`: how the framework's router compares paths, recorded by the same views; read by
 *   the versioning step and the `Idempotency-Key` scope;
 * - `version`: the pipeline's versioning decision (`prepare`, on every adapter); read by
 *   `versioned()` and `versionedPath()` of `@svc/versioning`;
 * - `body`: the body parser's result (`@svc/negotiate`); read by the idempotency fingerprint;
 * - `rateLimit`: the tightest limiter decision (`@svc/ratelimit`);
 * - `routeTemplate`: the matched route's template, where an adapter records it (`routeOf` reads it);
 * - `idempotencyScope`: the scope the request's `Idempotency-Key` was looked up in;
 * - `decisions`: every decision published about the request while its package's channel had a
 *   subscriber (`publishDecision`), in order, at most {@link MAX_RECORDED_DECISIONS}: what an
 *   access line or a test reads at the end of the request, without a second subscriber;
 * - `passages`: the response fields gates added (`RateLimit`, `Deprecation`), for an adapter
 *   whose request has no response in front to set them on (the Fetch API's `Request`);
 * - `preparedBy`, `prepared`: the pipeline that prepared the request before routing and its
 *   decision, for the route's handler of the same pipeline (`expressAdapter`);
 * - `heldVary`: the `Vary` names the gates of an Express `chain` added, held until the chain
 *   passes the request on or one of them answers, then set in one field.
 */
export interface Exchange {
  /** The request as the cores read it, once its adapter's view function has run. */
  view: RequestView | undefined;
  /**
   * What `requestFacts` resolved for the request, one entry per view, trust and forwarded family.
   * @internal Read and filled by `requestFacts` only.
   */
  readonly facts: FactsEntry[];
  /** What an authentication step established; `undefined` until one has run. */
  authentication: Authentication | undefined;
  /** The framework's own trust of proxies, if its adapter recorded one (`false`: none trusted). */
  trust: TrustHop | false | undefined;
  /** How the framework's router compares paths, if its adapter recorded it. */
  routing: RoutingRules | undefined;
  /** The versioning decision, once the pipeline's `prepare` has run with a versioning step. */
  version: VersionDecision | undefined;
  /** The parsed request content, once a body parser of the packages has read it. */
  body: ParsedBody | undefined;
  /** The tightest limiter decision, once a limiter has counted the request. */
  rateLimit: RateLimitState | undefined;
  /**
   * The template of the route the request was matched to, where an adapter recorded it
   * (`recordRouteTemplate`); read by `routeOf`, which reads Express's and Fastify's own without it.
   */
  routeTemplate: string | undefined;
  /** The scope the request's `Idempotency-Key` belongs to, once that step has looked it up. */
  idempotencyScope: string | undefined;
  /**
   * The decisions published about the request, in order, while their channels had a subscriber
   * (a package builds no message otherwise): at most {@link MAX_RECORDED_DECISIONS}.
   */
  readonly decisions: readonly RecordedDecision[];
  /** Response fields gates added, in order, for every response to the request (errors included). */
  readonly passages: Passage[];
  /**
   * The pipeline that prepared the request first (`prepare` of an adapter), and what it decided.
   * @internal Read and filled by the kernel's adapters only.
   */
  preparedBy: object | undefined;
  /** @internal What {@link Exchange.preparedBy} decided (a `Prepared`). */
  prepared: unknown;
  /**
   * The `Vary` value the gates of a `chain` added while it holds their names (`""`: none yet);
   * `undefined` when nothing holds them (they go on the response at once).
   * @internal Read and filled by the kernel's `chain`, `setPassage` and `writeResponse` only.
   */
  heldVary: string | undefined;
}

/**
 * The exchanges, by request: a private field of the request object, as `requestSlot` keeps
 * its values (under a symbol of its own, in a `WeakMap` for an object that takes no new property).
 * One per process: the package's ES module re-exports its CommonJS build rather than being a copy
 * of it (tsup.config.ts), so a step recording through `import` and one reading through `require`
 * share it. Kept by code of its own rather than by a `requestSlot`: V8 keeps one record of the
 * shapes seen per place in the code, and the slots' shared `set` sees every slot's owners
 * (requests, responses, exchanges), so adding the exchange, once a request, went through V8's
 * runtime; here it sees requests alone.
 */
const EXCHANGE = Symbol("@svc/kernel exchange");
type Carrying = { [EXCHANGE]?: Exchange | undefined };
const sealedExchanges = new WeakMap<object, Exchange>();
let anySealed = false;

function storedExchange(key: object): Exchange | undefined {
  const own = (key as Carrying)[EXCHANGE];
  return own !== undefined || !anySealed ? own : sealedExchanges.get(key);
}

function storeExchange(key: object, exchange: Exchange): void {
  if (Object.isExtensible(key)) (key as Carrying)[EXCHANGE] = exchange;
  else {
    anySealed = true;
    sealedExchanges.set(key, exchange);
  }
}

/**
 * The object a request's exchange is kept by: the `node:http` request (Express's `req` is one;
 * Fastify's `request.raw`) or the Fetch `Request` (Hono's `c.req.raw`). A framework's wrapper that
 * holds one as `raw` (Fastify's `request`, Hono's `c.req`) stands for it.
 */
function carrier(request: object): object {
  const raw = (request as { raw?: unknown }).raw;
  return typeof raw === "object" && raw !== null ? raw : request;
}

/**
 * One request's exchange. `passages` is made on first read, `decisions` on the first one kept: only a gate on an adapter without a
 * response in front (the Fetch API's) records one, and an array made for every request and never
 * filled is garbage the collector pays for on every request.
 */
class RequestExchange implements Exchange {
  authentication: Authentication | undefined = undefined;
  trust: TrustHop | false | undefined = undefined;
  routing: RoutingRules | undefined = undefined;
  version: VersionDecision | undefined = undefined;
  body: ParsedBody | undefined = undefined;
  rateLimit: RateLimitState | undefined = undefined;
  routeTemplate: string | undefined = undefined;
  idempotencyScope: string | undefined = undefined;
  view: RequestView | undefined = undefined;
  preparedBy: object | undefined = undefined;
  prepared: unknown = undefined;
  heldVary: string | undefined = undefined;
  readonly facts: FactsEntry[] = [];
  #passages: Passage[] | undefined = undefined;
  #decisions: RecordedDecision[] | undefined = undefined;

  get passages(): Passage[] {
    this.#passages ??= [];
    return this.#passages;
  }

  get decisions(): readonly RecordedDecision[] {
    return this.#decisions ?? NO_DECISIONS;
  }

  /** Keeps one published decision, unless the exchange holds its bound already. */
  record(decision: RecordedDecision): void {
    if (this.#decisions === undefined) this.#decisions = [decision];
    else if (this.#decisions.length < MAX_RECORDED_DECISIONS) this.#decisions.push(decision);
  }
}

const NO_DECISIONS: readonly RecordedDecision[] = Object.freeze([]);

/**
 * The request that carries its own exchange (no `raw` in front of it) read last, and its exchange:
 * every step of a request asks for it in turn, and the check is one comparison where `carrier`
 * reads a `raw` that a `node:http` request does not have (a look-up through its prototypes). It
 * holds one request until another is read.
 */
let lastCarrier: object | undefined;
let lastExchange: Exchange | undefined;

/**
 * The exchange of `request`, made on first use: `req` on Express and `node:http`, Fastify's
 * `request` (or `request.raw`), a Fetch `Request` (or Hono's `c.req`).
 *
 * @example exchangeOf(req).authentication?.principal?.id
 */
export function exchangeOf(request: object): Exchange {
  if (request === lastCarrier) return lastExchange as Exchange;
  const key = carrier(request);
  let exchange = storedExchange(key);
  if (exchange === undefined) {
    exchange = new RequestExchange();
    storeExchange(key, exchange);
  }
  if (key === request) {
    lastCarrier = key;
    lastExchange = exchange;
  }
  return exchange;
}

/**
 * The exchange of `request` if a step has made one, without making one: for the hot paths that
 * only read a slot.
 *
 * @internal For the @svc packages' adapters; it reads the exchanges this entry keeps.
 */
export function exchangeIfAny(request: object): Exchange | undefined {
  if (request === lastCarrier) return lastExchange;
  return storedExchange(carrier(request));
}

/**
 * Keeps `message`, published on `channel`, in its request's exchange ({@link Exchange.decisions}),
 * when the request has one (every request an adapter or a step has seen): an object no step has
 * seen is left as it was given, with no exchange added to it.
 *
 * @internal For `publishDecision`, the one place a decision is published.
 */
export function recordDecision(channel: string, message: DecisionMessage): void {
  const request = message.request;
  if (request === undefined) return;
  const exchange = exchangeIfAny(request);
  if (exchange instanceof RequestExchange) exchange.record({ channel, message });
}

/**
 * Records who made `request` (`undefined`: nobody, an anonymous request let through), for the
 * steps after authentication (the principal as given: `@svc/auth` records its own `Principal`,
 * and the `realm` its guards challenge in): `@svc/auth` does it on every framework; an application that
 * authenticates with its own code does it too, so that the rate limit and the `Idempotency-Key`
 * step key by its principal.
 *
 * @example
 * const user = await sessions.userOf(request);
 * recordAuthentication(request, user === undefined ? undefined : { id: user.id });
 */
export function recordAuthentication(
  request: object,
  principal: Principal | undefined,
  realm?: AuthenticationRealm,
): void {
  exchangeOf(request).authentication = realm === undefined ? { principal } : { principal, realm };
}

/**
 * Whether `request` carries credentials: an `Authorization` field (RFC 9110 §11.6.2), in a
 * `node:http` fields object or a Fetch `Headers`.
 */
function carriesCredentials(request: object): boolean {
  const headers = (carrier(request) as { headers?: unknown }).headers;
  if (typeof headers !== "object" || headers === null) return false;
  if (typeof (headers as Headers).get === "function")
    return (headers as Headers).get("authorization") !== null;
  return (headers as Record<string, unknown>).authorization !== undefined;
}

/**
 * Who made `request`, for a default that keys by principal (the limiter's key, the
 * `Idempotency-Key` scope): the principal an authentication step recorded ({@link
 * recordAuthentication}), else `undefined` for a request without credentials.
 *
 * A request that carries credentials (`Authorization`), or a `principal` an application's own
 * middleware left on Express's `req` or Fastify's `request`, when no authentication step has
 * recorded anything cannot be told apart from any other caller's: rather than count or store it
 * with everyone else's, or trust an untyped property no step vouched for, this throws a 500
 * `HttpError` (code `unauthenticated_credentials`) whose message, logged and never sent, says what
 * to change. RFC 9110 §11.6.2: the credentials are the request's claim of who sent it.
 *
 * @internal For the @svc packages' defaults; it reads the exchanges this entry keeps.
 * @param step - who asks, for the message (`"rate limit"`, `"idempotency"`).
 * @param fix - what to do instead, for the message.
 */
export function principalFor(request: object, step: string, fix: string): Principal | undefined {
  const recorded = exchangeIfAny(request)?.authentication;
  if (recorded !== undefined) return recorded.principal;
  const own = (request as { principal?: unknown }).principal;
  if (typeof own === "object" && own !== null)
    throw new HttpError(
      500,
      `${step}: the request has a \`principal\` property but no authentication step recorded who sent it; record it with recordAuthentication(req, principal) of @svc/kernel where your middleware sets it`,
      { code: "unauthenticated_credentials" },
    );
  if (!carriesCredentials(request)) return undefined;
  throw new HttpError(
    500,
    `${step}: the request carries credentials (Authorization) but no authentication step recorded who sent it, so its caller cannot be told from any other; ${fix}`,
    { code: "unauthenticated_credentials" },
  );
}

/**
 * A request's facts behind one trust and family, resolved once and kept in its exchange
 * (`Exchange.facts`), for the views over the same fields and connection.
 *
 * @internal The exchange keeps them for `requestFacts`; nothing else reads them.
 */
export interface FactsEntry {
  readonly headers: object;
  readonly socket: object | null | undefined;
  readonly target: string | undefined;
  readonly hop: TrustHop | undefined;
  readonly family: ForwardedHeaders | undefined;
  readonly resolution: object;
}
