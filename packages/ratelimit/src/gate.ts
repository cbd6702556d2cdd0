import {
  compileTrust,
  type Gate,
  type Passage,
  type RequestView,
  requestFacts,
  type TrustOption,
} from "@svc/kernel";
import { type Asked, createDecider, type Verdict } from "./core.js";
import { optionError } from "./option-error.js";
import { type RateLimitMessage, type RateLimitOptions, resolveConfig } from "./options.js";

/**
 * Options of {@link rateLimitGate}: those of `rateLimit()` that do not read the response, their
 * functions given the framework's own request (Express's `req`, Fastify's `request`, a Fetch
 * `Request`), and the proxies to trust.
 * @example
 * const options: RateLimitGateOptions = { limit: 100, windowMs: 60_000, trustProxy: "loopback" };
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export interface RateLimitGateOptions<Request = unknown>
  extends Omit<
    RateLimitOptions,
    | "limit"
    | "key"
    | "cost"
    | "skip"
    | "message"
    | "handler"
    | "skipSuccessfulRequests"
    | "skipFailedRequests"
    | "requestWasSuccessful"
  > {
  /** Units per window: a positive integer, or a function of the request (sync or async) answering one. */
  limit?: number | ((request: Request) => number | Promise<number>);
  /**
   * The bucket a request counts in; `undefined` (or `null`, `""`) for the default.
   * @default `u:<principal.id>` when the request has a `principal`, else `ip:<client IP bucket>`
   */
  key?: (request: Request) => string | undefined;
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
   * The proxies whose `X-Forwarded-For` names the client (Express's `trust proxy` forms: a hop
   * count, addresses and CIDR ranges, `true`, a function). The client's address is the
   * connection's peer when none is trusted.
   * @default false
   * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
   */
  trustProxy?: TrustOption;
}

/**
 * Options of `rateLimit()` that read the response, which no gate sees: refused by name, so a
 * limiter moved from Express never counts differently without saying so.
 */
const RESPONSE_OPTIONS: Readonly<Record<string, string>> = {
  handler: "a 429 is thrown for the framework's error handling to render",
  skipSuccessfulRequests: "a request is counted when it arrives, whatever its response",
  skipFailedRequests: "a request is counted when it arrives, whatever its response",
  requestWasSuccessful: "a request is counted when it arrives, whatever its response",
};

/**
 * The rate limit as a framework-free {@link Gate}: a request's view (fields and connection) and
 * the framework's request in; out, the {@link Passage} of the rate limit fields (`RateLimit`,
 * `RateLimit-Policy`, `X-RateLimit-*`), or a thrown 429 `HttpError` with `Retry-After` and the
 * same fields. The client's address is the view's `socket.remoteAddress`, or behind proxies
 * named in `trustProxy` the client they forward for. A request is counted when it arrives: the
 * decision never depends on the response. The framework entries (`@svc/ratelimit/node`,
 * `/fastify`, `/fetch`) apply it with the kernel's gate adapters; so can any other.
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
): Gate<Request> {
  if (typeof options === "object" && options !== null) {
    for (const name of Object.keys(RESPONSE_OPTIONS)) {
      if ((options as Record<string, unknown>)[name] !== undefined)
        throw optionError(
          "rate limit",
          name,
          `${name} is an option of the Express middleware only, which sees the response; here ${RESPONSE_OPTIONS[name]}`,
        );
    }
  }
  const { trustProxy, ...rest } = (options ?? {}) as RateLimitGateOptions<Request>;
  const config = resolveConfig(rest as unknown as RateLimitOptions);
  const trust =
    trustProxy === undefined || trustProxy === false ? undefined : compileTrust(trustProxy, "ratelimit");
  const { decide } = createDecider(config, true);
  const address = (view: RequestView): string | undefined =>
    trust === undefined ? view.socket?.remoteAddress : requestFacts(view, trust).client || undefined;

  return function rateLimitGate(view, native) {
    const asked: Asked = { view, native, address: address(view), owner: native };
    let verdict: Verdict | undefined;
    let settled: ((verdict: Verdict) => void) | undefined;
    decide(asked, (v) => {
      if (settled === undefined) verdict = v;
      else settled(v);
    });
    // A synchronous store (memory) decides at once: no promise, no microtask.
    if (verdict !== undefined) return outcomeOf(verdict);
    return new Promise<Passage | undefined>((resolve, reject) => {
      settled = (v) => {
        try {
          resolve(outcomeOf(v));
        } catch (err) {
          reject(err);
        }
      };
    });
  };
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
      throw verdict.error;
  }
}
