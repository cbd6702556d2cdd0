/**
 * `@svc/idempotency` on plain `node:http`: `idempotency()` as a route's step of the response
 * pipeline (`svc.respond(req, res, handler, { idempotency: keys })` of `@svc/kernel/node`). There
 * is no router: keys are scoped by the canonical path (`routing` says how the application compares
 * paths), the scope by the principal `authenticate()` of `@svc/auth/node` recorded for `req`, and
 * the parsed body is what `parseBody` of `@svc/negotiate/node` read (the request's exchange), else
 * `req.body` (set it before `respond`).
 *
 * @packageDocumentation
 */
import {
  connectionGone,
  type IdempotencyOptions,
  type IdempotencyRequest,
  type IdempotencyRequestReader,
  type IdempotencyStep,
  idempotency as step,
} from "@svc/idempotency";
import { exchangeIfAny } from "@svc/kernel";

export * from "./request-entry-exports.js";

/**
 * The reader of a `node:http` request: its target as sent, no route, the routing rules an adapter
 * recorded in its exchange (none: case-insensitive, a trailing slash ignored), `req.log`, the
 * socket's `close`.
 */
export const nodeRequestReader: IdempotencyRequestReader<IdempotencyRequest> = {
  facts(req, routing) {
    const recorded = req === undefined ? undefined : exchangeIfAny(req)?.routing;
    return {
      target: req?.url,
      route: undefined,
      params: undefined,
      routing: {
        caseSensitive: routing.caseSensitive ?? recorded?.caseSensitive ?? false,
        strict: routing.strict ?? recorded?.strict ?? false,
      },
      log: req?.log,
    };
  },
  gone: connectionGone,
};

/**
 * The `Idempotency-Key` step for `respond()` of `nodeAdapter(pipeline)`: see the main entry's
 * `idempotency(options, reader)`, here with {@link nodeRequestReader}.
 *
 * @example
 * const keys = idempotency({ store: new MemoryStore(), required: true });
 * createServer((req, res) => svc.respond(req, res, () => reply(orders.create(), { status: 201 }), { idempotency: keys }));
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export function idempotency(options: IdempotencyOptions = {}): IdempotencyStep {
  return step(options, nodeRequestReader);
}
