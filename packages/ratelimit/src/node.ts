/**
 * `@svc/ratelimit/node`: the rate limit on plain `node:http`.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { nodeGate } from "@svc/kernel/node";
import { type RateLimitGateOptions, rateLimitGate } from "@svc/ratelimit";

/** Options of the `node:http` {@link rateLimit}: the gate's, its functions given the `node:http` request. */
export type NodeRateLimitOptions = RateLimitGateOptions<IncomingMessage>;

/**
 * The rate limit on `node:http`: resolves `false` when the request goes on (the rate limit fields
 * are set on `res`), and rejects with the 429 (`Retry-After` and the same fields) for the
 * server's error handling to answer (`errorResponder()` of `@svc/errors/node`). It never resolves
 * `true`: the limiter answers nothing itself. The client is the connection's peer, or behind the
 * proxies named in `trustProxy` the client they forward for. With `skipSuccessfulRequests` /
 * `skipFailedRequests`, a counted request's units go back once `res` has finished (written whole)
 * with a status `requestWasSuccessful` says to skip; a response that never finishes (the client
 * went away, the write failed) stays counted.
 *
 * @example
 * const limit = rateLimit({ limit: 100, windowMs: 60_000 });
 * createServer(async (req, res) => {
 *   try {
 *     await limit(req, res);
 *     res.end("hello");
 *   } catch (err) {
 *     sendError(err, req, res);
 *   }
 * });
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export function rateLimit(
  options: NodeRateLimitOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  const gate = rateLimitGate<IncomingMessage>(options);
  const apply = nodeGate(gate);
  if (!gate.readsResponse) return apply;
  return async function svcRateLimit(req, res) {
    const answered = await apply(req, res);
    // The response's own completion, with its final status: never the connection's events.
    res.once("finish", () => gate.responded(req, res.statusCode));
    return answered;
  };
}
