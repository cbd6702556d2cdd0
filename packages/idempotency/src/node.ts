/**
 * `@svc/idempotency` on plain `node:http`: `idempotency()` as a route's step of the response
 * pipeline (`svc.respond(req, res, handler, { idempotency: keys })` of `@svc/kernel/node`). It reads
 * the `node:http` request as the Express one, without a router: keys are scoped by the canonical
 * path (`routing` says how the application compares paths), the scope by the principal
 * `authenticate()` of `@svc/auth/node` recorded for `req`, and the parsed body is what `parseBody`
 * of `@svc/negotiate/node` read (the request's exchange), else `req.body` (set it before `respond`).
 */
export {
  commitKey,
  type IdempotencyOptions,
  type IdempotencyPrincipal,
  type IdempotencyRequest,
  idempotency,
} from "@svc/idempotency";
