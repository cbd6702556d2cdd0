import { type Listening, whenListening } from "@svc/test-utils";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expressRouting, type RoutedTarget } from "../src/fastify.js";
import { HttpError, isHttpError } from "../src/index.js";

// What `expressRouting` places where, on Fastify alone: the table beside Express is
// express-routing.test.ts.

/** The error handler of these servers: the status, `Allow`, and the message as the body. */
function answer(err: unknown, _request: FastifyRequest, reply: FastifyReply) {
  const status = isHttpError(err) ? err.status : ((err as { statusCode?: number }).statusCode ?? 500);
  const allow = isHttpError(err) ? err.headers?.Allow : undefined;
  if (allow !== undefined) reply.header("allow", allow);
  return reply.code(status).send({ status, message: (err as Error).message });
}

async function listening(app: FastifyInstance): Promise<Listening> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  return whenListening(app.server);
}

describe("allowedMethods: a path's Allow list and place given by the application", () => {
  let server: Listening;
  const seen: string[] = [];
  beforeAll(async () => {
    const routing = expressRouting({
      notFound: (target: RoutedTarget) => HttpError.notFound(`none: ${target.method} ${target.url}`),
      methodNotAllowed: (target, allowed) =>
        HttpError.methodNotAllowed(allowed, `${target.method} not on ${target.url}`),
    });
    const app = Fastify({ ...routing.serverOptions });
    await app.register(routing.plugin);
    app.register(async (api) => {
      api.addHook("onRequest", async (request, reply) => {
        reply.header("x-context", "api");
        seen.push(`api ${request.method}`);
      });
      const mayRead = async (request: FastifyRequest) => {
        seen.push(`guard ${request.method}`);
        if (request.headers.authorization === undefined) throw HttpError.unauthorized();
      };
      api.get("/orders/:id", { preParsing: mayRead }, async (request) => request.params);
      api.route({
        ...routing.allowedMethods("/orders/:id", ["GET", "HEAD", "OPTIONS", "PATCH"], {
          fields: { "Accept-Patch": "application/merge-patch+json" },
        }),
        preParsing: mayRead,
      });
    });
    app.setErrorHandler(answer);
    server = await listening(app);
  });
  afterAll(() => server.close());

  it("DELETE /orders/7 → 405 with the list as given, behind the context's hooks, before the guard", async () => {
    seen.length = 0;
    const res = await fetch(`${server.url}/orders/7`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS, PATCH");
    expect(res.headers.get("x-context")).toBe("api");
    expect(await res.json()).toEqual({ status: 405, message: "DELETE not on /orders/7" });
    expect(seen).toEqual(["api DELETE"]);
  });

  it("OPTIONS /orders/7 with credentials → 204 with Allow and the given fields, behind the guard", async () => {
    seen.length = 0;
    const res = await fetch(`${server.url}/orders/7`, { method: "OPTIONS", headers: { authorization: "x" } });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS, PATCH");
    expect(res.headers.get("accept-patch")).toBe("application/merge-patch+json");
    expect(seen).toEqual(["api OPTIONS", "guard OPTIONS"]);
  });

  it("OPTIONS /orders/7 without credentials → the guard's 401", async () => {
    const res = await fetch(`${server.url}/orders/7`, { method: "OPTIONS" });
    expect(res.status).toBe(401);
  });

  it("PUT /orders/ → notFound's 404, the empty :id refused before the method", async () => {
    const res = await fetch(`${server.url}/orders/`, { method: "PUT" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ status: 404, message: "none: PUT /orders/" });
  });

  it("GET /orders/7 and HEAD /orders/7 → the route, HEAD through the GET's handler", async () => {
    for (const method of ["GET", "HEAD"]) {
      const res = await fetch(`${server.url}/orders/7`, { method, headers: { authorization: "x" } });
      expect(res.status, method).toBe(200);
    }
  });
});

describe("the refusals of a path's routes, added in the context of its first route", () => {
  let server: Listening;
  beforeAll(async () => {
    const routing = expressRouting();
    const app = Fastify({ ...routing.serverOptions });
    await app.register(routing.plugin);
    app.register(
      async (admin) => {
        admin.addHook("onRequest", async (_request, reply) => {
          reply.header("x-context", "admin");
        });
        admin.get("/reports", async () => ({ reports: [] }));
        admin.options("/reports", async (_request, reply) => reply.code(200).send("own"));
        admin.put("/reports", async () => ({ put: true }));
      },
      { prefix: "/admin" },
    );
    app.setErrorHandler(answer);
    server = await listening(app);
  });
  afterAll(() => server.close());

  it("POST /admin/reports → 405 with the routes' methods in order, from the context of the routes", async () => {
    const res = await fetch(`${server.url}/admin/reports`, { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, PUT, OPTIONS");
    expect(res.headers.get("x-context")).toBe("admin");
  });

  it("OPTIONS /admin/reports → the application's own OPTIONS route", async () => {
    const res = await fetch(`${server.url}/admin/reports`, { method: "OPTIONS" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("own");
  });
});

describe("a route of a path added after the path's refusals", () => {
  it("GET, an awaited register, then POST of /late → ready() rejects with ERR_SVC_KERNEL_ROUTE_ORDER", async () => {
    const routing = expressRouting();
    const app = Fastify({ ...routing.serverOptions });
    await app.register(routing.plugin);
    app.register(async (api) => {
      api.get("/late", async () => "read");
      await api.register(async () => {});
      api.post("/late", async () => "written");
    });
    await expect(app.ready()).rejects.toMatchObject({
      name: "TypeError",
      code: "ERR_SVC_KERNEL_ROUTE_ORDER",
      message: expect.stringContaining(
        "the route POST /late comes after the 405 answers of /late, which refuse POST",
      ),
    });
  });

  it("allowedMethods without a method its route has → ready() rejects with ERR_SVC_KERNEL_ROUTE_ORDER", async () => {
    const routing = expressRouting();
    const app = Fastify({ ...routing.serverOptions });
    await app.register(routing.plugin);
    app.register(async (api) => {
      api.route(routing.allowedMethods("/listed", ["GET", "HEAD"]));
      api.get("/listed", async () => "read");
      api.delete("/listed", async () => "gone");
    });
    await expect(app.ready()).rejects.toMatchObject({
      code: "ERR_SVC_KERNEL_ROUTE_ORDER",
      message: expect.stringContaining("DELETE among them"),
    });
  });

  it("allowedMethods given first → the later routes are the path's own", async () => {
    const routing = expressRouting();
    const app = Fastify({ ...routing.serverOptions });
    await app.register(routing.plugin);
    app.register(async (api) => {
      api.route(routing.allowedMethods("/late", ["GET", "HEAD", "POST"]));
      api.get("/late", async () => "read");
      await api.register(async () => {});
      api.post("/late", async () => "written");
    });
    app.setErrorHandler(answer);
    const res = await app.inject({ method: "DELETE", url: "/late" });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe("GET, HEAD, POST, OPTIONS");
    expect((await app.inject({ method: "POST", url: "/late" })).body).toBe("written");
    await app.close();
  });
});

describe("a route with constraints", () => {
  it("GET /hosted on one host → no refusals added for it (they would answer every host)", async () => {
    const routing = expressRouting();
    const app = Fastify({ ...routing.serverOptions });
    await app.register(routing.plugin);
    app.get("/hosted", { constraints: { host: "a.example" } }, async () => "a");
    app.setErrorHandler(answer);
    const res = await app.inject({ method: "DELETE", url: "/hosted", headers: { host: "b.example" } });
    expect(res.statusCode).toBe(404);
    await app.close();
  });
});
