/**
 * `@svc/ratelimit/fetch`: the rate limit on the Fetch API, as Hono middleware and around any
 * Fetch handler.
 *
 * @packageDocumentation
 */
import type { Gate } from "@svc/kernel";
import { type ConnectionInfo, type FetchMiddleware, fetchGate, fetchView } from "@svc/kernel/fetch";
import { refusedOption } from "@svc/kernel/internal";
import { type RateLimitGateOptions, rateLimitGate } from "@svc/ratelimit";

/** Options of the Fetch {@link rateLimit}: the gate's, and where the client's address comes from. */
export interface FetchRateLimitOptions extends RateLimitGateOptions<Request> {
  /**
   * The connection a `Request` came on, for its client's address: a Fetch `Request` does not
   * carry it. Under Hono on `@hono/node-server` it is read from there without this option; on
   * another server pass what it gives (`Deno.serve`'s `info.remoteAddr`, Bun's
   * `server.requestIP(request)`), or a `key` of your own. A request with neither an address nor a
   * key is not counted (`failMode` decides, as for a store failure), so one of them is needed.
   * @default the connection `@hono/node-server` gives, else none
   */
  connection?: (request: Request) => ConnectionInfo | undefined;
}

/**
 * The rate limit on the Fetch API: Hono middleware (`app.use(rateLimit(options))`), and
 * `.wrap(handler)` for any Fetch server. An allowed request's response carries the rate limit
 * fields (the route's own fields of the same name win); over the limit the 429, with
 * `Retry-After` and the same fields, is thrown for Hono's `app.onError` or `withErrors()` of
 * `@svc/errors/fetch` to answer.
 *
 * @example
 * const app = new Hono();
 * app.use(rateLimit({ limit: 100, windowMs: 60_000 }));
 * app.onError(onError());
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export function rateLimit(options: FetchRateLimitOptions): FetchMiddleware {
  if (typeof options !== "object" || options === null) return fetchGate(rateLimitGate<Request>(options));
  const { connection, ...rest } = options;
  if (connection !== undefined && typeof connection !== "function")
    throw refusedOption(
      "ratelimit",
      "connection",
      connection,
      "a function (request) => { address } | undefined",
      "rate limit: connection",
    );
  const gate = rateLimitGate<Request>(rest);
  const connected: Gate<Request> =
    connection === undefined
      ? gate
      : (_view, request) => gate(fetchView(request, connection(request)), request);
  return fetchGate(connected);
}
