import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import { canonicalPath, type RoutingRules } from "./canonical-path.js";
import { captureResponse } from "./capture.js";
import {
  type IdempotencyCoreOptions,
  type IdempotencyLogger,
  type IdempotencyRequiredRule,
  resolveConfig,
} from "./config.js";
import { coreOf, type IdempotencyClaim, type IdempotencyCore, writeReplay } from "./core.js";

export type { IdempotencyLogger, StoreStatusContext } from "./config.js";
export { IDEMPOTENCY_ERROR_CODES } from "./core.js";

/** The authenticated caller, as the auth layer leaves it on the request. */
export interface IdempotencyPrincipal {
  id: string;
}

/** The parts of an Express (or plain `node:http`) request the middleware reads. */
export interface IdempotencyRequest extends IncomingMessage {
  /** The parsed (or raw `Buffer`/string) body a body parser left; see "Order" in the README. */
  body?: unknown;
  /** Set by the auth layer (`@svc/auth`); absent for anonymous requests. */
  principal?: IdempotencyPrincipal | undefined;
  originalUrl?: string;
  /** pino-http's per-request logger, used when no `logger` option is given. */
  log?: IdempotencyLogger;
  /** Express: where the router that runs the route is mounted (the matched spelling). */
  baseUrl?: string;
  /** Express: the route being run, when the middleware is mounted on a route. */
  route?: { path?: unknown } | undefined;
  /** Express: the application, for its `case sensitive routing` and `strict routing` settings. */
  app?: { get(setting: string): unknown } | undefined;
}

/**
 * Says which requests must carry a key: every one (`true`), none (`false`), those whose
 * canonical path is in a list, or those a predicate picks. Lists and predicates see the path the
 * way the router matches it (see {@link canonicalPath}), so `/Transfers/` is `/transfers`.
 */
export type IdempotencyRequired = IdempotencyRequiredRule<IdempotencyRequest>;

/** What a claimed request's handler can read at `res.locals.idempotency`. */
export interface IdempotencyLocals {
  /** The scoped key the record is stored under. */
  key: string;
  /** The fencing token of this execution; pass it on to guard downstream writes. */
  token: string;
  /** Same as {@link markStarted}`(res)`: the endpoint starts its work now. */
  markStarted(): void;
}

const STARTED = new WeakSet<object>();

/**
 * Tells the idempotency middleware that the endpoint has started executing: call it after the
 * request passed validation and before the first side effect. A 4xx answered after it is stored
 * and replayed; one answered without it (a validation failure) is not, so a retry with a
 * corrected body and the same key runs. A 2xx or 3xx is stored either way. This is Stripe's rule:
 * "results are only saved if an API endpoint started executing".
 *
 * @example
 * app.post("/transfers", express.json(), idempotency(), async (req, res) => {
 *   const input = validate(req.body); // throws HttpError(400): not stored, the key stays free
 *   markStarted(res);
 *   res.status(201).json(await transfer(input)); // stored, whatever its status below 500
 * });
 * @see https://docs.stripe.com/api/idempotent_requests
 */
export function markStarted(res: object): void {
  STARTED.add(res);
}

/**
 * Options of {@link idempotency}: those of the core (`createIdempotency`), over Express requests.
 * `scope` defaults to the auth layer's `req.principal.id`, else `"anonymous"`; `routing` to the
 * app's `case sensitive routing` and `strict routing` settings.
 *
 * @example idempotency({ store, required: true, leaseMs: 30_000, documentationUrl: "https://api.example/docs/idempotency" })
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export interface IdempotencyOptions extends IdempotencyCoreOptions<IdempotencyRequest> {}

const principalScope = (req: IdempotencyRequest): string => req.principal?.id ?? "anonymous";

/**
 * Express middleware for exactly-once unsafe requests with the `Idempotency-Key` header
 * (draft-ietf-httpapi-idempotency-key-header). The first request with a key claims it atomically
 * and runs; its response (status, body, safe headers) is stored; a retry with the same key and
 * payload gets that response again with `Idempotent-Replayed: true`. A duplicate while the first
 * still runs gets 409 with `Retry-After`; the same key with another payload gets 422; a malformed
 * key (or none, when `required`) gets 400. Keys are scoped by principal, method and the route the
 * router runs (in front of routing: the canonical path, see {@link canonicalPath}), so no other
 * spelling of the URL reaches the handler under a fresh key. A 4xx is stored only after
 * {@link markStarted}.
 *
 * Mount it after the body parser (the payload fingerprint reads `req.body`) and after
 * authentication (the scope reads `req.principal`).
 *
 * @example
 * app.post("/orders", express.json(), authenticate(), idempotency({ required: true }), createOrder);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export function idempotency(options: IdempotencyOptions = {}) {
  const config = resolveConfig<IdempotencyRequest>(options, principalScope);
  const core = coreOf(config);
  const { routing } = config;

  /** The app's routing rules unless the `routing` option overrides them. */
  const rulesOf = (req: IdempotencyRequest): RoutingRules => ({
    caseSensitive: routing.caseSensitive ?? req.app?.get("case sensitive routing") === true,
    strict: routing.strict ?? req.app?.get("strict routing") === true,
  });

  async function handle(req: IdempotencyRequest, res: ServerResponse, next: NextFunction): Promise<void> {
    const rules = rulesOf(req);
    const decision = await core.begin({
      method: req.method,
      target: req.originalUrl ?? req.url ?? "/",
      headers: req.headers,
      body: req.body,
      route: routeOf(req, rules),
      routing: rules,
      log: req.log,
      request: req,
    });
    if (decision.outcome === "pass") return next();
    if (decision.outcome === "error") return next(decision.error);
    if (decision.outcome === "replay") return writeReplay(res, decision.response);
    run(core, decision.claim, res, config.maxStoredBytes);
    next();
  }

  return function svcIdempotency(req: IdempotencyRequest, res: ServerResponse, next: NextFunction): void {
    // Methods not guarded (GET): straight through, without a promise.
    if (core.guards(req.method)) handle(req, res, next).catch(next);
    else next();
  };
}

/**
 * Hands a claimed request to its handler: the claim on `res.locals.idempotency`, and the response
 * completed into the store when the handler ends it (also after the client went away).
 */
function run(
  core: IdempotencyCore<IdempotencyRequest>,
  claim: IdempotencyClaim,
  res: ServerResponse,
  maxBytes: number,
) {
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  if (locals) {
    const { key, token } = claim;
    locals.idempotency = { key, token, markStarted: () => markStarted(res) } satisfies IdempotencyLocals;
  }
  // Ended by someone else before the handler ran: nothing to store, the claim ends with its lease.
  if (res.writableEnded) return core.abandon(claim);
  captureResponse(res, maxBytes, (captured) => {
    void core.complete(claim, captured, STARTED.has(res));
  });
}

/**
 * What the key is scoped to when the middleware is mounted on a route: the route the router runs
 * (its mount path in canonical form and its pattern, `/orders/:id`), so no spelling of the URL
 * reaches the handler under another key, and the fingerprint tells the targets apart. In front of
 * routing, `undefined`: the core scopes by the canonical path.
 */
function routeOf(req: IdempotencyRequest, rules: RoutingRules): string | undefined {
  const route = req.route?.path;
  if (route === undefined || typeof req.baseUrl !== "string") return undefined;
  const pattern =
    typeof route === "string" ? route : route instanceof RegExp ? route.toString() : JSON.stringify(route);
  return `${canonicalPath(req.baseUrl, { ...rules, strict: true })}${pattern}`;
}
