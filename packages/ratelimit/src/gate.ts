import {
  compileTrust,
  type ForwardedHeaders,
  type Gate,
  type Passage,
  type RequestView,
  requestFacts,
  type TrustOption,
} from "@svc/kernel";
import { checkForwardedHeaders, requestSlot } from "@svc/kernel/internal";
import { type Asked, afterResponse, type Counted, createDecider, type Verdict } from "./core.js";
import { optionError } from "./option-error.js";
import {
  type RateLimitExceeded,
  type RateLimitMessage,
  type RateLimitOptions,
  resolveConfig,
} from "./options.js";

/**
 * The response to a counted request as {@link RateLimitGateOptions.requestWasSuccessful} reads it:
 * its final status, once it has been written whole (the same `statusCode` as Express's `res`, so
 * one function serves every framework).
 * @example
 * const requestWasSuccessful = (_request: unknown, response: RateLimitResponse) => response.statusCode < 500;
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15
 */
export interface RateLimitResponse {
  /** The status the response was sent with. */
  readonly statusCode: number;
}

/**
 * Options of {@link rateLimitGate}: those of `rateLimit()` but `handler` (a gate throws its 429
 * for the framework's error handling), their functions given the framework's own request
 * (Express's `req`, Fastify's `request`, a Fetch `Request`), and the proxies to trust.
 * @example
 * const options: RateLimitGateOptions = { limit: 100, windowMs: 60_000, trustProxy: "loopback" };
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export interface RateLimitGateOptions<Request = unknown>
  extends Omit<
    RateLimitOptions,
    "limit" | "key" | "cost" | "skip" | "message" | "handler" | "requestWasSuccessful"
  > {
  /** Units per window: a positive integer, or a function of the request (sync or async) answering one. */
  limit?: number | ((request: Request) => number | Promise<number>);
  /**
   * The bucket a request counts in; `undefined` (or `null`, `""`) for the default. `"client"`:
   * every request by its client address, whoever it authenticates as (a limiter in front of
   * authentication).
   * @default `u:<principal id>` when `@svc/auth` recorded a principal for the request, else
   * `ip:<client IP bucket>`; a request with credentials nothing authenticated is refused (500)
   */
  key?: "client" | ((request: Request) => string | undefined);
  /**
   * Units a request spends: a non-negative integer, at most the limit.
   * @default 1
   */
  cost?: number | ((request: Request) => number);
  /**
   * Requests the limiter does not count (no fields either); sync or async. One that throws fails
   * the request with a 500 (it is not skipped).
   * @default () => false
   */
  skip?: (request: Request) => boolean | Promise<boolean>;
  /**
   * The 429's message: a string, an object of RFC 9457 extension members, or a function of the request.
   * @default "Too many requests"
   */
  message?: RateLimitMessage | ((request: Request) => RateLimitMessage | Promise<RateLimitMessage>);
  /**
   * Whether a response written whole counts as successful, for `skipSuccessfulRequests` and
   * `skipFailedRequests`: the request and the response's final status. A response that was not
   * written whole (its write failed, the client went away) is not asked about: it stays counted.
   * @default (request, response) => response.statusCode < 400
   */
  requestWasSuccessful?: (request: Request, response: RateLimitResponse) => boolean | Promise<boolean>;
  /**
   * The proxies whose `X-Forwarded-For` names the client (Express's `trust proxy` forms: a hop
   * count, addresses and CIDR ranges, `true`, a function). The client's address is the
   * connection's peer when none is trusted. Not given: the framework's own setting (Express's
   * `trust proxy`, Fastify's `trustProxy` server option), and none on `node:http` and Fetch.
   * @default the framework's setting
   * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
   */
  trustProxy?: TrustOption;
  /**
   * The one family of forwarded fields the client is read from behind a trusted proxy, the one it
   * sets: `"x-forwarded"` (`X-Forwarded-For`, as Express's `req.ip` and Fastify's `request.ip`
   * read) or `"forwarded"` (the `for` of RFC 7239 `Forwarded`). Never a mix: a proxy passes the
   * other family through from the client.
   * @default "x-forwarded"
   * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
   */
  forwardedHeaders?: ForwardedHeaders;
}

/**
 * Options of `rateLimit()` that write the response, which a gate leaves to the framework: refused
 * by name, so a limiter moved from Express never answers differently without saying so.
 */
const EXPRESS_ONLY: Readonly<Record<string, string>> = {
  handler:
    "a 429 is thrown for the framework's error handling to render (the Express, Fastify and Fetch entries take a handler of their framework's shape)",
};

/** What each 429 a gate threw was about, for the adapters' `handler`. */
const exceededBy = new WeakMap<object, RateLimitExceeded>();

/**
 * @internal For the package's Fastify and Fetch adapters.
 *
 * The {@link RateLimitExceeded} of `error` when it is the 429 a gate threw over the limit (not the
 * one of a cost over the quota, which no wait cures); else undefined.
 */
export function limitExceeded(error: unknown): RateLimitExceeded | undefined {
  return typeof error === "object" && error !== null ? exceededBy.get(error) : undefined;
}

/**
 * A {@link Gate} of the rate limit, with what its framework adapter calls once a counted request's
 * response has been written whole, for `skipSuccessfulRequests` / `skipFailedRequests`.
 * @example
 * const limit = rateLimitGate({ limit: 100, skipFailedRequests: true });
 * const passage = await limit(req, req);
 * res.once("finish", () => limit.responded(req, res.statusCode)); // as @svc/ratelimit/node does
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface RateLimitGate<Request = unknown> extends Gate<Request> {
  /**
   * Whether the gate decides anything after the response (`skipSuccessfulRequests` or
   * `skipFailedRequests` given): when false, an adapter need not call {@link responded}.
   */
  readonly readsResponse: boolean;
  /**
   * The property of the framework's request an adapter copies the decision onto
   * (`requestPropertyName`), `undefined` when that is `false`: what the Fastify adapter declares
   * (`decorateRequest`) in each context it applies the gate in, and writes. The gate itself records
   * the decision in the request's exchange only.
   */
  readonly requestProperty: string | undefined;
  /**
   * The response to `request` (the framework's request, as the gate was given it) has been written
   * whole with `statusCode`: its units go back when `requestWasSuccessful` says its outcome is one
   * to skip. Called by the adapter from the framework's own signal that the response is complete
   * (Fastify's `onResponse` for a finished reply, a `node:http` response's `finish`, the end of a
   * Fetch `Response`'s body), never for a response whose write failed or whose client went away:
   * such a request stays counted. A request the gate did not count, or already settled, is ignored.
   */
  responded(request: Request, statusCode: number): void;
}

/**
 * The rate limit as a framework-free {@link Gate}: a request's view (fields and connection) and
 * the framework's request in; out, the {@link Passage} of the rate limit fields (`RateLimit`,
 * `RateLimit-Policy`, `X-RateLimit-*`), or a thrown 429 `HttpError` with `Retry-After` and the
 * same fields. The client's address is the view's `socket.remoteAddress`, or behind proxies
 * named in `trustProxy` the client they forward for. A request is counted when it arrives; with
 * `skipSuccessfulRequests` / `skipFailedRequests` its units go back once its response has been
 * written whole, on its final status ({@link RateLimitGate.responded}). The framework entries
 * (`@svc/ratelimit/node`, `/fastify`, `/fetch`) apply it with the kernel's gate adapters and call
 * `responded`; so can any other.
 *
 * Several gates on one request (a global limit and a route's) are all reported, as with
 * `rateLimit()`: each is a policy in `RateLimit-Policy` and `RateLimit`.
 *
 * @example
 * const limit = rateLimitGate({ limit: 100, windowMs: 60_000 });
 * const passage = await limit(req, req); // throws the 429 over the limit
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export function rateLimitGate<Request extends object = object>(
  options: RateLimitGateOptions<Request>,
): RateLimitGate<Request> {
  if (typeof options === "object" && options !== null) {
    for (const name of Object.keys(EXPRESS_ONLY)) {
      if ((options as Record<string, unknown>)[name] !== undefined)
        throw optionError(
          "rate limit",
          name,
          `${name} is an option of the framework entries, which write the response; here ${EXPRESS_ONLY[name]}`,
        );
    }
  }
  const { trustProxy, forwardedHeaders, ...rest } = (options ?? {}) as RateLimitGateOptions<Request>;
  const config = resolveConfig(rest as unknown as RateLimitOptions);
  const family = checkForwardedHeaders(forwardedHeaders, "ratelimit");
  const trust =
    trustProxy === undefined || trustProxy === false ? undefined : compileTrust(trustProxy, "ratelimit");
  const { state, decide } = createDecider(config, true);
  /** The trust the address is resolved behind when the gate has its own; else the framework's, in the exchange. */
  const ownTrust = trustProxy === false ? false : trust;
  const readsResponse = config.refundSuccessful || config.refundFailed;
  /** What each counted request spent, until its response is written (weakly: one never written is dropped). */
  const counted = requestSlot<Counted>();
  const successful = config.requestWasSuccessful as unknown as (
    request: Request,
    response: RateLimitResponse,
  ) => boolean | Promise<boolean>;
  /** A verdict as the gate's outcome, remembering what an allowed request spent. */
  const outcome = (verdict: Verdict, native: Request): Passage | undefined => {
    if (readsResponse && verdict.kind === "allowed" && verdict.units > 0) counted.set(native, verdict);
    return outcomeOf(verdict);
  };
  // No option given: the framework's own setting, as the view carries it (Express's `trust
  // proxy`, Fastify's `trustProxy`), else none.
  const address = (view: RequestView): string | undefined =>
    trustProxy === false ? view.socket?.remoteAddress : requestFacts(view, trust, family).client || undefined;

  const gate = function rateLimitGate(view: RequestView, native: Request) {
    const asked: Asked = { view, native, address: address(view), owner: native, trust: ownTrust };
    let verdict: Verdict | undefined;
    let settled: ((verdict: Verdict) => void) | undefined;
    decide(asked, (v) => {
      if (settled === undefined) verdict = v;
      else settled(v);
    });
    // A synchronous store (memory) decides at once: no promise, no microtask.
    if (verdict !== undefined) return outcome(verdict, native);
    return new Promise<Passage | undefined>((resolve, reject) => {
      settled = (v) => {
        try {
          resolve(outcome(v, native));
        } catch (err) {
          reject(err);
        }
      };
    });
  };
  return Object.assign(gate, {
    readsResponse,
    requestProperty: config.requestProperty,
    responded(request: Request, statusCode: number): void {
      const spent = counted.get(request);
      if (spent === undefined) return;
      counted.delete(request);
      afterResponse(
        config,
        state,
        spent,
        () => successful(request, { statusCode }),
        "requestWasSuccessful(request, response)",
      );
    },
  });
}

/** A verdict as a gate's outcome: the fields to pass with, or the refusal thrown. */
function outcomeOf(verdict: Verdict): Passage | undefined {
  switch (verdict.kind) {
    case "pass":
      return undefined;
    case "allowed":
      return verdict.fields === undefined ? undefined : { fields: verdict.fields };
    case "refuse":
      throw verdict.error;
    case "denied":
      exceededBy.set(verdict.error, {
        statusCode: 429,
        message: verdict.message,
        error: verdict.error,
        info: verdict.info,
        retryAfterSeconds: verdict.retryAfterSeconds,
      });
      throw verdict.error;
  }
}
