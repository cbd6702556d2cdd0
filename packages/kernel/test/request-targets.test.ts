import { createServer } from "node:http";
import { type Listening, listenOn, rawExchange } from "@svc/test-utils";
import express from "express";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expressAdapter } from "../src/express.js";
import { fastifyAdapter, fastifyRewriteUrl } from "../src/fastify.js";
import { createPipeline, HttpError, isHttpError } from "../src/index.js";
import { nodeAdapter } from "../src/node.js";

// RFC 9112 §3.2: every form of request-target, answered by each adapter as Express's router
// answers it. Each server has one route, `/employees/:id`; its answer names the routed id.
// (`@hono/node-server` answers most of these itself before any application: see the
// conformance suite's exceptions.)

const employee = (id: string) => {
  if (id !== "7") throw HttpError.notFound();
  return { id };
};

// Express's router refuses an undecodable parameter with an error whose `status` is 400.
const status = (err: unknown) =>
  isHttpError(err) ? err.status : ((err as { status?: number } | null)?.status ?? 500);

async function expressServer(): Promise<Listening> {
  const svc = expressAdapter(createPipeline());
  const app = express();
  app.use(svc.prepare);
  app.get(
    "/employees/:id",
    svc.handle<express.Request>((req) => employee(req.params.id as string)),
  );
  app.use((_req: express.Request, res: express.Response) => {
    res.status(404).end();
  });
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(status(err)).end();
  });
  return listenOn(createServer(app));
}

async function nodeServer(): Promise<Listening> {
  const svc = nodeAdapter(createPipeline());
  return listenOn(
    createServer((req, res) => {
      const answer = async () => {
        const { path } = await svc.prepare(req, res);
        const item = /^\/employees\/([^/]+)$/.exec(path);
        if (item === null) throw HttpError.notFound();
        await svc.respond(req, res, () => employee(decodeURIComponent(item[1] as string)));
      };
      answer().catch((err: unknown) => {
        res.statusCode = status(err);
        res.end();
      });
    }),
  );
}

async function fastifyServer(rewrite: "pipeline" | "alone"): Promise<Listening> {
  const svc = fastifyAdapter(createPipeline());
  const app = Fastify({ rewriteUrl: rewrite === "pipeline" ? svc.rewriteUrl : fastifyRewriteUrl });
  await app.register(svc.plugin);
  app.get(
    "/employees/:id",
    rewrite === "pipeline"
      ? svc.handle((request) => employee((request.params as { id: string }).id))
      : async (request) => employee((request.params as { id: string }).id),
  );
  app.setErrorHandler((err, _request, reply) => reply.code(status(err)).send());
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, server: app.server, close: () => app.close() };
}

const servers: Record<string, () => Promise<Listening>> = {
  express: expressServer,
  node: nodeServer,
  "fastify (pipeline)": () => fastifyServer("pipeline"),
  "fastify (fastifyRewriteUrl)": () => fastifyServer("alone"),
};

const rows: readonly (readonly [target: string, status: number])[] = [
  ["/employees/7", 200],
  // §3.2.2: the absolute-form of any scheme, in any case, is routed by its path.
  ["http://api.example/employees/7", 200],
  ["HTTP://API.EXAMPLE/employees/7", 200],
  ["ftp://api.example/employees/7", 200],
  ["FTP://api.example/employees/7?x=1", 200],
  ["ws://api.example/employees/8", 404],
  ["ws://api.example", 404],
  // §3.2.4: the asterisk-form names no route.
  ["*", 404],
  // RFC 3986 §2.1: a stray `%` is no route's path (404), or a route's undecodable parameter (400).
  ["/%ZZ", 404],
  ["/employees/%ZZ", 400],
  ["ftp://api.example/employees/%ZZ", 400],
];

describe.each(Object.keys(servers))("request-targets on %s", (name) => {
  let server: Listening;
  beforeAll(async () => {
    server = await (servers[name] as () => Promise<Listening>)();
  });
  afterAll(() => server.close());

  it.each(rows)("GET %s → %i", async (target, status) => {
    // Without a pipeline no handler refuses the undecodable parameter: the route is reached with
    // it (`%ZZ`, no employee), where Fastify's router alone would answer 400 before any route.
    const expected = name === "fastify (fastifyRewriteUrl)" && status === 400 ? 404 : status;
    const res = await rawExchange(server.url, `GET ${target} HTTP/1.1\r\nHost: api.example`);
    expect(res.status, res.head).toBe(expected);
  });
});
