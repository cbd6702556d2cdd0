/**
 * `@svc/idempotency` on the Fetch API (Hono, or any Fetch server): `idempotency()` as a route's
 * step of the response pipeline (`svc.respond(request, handler, { route: { idempotency: keys }, body })`
 * of `@svc/kernel/fetch`, the body read once by the application and handed over). It reads the
 * `Request`: its URL's path and query, and `request.signal` for a client gone.
 */
import {
  type IdempotencyOptions,
  type IdempotencyRequestReader,
  type IdempotencyStep,
  idempotency as step,
} from "@svc/idempotency";
import { fetchView } from "@svc/kernel/fetch";

export { commitKey, type IdempotencyOptions } from "@svc/idempotency";

/**
 * What the step reads of a `Request`: the target (path and query), no route (keys are scoped by
 * the canonical path; `routing` says how the application compares paths, case-sensitive and strict
 * by default, as Hono's router), and its `signal`.
 */
export const fetchRequestReader: IdempotencyRequestReader<Request> = {
  facts(request, routing) {
    return {
      target: request === undefined ? undefined : fetchView(request).url,
      route: undefined,
      params: undefined,
      routing: { caseSensitive: routing.caseSensitive ?? true, strict: routing.strict ?? true },
      log: undefined,
    };
  },
  gone: (request) => ({ signal: request?.signal ?? new AbortController().signal, stop() {} }),
};

/**
 * The `Idempotency-Key` step for `fetchAdapter(pipeline).respond`. Keys are scoped by the
 * principal `authenticate()` of `@svc/auth/fetch` recorded for the `Request` (else `"anonymous"`;
 * a request with credentials nobody recorded a principal for is refused with a 500), unless
 * `scope` says otherwise.
 *
 * @example
 * const keys = idempotency({ store: new MemoryStore(), required: true });
 * app.post("/orders", async (c) => {
 *   const body = await c.req.json();
 *   return svc.respond(c.req.raw, () => reply(orders.create(body), { status: 201 }), { route: { idempotency: keys }, body });
 * });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export function idempotency(options: IdempotencyOptions<Request> = {}): IdempotencyStep {
  return step(options, fetchRequestReader);
}
