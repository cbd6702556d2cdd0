/**
 * `@svc/idempotency` on Fastify 5: `idempotency()` as a route's step of the response pipeline
 * (`svc.handle(handler, { idempotency: keys })` of `@svc/kernel/fastify`), reading the Fastify
 * request: the route (`request.routeOptions.url`), `request.params`, `request.log`, the app's
 * `caseSensitive` and `ignoreTrailingSlash`, the raw request's socket; the body Fastify parsed is the
 * fingerprint's.
 */
import {
  connectionGone,
  type IdempotencyOptions,
  type IdempotencyRequestReader,
  type IdempotencyStep,
  idempotency as step,
} from "@svc/idempotency";
import { exchangeOf, routeOf } from "@svc/kernel";
import { fastifyView } from "@svc/kernel/fastify";
import type { FastifyRequest } from "fastify";

export { commitKey, type IdempotencyOptions, type IdempotencyPrincipal } from "@svc/idempotency";

/** What the step reads of a Fastify request. */
export const fastifyRequestReader: IdempotencyRequestReader<FastifyRequest> = {
  facts(request, routing) {
    // The router's rules as the kernel's view recorded them from the instance's configuration.
    const recorded = request === undefined ? undefined : exchangeOf(fastifyView(request)).routing;
    const rules = {
      caseSensitive: routing.caseSensitive ?? recorded?.caseSensitive ?? true,
      strict: routing.strict ?? recorded?.strict ?? true,
    };
    return {
      target: request?.originalUrl,
      route: request === undefined ? undefined : routeOf(request, rules).template,
      params: request?.params as Readonly<Record<string, unknown>> | undefined,
      routing: rules,
      log: request?.log,
    };
  },
  gone: (request) => connectionGone(request?.raw),
};

/**
 * The `Idempotency-Key` step for routes of `fastifyAdapter(pipeline)`. Keys are scoped by the
 * principal the auth plugin recorded unless `scope` says otherwise; a duplicate is answered
 * 409, a reused key 422, a missing one 400 when `required`, all through Fastify's error handler.
 *
 * @example
 * const keys = idempotency({ store: new MemoryStore(), required: true });
 * app.post("/orders", svc.handle((request) => reply(orders.create(request.body), { status: 201 }), { idempotency: keys }));
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export function idempotency(options: IdempotencyOptions<FastifyRequest> = {}): IdempotencyStep {
  return step(options, fastifyRequestReader);
}
