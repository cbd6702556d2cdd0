/**
 * `@svc/conditional` on plain `node:http`, for handlers outside the response pipeline (under it,
 * `validators()` is a step of `createPipeline` and `nodeAdapter(pipeline)` of `@svc/kernel/node`
 * carries it, with `svc.preconditions` for writes).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { lastModifiedFields, type PreconditionsOptions, preconditionsGate } from "@svc/conditional";
import { nodeGate } from "@svc/kernel/node";

export type { PreconditionsOptions } from "@svc/conditional";

/**
 * RFC 9110 §13.2.2 before a handler on `node:http`: resolves `true` when the request was answered
 * (a 304 written), `false` to go on; rejects with the 412 (428 when `required`) for the
 * application's error handling (`errorResponder()` of `@svc/errors/node`).
 *
 * @example
 * const guard = preconditions({ current: (req) => repo.validators(req.url) });
 * createServer(async (req, res) => {
 *   try {
 *     if (await guard(req, res)) return;
 *     res.end(JSON.stringify(await repo.read(req.url)));
 *   } catch (err) {
 *     sendError(err, req, res);
 *   }
 * });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
export function preconditions(
  options: PreconditionsOptions<IncomingMessage>,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  return nodeGate(preconditionsGate<IncomingMessage>(options));
}

/**
 * `Last-Modified` on a `node:http` response (whole seconds; a future date sent as now, RFC 9110
 * §8.8.2.1), with the `Date` it is held to; nothing once the head is sent.
 *
 * @example setLastModified(res, employee.updatedAt)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.2
 */
export function setLastModified(res: ServerResponse, date: Date, now: Date = new Date()): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(lastModifiedFields(date, res.getHeader("date"), now)))
    res.setHeader(name, value);
}
