/**
 * `@svc/conditional` on the Fetch API (Hono, or any Fetch server), for handlers outside the
 * response pipeline (under it, `validators()` is a step of `createPipeline` and
 * `fetchAdapter(pipeline)` of `@svc/kernel/fetch` carries it, with `svc.preconditions` for writes).
 */
import { lastModifiedFields, type PreconditionsOptions, preconditionsGate } from "@svc/conditional";
import { type FetchMiddleware, fetchGate } from "@svc/kernel/fetch";

export type { PreconditionsOptions } from "@svc/conditional";

/**
 * RFC 9110 §13.2.2 before a Fetch handler: Hono middleware (`app.use("/employees/*", mw)`) and,
 * with `.wrap(handler)`, any Fetch server. A 304 is the response, with the current validators;
 * a failed precondition is the 412 (428 when `required`), thrown for `app.onError`
 * (`onError()` of `@svc/errors/fetch`). `current` reads the `Request` (its URL names the
 * resource). A `Request`'s fields cannot change: a false `If-Range` (step 5) is left to the
 * handler, with `evaluateIfRange` of `@svc/conditional`.
 *
 * @example
 * app.use("/employees/*", preconditions({ current: (request) => repo.validators(new URL(request.url).pathname) }));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
export function preconditions(options: PreconditionsOptions<Request>): FetchMiddleware {
  return fetchGate(preconditionsGate<Request>(options));
}

/**
 * The `Last-Modified` and `Date` fields for a Fetch `Response` (whole seconds; a future date sent
 * as now, RFC 9110 §8.8.2.1); `{}` for an invalid date.
 *
 * @example new Response(body, { headers: { ...lastModified(employee.updatedAt), "content-type": "application/json" } })
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.2
 */
export function lastModified(date: Date, now: Date = new Date()): Record<string, string> {
  return lastModifiedFields(date, undefined, now);
}
