import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { byPathVersioner, type Listening, listen, rawRequest } from "@svc/test-utils";
import express, { type NextFunction, type Request, type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expressAdapter } from "../src/express.js";
import { createPipeline, HttpError, isHttpError, reply } from "../src/index.js";
import { pipelineRequest, writeResponse } from "../src/node.js";

function errorHandler(err: unknown, _req: Request, res: Response, _next: NextFunction): void {
  const status = isHttpError(err) ? err.status : 500;
  res.status(status).json({ status, message: err instanceof Error ? err.message : String(err) });
}

let server: Listening;
let plain: Listening;
let twice: Listening;

beforeAll(async () => {
  const svc = expressAdapter(createPipeline({ versioning: byPathVersioner }));
  const app = express();
  app.use((req, res, next) => {
    res.setHeader("X-Front", "1");
    res.setHeader("Vary", "Origin");
    if (req.url === "/linked") res.setHeader("Link", "</style.css>; rel=preload; as=style");
    next();
  });
  app.use(svc.prepare);
  app.get(
    "/things/:id",
    svc.handle(async (req: Request, ctx) => {
      await Promise.resolve();
      if (req.params.id === "0") throw HttpError.notFound("thing 0 does not exist");
      return { id: Number(req.params.id), version: ctx.version };
    }),
  );
  app.post(
    "/things",
    svc.handle(() => reply({ id: 9 }, { status: 201, headers: { Location: "/things/9" } })),
  );
  app.get(
    "/empty",
    svc.handle(() => undefined),
  );
  app.get(
    "/stream",
    svc.handle(() => reply.bytes(Readable.from(["a", "b", "c"]), "text/plain; charset=utf-8")),
  );
  app.get(
    "/linked",
    svc.handle(() => reply({ page: 2 }, { headers: { Link: '</things?page=3>; rel="next"' } })),
  );
  app.use(errorHandler);
  server = await listen(app);

  // The same adapter's prepare mounted twice: app-wide and again on a router in front of the routes.
  const again = expressAdapter(createPipeline({ versioning: byPathVersioner }));
  const twiceApp = express();
  twiceApp.use(again.prepare);
  const router = express.Router();
  router.use(again.prepare);
  router.get(
    "/things/:id",
    again.handle((req: Request, ctx) => ({ id: Number(req.params.id), version: ctx.version })),
  );
  twiceApp.use(router);
  // Two pipelines on one request: the first prepares app-wide (/v2 stripped), the second prepares
  // what is left; each route's handler reads its own pipeline's decision.
  const first = expressAdapter(createPipeline({ versioning: byPathVersioner }));
  const second = expressAdapter(createPipeline({ versioning: byPathVersioner }));
  const both = express.Router();
  both.use(first.prepare, second.prepare);
  both.get(
    "/first/:id",
    first.handle((req: Request, ctx) => ({ id: Number(req.params.id), version: ctx.version })),
  );
  both.get(
    "/second/:id",
    second.handle((req: Request, ctx) => ({ id: Number(req.params.id), version: ctx.version })),
  );
  twiceApp.use("/two", both);
  twiceApp.use(errorHandler);
  twice = await listen(twiceApp);

  const pipeline = createPipeline();
  plain = await listen((req: IncomingMessage, res: ServerResponse) => {
    const request = pipelineRequest(req, res);
    pipeline
      .respond(request, { version: undefined, refusal: undefined }, { path: request.path })
      .then((value) => writeResponse(res, value, request.view.method ?? "GET"))
      .catch(() => {
        res.statusCode = 500;
        res.end();
      });
  });
});

afterAll(async () => {
  await server.close();
  await plain.close();
  await twice.close();
});

describe("the Express adapter (Express 4 and 5)", () => {
  it("GET /things/7 → 200 JSON, one write with Content-Length; fields set in front kept, Vary kept", async () => {
    const res = await rawRequest(`${server.url}/things/7`, "GET");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["content-length"]).toBe(String(res.body.length));
    expect(res.headers["x-front"]).toBe("1");
    expect(res.headers.vary).toBe("Origin");
    expect(res.headers["api-supported-versions"]).toBe("1, 2");
    expect(JSON.parse(res.body.toString())).toEqual({ id: 7, version: 1 });
  });

  it("GET /v2/things/7 → routed once as /things/7, version 2", async () => {
    const res = await fetch(`${server.url}/v2/things/7`);
    expect(await res.json()).toEqual({ id: 7, version: 2 });
  });

  it("GET /v3/things/7 → the version's refusal (404), with the fields every response carries; no handler", async () => {
    const res = await fetch(`${server.url}/v3/things/7`);
    expect(res.status).toBe(404);
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
  });

  it("an async handler throwing HttpError → next(err): the error handler answers, the process lives (Express 4 too)", async () => {
    const res = await fetch(`${server.url}/things/0`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ status: 404, message: "thing 0 does not exist" });
  });

  it("POST /things → 201 with Location", async () => {
    const res = await fetch(`${server.url}/things`, { method: "POST" });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe("/things/9");
    expect(await res.json()).toEqual({ id: 9 });
  });

  it("a handler returning nothing → 204, no Content-Type, no Content-Length", async () => {
    const res = await rawRequest(`${server.url}/empty`, "GET");
    expect(res.status).toBe(204);
    expect(res.headers["content-type"]).toBeUndefined();
    expect(res.headers["content-length"]).toBeUndefined();
  });

  it("HEAD /things/7 → the GET's fields (Content-Length of the GET's bytes), no content", async () => {
    const get = await rawRequest(`${server.url}/things/7`, "GET");
    const head = await rawRequest(`${server.url}/things/7`, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers["content-length"]).toBe(String(get.body.length));
    expect(head.body.length).toBe(0);
  });

  it("a reply's Link is appended to the Link set in front, not put in its place (RFC 8288 §3.5)", async () => {
    const res = await rawRequest(`${server.url}/linked`, "GET");
    expect(res.status).toBe(200);
    expect(res.headers.link).toBe('</style.css>; rel=preload; as=style, </things?page=3>; rel="next"');
  });

  it("prepare mounted twice decides the version once: /v2 stays version 2, routed as /things/7", async () => {
    const res = await fetch(`${twice.url}/v2/things/7`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 7, version: 2 });
    const refused = await fetch(`${twice.url}/v3/things/7`);
    expect(refused.status).toBe(404);
  });

  it("two pipelines on one request: each route's handler reads its own pipeline's decision", async () => {
    // The first pipeline strips /v2; the second sees /first/7 (version 1 by default).
    expect(await (await fetch(`${twice.url}/two/v2/first/7`)).json()).toEqual({ id: 7, version: 2 });
    expect(await (await fetch(`${twice.url}/two/v2/second/7`)).json()).toEqual({ id: 7, version: 1 });
  });

  it("a streamed body → piped, chunked, no Content-Length", async () => {
    const res = await rawRequest(`${server.url}/stream`, "GET");
    expect(res.body.toString()).toBe("abc");
    expect(res.headers["transfer-encoding"]).toBe("chunked");
    expect(res.headers["content-length"]).toBeUndefined();
  });
});

describe("the core on plain node:http", () => {
  it("GET /x → the pipeline's value written by writeResponse", async () => {
    const res = await fetch(`${plain.url}/x?y=1`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ path: "/x" });
  });
});

describe("adapters of one pipeline", () => {
  it("a handler of a second adapter of the pipeline reads the preparation of the first's prepare", async () => {
    const pipeline = createPipeline({ versioning: byPathVersioner });
    const front = expressAdapter(pipeline);
    const routes = expressAdapter(pipeline);
    const other = expressAdapter(createPipeline({ versioning: byPathVersioner }));
    const app = express();
    app.use(front.prepare);
    app.get(
      "/things/:id",
      routes.handle((req: Request, ctx) => ({ id: Number(req.params.id), version: ctx.version })),
    );
    // Another pipeline decides for itself, from the path its routes were given (the prefix gone).
    app.get(
      "/others/:id",
      other.handle((req: Request, ctx) => ({ id: Number(req.params.id), version: ctx.version })),
    );
    app.use(errorHandler);
    const shared = await listen(app);
    try {
      expect(await (await fetch(`${shared.url}/v2/things/7`)).json()).toEqual({ id: 7, version: 2 });
      expect(await (await fetch(`${shared.url}/v2/others/7`)).json()).toEqual({ id: 7, version: 1 });
    } finally {
      await shared.close();
    }
  });
});
