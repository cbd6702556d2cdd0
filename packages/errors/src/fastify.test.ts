import { whenListening } from "@svc/test-utils";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { describe, expect, it, onTestFinished } from "vitest";
import { errorPlugin, fastifyErrorHandler } from "./fastify.js";
import { HttpError } from "./index.js";

const quiet = { error() {} };

async function app(register = true) {
  const lines: { entry: Record<string, unknown>; msg: string | undefined }[] = [];
  const logger = {
    error: (entry: object, msg?: string) => lines.push({ entry: entry as Record<string, unknown>, msg }),
  };
  const fastify = Fastify({ bodyLimit: 64 });
  if (register) await fastify.register(errorPlugin, { logger });
  fastify.post("/echo", async (request) => request.body);
  fastify.post(
    "/people",
    {
      schema: {
        body: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" }, age: { type: "integer" } },
        },
      },
    },
    async (request) => request.body,
  );
  fastify.get("/boom", async () => {
    throw new Error("secret");
  });
  fastify.get("/started", async (_request, reply) => {
    reply.raw.writeHead(200, { "content-type": "text/plain" });
    reply.raw.write("partial");
    throw HttpError.internal("after the head");
  });
  return { fastify, lines };
}

describe("errorPlugin: Fastify's own errors get the record", () => {
  it("Content-Type: text/csv on a JSON-only route → 415 record", async () => {
    const { fastify } = await app();
    const res = await fastify.inject({
      method: "POST",
      url: "/echo",
      headers: { "content-type": "text/csv" },
      payload: "a,b",
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({
      status: 415,
      message: "The request body's media type is not supported",
    });
    expect(res.headers["cache-control"]).toBe("no-store");
  });

  it("a body over bodyLimit → 413 record", async () => {
    const { fastify } = await app();
    const res = await fastify.inject({
      method: "POST",
      url: "/echo",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ text: "x".repeat(100) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ status: 413, message: "The request body is too large" });
  });

  it("an empty JSON body → 400 record", async () => {
    const { fastify } = await app();
    const res = await fastify.inject({
      method: "POST",
      url: "/echo",
      headers: { "content-type": "application/json" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, message: "The request body is malformed" });
  });

  it("a content-type parser's SyntaxError with statusCode 400 → 400 record, entity.parse.failed", async () => {
    const { fastify } = await app();
    // A JSON parser as Fastify's content-type parser reference writes one (and as Fastify's own
    // before 5.5.0 fails): the SyntaxError handed on with statusCode 400, no code.
    fastify.addContentTypeParser(
      "application/vnd.acme+json",
      { parseAs: "string" },
      (_request, body, done) => {
        try {
          done(null, JSON.parse(body as string));
        } catch (err) {
          (err as SyntaxError & { statusCode?: number }).statusCode = 400;
          done(err as Error, undefined);
        }
      },
    );
    const res = await fastify.inject({
      method: "POST",
      url: "/echo",
      headers: { "content-type": "application/vnd.acme+json", accept: "application/problem+json" },
      payload: '{"name": "Ada",',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      status: 400,
      detail: "The request body is malformed",
      code: "entity.parse.failed",
    });
  });

  it("a body the schema refuses → 400 with field errors", async () => {
    const { fastify } = await app();
    const res = await fastify.inject({ method: "POST", url: "/people", payload: { age: "old" } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ status: 400, message: "The request body is invalid" });
    expect(body.errors).toContainEqual({ field: "name", message: "must have required property 'name'" });
    expect(Object.keys(body).sort()).toEqual(["error", "errors", "message", "path", "status", "timestamp"]);
  });

  it("a thrown Error → 500, logged once through the logger option, never shown", async () => {
    const { fastify, lines } = await app();
    const res = await fastify.inject({ url: "/boom", headers: { "x-correlation-id": "c-1" } });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain("secret");
    expect(lines).toHaveLength(1);
    expect(lines[0]?.entry).toMatchObject({
      status: 500,
      method: "GET",
      path: "/boom",
      correlationId: "c-1",
    });
    expect(lines[0]?.entry.err).toMatchObject({ message: "secret" });
  });

  it("no logger option → request.log", async () => {
    const seen: unknown[] = [];
    const fastify = Fastify({
      logger: { level: "error", stream: { write: (line: string) => seen.push(JSON.parse(line)) } },
    });
    await fastify.register(errorPlugin);
    fastify.get("/boom", async () => {
      throw new Error("secret");
    });
    const res = await fastify.inject({ url: "/boom" });
    expect(res.statusCode).toBe(500);
    expect(seen).toContainEqual(expect.objectContaining({ msg: "request failed", reqId: expect.anything() }));
  });

  it("an error after the head was sent → the connection is cut, the 5xx logged", async () => {
    const { fastify, lines } = await app();
    await fastify.listen({ port: 0, host: "127.0.0.1" });
    try {
      const address = fastify.server.address() as { port: number };
      await expect(fetch(`http://127.0.0.1:${address.port}/started`).then((r) => r.text())).rejects.toThrow();
      expect(lines.map((l) => l.msg)).toEqual(["request failed"]);
    } finally {
      fastify.server.closeAllConnections();
      await fastify.close();
    }
  });

  it("an unknown option is refused at register", async () => {
    const fastify = Fastify();
    await expect(fastify.register(errorPlugin, { loger: quiet } as never)).rejects.toThrow(
      /did you mean "logger"/,
    );
  });

  it("fastifyErrorHandler as frameworkErrors: a malformed URL → 400 record", async () => {
    const fastify = Fastify({ frameworkErrors: fastifyErrorHandler({ logger: quiet }) });
    fastify.get("/items/:id", async () => "ok");
    const res = await fastify.inject({ url: "/items/%E0%A4%A" });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, error: "Bad Request", path: "/items/%E0%A4%A" });
  });
});

/** `fastify` listening on a loopback port, closed after the test. */
async function listening(fastify: FastifyInstance): Promise<string> {
  await fastify.listen({ port: 0, host: "127.0.0.1" });
  const { url, close } = await whenListening(fastify.server);
  onTestFinished(async () => {
    await close();
    await fastify.close();
  });
  return url;
}

// RFC 9110 §15.5.6: a 405 MUST carry Allow, the target resource's methods; §9.3.7: OPTIONS
// answers with them. The plugin asks Fastify's router which methods route the request's path.
describe("errorPlugin: a path routed for other methods → 405 with Allow, OPTIONS → 204", () => {
  async function routed(options: FastifyServerOptions = {}) {
    const fastify = Fastify(options);
    await fastify.register(errorPlugin, { logger: quiet });
    fastify.get("/reports", async () => []);
    fastify.get("/items/:id", async (request, reply) =>
      (request.params as { id: string }).id === "7" ? { id: 7 } : reply.callNotFound(),
    );
    fastify.delete("/items/:id", async (_request, reply) => reply.code(204).send());
    await fastify.register(
      async (child) => {
        child.post("/orders", async () => ({}));
      },
      { prefix: "/api" },
    );
    return listening(fastify);
  }

  it("PUT /reports (GET only) → 405 record with Allow: GET, HEAD, OPTIONS", async () => {
    const url = await routed();
    const res = await fetch(`${url}/reports?page=2`, { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toMatchObject({
      status: 405,
      error: "Method Not Allowed",
      message: "Method PUT is not allowed on /reports",
      path: "/reports",
    });
  });

  it("OPTIONS /reports → 204, Allow: GET, HEAD, OPTIONS, no content", async () => {
    const url = await routed();
    const res = await fetch(`${url}/reports`, { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(await res.text()).toBe("");
  });

  it("POST /items/8 (GET and DELETE /items/:id) → 405 with Allow: GET, HEAD, DELETE, OPTIONS", async () => {
    const url = await routed();
    const res = await fetch(`${url}/items/8`, {
      method: "POST",
      headers: { Accept: "application/problem+json" },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, DELETE, OPTIONS");
    expect(res.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    expect(await res.json()).toMatchObject({
      status: 405,
      title: "Method Not Allowed",
      instance: "/items/8",
    });
  });

  it("GET /api/orders (POST in a prefixed child context) → 405 with Allow: POST, OPTIONS", async () => {
    const url = await routed();
    const res = await fetch(`${url}/api/orders`);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST, OPTIONS");
  });

  it("HEAD /api/orders → 405 with Allow and no content", async () => {
    const url = await routed();
    const res = await fetch(`${url}/api/orders`, { method: "HEAD" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST, OPTIONS");
    expect(await res.text()).toBe("");
  });

  it.each([
    ["PUT", "/nowhere"],
    ["OPTIONS", "/nowhere"],
    ["GET", "/items"],
    ["PUT", "/reports/extra"],
  ])("%s %s (no route for that path) → 404 record, no Allow", async (method, path) => {
    const url = await routed();
    const res = await fetch(`${url}${path}`, { method });
    expect(res.status).toBe(404);
    expect(res.headers.get("allow")).toBeNull();
    expect(await res.json()).toMatchObject({ status: 404, message: `No resource matches ${method} ${path}` });
  });

  it("GET /items/8, whose route calls reply.callNotFound() → 404, not a 405 naming GET", async () => {
    const url = await routed();
    const res = await fetch(`${url}/items/8`);
    expect(res.status).toBe(404);
    expect(res.headers.get("allow")).toBeNull();
  });

  it("PUT /items/<a 120-character id> (over maxParamLength: GET would not route it) → 404", async () => {
    const url = await routed();
    const res = await fetch(`${url}/items/${"x".repeat(120)}`, { method: "PUT" });
    expect(res.status).toBe(404);
    expect(res.headers.get("allow")).toBeNull();
  });

  it("exposeHeadRoutes: false → HEAD /reports is 405 and Allow leaves HEAD out", async () => {
    const url = await routed({ exposeHeadRoutes: false });
    const res = await fetch(`${url}/reports`, { method: "HEAD" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, OPTIONS");
  });

  it("the router's ignoreTrailingSlash → PUT /reports/ is routed as /reports: 405", async () => {
    // Fastify 5.5 moved the router's options into routerOptions (the top-level ones deprecated);
    // before 5.5 there is no routerOptions, and they are server options of their own.
    const url = await routed(
      process.env.FASTIFY_FLOOR === "1"
        ? { ignoreTrailingSlash: true }
        : { routerOptions: { ignoreTrailingSlash: true } },
    );
    const res = await fetch(`${url}/reports/`, { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });
});
