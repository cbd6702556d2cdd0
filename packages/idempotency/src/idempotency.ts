import type { ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import type { RoutingRules } from "./canonical-path.js";
import { captureResponseHeld } from "./capture.js";
import { type IdempotencyRequiredRule, resolveConfig } from "./config.js";
import { coreOf, type IdempotencyClaim, type IdempotencyCore, writeReplay } from "./core.js";
import { type IdempotencyRequest, principalScope, routeOf } from "./express.js";
import type { IdempotencyOptions } from "./step.js";

export type { IdempotencyLogger, StoreStatusContext } from "./config.js";
export { IDEMPOTENCY_ERROR_CODES } from "./core.js";
export type { IdempotencyPrincipal, IdempotencyRequest } from "./express.js";
export type { IdempotencyOptions } from "./step.js";

/**
 * Says which requests must carry a key: every one (`true`), none (`false`), those whose
 * canonical path is in a list, or those a predicate picks. Lists and predicates see the path the
 * way the router matches it (see {@link canonicalPath}), so `/Transfers/` is `/transfers`.
 */
export type IdempotencyRequired = IdempotencyRequiredRule<IdempotencyRequest>;

/** What a claimed request's handler can read at `res.locals.idempotency`. */
export interface IdempotencyLocals {
  /** The scoped key the record is stored under. */
  key: string;
  /** The fencing token of this execution; pass it on to guard downstream writes. */
  token: string;
  /** Same as {@link markStarted}`(res)`: the endpoint starts its work now. */
  markStarted(): void;
}

const STARTED = new WeakSet<object>();

/**
 * Tells the idempotency middleware that the endpoint has started executing: call it after the
 * request passed validation and before the first side effect. A 4xx answered after it is stored
 * and replayed; one answered without it (a validation failure) is not, so a retry with a
 * corrected body and the same key runs. A 2xx or 3xx is stored either way. This is Stripe's rule:
 * "results are only saved if an API endpoint started executing".
 *
 * @example
 * app.post("/transfers", express.json(), idempotency(), async (req, res) => {
 *   const input = validate(req.body); // throws HttpError(400): not stored, the key stays free
 *   markStarted(res);
 *   res.status(201).json(await transfer(input)); // stored, whatever its status below 500
 * });
 * @see https://docs.stripe.com/api/idempotent_requests
 */
export function markStarted(res: object): void {
  STARTED.add(res);
}

/**
 * Express middleware for exactly-once unsafe requests with the `Idempotency-Key` header
 * (draft-ietf-httpapi-idempotency-key-header). The first request with a key claims it atomically
 * and runs; its response (status, body, safe headers) is stored; a retry with the same key and
 * payload gets that response again with `Idempotent-Replayed: true`. A duplicate while the first
 * still runs gets 409 with `Retry-After`; the same key with another payload gets 422; a malformed
 * key (or none, when `required`) gets 400. Keys are scoped by principal, method and the route the
 * router runs (in front of routing: the canonical path, see {@link canonicalPath}), so no other
 * spelling of the URL reaches the handler under a fresh key. A 4xx is stored only after
 * {@link markStarted}.
 *
 * Mount it after the body parser (the payload fingerprint reads `req.body`) and after
 * authentication (the scope reads `req.principal`).
 *
 * @example
 * app.post("/orders", express.json(), authenticate(), idempotency({ required: true }), createOrder);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 * @deprecated The pipeline step `idempotency()` replaces it: `svc.handle(handler, { idempotency })`.
 */
export function idempotency(options: IdempotencyOptions = {}) {
  const config = resolveConfig<IdempotencyRequest>(options, principalScope);
  const core = coreOf(config);
  const { routing } = config;

  /** The app's routing rules unless the `routing` option overrides them. */
  const rulesOf = (req: IdempotencyRequest): RoutingRules => ({
    caseSensitive: routing.caseSensitive ?? req.app?.get("case sensitive routing") === true,
    strict: routing.strict ?? req.app?.get("strict routing") === true,
  });

  async function handle(req: IdempotencyRequest, res: ServerResponse, next: NextFunction): Promise<void> {
    const rules = rulesOf(req);
    // A duplicate may wait for an in-flight request (waitMs): the response's close before its end
    // is the client going away, which ends the wait. The listener goes when begin has answered.
    const gone = config.waitMs > 0 ? new AbortController() : undefined;
    const onClose = () => gone?.abort();
    if (gone) res.once("close", onClose);
    const decision = await core
      .begin({
        method: req.method,
        target: req.originalUrl ?? req.url ?? "/",
        headers: req.headers,
        body: req.body,
        route: routeOf(req, rules),
        // Express's route parameters, as decoded (case kept); not in the request type, where an
        // optional member would make `req.params` possibly undefined in the handlers after it.
        params: (req as { params?: Readonly<Record<string, unknown>> }).params,
        routing: rules,
        log: req.log,
        request: req,
        signal: gone?.signal,
      })
      .finally(() => {
        if (gone) res.removeListener("close", onClose);
      });
    if (decision.outcome === "pass") return next();
    if (decision.outcome === "error") return next(decision.error);
    if (decision.outcome === "replay") return writeReplay(res, decision.response);
    run(core, decision.claim, res, config);
    next();
  }

  return function svcIdempotency(req: IdempotencyRequest, res: ServerResponse, next: NextFunction): void {
    // Methods not guarded (GET): straight through, without a promise.
    if (core.guards(req.method)) handle(req, res, next).catch(next);
    else next();
  };
}

/**
 * How long a response destroyed before its end waits for the store to release its claim before
 * it is destroyed all the same: a store that never answers must not hold connections open. Past
 * it the release may still land; a retry sent before then gets 409 with `Retry-After`, and the
 * claim ends with its lease at the latest.
 */
const CUT_RELEASE_WAIT_MS = 1000;

/**
 * Hands a claimed request to its handler: the claim on `res.locals.idempotency`, and the claim
 * settled by the handler's outcome alone. The handler ends its response: the response is stored
 * (or the claim released, for a status `storeStatus` refuses), also when its connection closed
 * meanwhile (the client went away, the server closed it for a malformed request pipelined behind
 * this one, an idle timeout). The handler (or the error handler it handed its error to) destroys
 * a response it started and cannot finish: the request failed with no response to store, and the
 * claim is released. The connection closing is never an outcome: the handler still runs, and a
 * retry meanwhile gets 409, then the stored response.
 */
function run(
  core: IdempotencyCore<IdempotencyRequest>,
  claim: IdempotencyClaim,
  res: ServerResponse,
  config: { maxStoredBytes: number; leaseMs: number },
) {
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  if (locals) {
    const { key, token } = claim;
    locals.idempotency = { key, token, markStarted: () => markStarted(res) } satisfies IdempotencyLocals;
  }
  // Ended by someone else before the handler ran: nothing to store, the claim ends with its lease.
  if (res.writableEnded) return core.abandon(claim);
  let settled = false;
  // The end of the response waits for the record: a client that retries as soon as it has read
  // the response meets the stored record (or a released key), never the claim still in flight.
  // A store that never answers holds the bytes one lease at most (the claim is over by then).
  captureResponseHeld(res, config.maxStoredBytes, (captured) => {
    settled = true;
    return withinWait(core.complete(claim, captured, STARTED.has(res)), config.leaseMs);
  });
  // A response destroyed before its end: errorHandler() for an error after the header section
  // went out (RFC 9112 §8: an incomplete message), or the handler itself. Its connection still
  // open, that is the handler's failure: the claim is released (at most CUT_RELEASE_WAIT_MS
  // waited for), then the response destroyed, so a retry sent on seeing the cut runs. With its
  // connection already closed, the destroy may only follow from the close (a stream piped into
  // it), and the handler's effect may be done: the claim is kept, unrenewed, for one lease.
  const destroy = res.destroy;
  res.destroy = function destroyReleased(this: ServerResponse, error?: Error) {
    if (settled || res.writableEnded) return destroy.call(this, error);
    settled = true;
    if (res.destroyed || res.socket?.destroyed === true) {
      core.abandon(claim);
      return destroy.call(this, error);
    }
    void withinWait(core.release(claim), CUT_RELEASE_WAIT_MS).then(() => destroy.call(this, error));
    return this;
  };
}

/** `promise`, or at most `ms` of waiting for it (the timer keeps no process alive). */
function withinWait(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.min(ms, 2_147_483_647));
    timer.unref?.();
    void promise.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
