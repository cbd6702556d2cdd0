/**
 * `@svc/ratelimit/express`: the rate limit as Express (4 and 5) middleware. The decision is the
 * main entry's (`createDecider`, shared with the gates of the other adapters); this file reads
 * Express's request (`req.ip` behind the app's `trust proxy`, recorded in the request's exchange
 * by `expressView`) and writes the fields on Express's response.
 *
 * @packageDocumentation
 */
import type { ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import { headlessMiddleware, requestState } from "@svc/kernel";
import { expressView } from "@svc/kernel/express";
import { writeRequestProperty } from "@svc/kernel/internal";
import {
  type Asked,
  after,
  afterResponse,
  type Config,
  type Counted,
  createDecider,
  type RateLimitExceeded,
  type RateLimitInfo,
  type RateLimitOptions,
  type RateLimitRequest,
  resolveConfig,
  type State,
} from "@svc/ratelimit";

declare global {
  // Express's own augmentation point: `req.rateLimit` is typed in every Express handler without
  // this package depending on @types/express.
  namespace Express {
    interface Request {
      /**
       * Set by `rateLimit()` under `requestPropertyName: "rateLimit"`, a compatibility option: the
       * decision of the tightest limiter the request passed so far. Read it with
       * `requestState(req).rateLimit` of `@svc/kernel`.
       */
      rateLimit?: RateLimitInfo | undefined;
    }
  }
}

export type {
  PerRequest,
  RateLimitExceeded,
  RateLimitHandler,
  RateLimitInfo,
  RateLimitLogger,
  RateLimitMessage,
  RateLimitOptions,
  RateLimitPrincipal,
  RateLimitRequest,
} from "@svc/ratelimit";

/**
 * Express middleware that limits each client (the authenticated principal, else its IP bucket)
 * and reports usage on every response. Over the limit it calls `next(HttpError 429)` with
 * `Retry-After` (or your `handler`); the rate limit headers are already set, so the error response
 * keeps them. Several limiters on one request are all reported in `RateLimit-Policy` / `RateLimit`,
 * and `X-RateLimit-*` shows the tightest; `requestState(req).rateLimit` of `@svc/kernel` holds the
 * tightest decision (and `req.rateLimit`, under the `requestPropertyName` compatibility option).
 *
 * It never reads `X-Forwarded-For` itself: the client IP is Express's `req.ip`, so set
 * `app.set("trust proxy", ...)` to exactly the proxies in front of the app. Trusting too much lets
 * clients spoof their address; trusting too little puts every client in the proxy's bucket.
 *
 * @example
 * app.set("trust proxy", 1); // one load balancer in front
 * app.use(rateLimit({ limit: 100, windowMs: 60_000 }));
 * app.post("/search", rateLimit({ limit: 10, windowMs: 60_000, cost: 2, policyName: "search" }), search);
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export function rateLimit(options: RateLimitOptions) {
  const config = resolveConfig(options);
  const { state, decide } = createDecider(config, false);
  // `requestPropertyName`, a compatibility option: the property the decision is copied onto.
  const property = config.requestProperty;

  const middleware = function rateLimitMiddleware(
    req: RateLimitRequest,
    res: ServerResponse,
    next: NextFunction,
  ): void {
    // The app's `trust proxy` in the exchange, for the core's warning about it.
    expressView(req);
    decide(new ExpressAsked(req, res, config.skip !== undefined), (verdict) => {
      // A decision counted (allowed or denied): the tightest so far, as the exchange records it.
      if (property !== undefined && "info" in verdict)
        writeRequestProperty(req, property, requestState(req).rateLimit);
      switch (verdict.kind) {
        case "pass":
          next();
          return;
        case "refuse":
          next(verdict.error);
          return;
        case "allowed":
          setFields(res, verdict.fields);
          if ((config.refundSuccessful || config.refundFailed) && verdict.units > 0)
            refundAfter(config, state, req, res, verdict);
          next();
          return;
        case "denied": {
          setFields(res, verdict.fields);
          const { handler } = config;
          if (!handler) {
            next(verdict.error);
            return;
          }
          // RFC 6585 §4: 429 "MAY include a Retry-After header indicating how long to wait before
          // making a new request"; set for the custom handler as the default one's error sets it.
          if (!res.headersSent) res.setHeader("Retry-After", String(verdict.retryAfterSeconds));
          const exceeded: RateLimitExceeded = {
            statusCode: 429,
            message: verdict.message,
            error: verdict.error,
            info: verdict.info,
            retryAfterSeconds: verdict.retryAfterSeconds,
          };
          after(
            () => handler(req, res, next, exceeded),
            () => {},
            (err) => next(err),
          );
        }
      }
    });
  };
  // Without a `handler` of yours it writes no response of its own (a refusal goes to `next`): a
  // `chain` may hold the `Vary` of the gates around it. Yours may answer by itself.
  return config.handler === undefined ? headlessMiddleware(middleware) : middleware;
}

/**
 * An Express request as the limiter reads it. The client's address is read when the decision
 * needs it (an `allowed` list, or no principal to key by), at most once: Express's `req.ip`
 * applies the app's `trust proxy` on every read, a walk of `X-Forwarded-For` a request keyed by
 * its principal never needs. The peer's address without Express. With a `skip` (which may answer
 * a promise) it is read at once, as the request arrives: a client resetting the connection while
 * `skip` runs leaves its address behind, and the request is counted under it.
 */
class ExpressAsked implements Asked {
  readonly view: RateLimitRequest;
  readonly native: RateLimitRequest;
  readonly res: ServerResponse;
  readonly owner: ServerResponse;
  #read = false;
  #address: string | undefined;

  constructor(req: RateLimitRequest, res: ServerResponse, now: boolean) {
    this.view = req;
    this.native = req;
    this.res = res;
    this.owner = res;
    if (now) this.#resolve();
  }

  #resolve(): void {
    this.#address = this.native.ip ?? this.native.socket?.remoteAddress;
    this.#read = true;
  }

  get address(): string | undefined {
    if (!this.#read) this.#resolve();
    return this.#address;
  }
}

/** The rate limit fields on the response, before the route's answer or the error's. */
function setFields(res: ServerResponse, fields: Readonly<Record<string, string>> | undefined): void {
  if (fields === undefined || res.headersSent) return;
  // The fields of one response are written in one shape (the same names, in the same order):
  // `for...in` reads them through the shape's enumeration cache.
  for (const name in fields) res.setHeader(name, fields[name] as string);
}

/**
 * `skipSuccessfulRequests` / `skipFailedRequests`: once the response is finished (written whole),
 * `requestWasSuccessful(req, res)` decides whether its units go back (see `afterResponse`). At
 * most once per request; a response that never finishes (the client went away) stays counted.
 */
function refundAfter(
  config: Config,
  state: State,
  req: RateLimitRequest,
  res: ServerResponse,
  counted: Counted,
): void {
  res.once("finish", () => {
    afterResponse(
      config,
      state,
      counted,
      () => config.requestWasSuccessful(req, res),
      "requestWasSuccessful(req, res)",
    );
  });
}
