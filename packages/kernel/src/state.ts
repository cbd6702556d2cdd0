import {
  exchangeIfAny,
  type Principal,
  principalKey,
  type RateLimitState,
  type RoutingRules,
} from "./exchange.js";
import { type RouteRecord, routeOf } from "./route.js";
import type { ApiVersion } from "./steps.js";

/**
 * The version a request was refused for naming: one word, whatever the client spelled, so a
 * spelling never reaches a label or a key through it.
 */
export const UNSUPPORTED_VERSION = "unsupported";

/**
 * What the @svc packages decided about one request, for its handler, on every framework: read
 * through {@link requestState}, never through properties of the framework's request.
 */
export interface RequestState {
  /** Who made the request, as the authentication step recorded it; `undefined` when anonymous or unauthenticated. */
  readonly principal: Principal | undefined;
  /**
   * The principal's one key ({@link principalKey}: its id, qualified by its issuer when it has
   * one): what to compare owners by and key anything per principal with.
   */
  readonly principalKey: string | undefined;
  /**
   * The API version the versioning step chose; `"unsupported"` when the request named one the API
   * does not have (the step answers it with its refusal); `undefined` without a versioning step, or
   * on a version-neutral path that named none.
   */
  readonly version: ApiVersion | typeof UNSUPPORTED_VERSION | undefined;
  /** The route as routed ({@link routeOf}). */
  readonly route: RouteRecord;
  /** The tightest rate-limit decision, once a limiter of `@svc/ratelimit` has counted the request. */
  readonly rateLimit: RateLimitState | undefined;
}

/** The state of one request, each member read from its exchange when asked for. */
class ExchangeState implements RequestState {
  constructor(
    private readonly request: object,
    private readonly rules: RoutingRules | undefined,
  ) {}

  get principal(): Principal | undefined {
    return exchangeIfAny(this.request)?.authentication?.principal;
  }

  get principalKey(): string | undefined {
    const principal = this.principal;
    return principal === undefined ? undefined : principalKey(principal);
  }

  get version(): ApiVersion | typeof UNSUPPORTED_VERSION | undefined {
    const decision = exchangeIfAny(this.request)?.version;
    if (decision === undefined) return undefined;
    return decision.error !== undefined ? UNSUPPORTED_VERSION : decision.version;
  }

  get route(): RouteRecord {
    return routeOf(this.request, this.rules);
  }

  get rateLimit(): RateLimitState | undefined {
    return exchangeIfAny(this.request)?.rateLimit;
  }
}

/**
 * What the @svc packages decided about `request` (Express's `req`, Fastify's `request`, a Fetch
 * `Request` or Hono's `c.req`): who sent it, which version and route it was routed to, its rate
 * limit. The same on every framework; each member is read when asked for.
 *
 * @example
 * app.get("/orders/:id", async (req, res) => {
 *   const { principalKey: caller, version } = requestState(req);
 *   const order = await orders.get(req.params.id);
 *   if (order.owner !== caller) throw HttpError.forbidden();
 *   res.json(version === 1 ? legacy(order) : order);
 * });
 */
export function requestState(request: object, rules?: RoutingRules): RequestState {
  return new ExchangeState(request, rules);
}
