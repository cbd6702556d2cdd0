import { createPipeline, type Gate, HttpError } from "@svc/kernel";
import { fetchAdapter, fetchGate } from "@svc/kernel/fetch";
import { byPathVersioner } from "@svc/test-utils";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import { allowedMethods, errorResponse, notFoundHandler, onError, requestJson, withErrors } from "./fetch.js";

const quiet = { error() {} };
const usage: Gate = () => ({ fields: { RateLimit: '"default";r=0;t=30', "Retry-After": "99" }, vary: [] });

describe("withErrors: a plain Fetch handler", () => {
  it("a gate's refusal behind withErrors → the record", async () => {
    const refuse: Gate = () => {
      throw HttpError.tooManyRequests(7, "slow down");
    };
    const handler = withErrors(
      fetchGate(refuse).wrap(() => new Response("ok")),
      { logger: quiet },
    );
    const res = await handler(new Request("http://api.test/x"));
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(await res.json()).toMatchObject({ status: 429, message: "slow down", path: "/x" });
  });

  it("a route's error behind a passing gate → the gate's fields, the error's own winning", async () => {
    const handler = withErrors(
      fetchGate(usage).wrap(() => {
        throw HttpError.tooManyRequests(30, "slow down");
      }),
      { logger: quiet },
    );
    const res = await handler(new Request("http://api.test/x"));
    expect(res.status).toBe(429);
    expect(res.headers.get("ratelimit")).toBe('"default";r=0;t=30');
    expect(res.headers.get("retry-after")).toBe("30");
    expect(res.headers.get("vary")).toBe("Accept");
  });

  it("a thrown Error → 500, logged once with the correlation id", async () => {
    const lines: object[] = [];
    const handler = withErrors(
      () => {
        throw new Error("secret");
      },
      {
        logger: { error: (entry) => lines.push(entry) },
        correlationId: (request) => request.headers.get("x-request-id") ?? undefined,
      },
    );
    const res = await handler(new Request("http://api.test/x", { headers: { "x-request-id": "r-1" } }));
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("secret");
    expect(lines).toEqual([expect.objectContaining({ status: 500, path: "/x", correlationId: "r-1" })]);
  });

  it("requestJson: a body that is no JSON → 400 record", async () => {
    const handler = withErrors(async (request) => Response.json(await requestJson(request)), {
      logger: quiet,
    });
    const res = await handler(new Request("http://api.test/x", { method: "POST", body: "{" }));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ message: "The request body is malformed" });
  });

  it("errorResponse on HEAD → the fields and length, no content", async () => {
    const res = errorResponse(
      HttpError.notFound("gone"),
      new Request("http://api.test/x", { method: "HEAD" }),
    );
    expect(res.status).toBe(404);
    expect(Number(res.headers.get("content-length"))).toBeGreaterThan(0);
    expect(await res.text()).toBe("");
  });

  it("an unknown option is refused at construction", () => {
    expect(() => withErrors(() => new Response(), { loger: quiet } as never)).toThrow(
      /did you mean "logger"/,
    );
  });
});

describe("onError and notFoundHandler on Hono", () => {
  function app() {
    const svc = fetchAdapter(createPipeline({ versioning: byPathVersioner }));
    const hono = new Hono({ getPath: svc.getPath });
    hono.use(svc.middleware);
    hono.post("/own", async (c) => {
      await c.req.json();
      return c.json(JSON.parse("{"));
    });
    hono.get("/x", (c) => svc.respond(c.req.raw, () => ({ ok: true })));
    hono.notFound(notFoundHandler({ logger: quiet }));
    hono.onError(onError({ logger: quiet }));
    return hono;
  }

  it("a version refusal → the record with API-Supported-Versions", async () => {
    const res = await app().request("/v3/x");
    expect(res.status).toBe(404);
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
    expect(await res.json()).toMatchObject({ message: "version 3 does not exist", path: "/v3/x" });
  });

  it("an unknown route → the 404 record with the version's fields", async () => {
    const res = await app().request("/v2/nowhere");
    expect(res.status).toBe(404);
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
    expect(await res.json()).toMatchObject({ message: "No resource matches GET /v2/nowhere" });
  });

  it("the application's own SyntaxError after a valid body → 500, not the body's 400", async () => {
    const res = await app().request("/own", {
      method: "POST",
      body: '{"a":1}',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(500);
  });

  it("a body c.req.json() cannot parse → 400", async () => {
    const res = await app().request("/own", {
      method: "POST",
      body: '{"a":',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
  });
});

describe("Hono's HTTPException under onError", () => {
  async function answer(thrown: () => never, init: RequestInit = {}): Promise<Response> {
    const app = new Hono();
    app.use(async (_c, next) => {
      await next();
    });
    app.get("/x", () => thrown());
    app.onError(onError({ logger: quiet }));
    return app.request("/x", init);
  }

  it("HTTPException(403, { message }) → the 403 record, the message as its detail", async () => {
    const res = await answer(() => {
      throw new HTTPException(403, { message: "The token does not grant orders:write" });
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({
      status: 403,
      message: "The token does not grant orders:write",
      path: "/x",
    });
  });

  it("HTTPException(401) with a res carrying WWW-Authenticate → the challenge, not the res's body or type", async () => {
    const res = await answer(() => {
      throw new HTTPException(401, {
        res: new Response("Unauthorized", {
          status: 401,
          headers: { "WWW-Authenticate": 'Bearer realm="api"', "Content-Type": "text/plain" },
        }),
      });
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api"');
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ status: 401, message: "Unauthorized" });
  });

  it("HTTPException(503, { message }) → the 503 record with the generic message, the exception logged", async () => {
    const lines: { status?: number }[] = [];
    const app = new Hono();
    app.get("/x", () => {
      throw new HTTPException(503, { message: "db-primary-7 is down" });
    });
    app.onError(onError({ logger: { error: (entry) => lines.push(entry as { status?: number }) } }));
    const res = await app.request("/x");
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(text).not.toContain("db-primary-7");
    expect(JSON.parse(text)).toMatchObject({ status: 503 });
    expect(lines).toEqual([expect.objectContaining({ status: 503 })]);
  });

  it("HTTPException(400) thrown by middleware, asked for problem details → detail is the message", async () => {
    const app = new Hono();
    app.use(() => {
      throw new HTTPException(400, { message: "The cursor is not valid" });
    });
    app.get("/x", (c) => c.text("never"));
    app.onError(onError({ logger: quiet }));
    const res = await app.request("/x", { headers: { Accept: "application/problem+json" } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 400, detail: "The cursor is not valid" });
  });

  it("withErrors: HTTPException(429) with Retry-After on its res → the 429 record with it", async () => {
    const handler = withErrors(
      () => {
        throw new HTTPException(429, {
          message: "slow down",
          res: new Response(null, { headers: { "Retry-After": "12" } }),
        });
      },
      { logger: quiet },
    );
    const res = await handler(new Request("http://api.test/x"));
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("12");
    expect(await res.json()).toMatchObject({ status: 429, message: "slow down" });
  });
});

// RFC 9110 §15.5.6: a 405 MUST carry Allow; §9.3.7: OPTIONS tells the target resource's methods.
describe("allowedMethods: the last handler of a path, on any Fetch server", () => {
  const reports = allowedMethods(["get", "HEAD"]);
  const fetch = withErrors(async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname !== "/reports") return new Response("not here", { status: 404 });
    if (request.method === "GET") return Response.json([]);
    return reports(request);
  });

  it("DELETE /reports?x=1 → 405 record, Allow: GET, HEAD, OPTIONS, the path without its query", async () => {
    const res = await fetch(new Request("http://api.example/reports?x=1", { method: "DELETE" }));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(await res.json()).toMatchObject({
      message: "Method DELETE is not allowed on /reports",
      path: "/reports",
    });
  });

  it("OPTIONS /reports → 204 with the same Allow, no content", async () => {
    const res = await fetch(new Request("http://api.example/reports", { method: "OPTIONS" }));
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(await res.text()).toBe("");
  });

  it("on Hono after the path's routes: HEAD is the GET route's, POST 405", async () => {
    const app = new Hono();
    app.get("/reports", (c) => c.json([]));
    app.all("/reports", allowedMethods(["GET", "HEAD", "OPTIONS"]));
    app.onError(onError({ logger: { error() {} } }));
    expect((await app.request("/reports", { method: "HEAD" })).status).toBe(200);
    const post = await app.request("/reports", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it.each([[[]], [["GET", "NOT A TOKEN"]], ["GET" as never]])(
    "allowedMethods(%j) → TypeError at setup",
    (allowed) => {
      expect(() => allowedMethods(allowed)).toThrow(TypeError);
    },
  );
});
