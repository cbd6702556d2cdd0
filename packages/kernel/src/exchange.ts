import { HttpError } from "./http-error.js";

/** Who made a request, as the packages after authentication need it: a stable identifier. */
export interface Principal {
  /** The subject (a JWT `sub`, a user name): stable, and unique among the application's callers. */
  readonly id: string;
}

/** What an authentication step established about a request. */
export interface Authentication {
  /**
   * Who made the request; `undefined` when the step let it through without credentials (an
   * anonymous request).
   */
  readonly principal: Principal | undefined;
}

/**
 * What one request's steps established for the steps after them, the same on every framework:
 * `@svc/auth` records who made the request, and the limiter's and the `Idempotency-Key` step's
 * defaults read it. One per request, kept by the request's own object ({@link exchangeOf}).
 */
export interface Exchange {
  /** What an authentication step established; `undefined` until one has run. */
  authentication: Authentication | undefined;
}

const exchanges = new WeakMap<object, Exchange>();

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
 * The exchange of `request`, made on first use: `req` on Express and `node:http`, Fastify's
 * `request` (or `request.raw`), a Fetch `Request` (or Hono's `c.req`).
 *
 * @example exchangeOf(req).authentication?.principal?.id
 */
export function exchangeOf(request: object): Exchange {
  const key = carrier(request);
  let exchange = exchanges.get(key);
  if (exchange === undefined) {
    exchange = { authentication: undefined };
    exchanges.set(key, exchange);
  }
  return exchange;
}

/**
 * Records who made `request` (`undefined`: nobody, an anonymous request let through), for the
 * steps after authentication (the principal as given: `@svc/auth` records its own `Principal`): `@svc/auth` does it on every framework; an application that
 * authenticates with its own code does it too, so that the rate limit and the `Idempotency-Key`
 * step key by its principal.
 *
 * @example
 * const user = await sessions.userOf(request);
 * recordAuthentication(request, user === undefined ? undefined : { id: user.id });
 */
export function recordAuthentication(request: object, principal: Principal | undefined): void {
  exchangeOf(request).authentication = { principal };
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
 * recordAuthentication}), else a `principal` an application's own middleware left on Express's
 * `req` or Fastify's `request`, else `undefined` for a request without credentials.
 *
 * A request that carries credentials (`Authorization`) when no authentication step has recorded
 * anything cannot be told apart from any other caller's: rather than count or store it with
 * everyone else's, this throws a 500 `HttpError` (code `unauthenticated_credentials`) whose
 * message, logged and never sent, says what to change. RFC 9110 §11.6.2: the credentials are
 * the request's claim of who sent it.
 *
 * @internal For the @svc packages' defaults; it reads the exchanges this entry keeps.
 * @param step - who asks, for the message (`"rate limit"`, `"idempotency"`).
 * @param fix - what to do instead, for the message.
 */
export function principalFor(request: object, step: string, fix: string): Principal | undefined {
  const recorded = exchanges.get(carrier(request))?.authentication;
  if (recorded !== undefined) return recorded.principal;
  const own = (request as { principal?: unknown }).principal;
  if (typeof own === "object" && own !== null) {
    const id = (own as { id?: unknown }).id;
    if (typeof id === "string" && id !== "") return own as Principal;
  }
  if (!carriesCredentials(request)) return undefined;
  throw new HttpError(
    500,
    `${step}: the request carries credentials (Authorization) but no authentication step recorded who sent it, so its caller cannot be told from any other; ${fix}`,
    { code: "unauthenticated_credentials" },
  );
}
