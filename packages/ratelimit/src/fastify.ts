/**
 * `@svc/ratelimit/fastify`: the rate limit as a Fastify 5 plugin and as a route's hook.
 *
 * @packageDocumentation
 */
import { requestState } from "@svc/kernel";
import { appWide, fastifyGate } from "@svc/kernel/fastify";
import {
  checkOptionType,
  optionError,
  pluginOptions,
  REGISTER_OPTIONS,
  refusedOption,
  writeRequestProperty,
} from "@svc/kernel/internal";
import {
  limitExceeded,
  type RateLimitExceeded,
  type RateLimitGate,
  type RateLimitGateOptions,
  rateLimitGate,
} from "@svc/ratelimit";
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
} from "fastify";

// The gate to build once for one budget in several contexts (`{ gate }`), from this entry too.
export {
  type RateLimitExceeded,
  type RateLimitGate,
  type RateLimitGateOptions,
  rateLimitGate,
} from "@svc/ratelimit";

/**
 * Answers a request over the limit instead of Fastify's error handler: the reply already carries
 * `Retry-After` and the rate limit fields. A handler that sends nothing leaves the 429 to the
 * error handler; one that throws or rejects passes its error there.
 * @example
 * const handler: FastifyRateLimitHandler = (request, reply, exceeded) => {
 *   reply.code(429).send({ slowDown: exceeded.retryAfterSeconds });
 * };
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export type FastifyRateLimitHandler = (
  request: FastifyRequest,
  reply: FastifyReply,
  exceeded: RateLimitExceeded,
) => void | Promise<void>;

/**
 * Options of the Fastify plugin: the gate's, its functions given Fastify's `request`. The store
 * key prefix is `keyPrefix` here, since `prefix` is Fastify's own register option (the routes'
 * path prefix), which the plugin leaves to Fastify.
 */
export interface FastifyRateLimitOptions extends Omit<RateLimitGateOptions<FastifyRequest>, "prefix"> {
  /**
   * Called for a request over the limit, in place of Fastify's error handler (see
   * {@link FastifyRateLimitHandler}); the same option as the Express middleware's and the Fetch
   * entry's `handler`. Not for a request whose `cost` is more than the limit: no wait lets it
   * through, so its 429 (code `rate_limit_cost_exceeds_quota`) goes to the error handler.
   * @default none: the 429 goes to Fastify's error handler
   */
  handler?: FastifyRateLimitHandler;
  /** Fastify's register option: the path prefix of the routes registered inside (not the store's). */
  prefix?: string;
  /**
   * Prepended to every key in the store (the limiter's `prefix`): two limiters sharing one store
   * need different ones.
   * @default ""
   */
  keyPrefix?: string;
  /**
   * A gate built once with `rateLimitGate` (of `@svc/ratelimit`), for one budget across contexts:
   * each registration given the same gate (and each `rateLimitHook({ gate })`) counts in it, as
   * one Express middleware mounted twice does. Its options, store key prefix (`prefix` there) and
   * logger are set where it is built, so no other option goes with it but Fastify's register
   * options (`prefix`, `logLevel`, `logSerializers`).
   * @default a gate of this registration's own, built from its options
   */
  gate?: RateLimitGate<FastifyRequest>;
}

/**
 * The gate of `options`: the one given as `gate`, else one built from the options, with
 * Fastify's logger when none is given.
 */
function gateOf(
  options: FastifyRateLimitOptions,
  log: FastifyInstance["log"] | undefined,
): RateLimitGate<FastifyRequest> {
  if (typeof options !== "object" || options === null) return rateLimitGate<FastifyRequest>(options);
  if (options.gate !== undefined) return givenGate(options);
  // Fastify's own register options (`prefix` the routes' path prefix) are not the limiter's.
  const { keyPrefix, handler: _handler, ...rest } = pluginOptions(options);
  const gateOptions = rest as RateLimitGateOptions<FastifyRequest>;
  if (keyPrefix !== undefined) gateOptions.prefix = keyPrefix;
  if (gateOptions.logger === undefined && log !== undefined) gateOptions.logger = log;
  return rateLimitGate<FastifyRequest>(gateOptions);
}

/** `options.gate`, checked: a gate of `rateLimitGate`, with none of the options it was built with. */
function givenGate(options: FastifyRateLimitOptions): RateLimitGate<FastifyRequest> {
  const { gate } = options;
  if (
    typeof gate !== "function" ||
    typeof gate.responded !== "function" ||
    typeof gate.readsResponse !== "boolean"
  )
    throw refusedOption(
      "ratelimit",
      "gate",
      gate,
      "a gate built with rateLimitGate(options) of @svc/ratelimit",
      "rate limit: gate",
    );
  const own = Object.keys(options).filter(
    (name) =>
      name !== "gate" &&
      name !== "handler" &&
      !REGISTER_OPTIONS.includes(name) &&
      (options as Record<string, unknown>)[name] !== undefined,
  );
  if (own.length > 0)
    throw optionError(
      "ratelimit",
      "gate",
      `rate limit: pass either gate or ${own.join(", ")}, not both: a gate's options (its store key prefix is its prefix) are set where it is built`,
    );
  return gate;
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
 * read with `requestState(request).rateLimit` of `@svc/kernel` (and on `request.rateLimit`,
 * declared with `decorateRequest`, under the `requestPropertyName` compatibility option). With
 * `skipSuccessfulRequests` / `skipFailedRequests`, an `onResponse` hook in the same context gives
 * a counted request's units back when its reply finished (written whole) with a status
 * `requestWasSuccessful` says to skip; a reply that did not finish (the client went away, the
 * write failed) stays counted.
 *
 * The client is the connection's peer, or behind the proxies named in `trustProxy` (Express's
 * forms; not given, Fastify's own `trustProxy` server option) the client they forward for, read
 * from the one family `forwardedHeaders` names (`X-Forwarded-For` by default).
 *
 * Each registration built from options has a gate, hence a budget, of its own: registered in two
 * sibling contexts, each counts its own requests. For one budget across contexts, build the gate
 * once with `rateLimitGate` and register `{ gate }` in each.
 *
 * @example
 * await app.register(rateLimit, { limit: 100, windowMs: 60_000 });
 * @example
 * const shared = rateLimitGate<FastifyRequest>({ limit: 100, windowMs: 60_000, logger: app.log });
 * await app.register(async (a) => { await a.register(rateLimit, { gate: shared }); }, { prefix: "/a" });
 * await app.register(async (b) => { await b.register(rateLimit, { gate: shared }); }, { prefix: "/b" });
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export const rateLimit: FastifyPluginCallback<FastifyRateLimitOptions> = appWide(
  "@svc/ratelimit",
  function svcRateLimit(app: FastifyInstance, options: FastifyRateLimitOptions, done: (err?: Error) => void) {
    let gate: RateLimitGate<FastifyRequest>;
    let handler: FastifyRateLimitHandler | undefined;
    try {
      gate = gateOf(options, app.log);
      handler = handlerOf(options);
    } catch (err) {
      done(err as Error);
      return;
    }
    // Declared in every context the gate applies in, a shared gate's too.
    const name = gate.requestProperty;
    if (name !== undefined && !app.hasRequestDecorator(name)) app.decorateRequest(name, null);
    app.addHook("onRequest", answering(recording(fastifyGate(gate), name), handler));
    if (gate.readsResponse) {
      const settled = gate;
      // Fastify runs onResponse when the reply finished or its write failed: only a finished
      // reply's status is decided on.
      app.addHook("onResponse", function svcRateLimitResponse(request, reply, next) {
        if (reply.raw.writableFinished) settled.responded(request, reply.statusCode);
        next();
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
 * Given `{ gate }`, the hook counts in that gate's budget, which the plugin's registrations given
 * the same gate share.
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
  const hook = answering(
    recording(fastifyGate(gate), gate.requestProperty),
    handlerOf(options as FastifyRateLimitOptions),
  );
  if (!gate.readsResponse) return hook;
  // A route's hook adds no onResponse hook of its own: the response's completion, with its status.
  // `done` is only called when the request goes on: a refusal goes to the error handler, an
  // answer was sent, and neither counts its response.
  return followed(hook, (err, request, reply, done) => {
    if (err !== undefined && err !== null) {
      done(err);
      return;
    }
    reply.raw.once("finish", () => gate.responded(request, reply.statusCode));
    done();
  });
}

/** The gate's hook as it is called (a callback hook, see `fastifyGate`). */
type RouteHook = (
  this: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  done: (err?: Error) => void,
) => void;

/** What follows a hook: given what it passed its `done`, the request, the reply and the `done` to call. */
type FollowUp = (
  err: Error | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
  done: (err?: Error) => void,
) => void;

/** `hook`, then `followUp` in place of its `done`. */
function followed(hook: onRequestHookHandler, followUp: FollowUp): onRequestHookHandler {
  return function svcRateLimitHook(
    this: FastifyInstance,
    request: FastifyRequest,
    reply: FastifyReply,
    done: (err?: Error) => void,
  ) {
    (hook as unknown as RouteHook).call(this, request, reply, (err?: Error) =>
      followUp(err, request, reply, done),
    );
  } as onRequestHookHandler;
}

/** `options.handler`, checked: a function, or none. */
function handlerOf(options: FastifyRateLimitOptions): FastifyRateLimitHandler | undefined {
  const handler = typeof options === "object" && options !== null ? options.handler : undefined;
  checkOptionType(
    "ratelimit",
    "handler",
    handler,
    "function",
    "a function (request, reply, exceeded) => void",
    "rate limit: handler",
  );
  return handler;
}

/**
 * `hook`, the request's tightest rate-limit decision so far (its exchange's) then copied onto
 * `request[name]`: the `requestPropertyName` compatibility option. Without a name, `hook` itself.
 */
function recording(hook: onRequestHookHandler, name: string | undefined): onRequestHookHandler {
  if (name === undefined) return hook;
  return followed(hook, (err, request, _reply, done) => {
    const info = requestState(request).rateLimit;
    if (info !== undefined) writeRequestProperty(request, name, info);
    done(err);
  });
}

/**
 * `hook`, its refusals over the limit given to `handler` with `Retry-After` and the rate limit
 * fields on the reply; every other outcome as the hook decided it.
 */
function answering(
  hook: onRequestHookHandler,
  handler: FastifyRateLimitHandler | undefined,
): onRequestHookHandler {
  if (handler === undefined) return hook;
  return followed(hook, (err, request, reply, done) => {
    const exceeded = err === undefined || err === null ? undefined : limitExceeded(err);
    if (exceeded === undefined) {
      done(err);
      return;
    }
    // RFC 6585 §4: 429 "MAY include a Retry-After header"; set as the error handler would.
    reply.headers(exceeded.error.headers);
    let answered: void | Promise<void>;
    try {
      answered = handler(request, reply, exceeded);
    } catch (thrown) {
      done(thrown as Error);
      return;
    }
    const settled = (): void => {
      // Sent: Fastify runs no further hook. Not sent: the default 429.
      if (!reply.sent) done(exceeded.error);
    };
    if (answered !== undefined && typeof (answered as Promise<void>).then === "function")
      (answered as Promise<void>).then(settled, (thrown: unknown) => done(thrown as Error));
    else settled();
  });
}
