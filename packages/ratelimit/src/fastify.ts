/**
 * `@svc/ratelimit/fastify`: the rate limit as a Fastify 5 plugin and as a route's hook.
 *
 * @packageDocumentation
 */
import { appWide, fastifyGate } from "@svc/kernel/fastify";
import { refusedOption } from "@svc/kernel/internal";
import { type RateLimitGate, type RateLimitGateOptions, rateLimitGate } from "@svc/ratelimit";
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
} from "fastify";

/**
 * Options of the Fastify plugin: the gate's, its functions given Fastify's `request`. The store
 * key prefix is `keyPrefix` here, since `prefix` is Fastify's own register option (the routes'
 * path prefix), which the plugin leaves to Fastify.
 */
export interface FastifyRateLimitOptions extends Omit<RateLimitGateOptions<FastifyRequest>, "prefix"> {
  /** Fastify's register option: the path prefix of the routes registered inside (not the store's). */
  prefix?: string | undefined;
  /**
   * Prepended to every key in the store (the limiter's `prefix`): two limiters sharing one store
   * need different ones.
   * @default ""
   */
  keyPrefix?: string;
}

/** Fastify's own register options, which it hands to the plugin too: not the limiter's. */
const REGISTER_OPTIONS = ["prefix", "logLevel", "logSerializers"];

/** The gate of `options`, with Fastify's logger when none is given. */
function gateOf(
  options: FastifyRateLimitOptions,
  log: FastifyInstance["log"] | undefined,
): RateLimitGate<FastifyRequest> {
  if (typeof options !== "object" || options === null) return rateLimitGate<FastifyRequest>(options);
  const { keyPrefix, ...rest } = options as FastifyRateLimitOptions & Record<string, unknown>;
  for (const name of REGISTER_OPTIONS) delete rest[name];
  const gateOptions = rest as RateLimitGateOptions<FastifyRequest>;
  if (keyPrefix !== undefined) gateOptions.prefix = keyPrefix;
  if (gateOptions.logger === undefined && log !== undefined) gateOptions.logger = log;
  return rateLimitGate<FastifyRequest>(gateOptions);
}

/**
 * The rate limit as a Fastify plugin: `app.register(rateLimit, options)` adds an `onRequest`
 * hook to the context it is registered in, so it counts that context's routes and its
 * children's: registered on the app, every route; registered inside a scope
 * (`app.register(async (api) => { await api.register(rateLimit, …); … }, { prefix: "/api" })`),
 * that scope's routes alone, as `@fastify/rate-limit` is scoped. An allowed request's reply
 * carries the rate limit fields; over the limit the 429, with `Retry-After` and the same fields,
 * goes to Fastify's error handler (`errorPlugin` of `@svc/errors/fastify`). Store failures and
 * `trust proxy` mistakes are logged on Fastify's logger unless `logger` is given. The decision is
 * left on `request.rateLimit` (`requestPropertyName`), declared with `decorateRequest`. With
 * `skipSuccessfulRequests` / `skipFailedRequests`, an `onResponse` hook in the same context gives
 * a counted request's units back when its reply finished (written whole) with a status
 * `requestWasSuccessful` says to skip; a reply that did not finish (the client went away, the
 * write failed) stays counted.
 *
 * The client is the connection's peer, or behind the proxies named in `trustProxy` (the forms of
 * Fastify's own `trustProxy`) the client they forward for.
 *
 * @example
 * await app.register(rateLimit, { limit: 100, windowMs: 60_000 });
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export const rateLimit: FastifyPluginCallback<FastifyRateLimitOptions> = appWide(
  "@svc/ratelimit",
  function svcRateLimit(app: FastifyInstance, options: FastifyRateLimitOptions, done: (err?: Error) => void) {
    let gate: RateLimitGate<FastifyRequest>;
    try {
      gate = gateOf(options, app.log);
    } catch (err) {
      done(err as Error);
      return;
    }
    const name = options.requestPropertyName ?? "rateLimit";
    if (name !== false && !app.hasRequestDecorator(name)) app.decorateRequest(name, null);
    app.addHook("onRequest", fastifyGate(gate));
    if (gate.readsResponse) {
      const settled = gate;
      // Fastify runs onResponse when the reply finished or its write failed: only a finished
      // reply's status is decided on.
      app.addHook("onResponse", async function svcRateLimitResponse(request, reply) {
        if (reply.raw.writableFinished) settled.responded(request, reply.statusCode);
      });
    }
    done();
  },
);

/**
 * The rate limit as one route's `onRequest` hook, for a limit of its own beside (or instead of)
 * the plugin's: `app.post("/search", { onRequest: rateLimitHook({ limit: 10 }) }, search)`. Both
 * are reported on the route's responses. Store failures are logged on `logger` (pass `app.log`
 * for Fastify's), by default one JSON line on stderr. With `skipSuccessfulRequests` /
 * `skipFailedRequests`, a counted request's units go back when its reply has finished (written
 * whole: the `finish` of the reply's response) with a status `requestWasSuccessful` says to skip.
 *
 * @example
 * app.post("/search", { onRequest: rateLimitHook({ limit: 10, policyName: "search" }) }, search);
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export function rateLimitHook(options: Omit<FastifyRateLimitOptions, "prefix">): onRequestHookHandler {
  if (typeof options === "object" && options !== null && "prefix" in options)
    throw refusedOption(
      "ratelimit",
      "prefix",
      (options as { prefix?: unknown }).prefix,
      "left out: the store key prefix is keyPrefix",
      "rate limit: prefix",
    );
  const gate = gateOf(options as FastifyRateLimitOptions, undefined);
  const hook = fastifyGate(gate);
  if (!gate.readsResponse) return hook;
  // A route's hook adds no onResponse hook of its own: the response's completion, with its status.
  return async function svcRateLimitHook(
    this: FastifyInstance,
    request: FastifyRequest,
    reply: FastifyReply,
  ) {
    const answered = await (hook as unknown as RouteHook).call(this, request, reply);
    reply.raw.once("finish", () => gate.responded(request, reply.statusCode));
    return answered;
  } as onRequestHookHandler;
}

/** The gate's hook as it is called (async: it never takes `done`). */
type RouteHook = (
  this: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply | undefined>;
