import { randomUUID } from "node:crypto";
import { createReadStream, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { challenge } from "@svc/auth";
import { HttpError } from "@svc/errors";
import {
  type Principal,
  type Reply,
  type ReplyInit,
  type RouteOptions,
  reply,
  stringifyJson,
} from "@svc/kernel";
import type { CrossOriginOptions } from "@svc/negotiate";
import type { Logger } from "pino";
import type { Config } from "./config.js";
import type { Db } from "./db/database.js";
import { hrefs } from "./links.js";
import { openApiDocument } from "./openapi.js";
import type { Keys } from "./pipeline.js";
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
import { type Background, employeeProjects, mountCart, transfers } from "./routes/money.js";
import {
  customerOrders,
  mountOrderDocuments,
  orderItems,
  orders,
  payments,
  userOrders,
} from "./routes/orders.js";
import type { Security } from "./security.js";
import { events, notifications } from "./soap/index.js";
import type { Stores } from "./stores.js";
import type { Telemetry } from "./telemetry.js";
import type { Routes } from "./view.js";

/**
 * The parts of the service both compositions (Express in app.ts, Fastify in fastify-app.ts) share:
 * the collections, the operational endpoints' answers, the resource API's routes and the
 * cross-cutting settings. Nothing here depends on a web framework.
 */

/** What the app needs besides its configuration: opened once by the server, closed on shutdown. */
export interface AppDeps {
  db: Db;
  logger: Logger;
  background: Background;
  security: Security;
  stores: Stores;
  /**
   * The packages' decisions as metrics (served on the metrics' own listener, `METRICS_PORT`) and
   * per request (`TELEMETRY=on`); absent when off.
   */
  telemetry?: Telemetry | undefined;
}

const READ_ONLY = ["GET", "HEAD", "OPTIONS"];
/** The operational routes and the methods each has. */
export const OPS_METHODS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["/health", READ_ONLY],
  ["/ready", READ_ONLY],
  ["/openapi.json", READ_ONLY],
  ["/docs", READ_ONLY],
  ["/docs/init.js", READ_ONLY],
  ["/docs/assets/:file", READ_ONLY],
  ["/.well-known/jwks.json", READ_ONLY],
  ["/auth/token", ["POST", "OPTIONS"]],
];
/** Path prefixes (lower case) of the operational endpoints and of the SOAP router's routes. */
export const OPS_PATHS = ["/health", "/ready", "/openapi.json", "/docs", "/.well-known/", "/auth/"];
export const SOAP_PATHS = ["/ws/"];
export const SOAP_COLLECTION_PATHS = ["/events", "/notifications"];

/**
 * POSTs that move money must carry an Idempotency-Key. Compared with the path of the route that
 * matched, never with the spelling of the request: after a `/v<N>` prefix, which versioning strips
 * before routing, `/transfers` is the route's path; `/Transfers`, `/TRANSFERS` and `/transfers/`
 * match no route (both compositions route case-sensitively and strictly) and are 404, never a
 * keyless write.
 */
const KEY_REQUIRED = new Set(["/payments", "/transfers"]);

const HERE = dirname(fileURLToPath(import.meta.url));
const PUBLIC_DIR = join(HERE, "..", "public");
const SWAGGER_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/** A correlation id from the client is kept when it is a sane token, else one is generated. */
const CORRELATION_ID = /^[\w.:@-]{1,128}$/;

/** The request's correlation id: the client's `X-Correlation-ID` when sane, else a new one. */
export function correlationIdOf(given: string | string[] | undefined): string {
  return typeof given === "string" && CORRELATION_ID.test(given) ? given : randomUUID();
}

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

/** The collections of the resource API, and those the entry point and OpenAPI list. */
export function collectionsOf(background: Background): {
  collections: CrudResource[];
  listed: CrudResource[];
} {
  const collections = resources(background);
  // The one-way operations' collections are mounted with the SOAP services, but belong to the
  // resource API's description and entry point like every other collection.
  return { collections, listed: [...collections, events, notifications] };
}

/** The options of the JSON body parser of every write (resource API, `POST /auth/token`). */
export function bodyOptions(config: Config) {
  return {
    limit: 100 * 1024,
    // Exactly what Accept-Post and Accept-Patch name: another JSON type (application/json-patch+json,
    // RFC 6902) has its own semantics, which the writes do not apply (RFC 5789 §2.2: 415).
    types: ["application/json"],
    // The resource API reads nothing else: any other type is refused here (415 naming Accept-Post)
    // rather than left for a route that would not read it. The SOAP endpoints are not behind it.
    others: "refuse" as const,
    // An amount of 1.0000000000000001 is no amount the service holds: a 400, never taken as 1.
    exactNumbers: true,
    // A body that stalls after its headers is a 408 record (spec part 7), not a socket held open.
    timeout: config.requestTimeoutSeconds * 1000,
  };
}

/** The options of the rate limit of the resource API, `POST /auth/token` and the SOAP endpoints. */
export function rateLimitOptions(config: Config, deps: AppDeps) {
  return {
    limit: config.rateLimit.max,
    windowMs: config.rateLimit.windowSeconds * 1000,
    store: deps.stores.rateLimit,
    failMode: config.rateLimitFailMode,
    logger: deps.logger,
  };
}

/**
 * CORS only for the configured origins; a request without Origin or from another origin gets
 * only `Vary: Origin`, and its preflight reaches the route's OPTIONS (@svc/negotiate crossOrigin).
 * `undefined` when no origin is configured.
 */
export function corsOptions(config: Config): CrossOriginOptions | undefined {
  if (config.corsOrigins.length === 0) return undefined;
  return {
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
  };
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

/** An operational GET route: its path and its answer, from the route's parameters. */
export interface OpsRoute {
  path: string;
  handle(params: Readonly<Record<string, string | undefined>>): unknown;
}

/**
 * The operational endpoints' GET routes: public, never cached, outside the rate limit. Every
 * operational path also answers OPTIONS with its methods and any other method (TRACE, DELETE)
 * with 405 and Allow ({@link OPS_METHODS}), like the resource API (RFC 9110 §9.3.7, §15.5.6).
 */
export function opsRoutes(security: Security, deps: AppDeps, listed: CrudResource[]): OpsRoute[] {
  const noStore = { headers: { "Cache-Control": "no-store" } };
  const fiveMinutes = { headers: { "Cache-Control": "public, max-age=300" } };
  const described = openApiDocument(listed);
  deps.telemetry?.routes(Object.keys((described as { paths: Record<string, unknown> }).paths));
  const document = Buffer.from(stringifyJson(described), "utf8");
  // The page and its script, read once: content in its final form, tagged and coded by the pipeline.
  const page = readFileSync(join(PUBLIC_DIR, "index.html"));
  const init = readFileSync(join(PUBLIC_DIR, "init.js"));
  // Swagger UI's files by name: only the files of its directory exist (no path is resolved, so no
  // path leads out of it), and the directory itself is the 404 error record for the path the client
  // sent, not a 301 to "/docs/assets/" that would only lead to the same 404.
  const assets = swaggerAssets();
  return [
    { path: "/health", handle: () => asJson({ status: "UP" }, noStore) },
    { path: "/ready", handle: readiness(deps) },
    { path: "/openapi.json", handle: () => reply.bytes(document, JSON_TYPE, fiveMinutes) },
    { path: "/docs", handle: () => reply.bytes(page, "text/html; charset=utf-8") },
    { path: "/docs/init.js", handle: () => reply.bytes(init, "text/javascript; charset=utf-8") },
    {
      path: "/docs/assets/:file",
      handle: (params) => {
        const asset = assets.get(params.file as string);
        if (asset === undefined) throw HttpError.notFound();
        return reply.bytes(createReadStream(asset.path), asset.type, {
          lastModified: asset.modified,
          headers: { "Cache-Control": "public, max-age=3600" },
        });
      },
    },
    { path: "/.well-known/jwks.json", handle: () => asJson(security.jwks, fiveMinutes) },
  ];
}

/**
 * `POST /auth/token`'s answer, behind Basic authentication, the rate limit and the body: a token
 * for the principal (`requestState(req).principal`, with the roles and scopes @svc/auth recorded).
 */
export function issueToken(security: Security): (principal: Principal | undefined) => Promise<Reply> {
  return async (principal) => {
    // The Basic step answers a request without credentials itself; should one still get here, its
    // 401 carries the challenge RFC 9110 §15.5.2 requires ("MUST send a WWW-Authenticate").
    if (!principal) {
      throw HttpError.unauthorized(undefined, {
        headers: { "WWW-Authenticate": challenge("Basic", { realm: security.realm, charset: "UTF-8" }) },
      });
    }
    const token = await security.issuer.issue(principal);
    // RFC 6749 §5.1: token responses are never cached.
    return asJson(token, { headers: { "Cache-Control": "no-store", Pragma: "no-cache" } });
  };
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
 * The Idempotency-Key step of each write route, from the framework's `idempotency()` (lenient or
 * `required`): required for the POSTs that move money, by the matched route's path.
 */
export function writeKeys(step: (required: boolean) => RouteOptions["idempotency"]): Keys {
  const lenientKeys = { idempotency: step(false) };
  const requiredKeys = { idempotency: step(true) };
  return (path, method) => (method === "post" && KEY_REQUIRED.has(path) ? requiredKeys : lenientKeys);
}

/**
 * The resource API: the entry point and every collection. Permission and idempotency run inside
 * each matched route (the composition's {@link Routes}), so a path no route has is a 404 and a
 * method the route lacks a 405 with Allow, for every user, before any 401 or 403.
 */
export function mountResourceApi(
  routes: Routes,
  db: Db,
  collections: readonly CrudResource[],
  listed: readonly CrudResource[],
  keys: Keys,
): void {
  // The entry point: a link to every top-level collection, so a client (or a crawler) can start
  // here. OPTIONS goes through the guard like the other methods the route has.
  routes({
    path: "/",
    allow: ["GET", "HEAD", "OPTIONS"],
    handlers: {
      get: {
        handle: (req) => {
          const href = hrefs(req);
          const links: Record<string, string> = {};
          for (const r of listed) if (!r.parent) links[r.collection] = href(r.path);
          links.cart = href("/cart");
          return resourceView({ name: "@svc reference service", docs: `${href("")}/docs` }, href("/"), links);
        },
      },
    },
  });
  for (const resource of collections) mountCrud(routes, db, resource, keys);
  mountOrderDocuments(routes, db);
  // One cart per principal key: the id qualified by its issuer (@svc/kernel), as every package keys.
  mountCart(routes, db, (req) => req.state.principalKey ?? "anonymous", keys);
}
