/**
 * `@svc/conditional` on Express 4 and 5: the `preconditions()` middleware and `setLastModified`,
 * for routes outside the response pipeline. Under the pipeline, `validators()` is a step of
 * `createPipeline` and `expressAdapter(pipeline)` of `@svc/kernel/express` carries it.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  lastModifiedFields,
  type PreconditionsDecision,
  type PreconditionsOptions,
  preconditionsDecision,
} from "@svc/conditional";
import type { NextFunction } from "@svc/errors";

export type { PreconditionsOptions } from "@svc/conditional";

/**
 * Evaluates conditional request headers against the resource's current validators before the
 * handler runs (RFC 9110 §13.2.2): a failed precondition becomes a 412 (or 304 for GET/HEAD), with
 * `ETag`/`Last-Modified` of the current state, through the error handler; with `required: true`,
 * an unconditional write becomes a 428. Step 5, `If-Range` on a GET with `Range`, is evaluated
 * on the current validators (`evaluateIfRange`); when false, the `Range` field is removed so
 * that whatever serves the range sends the whole representation. The validators are left on
 * `res.locals.current` for the handler.
 *
 * @example
 * app.put("/employees/:id", preconditions({ current: (req) => repo.validators(req.params.id), required: true }), update);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-3
 */
export function preconditions<Req extends IncomingMessage = IncomingMessage>(
  options: PreconditionsOptions<Req>,
) {
  const decide = preconditionsDecision<Req>(options);

  return async function preconditionsMiddleware(
    req: Req,
    res: ServerResponse,
    next: NextFunction,
  ): Promise<void> {
    let decision: PreconditionsDecision;
    try {
      decision = await decide(req, req);
    } catch (err) {
      next(err);
      return;
    }
    const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
    if (locals) locals.current = decision.current;
    if (decision.notModified === undefined) {
      if (decision.ignoreRange) delete req.headers.range;
      next();
      return;
    }
    for (const [name, value] of Object.entries(decision.notModified)) {
      if (value === null) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    res.statusCode = 304;
    res.end();
  };
}

/**
 * Sets `Last-Modified` (whole seconds, IMF-fixdate) unless the date is invalid; one in the future
 * is sent as now (RFC 9110 §8.8.2.1: an origin server must not send a date later than its own
 * `Date`). The message's `Date` is set to that same now, unless the response already has one (then
 * Last-Modified is held to it): Node writes `Date` from a per-second cache that a timer refreshes,
 * which names an earlier second than now after the event loop was busy past a second boundary.
 *
 * @example setLastModified(res, employee.updatedAt)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.2
 */
export function setLastModified(res: ServerResponse, date: Date, now: Date = new Date()): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(lastModifiedFields(date, res.getHeader("date"), now)))
    res.setHeader(name, value);
}
