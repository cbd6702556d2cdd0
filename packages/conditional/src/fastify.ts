/**
 * `@svc/conditional` on Fastify 5, for routes outside the response pipeline (under it,
 * `validators()` is a step of `createPipeline` and `fastifyAdapter(pipeline)` of
 * `@svc/kernel/fastify` carries it, with `svc.preconditions` for writes).
 */
import { lastModifiedFields, type PreconditionsOptions, preconditionsGate } from "@svc/conditional";
import { fastifyGate } from "@svc/kernel/fastify";
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";

export type { PreconditionsOptions } from "@svc/conditional";

/**
 * RFC 9110 §13.2.2 as a Fastify hook: mount it as a route's `preHandler` (the route's params are
 * read by `current`). A 304 is sent with the current validators and the handler does not run;
 * a failed precondition is the 412 (428 when `required`), thrown to Fastify's error handler
 * (`errorPlugin` of `@svc/errors/fastify`).
 *
 * @example
 * app.put("/employees/:id", { preHandler: preconditions({ current: (request) => repo.validators(request.params.id), required: true }) }, update);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
export function preconditions(options: PreconditionsOptions<FastifyRequest>): onRequestHookHandler {
  return fastifyGate(preconditionsGate<FastifyRequest>(options));
}

/**
 * `Last-Modified` on a Fastify reply (whole seconds; a future date sent as now, RFC 9110
 * §8.8.2.1), with the `Date` it is held to.
 *
 * @example setLastModified(reply, employee.updatedAt)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.2
 */
export function setLastModified(reply: FastifyReply, date: Date, now: Date = new Date()): void {
  for (const [name, value] of Object.entries(lastModifiedFields(date, reply.getHeader("date"), now)))
    reply.header(name, value);
}
