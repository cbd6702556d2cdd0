import type { IncomingMessage, ServerResponse } from "node:http";
import { type ApiVersion, createPipeline, exchangeOf, HttpError } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { fetchAdapter } from "@svc/kernel/fetch";
import { nodeAdapter } from "@svc/kernel/node";
import { json, representations } from "@svc/negotiate";
import {
  conformance,
  errorStatus,
  fallbackErrors,
  fastifyPipelineApp,
  honoPipelineApp,
  type Mounts,
  type Row,
} from "@svc/test-utils/conformance";
import express from "express";
import { versionedPath as expressPath } from "../src/express.js";
import { versionedPath as fastifyPath } from "../src/fastify.js";
import { versionedPath as fetchPath } from "../src/fetch.js";
import { versionDispatch, versionedPath, versions } from "../src/index.js";
import { versionedPath as nodePath } from "../src/node.js";

// versions() through the kernel's pipeline adapter of each framework: each strategy, the refusal
// of a version the API lacks, a deprecated version's fields, and versionedPath of each entry.

const DEPRECATION = new Date("2026-01-01T00:00:00Z");
const SUNSET = new Date("2026-07-01T00:00:00Z");

const pipeline = () =>
  createPipeline({
    representations: representations({ offers: [json] }),
    versioning: versions({
      versions: [1, 2],
      defaultVersion: 2,
      uri: true,
      header: true,
      mediaType: { vendor: "svc" },
      deprecated: {
        1: {
          deprecation: DEPRECATION,
          sunset: SUNSET,
          link: "https://docs.example.com/deprecations/v1",
        },
      },
    }),
  });

/** The route, once: the version the handler got and its self link as each entry spells it. */
const employee = (version: ApiVersion | undefined, self: string) => ({ id: 7, version, self });

/**
 * The main entry's `versionedPath` and `versionDispatch()`, handed the framework's own request
 * object (Express's `req`, `node:http`'s, Fastify's `request`, Hono's `c.req`): the decision is
 * read from the request's exchange on each.
 */
function eighth(request: object, version: ApiVersion | undefined) {
  const choose = versionDispatch({ 1: () => "v1", 2: () => "v2", default: () => "default" });
  const handler = choose(exchangeOf(request).version?.version)?.() ?? "none";
  return { id: 8, version, self: versionedPath(request, "/employees/8"), handler };
}

const mounts: Mounts = {
  express() {
    const svc = expressAdapter(pipeline());
    const app = express();
    app.use(svc.prepare);
    app.get(
      "/employees/7",
      svc.handle((req: express.Request, ctx) => employee(ctx.version, expressPath(req, "/employees/7"))),
    );
    app.get(
      "/employees/8",
      // What an application's middleware does to the request's own properties changes nothing.
      (req, _res, next) => {
        req.apiVersion = 1;
        req.apiVersionPrefix = "/v1";
        next();
      },
      svc.handle((req: express.Request, ctx) => eighth(req, ctx.version)),
    );
    app.use(fallbackErrors.express);
    return app;
  },
  node() {
    const svc = nodeAdapter(pipeline());
    return (req: IncomingMessage, res: ServerResponse) => {
      const run = async () => {
        const ready = await svc.prepare(req, res);
        if (ready.path === "/employees/8") return svc.respond(req, res, (ctx) => eighth(req, ctx.version));
        if (ready.path !== "/employees/7") throw HttpError.notFound();
        return svc.respond(req, res, (ctx) => employee(ctx.version, nodePath(ready, "/employees/7")));
      };
      run().catch((err) => fallbackErrors.node(err, req, res));
    };
  },
  fastify() {
    const svc = fastifyAdapter(pipeline());
    const app = fastifyPipelineApp(svc);
    app.get(
      "/employees/7",
      svc.handle((request, ctx) => employee(ctx.version, fastifyPath(request, "/employees/7"))),
    );
    app.get(
      "/employees/8",
      svc.handle((request, ctx) => eighth(request, ctx.version)),
    );
    return app;
  },
  fetch() {
    const svc = fetchAdapter(pipeline());
    const app = honoPipelineApp(svc);
    app.get("/employees/7", (c) =>
      svc.respond(c.req.raw, (ctx) => employee(ctx.version, fetchPath(c, "/employees/7"))),
    );
    app.get("/employees/8", (c) => svc.respond(c.req.raw, (ctx) => eighth(c.req, ctx.version)));
    return app.fetch;
  },
};

const rows: Row[] = [
  {
    name: "no version → the default, unprefixed links",
    request: { path: "/employees/7" },
    status: 200,
    headers: { "api-supported-versions": "1, 2", deprecation: null },
    body: { id: 7, version: 2, self: "/employees/7" },
  },
  {
    name: "GET /v2/employees/7 → version 2, links keep the prefix",
    request: { path: "/v2/employees/7" },
    status: 200,
    headers: { "api-supported-versions": "1, 2" },
    body: { id: 7, version: 2, self: "/v2/employees/7" },
  },
  {
    // RFC 9112 §3.2.2: an absolute-form target is routed, and versioned, by its path.
    name: "GET http://api.example/v1/employees/7 (absolute-form) → version 1, links keep the prefix",
    request: { path: "http://api.example/v1/employees/7" },
    status: 200,
    body: { id: 7, version: 1, self: "/v1/employees/7" },
  },
  {
    name: "API-Version: 2 → version 2, links without a prefix",
    request: { path: "/employees/7", headers: { "API-Version": "2" } },
    status: 200,
    headers: { vary: /API-Version/i },
    body: { id: 7, version: 2, self: "/employees/7" },
  },
  {
    name: "Accept: application/vnd.svc.v2+json → version 2, labelled so",
    request: { path: "/employees/7", headers: { Accept: "application/vnd.svc.v2+json" } },
    status: 200,
    headers: { "content-type": /^application\/vnd\.svc\.v2\+json/, vary: /Accept/ },
    body: { id: 7, version: 2, self: "/employees/7" },
  },
  {
    name: "GET /v9/employees/7 → 404 with API-Supported-Versions",
    request: { path: "/v9/employees/7" },
    status: 404,
    headers: { "api-supported-versions": "1, 2" },
    body: errorStatus(404),
  },
  {
    name: "API-Version: 9 → 400 with API-Supported-Versions",
    request: { path: "/employees/7", headers: { "API-Version": "9" } },
    status: 400,
    headers: { "api-supported-versions": "1, 2" },
    body: errorStatus(400),
  },
  {
    name: "Accept: application/vnd.svc.v9+json → 406 with API-Supported-Versions",
    request: { path: "/employees/7", headers: { Accept: "application/vnd.svc.v9+json" } },
    status: 406,
    headers: { "api-supported-versions": "1, 2" },
    body: errorStatus(406),
  },
  {
    name: "GET /v1/employees/7 (deprecated) → Deprecation, Sunset, Link",
    request: { path: "/v1/employees/7" },
    status: 200,
    headers: {
      deprecation: `@${DEPRECATION.getTime() / 1000}`,
      sunset: SUNSET.toUTCString(),
      link: /<https:\/\/docs\.example\.com\/deprecations\/v1>; rel="?deprecation"?/,
    },
    body: { id: 7, version: 1, self: "/v1/employees/7" },
  },
  {
    name: "API-Version: 1 (deprecated) → Deprecation and Sunset",
    request: { path: "/employees/7", headers: { "API-Version": "1" } },
    status: 200,
    headers: { deprecation: `@${DEPRECATION.getTime() / 1000}`, sunset: SUNSET.toUTCString() },
    body: { id: 7, version: 1, self: "/employees/7" },
  },
  {
    name: "GET /v2/employees/8 → versionedPath and versionDispatch() of the main entry read the decision on every framework",
    request: { path: "/v2/employees/8" },
    status: 200,
    body: { id: 8, version: 2, self: "/v2/employees/8", handler: "v2" },
  },
  {
    name: "API-Version: 1 on /employees/8 → no prefix, version 1's handler",
    request: { path: "/employees/8", headers: { "API-Version": "1" } },
    status: 200,
    body: { id: 8, version: 1, self: "/employees/8", handler: "v1" },
  },
];

conformance("@svc/versioning", mounts, rows);
