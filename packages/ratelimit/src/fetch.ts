/**
 * `@svc/ratelimit/fetch`: the rate limit on the Fetch API, as Hono middleware and around any
 * Fetch handler.
 *
 * @packageDocumentation
 */
import { type Gate, isToken } from "@svc/kernel";
import {
  type ConnectionInfo,
  type FetchHandler,
  type FetchMiddleware,
  fetchGate,
  fetchView,
  type HonoContextLike,
  withPassage,
} from "@svc/kernel/fetch";
import {
  buildResponse,
  checkOptionType,
  isCodedBody,
  optionError,
  refusedOption,
} from "@svc/kernel/internal";
import {
  limitExceeded,
  type RateLimitExceeded,
  type RateLimitGate,
  type RateLimitGateOptions,
  rateLimitGate,
} from "@svc/ratelimit";

export type { RateLimitExceeded } from "@svc/ratelimit";

/**
 * Answers a request over the limit with a `Response` of its own, in place of the thrown 429:
 * `Retry-After` and the rate limit fields are added to it (its own fields of the same name win).
 * @example
 * const handler: FetchRateLimitHandler = (_request, exceeded) =>
 *   Response.json({ slowDown: exceeded.retryAfterSeconds }, { status: 429 });
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export type FetchRateLimitHandler = (
  request: Request,
  exceeded: RateLimitExceeded,
) => Response | Promise<Response>;

/** Options of the Fetch {@link rateLimit}: the gate's, and where the client's address comes from. */
export interface FetchRateLimitOptions extends RateLimitGateOptions<Request> {
  /**
   * Called for a request over the limit, its `Response` the answer (see
   * {@link FetchRateLimitHandler}); the same option as the Express middleware's and the Fastify
   * plugin's `handler`. Not for a request whose `cost` is more than the limit: no wait lets it
   * through, so its 429 (code `rate_limit_cost_exceeds_quota`) is thrown.
   * @default none: the 429 is thrown for `app.onError` or `withErrors()`
   */
  handler?: FetchRateLimitHandler;
  /**
   * The connection a `Request` came on, for its client's address: a Fetch `Request` does not
   * carry it. Under Hono it is read without this option from what the server hands Hono as
   * `c.env` (`@hono/node-server`, `Bun.serve`, `Deno.serve`: `honoConnection(c)` of
   * `@svc/kernel/fetch`); elsewhere pass what the server gives (`Deno.serve`'s `info.remoteAddr`,
   * Bun's `server.requestIP(request)`), or a `key` of your own. A request with neither a principal, an
   * address nor a key is refused with a 500 (code `rate_limit_no_client_address`, the limiter's
   * `logger` saying which options give an address), never passed; `.wrap(handler)` with no
   * `info`, no `connection`, no `clientAddressHeader`, no `trustProxy` and no `key` of your own is
   * refused at once (`ERR_SVC_RATELIMIT_CONNECTION`), since no request could be counted.
   * @default under Hono, the connection `honoConnection(c)` reads; else none
   */
  connection?: (request: Request) => ConnectionInfo | undefined;
  /**
   * A request field the proxy in front of the application sets to the client's address
   * (`"cf-connecting-ip"` on Cloudflare): the client's address is read from it, in place of the
   * connection's. Only behind such a proxy, and only where every request comes through it: the
   * field is taken as sent, so a client that can reach the application around the proxy chooses
   * its own bucket by sending the field. A request without the field is refused (500) as one
   * without an address; a value that is not an IP address counts in one shared bucket. Not with
   * `connection` or `trustProxy`.
   * @default none: the connection's address
   */
  clientAddressHeader?: string;
}

/**
 * The rate limit on the Fetch API: Hono middleware (`app.use(rateLimit(options))`), and
 * `.wrap(handler)` for any Fetch server. An allowed request's response carries the rate limit
 * fields (the route's own fields of the same name win); over the limit the 429, with
 * `Retry-After` and the same fields, is thrown for Hono's `app.onError` or `withErrors()` of
 * `@svc/errors/fetch` to answer.
 *
 * With `skipSuccessfulRequests` / `skipFailedRequests`, a counted request's units go back once its
 * `Response` has been sent whole (its body read to the end by the server; at once for one without
 * a body, and for a HEAD) with a status `requestWasSuccessful` says to skip. The response decided
 * on is the one after the route: under Hono, `c.res` after `await next()`, an error's included
 * (`app.onError`'s); with `.wrap(handler)`, the `Response` the handler returns, so wrap the error
 * handling inside (`withErrors(limit.wrap(withErrors(handler)))`): a handler that throws leaves
 * the request counted. A body the server stops reading or that fails, and a request whose
 * `signal` the server aborted (the client went away), leave it counted too.
 *
 * @example
 * const app = new Hono();
 * app.use(rateLimit({ limit: 100, windowMs: 60_000 }));
 * app.onError(onError());
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export function rateLimit(options: FetchRateLimitOptions): FetchMiddleware {
  if (typeof options !== "object" || options === null) return fetchGate(rateLimitGate<Request>(options));
  const { connection, clientAddressHeader, handler, ...rest } = options;
  checkOptionType(
    "ratelimit",
    "handler",
    handler,
    "function",
    "a function (request, exceeded) => Response",
    "rate limit: handler",
  );
  checkOptionType(
    "ratelimit",
    "connection",
    connection,
    "function",
    "a function (request) => { address } | undefined",
    "rate limit: connection",
  );
  const connectionOf =
    clientAddressHeader === undefined ? connection : fromHeader(clientAddressHeader, options);
  const gate = rateLimitGate<Request>(rest);
  const connected: Gate<Request> =
    connectionOf === undefined
      ? gate
      : (_view, request) => gate(fetchView(request, connectionOf(request)), request);
  const applied = answering(fetchGate(connected), handler);
  const limited = gate.readsResponse ? settling(applied, gate) : applied;
  // Without Hono's connection, `.wrap(handler)` has only what it is given: with no address and no
  // key of its own, every request not authenticated before it would be refused.
  const addressed =
    connectionOf !== undefined ||
    (rest.trustProxy !== undefined && rest.trustProxy !== false) ||
    typeof rest.key === "function";
  return addressed ? limited : wrapNeedsInfo(limited);
}

/**
 * The connection of {@link FetchRateLimitOptions.clientAddressHeader}: the field's value as the
 * client's address. Checked once: a field name (RFC 9110 §5.1), neither with `connection` nor
 * with `trustProxy`, whose hops the field would contradict.
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.1
 */
function fromHeader(
  name: unknown,
  options: FetchRateLimitOptions,
): (request: Request) => ConnectionInfo | undefined {
  if (typeof name !== "string" || !isToken(name))
    throw refusedOption(
      "ratelimit",
      "clientAddressHeader",
      name,
      'a field name such as "cf-connecting-ip"',
      "rate limit: clientAddressHeader",
    );
  if (options.connection !== undefined || (options.trustProxy !== undefined && options.trustProxy !== false))
    throw optionError(
      "ratelimit",
      "clientAddressHeader",
      "rate limit: clientAddressHeader names the client itself; give it without connection and trustProxy",
    );
  return (request) => {
    const address = request.headers.get(name)?.trim();
    return address === undefined || address === "" ? undefined : { address };
  };
}

/** `limited`, whose `.wrap(handler)` must be given the connection (`info`). */
function wrapNeedsInfo(limited: FetchMiddleware): FetchMiddleware {
  const middleware = (c: HonoContextLike, next: () => Promise<void>) => limited(c, next);
  return Object.assign(middleware, {
    wrap(handler: FetchHandler, info?: (request: Request) => ConnectionInfo | undefined): FetchHandler {
      if (info === undefined)
        throw optionError(
          "ratelimit",
          "connection",
          "rate limit: .wrap(handler) was given no info, and the limiter no connection, clientAddressHeader, trustProxy or key: a Fetch Request carries no client address, so no request could be counted. Give .wrap(handler, (request) => ({ address })) or connection (Deno.serve's info.remoteAddr, Bun's server.requestIP(request)), clientAddressHeader behind a proxy that sets one, or a key",
        );
      return limited.wrap(handler, info);
    },
  });
}

/** `applied`, telling `gate` the status of each response once it has been sent whole. */
function settling(applied: FetchMiddleware, gate: RateLimitGate<Request>): FetchMiddleware {
  const middleware = async (c: HonoContextLike, next: () => Promise<void>): Promise<Response | undefined> => {
    const answered = await applied(c, next);
    if (answered !== undefined) return answered;
    c.res = whenSent(c.res, c.req.raw, gate);
    return undefined;
  };
  return Object.assign(middleware, {
    wrap(handler: FetchHandler, info?: (request: Request) => ConnectionInfo | undefined): FetchHandler {
      const wrapped = applied.wrap(handler, info);
      return async (request: Request) => whenSent(await wrapped(request), request, gate);
    },
  });
}

/**
 * `response`, calling `gate.responded` with its status once the server has read its body to the
 * end: the last point a Fetch handler sees of a response being sent. A response without content
 * (no body, or the answer to a HEAD, whose body the server drops) is complete as it is handed
 * over. A body the server cancels or that fails is never complete, and neither is one for a
 * request whose `signal` the server aborted (the Fetch servers' word that the client went away:
 * `@hono/node-server`, Deno, Bun): the request stays counted.
 */
function whenSent(response: Response, request: Request, gate: RateLimitGate<Request>): Response {
  const status = response.status;
  const body = response.body;
  const sent = (): void => {
    if (!request.signal.aborted) gate.responded(request, status);
  };
  if (body === null || request.method.toUpperCase() === "HEAD") {
    sent();
    return response;
  }
  const reader = body.getReader();
  const watched = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = await reader.read();
      if (chunk.done) {
        controller.close();
        sent();
      } else controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  const init = { status, statusText: response.statusText, headers: response.headers };
  return buildResponse(watched, init, isCodedBody(response));
}

/**
 * `applied`, a refusal over the limit of its own gate (thrown before the route runs, so never
 * another limiter's behind it) answered by `handler`, with `Retry-After` and the rate limit fields.
 */
function answering(applied: FetchMiddleware, handler: FetchRateLimitHandler | undefined): FetchMiddleware {
  if (handler === undefined) return applied;
  const answer = async (request: Request, err: unknown, passed: boolean): Promise<Response> => {
    const exceeded = passed ? undefined : limitExceeded(err);
    if (exceeded === undefined) throw err;
    // RFC 6585 §4: 429 "MAY include a Retry-After header"; added as the error handler would.
    return withPassage(await handler(request, exceeded), { fields: exceeded.error.headers });
  };
  const middleware = async (c: HonoContextLike, next: () => Promise<void>): Promise<Response | undefined> => {
    let passed = false;
    try {
      return await applied(c, () => {
        passed = true;
        return next();
      });
    } catch (err) {
      return answer(c.req.raw, err, passed);
    }
  };
  return Object.assign(middleware, {
    wrap(inner: FetchHandler, info?: (request: Request) => ConnectionInfo | undefined): FetchHandler {
      const passedBy = new WeakSet<Request>();
      const wrapped = applied.wrap((request) => {
        passedBy.add(request);
        return inner(request);
      }, info);
      return async (request: Request) => {
        try {
          return await wrapped(request);
        } catch (err) {
          return answer(request, err, passedBy.has(request));
        }
      };
    },
  });
}
