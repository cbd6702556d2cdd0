/**
 * `@svc/idempotency` on Express 4 and 5: `idempotency()` as a route's step of the response pipeline
 * (`svc.handle(handler, { idempotency: keys })` of `@svc/kernel/express`), reading the Express
 * request: the route run (`req.baseUrl` + `req.route.path`), `req.params`, `req.log`, the
 * request-target as sent (`req.originalUrl`), and the app's `case sensitive routing` and `strict
 * routing` as `expressView` of `@svc/kernel/express` records them in the request's exchange. The
 * scope is the principal `@svc/auth` (or the application) recorded.
 *
 * @packageDocumentation
 */
import {
  canonicalPath,
  connectionGone,
  type IdempotencyOptions,
  type IdempotencyRequest,
  type IdempotencyRequestFacts,
  type IdempotencyRequestReader,
  type IdempotencyStep,
  type RoutingRules,
  idempotency as step,
} from "@svc/idempotency";
import { exchangeOf } from "@svc/kernel";
import { expressView } from "@svc/kernel/express";

export {
  commitKey,
  type IdempotencyOptions,
  type IdempotencyPrincipal,
  type IdempotencyRequest,
} from "@svc/idempotency";

/** Express's defaults: `case sensitive routing` and `strict routing` off. */
const EXPRESS_DEFAULTS: RoutingRules = { caseSensitive: false, strict: false };

/**
 * The facts of an Express request: the app's routing rules (recorded in the exchange by
 * `expressView`) unless the `routing` option overrides them, the route and its parameters.
 */
function routedFacts(
  req: IdempotencyRequest | undefined,
  routing: Partial<RoutingRules>,
): IdempotencyRequestFacts {
  const recorded =
    req === undefined ? EXPRESS_DEFAULTS : (exchangeOf(expressView(req)).routing ?? EXPRESS_DEFAULTS);
  const rules: RoutingRules = {
    caseSensitive: routing.caseSensitive ?? recorded.caseSensitive,
    strict: routing.strict ?? recorded.strict,
  };
  return {
    target: req?.originalUrl ?? req?.url,
    route: req === undefined ? undefined : routeOf(req, rules),
    // Express's route parameters, as decoded (case kept); not in the request type, where an
    // optional member would make `req.params` possibly undefined in the handlers after it.
    params: (req as { params?: Readonly<Record<string, unknown>> } | undefined)?.params,
    routing: rules,
    log: req?.log,
  };
}

/**
 * What the key is scoped to when the step runs in a route: the route the router runs (its mount
 * path in canonical form and its pattern, `/orders/:id`), so no spelling of the URL reaches the
 * handler under another key, and the fingerprint tells the targets apart. Outside a router,
 * `undefined`: the core scopes by the canonical path.
 */
function routeOf(req: IdempotencyRequest, rules: RoutingRules): string | undefined {
  const route = req.route?.path;
  if (route === undefined || typeof req.baseUrl !== "string") return undefined;
  const pattern =
    typeof route === "string" ? route : route instanceof RegExp ? route.toString() : JSON.stringify(route);
  return `${canonicalPath(req.baseUrl, { ...rules, strict: true })}${pattern}`;
}

/**
 * The reader of an Express request: `req.originalUrl`, `req.baseUrl` + `req.route.path`,
 * `req.params`, `req.log`, the app's routing settings from the exchange, the socket's `close`.
 */
export const expressRequestReader: IdempotencyRequestReader<IdempotencyRequest> = {
  facts: routedFacts,
  gone: connectionGone,
};

/**
 * The `Idempotency-Key` step for routes of `expressAdapter(pipeline)`. Keys are scoped by the
 * principal authentication recorded (unless `scope` says otherwise) and by the route Express runs,
 * compared as the app's `case sensitive routing` and `strict routing` say (unless `routing`
 * does); a duplicate is answered 409, a reused key 422, a missing one 400 when `required`, all
 * through `next(err)`.
 *
 * @example
 * const keys = idempotency({ store, required: true });
 * app.post("/orders", express.json(), svc.handle(async (req) => reply(await orders.create(req.body), { status: 201 }), { idempotency: keys }));
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export function idempotency(options: IdempotencyOptions = {}): IdempotencyStep {
  return step(options, expressRequestReader);
}
