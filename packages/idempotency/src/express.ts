/**
 * `@svc/idempotency` on Express 4 and 5: `idempotency()` as a route's step of the response pipeline
 * (`svc.handle(handler, { idempotency: keys })` of `@svc/kernel/express`). It reads the Express
 * request: `req.principal` for the scope, the route run, `req.params`, `req.log`.
 */
export {
  commitKey,
  type IdempotencyOptions,
  type IdempotencyPrincipal,
  type IdempotencyRequest,
  idempotency,
} from "@svc/idempotency";
