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
  connectionGone,
  type IdempotencyOptions,
  type IdempotencyRequest,
  type IdempotencyRequestFacts,
  type IdempotencyRequestReader,
  type IdempotencyStep,
  type RoutingRules,
  idempotency as step,
} from "@svc/idempotency";
import { exchangeOf, routeOf } from "@svc/kernel";
import { expressView } from "@svc/kernel/express";

export * from "./request-entry-exports.js";

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
    // The route the router runs (its mount and template, `/orders/:id`), so no spelling of the URL
    // reaches the handler under another key; outside a router, the core scopes by the path.
    route: req === undefined ? undefined : routeOf(req, rules).template,
    // Express's route parameters, as decoded (case kept); not in the request type, where an
    // optional member would make `req.params` possibly undefined in the handlers after it.
    params: (req as { params?: Readonly<Record<string, unknown>> } | undefined)?.params,
    routing: rules,
    log: req?.log,
  };
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
