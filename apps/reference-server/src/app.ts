import { allowedMethods, errorHandler, notFound } from "@svc/errors/express";
import { compileTrust } from "@svc/hal";
import { allowedHosts } from "@svc/hal/express";
import { idempotency } from "@svc/idempotency/express";
import { requestState } from "@svc/kernel";
import { chain } from "@svc/kernel/express";
import { crossOrigin, parseBody } from "@svc/negotiate/express";
import { rateLimit } from "@svc/ratelimit/express";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import type { Logger } from "pino";
import { accessLog, faultLogger } from "./access-log.js";
import type { Config } from "./config.js";
import { fromDatabaseError } from "./errors.js";
import { type Svc, servicePipeline } from "./pipeline.js";
import { parseQueryString } from "./request.js";
import type { CrudResource } from "./routes/crud.js";
import { expressRoutes } from "./routes/guarded.js";
import {
  authentication,
  basicOnly,
  guardBasic,
  permission,
  type Security,
  securityHeaders,
  signedIn,
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
  OPS_PATHS,
  opsRoutes,
  rateLimitOptions,
  SOAP_COLLECTION_PATHS,
  SOAP_PATHS,
  writeKeys,
} from "./service.js";
import { SOAP_FAULTS, soapServices } from "./soap/index.js";

export { type AppDeps, resources } from "./service.js";

/**
 * Runs `router` only for request paths starting with one of `prefixes`, compared exactly (the app
 * routes case-sensitively and strictly, see {@link ROUTING}): requests for other paths skip its
 * layers.
 */
function only(prefixes: readonly string[], router: RequestHandler): RequestHandler {
  return (req, res, next) => {
    // An origin-form target (RFC 9112 §3.2.1) starts with its path, and no prefix holds a `?`:
    // the target starts with a prefix exactly when its path does, without parsing it.
    const url = req.url;
    const path = url.startsWith("/") ? url : req.path;
    for (const prefix of prefixes) if (path.startsWith(prefix)) return router(req, res, next);
    next();
  };
}

/**
 * The security headers, by the service's one rule for `Strict-Transport-Security` (see
 * `securityHeaders` in security.ts), as one step: read from helmet once (its default directives
 * are static) and set in a loop, not a dozen middleware functions per request.
 */
function securityFields(config: Config): RequestHandler {
  const { forRequest } = securityHeaders(compileTrust(config.trustProxy));
  return function securityHeadersMiddleware(req, res, next) {
    for (const [name, value] of forRequest(req)) res.setHeader(name, value);
    next();
  };
}

/**
 * Express routing options for the app and every router it mounts. Express matches paths
 * case-insensitively and ignores a trailing slash by default, so `/Transfers/` would reach the
 * `/transfers` handlers under a spelling no path comparison in front of them expects. The service
 * spec names plural lowercase paths (spec 4.1); any other spelling is no resource: 404.
 */
const ROUTING = { caseSensitive: true, strict: true } as const;

/** What {@link createApp} resolves once from its configuration and dependencies, for its steps. */
interface AppParts {
  config: Config;
  deps: AppDeps;
  /** The security material with the shared, failure-budgeted Basic verifier. */
  security: Security;
  /** The JSON body parser of every write (resource API, `POST /auth/token`). */
  body: RequestHandler;
  /** The rate limit of the resource API, `POST /auth/token` and the SOAP endpoints. */
  limiter: ReturnType<typeof rateLimit>;
  /** The resource API's collections, in the order they are mounted. */
  collections: CrudResource[];
  /** Those and the one-way operations' collections: what the entry point and OpenAPI list. */
  listed: CrudResource[];
  /** The response pipeline of every route but the SOAP endpoints. */
  svc: Svc;
}

/**
 * The Express application: the cross-cutting middleware, the resource API and the error record.
 * It owns no protocol logic; that lives in the @svc packages it composes.
 *
 * @example
 * const app = createApp(loadConfig(), { db, logger, background });
 */
export function createApp(config: Config, deps: AppDeps): express.Express {
  const parts = resolveParts(config, deps);
  const app = expressApp(config);
  const soap = soapServices(config, {
    db: deps.db,
    security: parts.security,
    limiter: parts.limiter,
    nonces: deps.stores.nonces,
    svc: parts.svc,
  });
  // One layer in front of every route: the middleware every request goes through, the SOAP
  // endpoints, the response pipeline's decisions before routing (the version, a `/v<N>` prefix
  // stripped; the 406 of a write no representation could answer), the operational routes and the one-way operations'
  // collections (each router entered only for its own paths, which it answers), then the resource
  // API's authentication and rate limit, then the refusal of those decisions: a version the API
  // does not have spends the client's budget like any other request. The body is read later,
  // inside each write route after its permission check (see mountResourceApi). The errors of the
  // middleware in front of a SOAP endpoint are faults by the error handler at the end (SOAP_FAULTS).
  app.use(
    chain(
      ...everyRequest(app, config, deps.logger, deps.telemetry),
      only(SOAP_PATHS, soap.endpoints),
      decided(parts.svc),
      only(OPS_PATHS, opsRouter(parts)),
      only(SOAP_COLLECTION_PATHS, soap.collections),
      authentication(parts.security) as RequestHandler,
      parts.limiter as RequestHandler,
      parts.svc.prepare as RequestHandler,
    ),
  );
  mountExpressApi(app, parts);
  app.use(notFound());
  app.use((err: unknown, _req: Request, _res: Response, next: NextFunction) => next(fromDatabaseError(err)));
  app.use(errorHandler({ renderers: [SOAP_FAULTS], logger: faultLogger(deps.logger) }));
  return app;
}

/**
 * The pipeline's decisions before routing (the version, its `/v<N>` prefix stripped, and its
 * fields on the response), without their refusal: `svc.prepare` mounted again behind the rate
 * limit answers it, from the same decision. A made-up version is then a request the limiter
 * counts and refuses like any other, not a free 404 (OWASP API4:2023).
 * @see https://owasp.org/API-Security/editions/2023/en/0xa4-unrestricted-resource-consumption/
 */
function decided(svc: Svc): RequestHandler {
  return function versionDecided(req, res, next) {
    svc.prepare(req, res, () => next());
  };
}

/** Resolves what several steps share: the guarded security, the body parser, the rate limit. */
function resolveParts(config: Config, deps: AppDeps): AppParts {
  const { logger, stores } = deps;
  return {
    config,
    deps,
    // Every Basic check (resource API, POST /auth/token, SOAP over HTTP) shares one verifier:
    // failure budgets in the rate-limit store, checked before hashing; bounded hashing.
    security: guardBasic(deps.security, config, stores.rateLimit, logger),
    body: parseBody(bodyOptions(config)),
    // Per principal when authenticated, else per client IP (`trust proxy` decides which IP).
    limiter: rateLimit(rateLimitOptions(config, deps)),
    ...collectionsOf(deps.background),
    svc: servicePipeline(),
  };
}

/** A bare Express app with the service's settings. */
function expressApp(config: Config): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("case sensitive routing", ROUTING.caseSensitive);
  app.set("strict routing", ROUTING.strict);
  app.set("trust proxy", config.trustProxy);
  app.set("etag", false);
  // node:querystring, with a malformed (non-UTF-8) query marked for a 400 on collection reads.
  app.set("query parser", parseQueryString);
  return app;
}

/**
 * What every request goes through: security headers first, so errors and 304s carry them too,
 * then the correlation id (and the access log that carries it), the allowed hosts and CORS.
 */
function everyRequest(
  app: express.Express,
  config: Config,
  logger: Logger,
  telemetry: AppDeps["telemetry"],
): RequestHandler[] {
  const log = accessLog(app, logger, (res) => res.locals.correlationId as string, telemetry);
  const correlate = (req: Request, res: Response, next: NextFunction) => {
    const id = correlationIdOf(req.headers["x-correlation-id"]);
    res.locals.correlationId = id;
    res.setHeader("X-Correlation-ID", id);
    log(req, res, next);
  };
  const cors = corsOptions(config);
  return [
    securityFields(config),
    correlate,
    // RFC 9110 §7.4: 421 for a host the service is not configured for; 400 for a malformed one.
    allowedHosts(config.allowedHosts ?? "*", { trustProxy: config.trustProxy }),
    ...(cors === undefined ? [] : [crossOrigin(cors)]),
  ];
}

/**
 * Operational endpoints: public, never cached, outside the rate limit. They live in their own
 * router, only entered for their paths, so resource requests do not try each of their routes.
 */
function opsRouter(parts: AppParts): express.Router {
  const { security, body, limiter, svc } = parts;
  const ops = express.Router(ROUTING);
  // The operational routes are outside the rate limit: the decisions' refusal (a write's 406)
  // answers here, first.
  ops.use(svc.prepare as RequestHandler);
  for (const route of opsRoutes(security, parts.deps, parts.listed)) {
    const handle = route.handle;
    ops.get(
      route.path,
      svc.handle((req: Request) => handle(req.params as Record<string, string>)),
    );
  }
  // Credentials, then the rate limit, then the body: a bad body never hides a missing credential.
  const token = issueToken(security);
  ops.post(
    "/auth/token",
    basicOnly(security),
    limiter,
    signedIn(),
    body,
    svc.handle((req: Request) => token(requestState(req).principal)),
  );
  // Every operational path answers OPTIONS with its methods and any other method (TRACE, DELETE)
  // with 405 and Allow, like the resource API (RFC 9110 §9.3.7, §15.5.6), not 404.
  for (const [path, allow] of OPS_METHODS) ops.route(path).all(allowedMethods(allow));
  return ops;
}

/**
 * The resource API on the app's own router (a sub-router mounted at the root would only add a
 * second dispatch per request): the entry point and every collection. Permission and idempotency
 * run inside each matched route (see guardedRoutes), so a path no route has is a 404 and a method
 * the route lacks a 405 with Allow, for every user, before any 401 or 403.
 */
function mountExpressApi(app: express.Express, parts: AppParts): void {
  const { stores, logger } = parts.deps;
  const leaseMs = parts.config.idempotencyLeaseSeconds * 1000;
  const keys = writeKeys((required) => idempotency({ store: stores.idempotency, required, leaseMs, logger }));
  const allowed = permission() as RequestHandler;
  // One route layer per guard (each layer Express enters costs a dispatch). Reads get the
  // permission check alone. A write's body is read only after the rate limit (in front of every
  // route) and the permission check: spec part 5 rule 4 gives a client without credentials 401 and
  // a reader 403 whatever it sends, not the 400, 413 or 415 that would tell it what a write
  // accepts, and a body that cannot be parsed is still a request the rate limit counts (spec part
  // 8 rule 1). Its Idempotency-Key is the pipeline's step of each write route (`keys`).
  const write = chain(allowed, parts.body);
  const routes = expressRoutes(app as unknown as express.Router, parts.svc, (_path, method) =>
    method === "get" || method === "options" ? [allowed] : [write],
  );
  mountResourceApi(routes, parts.deps.db, parts.collections, parts.listed, keys);
}
