import { randomUUID } from "node:crypto";
import { createReadStream, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { challenge } from "@svc/auth";
import { allowedMethods, errorHandler, HttpError, notFound } from "@svc/errors";
import { allowedHosts, externalOrigin } from "@svc/hal";
import { idempotency } from "@svc/idempotency";
import { type Reply, type ReplyInit, reply, stringifyJson } from "@svc/kernel";
import { crossOrigin, parseBody } from "@svc/negotiate";
import { rateLimit } from "@svc/ratelimit";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { strictTransportSecurity } from "helmet";
import type { Logger } from "pino";
import { accessLog } from "./access-log.js";
import { chain } from "./chain.js";
import type { Config } from "./config.js";
import type { Db } from "./db/database.js";
import { fromDatabaseError } from "./errors.js";
import { hrefs } from "./links.js";
import { openApiDocument } from "./openapi.js";
import { type Keys, type Svc, servicePipeline } from "./pipeline.js";
import { parseQueryString } from "./request.js";
import {
  accounts,
  categories,
  customers,
  departments,
  products,
  projects,
  reviews,
  users,
} from "./routes/catalogue.js";
import { type CrudResource, mountCrud, resourceView } from "./routes/crud.js";
import { employees } from "./routes/employees.js";
import { guardedRoutes } from "./routes/guarded.js";
import { type Background, employeeProjects, mountCart, transfers } from "./routes/money.js";
import {
  customerOrders,
  mountOrderDocuments,
  orderItems,
  orders,
  payments,
  userOrders,
} from "./routes/orders.js";
import {
  authentication,
  basicOnly,
  guardBasic,
  helmetHeaders,
  permission,
  type Security,
  signedIn,
} from "./security.js";
import { events, notifications, soapServices } from "./soap/index.js";
import type { Stores } from "./stores.js";

/** What the app needs besides its configuration: opened once by the server, closed on shutdown. */
export interface AppDeps {
  db: Db;
  logger: Logger;
  background: Background;
  security: Security;
  stores: Stores;
}

const READ_ONLY = ["GET", "HEAD", "OPTIONS"];
/** The operational routes and the methods each has. */
const OPS_METHODS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["/health", READ_ONLY],
  ["/ready", READ_ONLY],
  ["/openapi.json", READ_ONLY],
  ["/docs", READ_ONLY],
  ["/docs/init.js", READ_ONLY],
  ["/.well-known/jwks.json", READ_ONLY],
  ["/auth/token", ["POST", "OPTIONS"]],
];
/** Path prefixes (lower case) of the operational endpoints and of the SOAP router's routes. */
const OPS_PATHS = ["/health", "/ready", "/openapi.json", "/docs", "/.well-known/", "/auth/"];
const SOAP_PATHS = ["/ws/"];
const SOAP_COLLECTION_PATHS = ["/events", "/notifications"];

/**
 * Runs `router` only for request paths starting with one of `prefixes`, compared exactly (the app
 * routes case-sensitively and strictly, see {@link ROUTING}): requests for other paths skip its
 * layers.
 */
function only(prefixes: readonly string[], router: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const path = req.path;
    for (const prefix of prefixes) if (path.startsWith(prefix)) return router(req, res, next);
    next();
  };
}

/**
 * helmet's security headers (without HSTS, see {@link hstsOverTls}) as one step: `helmet()` runs
 * a dozen middleware functions per request, each setting one header whose value never changes
 * (its default directives are static), so the headers are read from it once and set in a loop.
 * (Its `X-Powered-By` removal has nothing to do: the app never sets that header.)
 */
function securityHeaders(): RequestHandler {
  const headers = helmetHeaders({ strictTransportSecurity: false });
  return function helmetHeadersMiddleware(_req, res, next) {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}

/**
 * `Strict-Transport-Security` only on responses that travel over TLS: on the connection itself, or
 * behind a trusted proxy that says the client used https. RFC 6797 §7.2: an HSTS host MUST NOT
 * include the header in responses over non-secure transport. The scheme is read as @svc/hal
 * reads it for links (`Forwarded`, then the `X-Forwarded-Proto` value the trusted chain
 * appended), not as Express's `req.secure` does: that takes the first `X-Forwarded-Proto` value,
 * which a client writes itself when the proxy appends (`https, http`).
 */
function hstsOverTls(): RequestHandler {
  const hsts = strictTransportSecurity();
  return function hstsWhenSecure(req, res, next) {
    if (overTls(req)) hsts(req, res, next);
    else next();
  };
}

function overTls(req: Request): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  if (req.headers["x-forwarded-proto"] === undefined && req.headers.forwarded === undefined) return false;
  try {
    return externalOrigin(req).startsWith("https:");
  } catch {
    // A Host or Forwarded header that cannot be read: not known to be https; allowedHosts answers it.
    return false;
  }
}

/**
 * POSTs that move money must carry an Idempotency-Key. Compared with the path of the route that
 * matched (see guardedRoutes), never with the spelling of the request: after a `/v<N>` prefix,
 * which versioning strips before routing, `/transfers` is the route's path; `/Transfers`,
 * `/TRANSFERS` and `/transfers/` match no route ({@link ROUTING}) and are 404, never a keyless write.
 */
const KEY_REQUIRED = new Set(["/payments", "/transfers"]);

/**
 * Express routing options for the app and every router it mounts. Express matches paths
 * case-insensitively and ignores a trailing slash by default, so `/Transfers/` would reach the
 * `/transfers` handlers under a spelling no path comparison in front of them expects. The service
 * spec names plural lowercase paths (spec 4.1); any other spelling is no resource: 404.
 */
const ROUTING = { caseSensitive: true, strict: true } as const;

const HERE = dirname(fileURLToPath(import.meta.url));
const PUBLIC_DIR = join(HERE, "..", "public");
const SWAGGER_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/** A correlation id from the client is kept when it is a sane token, else one is generated. */
const CORRELATION_ID = /^[\w.:@-]{1,128}$/;

/** Every collection of the resource API (spec 4.1), in the order they are mounted. */
export function resources(background: Background): CrudResource[] {
  return [
    employees,
    employeeProjects,
    departments,
    projects,
    categories,
    products,
    reviews,
    customers,
    customerOrders,
    users,
    userOrders,
    orders,
    orderItems,
    payments,
    accounts,
    transfers(background),
  ];
}

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
  // API's authentication and rate limit. The body is read later, inside each write route after its
  // permission check (see mountResourceApi). The SOAP error handler follows, for the errors of
  // the middleware in front of an endpoint.
  app.use(
    chain(
      ...everyRequest(app, config, deps.logger),
      only(SOAP_PATHS, soap.endpoints),
      parts.svc.prepare as RequestHandler,
      only(OPS_PATHS, opsRouter(parts)),
      only(SOAP_COLLECTION_PATHS, soap.collections),
      authentication(parts.security) as RequestHandler,
      parts.limiter as RequestHandler,
    ),
    soap.errors,
  );
  mountResourceApi(app, parts);
  app.use(notFound());
  app.use((err: unknown, _req: Request, _res: Response, next: NextFunction) => next(fromDatabaseError(err)));
  app.use(errorHandler());
  return app;
}

/** Resolves what several steps share: the guarded security, the body parser, the rate limit. */
function resolveParts(config: Config, deps: AppDeps): AppParts {
  const { logger, background, stores } = deps;
  const collections = resources(background);
  return {
    config,
    deps,
    // Every Basic check (resource API, POST /auth/token, SOAP over HTTP) shares one verifier:
    // failure budgets in the rate-limit store, checked before hashing; bounded hashing.
    security: guardBasic(deps.security, config, stores.rateLimit, logger),
    // A body that stalls after its headers is a 408 record (spec part 7), not a socket held open.
    body: parseBody({
      limit: 100 * 1024,
      // Exactly what Accept-Post and Accept-Patch name: another JSON type (application/json-patch+json,
      // RFC 6902) has its own semantics, which the writes do not apply (RFC 5789 §2.2: 415).
      types: ["application/json"],
      // The resource API reads nothing else: any other type is refused here (415 naming Accept-Post)
      // rather than left for a route that would not read it. The SOAP endpoints are not behind it.
      others: "refuse",
      // An amount of 1.0000000000000001 is no amount the service holds: a 400, never taken as 1.
      exactNumbers: true,
      timeout: config.requestTimeoutSeconds * 1000,
    }),
    // Per principal when authenticated, else per client IP (`trust proxy` decides which IP).
    limiter: rateLimit({
      limit: config.rateLimit.max,
      windowMs: config.rateLimit.windowSeconds * 1000,
      store: stores.rateLimit,
      failMode: config.rateLimitFailMode,
      logger,
    }),
    collections,
    // The one-way operations' collections are mounted with the SOAP services, but belong to the
    // resource API's description and entry point like every other collection.
    listed: [...collections, events, notifications],
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
function everyRequest(app: express.Express, config: Config, logger: Logger): RequestHandler[] {
  const log = accessLog(app, logger, (res) => res.locals.correlationId as string);
  const correlate = (req: Request, res: Response, next: NextFunction) => {
    const given = req.headers["x-correlation-id"];
    const id = typeof given === "string" && CORRELATION_ID.test(given) ? given : randomUUID();
    res.locals.correlationId = id;
    res.setHeader("X-Correlation-ID", id);
    log(req, res, next);
  };
  // CORS only for the configured origins; a request without Origin or from another origin gets
  // only `Vary: Origin`, and its preflight reaches the route's OPTIONS (@svc/negotiate crossOrigin).
  const cors =
    config.corsOrigins.length > 0
      ? [
          crossOrigin({
            origins: config.corsOrigins,
            exposedHeaders: [
              "Location",
              "ETag",
              "Link",
              "Retry-After",
              "X-Correlation-ID",
              "X-RateLimit-Limit",
              "X-RateLimit-Remaining",
              "X-RateLimit-Reset",
              "API-Supported-Versions",
              "Idempotent-Replayed",
            ],
            maxAge: 600,
          }),
        ]
      : [];
  return [
    securityHeaders(),
    hstsOverTls(),
    correlate,
    // RFC 9110 §7.4: 421 for a host the service is not configured for; 400 for a malformed one.
    allowedHosts(config.allowedHosts ?? "*", { trustProxy: config.trustProxy }),
    ...cors,
  ];
}

const JSON_TYPE = "application/json; charset=utf-8";

/** The media type of each kind of file Swagger UI's directory holds. */
const ASSET_TYPES: Readonly<Record<string, string>> = {
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".png": "image/png",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".json": "application/json; charset=utf-8",
};

/** The files of Swagger UI's directory, by name, listed once. */
function swaggerAssets(): Map<string, { path: string; type: string; modified: Date }> {
  const assets = new Map<string, { path: string; type: string; modified: Date }>();
  for (const entry of readdirSync(SWAGGER_DIR, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(SWAGGER_DIR, entry.name);
    const type = ASSET_TYPES[extname(entry.name)] ?? "application/octet-stream";
    assets.set(entry.name, { path, type, modified: statSync(path).mtime });
  }
  return assets;
}

/**
 * `data` as JSON whatever the request's `Accept` (RFC 9110 §12.5.1 lets a server disregard it): the
 * operational endpoints have one representation, and are never a 406.
 */
function asJson(data: unknown, init: ReplyInit): Reply {
  return reply.bytes(stringifyJson(data), JSON_TYPE, init);
}

/**
 * Operational endpoints: public, never cached, outside the rate limit. They live in their own
 * router, only entered for their paths, so resource requests do not try each of their routes.
 */
function opsRouter(parts: AppParts): express.Router {
  const { security, body, limiter, svc } = parts;
  const ops = express.Router(ROUTING);
  const noStore = { headers: { "Cache-Control": "no-store" } };
  const fiveMinutes = { headers: { "Cache-Control": "public, max-age=300" } };
  ops.get(
    "/health",
    svc.handle(() => asJson({ status: "UP" }, noStore)),
  );
  ops.get("/ready", svc.handle(readiness(parts.deps)));
  const document = Buffer.from(stringifyJson(openApiDocument(parts.listed)), "utf8");
  ops.get(
    "/openapi.json",
    svc.handle(() => reply.bytes(document, JSON_TYPE, fiveMinutes)),
  );
  // The page and its script, read once: content in its final form, tagged and coded by the pipeline.
  const page = readFileSync(join(PUBLIC_DIR, "index.html"));
  const init = readFileSync(join(PUBLIC_DIR, "init.js"));
  ops.get(
    "/docs",
    svc.handle(() => reply.bytes(page, "text/html; charset=utf-8")),
  );
  ops.get(
    "/docs/init.js",
    svc.handle(() => reply.bytes(init, "text/javascript; charset=utf-8")),
  );
  // Swagger UI's files by name: only the files of its directory exist (no path is resolved, so no
  // path leads out of it), and the directory itself is the 404 error record for the path the client
  // sent, not a 301 to "/docs/assets/" that would only lead to the same 404.
  const assets = swaggerAssets();
  ops.get(
    "/docs/assets/:file",
    svc.handle((req: Request) => {
      const asset = assets.get(req.params.file as string);
      if (asset === undefined) throw HttpError.notFound();
      return reply.bytes(createReadStream(asset.path), asset.type, {
        lastModified: asset.modified,
        headers: { "Cache-Control": "public, max-age=3600" },
      });
    }),
  );
  ops.get(
    "/.well-known/jwks.json",
    svc.handle(() => asJson(security.jwks, fiveMinutes)),
  );
  // Credentials, then the rate limit, then the body: a bad body never hides a missing credential.
  ops.post(
    "/auth/token",
    basicOnly(security),
    limiter,
    signedIn(),
    body,
    svc.handle(async (req: Request) => {
      const principal = req.principal;
      // basicOnly() answers a request without credentials itself; should one still get here, its
      // 401 carries the challenge RFC 9110 §15.5.2 requires ("MUST send a WWW-Authenticate").
      if (!principal) {
        throw HttpError.unauthorized(undefined, {
          headers: { "WWW-Authenticate": challenge("Basic", { realm: security.realm, charset: "UTF-8" }) },
        });
      }
      const token = await security.issuer.issue(principal);
      // RFC 6749 §5.1: token responses are never cached.
      return asJson(token, { headers: { "Cache-Control": "no-store", Pragma: "no-cache" } });
    }),
  );
  // Every operational path answers OPTIONS with its methods and any other method (TRACE, DELETE)
  // with 405 and Allow, like the resource API (RFC 9110 §9.3.7, §15.5.6), not 404.
  for (const [path, allow] of OPS_METHODS) ops.route(path).all(allowedMethods(allow));
  return ops;
}

/**
 * Readiness for a load balancer: every dependency is checked on each call. A 503 is the error
 * record with Retry-After (spec parts 7 and 8) plus `checks`, the state of each dependency, which
 * the record's generic 5xx message would hide (an RFC 9457 §3.2 extension member); the drivers'
 * errors go to the log only, as the error's cause.
 */
function readiness({ db, stores }: AppDeps): () => Promise<unknown> {
  return async () => {
    const failures: unknown[] = [];
    const check = (ping: () => Promise<void>) =>
      ping().then(
        () => "UP",
        (err: unknown) => {
          failures.push(err);
          return "DOWN";
        },
      );
    const [database, redis] = await Promise.all([
      check(() => db.ping()),
      stores.redis ? check(() => stores.ping()) : Promise.resolve("not used"),
    ]);
    const checks = { database, redis };
    if (failures.length === 0)
      return asJson({ status: "UP", checks }, { headers: { "Cache-Control": "no-store" } });
    throw HttpError.serviceUnavailable(5, "Not ready: a dependency is down", {
      cause: failures[0],
      extensions: { checks },
      headers: { "Cache-Control": "no-store" },
    });
  };
}

/**
 * The resource API on the app's own router (a sub-router mounted at the root would only add a
 * second dispatch per request): the entry point and every collection. Permission and idempotency
 * run inside each matched route (see guardedRoutes), so a path no route has is a 404 and a method
 * the route lacks a 405 with Allow, for every user, before any 401 or 403.
 */
function mountResourceApi(app: express.Express, parts: AppParts): void {
  const { db, stores, logger } = parts.deps;
  const svc = parts.svc;
  const leaseMs = parts.config.idempotencyLeaseSeconds * 1000;
  const lenientKeys = { idempotency: idempotency({ store: stores.idempotency, leaseMs, logger }) };
  const requiredKeys = {
    idempotency: idempotency({ store: stores.idempotency, required: true, leaseMs, logger }),
  };
  const keys: Keys = (path, method) =>
    method === "post" && KEY_REQUIRED.has(path) ? requiredKeys : lenientKeys;
  const allowed = permission() as RequestHandler;
  // One route layer per guard (each layer Express enters costs a dispatch). Reads get the
  // permission check alone. A write's body is read only after the rate limit (in front of every
  // route) and the permission check: spec part 5 rule 4 gives a client without credentials 401 and
  // a reader 403 whatever it sends, not the 400, 413 or 415 that would tell it what a write
  // accepts, and a body that cannot be parsed is still a request the rate limit counts (spec part
  // 8 rule 1). Its Idempotency-Key is the pipeline's step of each write route (`keys`).
  const write = chain(allowed, parts.body);
  const api = guardedRoutes(app as unknown as express.Router, (_path, method) =>
    method === "get" || method === "options" ? [allowed] : [write],
  );
  const owner = (req: Request) => req.principal?.id ?? "anonymous";
  // The entry point: a link to every top-level collection, so a client (or a crawler) can start
  // here. OPTIONS goes through the guard like the other methods the route has.
  const rootMethods = allowedMethods(["GET", "HEAD", "OPTIONS"]);
  api
    .route("/")
    .get(
      svc.handle((req: Request) => {
        const href = hrefs(req);
        const links: Record<string, string> = {};
        for (const r of parts.listed) if (!r.parent) links[r.collection] = href(r.path);
        links.cart = href("/cart");
        return resourceView({ name: "@svc reference service", docs: `${href("")}/docs` }, href("/"), links);
      }),
    )
    .options(rootMethods)
    .all(rootMethods);
  for (const resource of parts.collections) mountCrud(api, svc, db, resource, keys);
  mountOrderDocuments(api, svc, db);
  mountCart(api, svc, db, owner, keys);
}
