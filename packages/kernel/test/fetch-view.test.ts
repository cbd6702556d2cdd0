import type { IncomingMessage, Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { byPathVersioner, type Listening, listenOn, rawExchange } from "@svc/test-utils";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectionInfo,
  fetchAdapter,
  fetchGate,
  fetchView,
  honoConnection,
  withConnection,
} from "../src/fetch.js";
import { createPipeline, type Gate, type RequestView, requestFacts } from "../src/index.js";

/** A `Request` that counts how often its fields are asked for. */
function counted(url: string, init?: RequestInit): { request: Request; reads: () => number } {
  const request = new Request(url, init);
  const headers = request.headers;
  let reads = 0;
  Object.defineProperty(request, "headers", {
    get() {
      reads++;
      return headers;
    },
  });
  return { request, reads: () => reads };
}

describe("fetchView: one reading per Request", () => {
  it("two calls for one Request → the same view, its fields read once; another Request → another view", () => {
    const { request, reads } = counted("http://api.example/employees?page=2", { headers: { Accept: "x/y" } });
    const first = fetchView(request);
    const second = fetchView(request);
    expect(second).toBe(first);
    expect(reads()).toBe(1);
    expect(first).toMatchObject({ method: "GET", url: "/employees?page=2", headers: { accept: "x/y" } });
    const another = new Request("http://api.example/employees?page=2", { headers: { Accept: "x/z" } });
    expect(fetchView(another)).not.toBe(first);
    expect(fetchView(another).headers.accept).toBe("x/z");
  });

  it("the same info twice → the same view; another info → its own connection over the same fields", () => {
    const { request, reads } = counted("http://api.example/a", { headers: { Host: "api.example" } });
    const info: ConnectionInfo = { address: "192.0.2.1", rawHeaders: ["Host", "api.example"] };
    const other: ConnectionInfo = { address: "192.0.2.2" };
    const view = fetchView(request, info);
    expect(fetchView(request, info)).toBe(view);
    const otherView = fetchView(request, other);
    expect(otherView.socket?.remoteAddress).toBe("192.0.2.2");
    expect(otherView.rawHeaders).toEqual(["host", "api.example"]);
    expect(view.socket?.remoteAddress).toBe("192.0.2.1");
    expect(view.rawHeaders).toEqual(["Host", "api.example"]);
    expect(fetchView(request).socket?.remoteAddress).toBeUndefined();
    expect(otherView.headers).toBe(view.headers);
    expect(reads()).toBe(1);
  });

  it("a gate writing to its view's fields → a TypeError, and the next reader sees the fields as sent", () => {
    const request = new Request("http://api.example/a", { headers: { Accept: "x/y" } });
    const view = fetchView(request);
    expect(() => {
      (view.headers as Record<string, string>).accept = "*/*";
    }).toThrow(TypeError);
    expect(() => {
      (view as { url?: string }).url = "/b";
    }).toThrow(TypeError);
    expect(fetchView(request).headers.accept).toBe("x/y");
    expect(fetchView(request).url).toBe("/a");
  });

  it("honoConnection twice on one request → the same info, with the target as received", () => {
    const incoming = {
      url: "http://shop.example:8080/employees/1",
      rawHeaders: ["Host", "other"],
      socket: { remoteAddress: "192.0.2.1" },
    } as unknown as IncomingMessage;
    const c = {
      req: { raw: new Request("http://shop.example:8080/employees/1") },
      env: { incoming },
      res: new Response(),
    };
    const info = honoConnection(c);
    expect(honoConnection(c)).toBe(info);
    expect(info).toEqual({
      address: "192.0.2.1",
      encrypted: false,
      rawHeaders: ["Host", "other"],
      target: "http://shop.example:8080/employees/1",
    });
  });

  const request = () => new Request("http://api.example/employees/1");
  const bunServer = (address: string | null) => ({
    requestIP: function (this: unknown, r: Request) {
      // Called as the server's method, with the request Hono was given.
      return this === undefined || !(r instanceof Request) || address === null ? null : { address, port: 1 };
    },
  });
  it.each([
    ["Bun.serve: c.env is the Server", () => bunServer("192.0.2.7"), "192.0.2.7"],
    ["Bun.serve: c.env.server is the Server", () => ({ server: bunServer("2001:db8::7") }), "2001:db8::7"],
    [
      "Deno.serve: c.env is the handler's info",
      () => ({ remoteAddr: { transport: "tcp", hostname: "192.0.2.8", port: 9 } }),
      "192.0.2.8",
    ],
  ] as const)("honoConnection on %s → that address, the same info twice", (_name, env, address) => {
    const c = { req: { raw: request() }, env: env(), res: new Response() };
    const info = honoConnection(c);
    expect(info).toEqual({ address });
    expect(honoConnection(c)).toBe(info);
    expect(fetchView(c.req.raw, info).socket?.remoteAddress).toBe(address);
  });

  it.each([
    ["no env (a worker with no bindings)", undefined],
    ["a worker's bindings", { KV: {}, SECRET: "x" }],
    ["a Deno info without a hostname (a Unix socket)", { remoteAddr: { transport: "unix", path: "/s" } }],
  ] as const)("honoConnection with %s → no connection", (_name, env) => {
    expect(honoConnection({ req: { raw: request() }, env, res: new Response() })).toBeUndefined();
  });

  it.each([
    ["http://a b/employees/1?x=1", "/employees/1?x=1"],
    ["http://a b", "/"],
    ["https://api.example/v1/employees/%ZZ#f", "/v1/employees/%ZZ"],
    ["http://api.example/?next=/a", "/?next=/a"],
  ])(
    "a Request whose URL is %s (built by Bun or Deno from Host as sent) → the view's url %s",
    (url, path) => {
      const request = new Request("http://api.example/");
      Object.defineProperty(request, "url", { value: url });
      expect(fetchView(request).url).toBe(path);
    },
  );

  it("withConnection: what it is told for a request → honoConnection's info, ahead of c.env", async () => {
    const seen: (ConnectionInfo | undefined)[] = [];
    const app = (request: Request, env: unknown) => {
      seen.push(honoConnection({ req: { raw: request }, env, res: new Response() }));
      return new Response("ok");
    };
    const told = withConnection(app, (request: Request, env: unknown) =>
      env === "none" ? undefined : { address: request.headers.get("cf-connecting-ip") ?? undefined },
    );
    const request = new Request("http://api.example/", { headers: { "CF-Connecting-IP": "198.51.100.4" } });
    await told(request, { remoteAddr: { hostname: "192.0.2.8" } });
    await told(new Request("http://api.example/"), "none");
    expect(seen).toEqual([{ address: "198.51.100.4" }, undefined]);
    expect(fetchView(request, seen[0]).socket?.remoteAddress).toBe("198.51.100.4");
    expect(() => withConnection(app, "cf-connecting-ip" as never)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_KERNEL_CONNECTION_OF" }),
    );
  });

  it.each([
    ["gzip;q=0", "gzip;q=0"],
    ["identity", "identity"],
    ["", undefined],
  ])(
    "a Worker's Request: Accept-Encoding: br, gzip from the edge, cf.clientAcceptEncoding %j → the view's %j",
    (client, seen) => {
      const request = new Request("http://api.example/", {
        headers: { "Accept-Encoding": "br, gzip", Accept: "x/y" },
      });
      Object.defineProperty(request, "cf", { value: { clientAcceptEncoding: client, colo: "AMS" } });
      const view = fetchView(request);
      expect(view.headers["accept-encoding"]).toBe(seen);
      expect(view.rawHeaders?.filter((_, i) => i % 2 === 0)).toEqual(
        seen === undefined ? ["accept"] : ["accept", "accept-encoding"],
      );
    },
  );

  it("a Request without cf → its own Accept-Encoding", () => {
    const request = new Request("http://api.example/", { headers: { "Accept-Encoding": "br, gzip" } });
    expect(fetchView(request).headers["accept-encoding"]).toBe("br, gzip");
  });

  it("Bun.serve: requestIP answering null (a Unix socket) → an info without an address", () => {
    const c = { req: { raw: request() }, env: bunServer(null), res: new Response() };
    expect(honoConnection(c)).toEqual({ address: undefined });
  });
});

describe("@svc/kernel/fetch on @hono/node-server: the view of a request", () => {
  let url: string;
  let server: Listening;
  const seen: RequestView[][] = [];
  const record: Gate<Request> = (view) => {
    seen.at(-1)?.push(view);
    return undefined;
  };
  beforeAll(async () => {
    const svc = fetchAdapter(createPipeline({ versioning: byPathVersioner }));
    const app = new Hono({ getPath: svc.getPath });
    app.use(async (_c, next) => {
      seen.push([]);
      await next();
    });
    app.use(fetchGate(record));
    app.use(svc.middleware);
    app.use(fetchGate(record));
    app.get("/employees/:id", (c) =>
      svc.respond(c.req.raw, () => {
        const view = fetchView(c.req.raw, honoConnection(c));
        return {
          id: c.req.param("id"),
          url: view.url,
          originalUrl: view.originalUrl,
          origin: requestFacts(view).origin,
        };
      }),
    );
    server = await listenOn(createAdaptorServer({ fetch: app.fetch }) as Server);
    url = server.url;
  });
  afterAll(() => server.close());

  it("two gates on one request → one view; the next request → another", async () => {
    expect((await fetch(`${url}/employees/1`)).status).toBe(200);
    expect((await fetch(`${url}/employees/2`)).status).toBe(200);
    const [one, two] = seen.slice(-2);
    expect(one).toHaveLength(2);
    expect(one?.[1]).toBe(one?.[0]);
    expect(two?.[0]).not.toBe(one?.[0]);
  });

  it("GET http://shop.example:8080/v2/employees/1 (absolute-form) with Host: other → the target's origin, routed by its path", async () => {
    const reply = await rawExchange(
      url,
      "GET http://shop.example:8080/v2/employees/1 HTTP/1.1\r\nHost: other\r\nAccept: application/json",
    );
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({
      id: "1",
      url: "/v2/employees/1",
      originalUrl: "http://shop.example:8080/v2/employees/1",
      origin: "http://shop.example:8080",
    });
    const originForm = await rawExchange(
      url,
      "GET /employees/1 HTTP/1.1\r\nHost: shop.example\r\nAccept: application/json",
    );
    expect(JSON.parse(originForm.body)).toMatchObject({ url: "/employees/1", origin: "http://shop.example" });
  });
});
