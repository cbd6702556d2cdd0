import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { auth, authorize } from "@svc/auth/fastify";
import { fastifyErrorHandler, methodNotAllowedError, notFoundError } from "@svc/errors/fastify";
import { externalFacts } from "@svc/hal";
import { allowedHosts } from "@svc/hal/fastify";
import { idempotency } from "@svc/idempotency/fastify";
import {
  compileTrust,
  exchangeIfAny,
  type HandlerContext,
  type RouteOptions,
  requestState,
  targetPath,
} from "@svc/kernel";
import {
  type ExpressRouting,
  expressRouting,
  type FastifyPipeline,
  fastifyAdapter,
  fastifyGate,
  fastifyTrustProxy,
  setReplyPassage,
} from "@svc/kernel/fastify";
import { bodyReader, closesConnection } from "@svc/negotiate";
import { crossOrigin } from "@svc/negotiate/fastify";
import { rateLimitGate } from "@svc/ratelimit";
import { soap } from "@svc/soap-envelope/fastify";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerFactory,
  LogController,
  type onRequestHookHandler,
  type preParsingHookHandler,
  type RouteHandlerMethod,
} from "fastify";
import type { Logger } from "pino";
import { accessLines, faultLogger, lazyLogger } from "./access-log.js";
import type { Config } from "./config.js";
import { fromDatabaseError } from "./errors.js";
import { linksOn } from "./links.js";
import { pipeline } from "./pipeline.js";
import { parseQueryString } from "./request.js";
import { mountCrud } from "./routes/crud.js";
import {
  authenticationOptions,
  basicOnlyOptions,
  guardBasic,
  mayCall,
  type Security,
  securityHeaders,
} from "./security.js";
import {
  type AppDeps,
  bodyOptions,
  collectionsOf,
  correlationIdOf,
  corsOptions,
  issueToken,
  mountResourceApi,
  OPS_METHODS,
  opsRoutes,
  rateLimitOptions,
  writeKeys,
} from "./service.js";
import {
  CUSTOMER_PATH,
  events,
  notifications,
  PRICE_PATH,
  SOAP_FAULTS,
  soapEndpointOptions,
} from "./soap/index.js";
import { type Href, type RequestView, ROUTE_METHODS, type Routes, type ViewHandler } from "./view.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Whether the route reads a request body (its writes): the others never read one. */
    body?: boolean;
  }
}

/**
 * The Fastify application: the same service as {@link createApp}'s Express application, from the
 * same handlers, packages and settings, in the same order of decisions. Fastify routes before any
 * hook runs, so what Express decides by mount order is decided by encapsulation here:
 *
 * - the root: security headers, correlation id and access log, allowed hosts, CORS, the error
 *   record (every request);
 * - the SOAP endpoints: their own optional HTTP authentication and the rate limit, errors as SOAP
 *   faults;
 * - everything else behind the version step (a `/v<N>` prefix is stripped by `rewriteUrl`, before
 *   routing): the operational routes (public, outside the rate limit; `POST /auth/token` behind
 *   Basic, the rate limit and its body), then the resource API behind authentication and the rate
 *   limit, whose not-found handler answers every path no route has (after both, as on Express).
 *
 * Inside a route: routing first (404, 405 with `Allow`: Express's routing, `expressRouting` of
 * `@svc/kernel/fastify`), then the permission check (a `preParsing` hook, before any byte of the
 * body is read), then the body, then the pipeline with its Idempotency-Key step.
 *
 * @example
 * const app = createFastifyApp(config, deps, (handler) => createServer(handler));
 * await app.ready();
 */
export function createFastifyApp(
  config: Config,
  deps: AppDeps,
  serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void) => Server,
): FastifyInstance {
  const { logger, stores } = deps;
  const security = guardBasic(deps.security, config, stores.rateLimit, logger);
  const svc = fastifyAdapter(pipeline());
  const trust = compileTrust(config.trustProxy);
  const errors = fastifyErrorHandler({ renderers: [SOAP_FAULTS], logger: faultLogger(logger) });
  const everyRequest = rootSteps(config, deps);
  // One limiter for the resource API, `POST /auth/token` and the SOAP endpoints, as on Express:
  // they spend one budget per client. Per principal when authenticated, else per client IP.
  const limiter = fastifyGate(
    rateLimitGate<FastifyRequest>({ ...rateLimitOptions(config, deps), trustProxy: config.trustProxy }),
  );
  const versioned = svc.rewriteUrl;
  const routing = expressRouting({ notFound: notFoundError, methodNotAllowed: methodNotAllowedError });
  const app = Fastify<Server>({
    // Express's routing: case-sensitive and strict, parameters of any length, a GET route's HEAD
    // through the pipeline, which answers it with the GET's fields.
    ...routing.serverOptions,
    serverFactory: serverFactory as unknown as FastifyServerFactory<Server>,
    loggerInstance: logger,
    // The access line (access-log.ts) is the request log, as on Express.
    logController: new LogController({ disableRequestLogging: true }),
    // Each request's logger (`request.log`) is made on its first line, as `req.log` on Express:
    // most requests never write one, and a pino child costs its bindings' serialisation.
    // A line at a level the parent has off is dropped without making the child, unless the route
    // gives its own level (`options.level`), which the child then decides by.
    childLoggerFactory: (parent, bindings, options) =>
      lazyLogger(
        () => parent.child(bindings, options),
        options.level === undefined ? (parent as unknown as Logger) : undefined,
      ),
    // The correlation id is the request's id: Fastify's request logger carries it.
    genReqId: (req) => correlationIdOf(req.headers["x-correlation-id"]),
    // One trust policy with Express's meaning (a hop count trusts that many proxies), compiled
    // once: Fastify 5.12.1 and later would read a bare hop count as trusting no peer.
    trustProxy: fastifyTrustProxy(config.trustProxy),
    routerOptions: {
      ...routing.serverOptions.routerOptions,
      // node:querystring, with a malformed (non-UTF-8) query marked for a 400 on collection reads.
      querystringParser: (query) => parseQueryString(query),
    },
    // The version step strips `/v<N>` before routing, and the pipeline's rewriteUrl gives
    // Fastify's router the target as Express's router routes it (an absolute-form of any scheme
    // by its path, `*` to no route, a stray `%` escaped). A SOAP endpoint is never versioned (its
    // version is its contract's namespace), so `/v2/ws/customer` stays what it is: no route.
    rewriteUrl(req) {
      const url = req.url ?? "/";
      if (isSoap(url)) return soapEndpointTarget(url);
      const target = versioned.call(this, req);
      if (isSoap(target) && !isSoap(targetPath(url))) return url;
      return target;
    },
    // A request target Fastify cannot route (a malformed path) gets the headers and the record too.
    frameworkErrors: (err, request, reply) => {
      everyRequest.onRequest(request, reply, () => {});
      return errors(err, request, reply);
    },
  });
  // Before any route: every method is routed, and each path's 405s and OPTIONS are its own.
  app.register(routing.plugin);
  app.setErrorHandler((err, request, reply) => errors(fromDatabaseError(err), request, reply));
  app.addHook("onRequest", everyRequest.onRequest);
  // RFC 9110 §7.4: 421 for a host the service is not configured for; 400 for a malformed one.
  app.register(allowedHosts, { hosts: config.allowedHosts ?? "*", trustProxy: trust });
  const cors = corsOptions(config);
  if (cors !== undefined) app.register(crossOrigin, cors);

  app.register(soapContext(config, deps, security, limiter));
  app.register(async (main) => {
    // The version and a write's 406 are decided once per request, in `rewriteUrl`, before any
    // route runs; the version's fields go on every response here, and the refusal is answered in
    // each context by the pipeline's plugin: behind the rate limit in the resource API's.
    main.addHook("onRequest", versionFields);
    // No body is read unless the route is a write; then after its permission check.
    readBodies(main, config);
    await main.register(opsContext(deps, security, svc, limiter, routing));
    await main.register(apiContext(config, limiter, deps, security, svc, trust, errors, routing));
  });
  return app;
}

/** Whether a request target is under the SOAP endpoints' path. */
function isSoap(target: string): boolean {
  return target.startsWith("/ws/");
}

const SOAP_ENDPOINTS = [CUSTOMER_PATH, PRICE_PATH].map((path) => [path.toLowerCase(), path] as const);

/**
 * `target` with an endpoint's path in the endpoint's own spelling: endpoints are matched without
 * regard to case after `/ws/`, as the Express composition mounts them (`mountAt`), and Fastify
 * routes case-sensitively.
 */
function soapEndpointTarget(target: string): string {
  const query = target.indexOf("?");
  const path = query === -1 ? target : target.slice(0, query);
  const lower = path.toLowerCase();
  for (const [spelled, path] of SOAP_ENDPOINTS) {
    if (lower === spelled || lower === `${spelled}/`) return `${path}${target.slice(spelled.length)}`;
  }
  // No endpoint as spelled: Express compares the path as received (`/ws/%63ustomer` is none),
  // where Fastify's router would decode it into one.
  return target.replaceAll("%", "%25");
}

const CORRELATION_ID = Symbol("correlation id");

type Correlated = ServerResponse & { [CORRELATION_ID]?: string };

/**
 * The steps every request goes through: security headers first, so errors and 304s carry them
 * too (Strict-Transport-Security only over TLS, RFC 6797 §7.2), then the correlation id and the
 * access line that carries it.
 */
function rootSteps(config: Config, deps: AppDeps) {
  const { forRequest } = securityHeaders(compileTrust(config.trustProxy));
  // The access line's id is kept beside the raw response, not as a field of it: one field set on
  // the raw response before Fastify writes makes `writeHead` set every field of the reply again,
  // one `setHeader` (validated, lower-cased, stored) each.
  const log = accessLines(deps.logger, (res) => (res as Correlated)[CORRELATION_ID] ?? "", deps.telemetry);
  // The names in lower case, as Fastify stores and writes them: `reply.header` lower-cases every
  // name it is given, a new string for each of these on every request otherwise. `forRequest`
  // returns one of two lists (over TLS or not), each lowered once.
  const lowered = new Map<
    ReadonlyArray<readonly [string, string]>,
    ReadonlyArray<readonly [string, string]>
  >();
  const fieldsOf = (req: IncomingMessage) => {
    const fields = forRequest(req);
    let lower = lowered.get(fields);
    if (lower === undefined) {
      lower = fields.map(([name, value]) => [name.toLowerCase(), value] as const);
      if (lowered.size < 4) lowered.set(fields, lower);
    }
    return lower;
  };
  return {
    onRequest(request: FastifyRequest, reply: FastifyReply, done: () => void) {
      const fields = fieldsOf(request.raw);
      for (let i = 0; i < fields.length; i++) {
        const field = fields[i] as readonly [string, string];
        reply.header(field[0], field[1]);
      }
      reply.header("x-correlation-id", request.id);
      (reply.raw as Correlated)[CORRELATION_ID] = request.id;
      log(request.raw, reply.raw);
      done();
    },
  };
}

/**
 * The fields of the request's version decision (`API-Supported-Versions`, a deprecated version's
 * `Deprecation` and `Sunset`, and the `Vary` it depended on) on its reply, set before anything can
 * answer: a 401 or 429 in front of the version's refusal carries them too.
 */
function versionFields(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const version = exchangeIfAny(request.raw)?.version;
  if (version !== undefined) setReplyPassage(reply, version);
  done();
}

/** The service's JSON body reader as the context's only content-type parser, for writes alone. */
function readBodies(context: FastifyInstance, config: Config): void {
  const read = bodyReader(bodyOptions(config));
  const closing = new WeakSet<IncomingMessage>();
  context.removeAllContentTypeParsers();
  context.addContentTypeParser("*", async (request: FastifyRequest, payload: IncomingMessage) => {
    // A route that reads no body (a read, OPTIONS, a 405, the not-found handler) leaves it unread,
    // as Express does where no body parser runs.
    if (request.routeOptions.config?.body !== true || request.is404) return undefined;
    try {
      return await read(request.raw, payload);
    } catch (err) {
      if (closesConnection(err)) closing.add(request.raw);
      throw err;
    }
  });
  // A refusal that left part of the body unread closes the connection. A callback hook: every
  // response of the context passes it, and an async one costs each a promise.
  context.addHook("onSend", (request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
    if (closing.has(request.raw)) reply.header("Connection", "close");
    done(null, payload);
  });
}

/**
 * The SOAP endpoints: HTTP Basic or Bearer when sent (a call may carry its credentials in the
 * envelope instead), the rate limit the resource API spends; their failures in front of the
 * endpoint (a 401 for a bad Authorization, 429) are SOAP 1.2 faults by the app's error handler
 * (SOAP_FAULTS).
 */
function soapContext(config: Config, deps: AppDeps, security: Security, limiter: onRequestHookHandler) {
  return async (context: FastifyInstance) => {
    // The plugin records the principal in the request's exchange, where the SOAP credentials hook reads it.
    await context.register(auth, authenticationOptions(security));
    context.addHook("onRequest", limiter);
    const { customer, price } = soapEndpointOptions(config, {
      db: deps.db,
      security,
      nonces: deps.stores.nonces,
    });
    await context.register(soap, {
      ...customer,
      trustProxy: config.trustProxy,
      prefix: CUSTOMER_PATH,
    } as never);
    await context.register(soap, {
      ...price,
      trustProxy: config.trustProxy,
      prefix: PRICE_PATH,
    } as never);
  };
}

/** The response pipeline's handler for a service handler, given the request's view. */
function viewRoute(
  svc: FastifyPipeline,
  trust: ReturnType<typeof compileTrust>,
  handle: ViewHandler,
  options: RouteOptions | undefined,
): RouteHandlerMethod {
  const run = svc.handle((request: FastifyRequest, context: HandlerContext) => {
    return handle(fastifyView(request, (request as Replying)[REPLY], svc, trust), context);
  }, options);
  return function viewHandler(this: FastifyInstance, request, reply) {
    (request as Replying)[REPLY] = reply;
    return run.call(this, request, reply);
  } as RouteHandlerMethod;
}

/**
 * The reply of a request whose handler runs under the pipeline, kept on the request: a `WeakMap`
 * from requests to replies, each reply holding its request, kept every request alive through V8's
 * young-generation collections until a full one.
 */
const REPLY = Symbol("reply");
type Replying = FastifyRequest & { [REPLY]: FastifyReply };

/** The request view (view.ts) of a Fastify request. */
function fastifyView(
  request: FastifyRequest,
  reply: FastifyReply,
  svc: FastifyPipeline,
  trust: ReturnType<typeof compileTrust>,
): RequestView {
  let href: Href | undefined;
  return {
    method: request.method,
    params: request.params as Record<string, string | undefined>,
    query: request.query as Record<string, unknown>,
    body: request.body,
    headers: request.headers,
    originalUrl: request.originalUrl,
    state: requestState(request),
    hrefs() {
      if (href === undefined) {
        const facts = externalFacts(request.raw, { trustProxy: trust });
        // The origin first: reading it is what records the forwarded fields it depended on.
        const origin = facts.origin;
        if (!reply.sent) setReplyPassage(reply, { vary: facts.vary });
        href = linksOn(origin, requestState(request).route.versionPrefix);
      }
      return href;
    },
    preconditions: (current) => svc.preconditions(request, current),
  };
}

/** The resource modules' {@link Routes} on a Fastify context, each method behind `guard`. */
function fastifyRoutes(
  context: FastifyInstance,
  svc: FastifyPipeline,
  trust: ReturnType<typeof compileTrust>,
  guard: preParsingHookHandler,
  routing: ExpressRouting,
): Routes {
  return (spec) => {
    for (const method of ROUTE_METHODS) {
      const handler = spec.handlers[method];
      if (handler === undefined) continue;
      context.route({
        method: method.toUpperCase(),
        url: spec.path,
        preParsing: guard,
        config: { body: method !== "get" },
        handler: viewRoute(svc, trust, handler.handle, handler.options),
      });
    }
    // OPTIONS behind the permission check; the 405s are routing's, before it.
    const fields = { fields: spec.optionsFields };
    context.route({ ...routing.allowedMethods(spec.path, spec.allow, fields), preParsing: guard });
  };
}

/**
 * The operational endpoints: public, never cached, outside the rate limit; `POST /auth/token`
 * behind Basic, the rate limit and the body, in that order (a bad body never hides a missing
 * credential).
 */
function opsContext(
  deps: AppDeps,
  security: Security,
  svc: FastifyPipeline,
  limiter: onRequestHookHandler,
  routing: ExpressRouting,
) {
  return async (ops: FastifyInstance) => {
    // Outside the rate limit: the decisions' refusal (a write's 406) answers first.
    await ops.register(svc.plugin);
    for (const route of opsRoutes(security, deps, collectionsOf(deps.background).listed)) {
      const handle = route.handle;
      ops.get(
        route.path,
        svc.handle((request: FastifyRequest) => handle(request.params as Record<string, string>)),
      );
    }
    // Here, outside the token's context: its 405s are answered before Basic and the rate limit.
    for (const [path, allow] of OPS_METHODS) ops.route(routing.allowedMethods(path, allow));
    await ops.register(async (token) => {
      await token.register(auth, basicOnlyOptions(security));
      token.addHook("onRequest", limiter);
      const issue = issueToken(security);
      token.route({
        method: "POST",
        url: "/auth/token",
        // 401 with the Basic challenge when the request has no principal.
        preParsing: authorize(() => true),
        config: { body: true },
        handler: svc.handle((request: FastifyRequest) => issue(requestState(request).principal)),
      });
    });
  };
}

/**
 * The resource API and the one-way operations' collections: authentication, then the rate limit
 * (per principal, else per client IP), then routing; every path no route has is the 404 record,
 * after both.
 */
function apiContext(
  config: Config,
  limiter: onRequestHookHandler,
  deps: AppDeps,
  security: Security,
  svc: FastifyPipeline,
  trust: ReturnType<typeof compileTrust>,
  errors: ReturnType<typeof fastifyErrorHandler>,
  routing: ExpressRouting,
) {
  return async (api: FastifyInstance) => {
    await api.register(auth, authenticationOptions(security));
    api.addHook("onRequest", limiter);
    // The decisions' refusal behind the rate limit: a made-up version is a request the limiter
    // counts and refuses like any other, not a free 404 (OWASP API4:2023).
    await api.register(svc.plugin);
    const { stores, logger, db } = deps;
    const leaseMs = config.idempotencyLeaseSeconds * 1000;
    const keys = writeKeys((required) =>
      idempotency({ store: stores.idempotency, required, leaseMs, logger }),
    );
    const routes = fastifyRoutes(api, svc, trust, authorize(mayCall), routing);
    const { collections, listed } = collectionsOf(deps.background);
    mountResourceApi(routes, db, collections, listed, keys);
    mountCrud(routes, db, events);
    mountCrud(routes, db, notifications);
    api.setNotFoundHandler((request, reply) =>
      errors(notFoundError({ method: request.method, url: request.originalUrl }), request, reply),
    );
  };
}
