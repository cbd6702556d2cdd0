import { conformance, errorStatus, fallbackErrors, type Mounts, type Row } from "@svc/test-utils/conformance";
import express, { type NextFunction, type Request, type Response } from "express";
import Fastify from "fastify";
import { expressRouting } from "../src/fastify.js";
import { HttpError } from "../src/index.js";

// One service on Express and on Fastify: Express's router with `route.all()` answering what a
// path lacks, and Fastify with `expressRouting` alone. Each row is one request, answered the same
// by both; a row Fastify answers otherwise without the plugin says so in its name.

const THINGS = ["GET", "HEAD", "POST"];
const THING = ["GET", "HEAD", "DELETE"];

const handlers = {
  list: () => ({ things: ["1"] }),
  create: () => ({ created: true }),
  read: (id: string) => ({ id }),
};

/** Express's `route.all()` of the table: OPTIONS 204 with `Allow`, any other method 405 with it. */
function allowed(methods: readonly string[]) {
  const allow = [...methods, "OPTIONS"];
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== "OPTIONS") return next(HttpError.methodNotAllowed(allow));
    res.status(204).set("Allow", allow.join(", ")).end();
  };
}

const mounts = {
  express() {
    const app = express();
    app.disable("x-powered-by");
    app.set("case sensitive routing", true);
    app.set("strict routing", true);
    app
      .route("/things")
      .get((_req, res) => {
        res.json(handlers.list());
      })
      .post((_req, res) => {
        res.status(201).json(handlers.create());
      })
      .all(allowed(THINGS));
    app
      .route("/things/:id")
      .get((req, res) => {
        res.json(handlers.read(req.params.id as string));
      })
      .delete((_req, res) => {
        res.status(204).end();
      })
      .all(allowed(THING));
    app.use((_req: Request, _res: Response, next: NextFunction) => next(HttpError.notFound()));
    app.use(fallbackErrors.express);
    return app;
  },
  fastify() {
    const routing = expressRouting();
    const app = Fastify({ ...routing.serverOptions });
    app.register(routing.plugin);
    app.register(async (api) => {
      api.get("/things", async () => handlers.list());
      api.post("/things", async (_request, reply) => reply.code(201).send(handlers.create()));
      api.get("/things/:id", async (request) => handlers.read((request.params as { id: string }).id));
      api.delete("/things/:id", async (_request, reply) => reply.code(204).send());
    });
    app.setNotFoundHandler(() => {
      throw HttpError.notFound();
    });
    app.setErrorHandler(fallbackErrors.fastify);
    return app;
  },
} satisfies Pick<Mounts, "express" | "fastify">;

const LONG_ID = "7".repeat(200);

const rows: Row[] = [
  { name: "GET /things/1 → the route", request: { path: "/things/1" }, status: 200, body: { id: "1" } },
  {
    name: "HEAD /things/1 → the GET route's fields, no content",
    request: { method: "HEAD", path: "/things/1" },
    status: 200,
    headers: { "content-type": /^application\/json/ },
    body: "",
  },
  {
    name: "PUT /things/1 (a method the path lacks) → 405 with Allow",
    request: {
      method: "PUT",
      path: "/things/1",
      headers: { "content-type": "application/json" },
      body: "{}",
    },
    status: 405,
    headers: { allow: "GET, HEAD, DELETE, OPTIONS" },
    body: errorStatus(405),
  },
  {
    name: "PURGE /things (a method Fastify does not know by default) → 405 with Allow, not 404",
    request: { method: "PURGE", path: "/things" },
    status: 405,
    headers: { allow: "GET, HEAD, POST, OPTIONS" },
    body: errorStatus(405),
  },
  {
    name: "QUERY /things without Content-Type → 405 with Allow, not Fastify's 400",
    request: { method: "QUERY", path: "/things" },
    status: 405,
    headers: { allow: "GET, HEAD, POST, OPTIONS" },
  },
  {
    name: "QUERY /things with Content-Type → 405 with Allow",
    request: {
      method: "QUERY",
      path: "/things",
      headers: { "content-type": "application/json" },
      body: "{}",
    },
    status: 405,
    headers: { allow: "GET, HEAD, POST, OPTIONS" },
  },
  {
    name: "OPTIONS /things → 204 with Allow",
    request: { method: "OPTIONS", path: "/things" },
    status: 204,
    headers: { allow: "GET, HEAD, POST, OPTIONS" },
    body: "",
  },
  {
    name: "OPTIONS /things/1 → 204 with Allow",
    request: { method: "OPTIONS", path: "/things/1" },
    status: 204,
    headers: { allow: "GET, HEAD, DELETE, OPTIONS" },
    body: "",
  },
  {
    name: "GET /things/ (an empty :id) → 404, not the route",
    request: { path: "/things/" },
    status: 404,
    body: errorStatus(404),
  },
  {
    name: "DELETE /things/ (an empty :id) → 404, not the route",
    request: { method: "DELETE", path: "/things/" },
    status: 404,
    body: errorStatus(404),
  },
  {
    name: "GET /things/%zz (a stray %) → 400",
    request: { path: "/things/%zz" },
    status: 400,
    body: errorStatus(400),
  },
  {
    name: "GET /things/%C0%AF (no UTF-8) → 400 from the error handler, not Fastify's own",
    request: { path: "/things/%C0%AF" },
    status: 400,
    body: errorStatus(400),
  },
  {
    name: "GET http://x/things/1 (absolute-form) → routed by its path",
    request: { path: "http://x/things/1" },
    status: 200,
    body: { id: "1" },
  },
  {
    name: "GET /Things → 404 (case-sensitive)",
    request: { path: "/Things" },
    status: 404,
    body: errorStatus(404),
  },
  { name: "GET /things/1/ → 404 (strict)", request: { path: "/things/1/" }, status: 404 },
  {
    name: "GET /things/<200 digits> → the route (past Fastify's default maxParamLength)",
    request: { path: `/things/${LONG_ID}` },
    status: 200,
    body: { id: LONG_ID },
  },
  { name: "GET /nothing → 404", request: { path: "/nothing" }, status: 404, body: errorStatus(404) },
];

// Fastify 5.5 moved the router's settings into `routerOptions`; 5.0 reads them as server options
// of their own, so there its default maxParamLength (100) stands.
const floor = process.env.FASTIFY_FLOOR === "1";
conformance(
  "@svc/kernel expressRouting: Fastify answers as Express",
  // The two frameworks compared are the only ones mounted, and the only ones `conformance` serves.
  mounts as unknown as Mounts,
  floor ? rows.filter((row) => !row.name.includes("maxParamLength")) : rows,
  ["express", "fastify"],
);
