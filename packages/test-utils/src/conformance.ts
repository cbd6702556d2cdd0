import { createServer, request as httpRequest, type RequestListener, type Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { HttpError, type ResponseValue, subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { toResponse, withPassages } from "@svc/kernel/fetch";
import Fastify, { type FastifyInstance, type FastifyPluginCallback } from "fastify";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Listening, listenOn, whenListening } from "./listen.js";

/** The frameworks every @svc package has an adapter for. */
export const FRAMEWORKS = ["express", "node", "fastify", "fetch"] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** A Fastify instance as far as the harness needs it (no import of Fastify's types here). */
export interface FastifyLike {
  listen(options: { port: number; host: string }): Promise<string>;
  close(): Promise<unknown>;
  readonly server: Server;
}

/**
 * One server of the same behaviour per framework, built by the package's test:
 * - `express`: an Express app (or any request listener);
 * - `node`: a `node:http` request listener;
 * - `fastify`: a Fastify instance, not yet listening (plugins registered, routes added);
 * - `fetch`: a Fetch handler, served on Node through `@hono/node-server` (a Hono app's `fetch`,
 *   or a plain `(request) => Response`).
 */
export interface Mounts {
  express: () => RequestListener | Promise<RequestListener>;
  node: () => RequestListener | Promise<RequestListener>;
  fastify: () => FastifyLike | Promise<FastifyLike>;
  fetch: () =>
    | ((request: Request) => Response | Promise<Response>)
    | Promise<(request: Request) => Response | Promise<Response>>;
}

/** Starts `framework`'s server of `mounts` on a loopback port. */
export async function serve(framework: Framework, mounts: Mounts): Promise<Listening> {
  switch (framework) {
    case "express":
      return listenOn(createServer(await mounts.express()));
    case "node":
      return listenOn(createServer(await mounts.node()));
    case "fastify": {
      const app = await mounts.fastify();
      await app.listen({ port: 0, host: "127.0.0.1" });
      const listening = await whenListening(app.server);
      return {
        ...listening,
        close: async () => {
          app.server.closeAllConnections();
          await app.close();
        },
      };
    }
    case "fetch": {
      const fetch = await mounts.fetch();
      const server = createAdaptorServer({ fetch }) as Server;
      return listenOn(server);
    }
  }
}

/** A request of a conformance row. */
export interface RowRequest {
  method?: string;
  /** The request-target: origin-form (`/x?y`), or absolute-form (`http://host/x`) sent as it is. */
  path: string;
  /** Field lines in order; a name may repeat (a second `Host`, two `Authorization`s). */
  headers?: Record<string, string> | readonly (readonly [string, string])[];
  body?: string | Uint8Array;
}

/** What came back, as the harness read it off the socket. */
export interface RowResponse {
  status: number;
  /** Fields by lower-case name; a repeated one joined with ", " (`set-cookie` with "\n"). */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
}

/**
 * One row: a request and what every framework's server must answer. `headers`: a string is the
 * exact value, a RegExp must match, `null` means absent. `body`: a string is the exact text, a
 * function checks the response itself (`expect` inside), anything else is compared with the
 * parsed JSON. `steps`: requests sent first on the same server (to use a quota, record a key).
 */
export interface Row {
  name: string;
  before?: readonly RowRequest[];
  request: RowRequest;
  status: number;
  headers?: Record<string, string | RegExp | null>;
  body?: string | ((response: RowResponse) => void) | object;
  /** Rows that need a server of their own (they use up state another row would see). */
  fresh?: boolean;
}

/** Sends `row` to `url` over `node:http`: field lines exactly as given, nothing decoded. */
export function send(url: string, row: RowRequest): Promise<RowResponse> {
  const lines: [string, string][] = Array.isArray(row.headers)
    ? row.headers.map(([n, v]) => [n, v])
    : Object.entries((row.headers ?? {}) as Record<string, string>);
  const flat: string[] = [];
  // Given as an array, field lines go out as they are: Node adds no Host of its own.
  if (!lines.some(([n]) => n.toLowerCase() === "host")) flat.push("Host", new URL(url).host);
  for (const [name, value] of lines) flat.push(name, value);
  const body =
    row.body === undefined ? undefined : typeof row.body === "string" ? Buffer.from(row.body) : row.body;
  if (body !== undefined && !lines.some(([n]) => n.toLowerCase() === "content-length")) {
    flat.push("Content-Length", String(body.byteLength));
  }
  // An absolute-form target (RFC 9112 §3.2.2) goes on the request line as written, to the server at `url`.
  const absolute = /^https?:\/\//i.test(row.path);
  const options = { method: row.method ?? "GET", headers: flat, ...(absolute && { path: row.path }) };
  return new Promise((resolve, reject) => {
    const req = httpRequest(absolute ? url : `${url}${row.path}`, options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const headers: Record<string, string> = {};
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = (res.rawHeaders[i] as string).toLowerCase();
          const value = res.rawHeaders[i + 1] as string;
          headers[name] =
            headers[name] === undefined
              ? value
              : `${headers[name]}${name === "set-cookie" ? "\n" : ", "}${value}`;
        }
        const all = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers, body: all, text: all.toString("utf8") });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Checks `response` against `row`'s expectations. */
export function expectRow(row: Row, response: RowResponse): void {
  expect(response.status, `${row.name}: status`).toBe(row.status);
  for (const [name, want] of Object.entries(row.headers ?? {})) {
    const got = response.headers[name.toLowerCase()];
    if (want === null) expect(got, `${row.name}: ${name} absent`).toBeUndefined();
    else if (want instanceof RegExp) expect(got, `${row.name}: ${name}`).toMatch(want);
    else expect(got, `${row.name}: ${name}`).toBe(want);
  }
  const body = row.body;
  if (body === undefined) return;
  if (typeof body === "string") expect(response.text, `${row.name}: body`).toBe(body);
  else if (typeof body === "function") (body as (r: RowResponse) => void)(response);
  else expect(JSON.parse(response.text), `${row.name}: body`).toEqual(body);
}

/**
 * The conformance table of a package: every row against a listening server of each framework,
 * so that a row answered differently on one framework fails there. Rows marked `fresh` get a
 * server of their own; the others share one per framework.
 *
 * @example conformance("ratelimit", mounts, rows);
 */
export function conformance(
  name: string,
  mounts: Mounts | ((framework: Framework) => Mounts),
  rows: readonly Row[],
  frameworks: readonly Framework[] = FRAMEWORKS,
): void {
  for (const framework of frameworks) {
    const mountsOf = () => (typeof mounts === "function" ? mounts(framework) : mounts);
    describe(`${name} on ${framework}`, () => {
      let shared: Listening | undefined;
      beforeAll(async () => {
        if (rows.some((row) => !row.fresh)) shared = await serve(framework, mountsOf());
      });
      afterAll(async () => {
        await shared?.close();
      });
      for (const row of rows) {
        it(row.name, async () => {
          const server = row.fresh ? await serve(framework, mountsOf()) : (shared as Listening);
          try {
            for (const step of row.before ?? []) await send(server.url, step);
            expectRow(row, await send(server.url, row.request));
          } finally {
            if (row.fresh) await server.close();
          }
        });
      }
    });
  }
}

/**
 * `mounts` whose servers push the framework's own request of every request they get into `seen`
 * (Express's and `node:http`'s `req`, Fastify's `request`, the Fetch `Request`), before anything
 * of the package runs.
 */
export function recording(mounts: Mounts, seen: object[]): Mounts {
  const listener =
    (inner: RequestListener): RequestListener =>
    (req, res) => {
      seen.push(req);
      inner(req, res);
    };
  return {
    express: async () => listener(await mounts.express()),
    node: async () => listener(await mounts.node()),
    async fastify() {
      const app = (await mounts.fastify()) as FastifyInstance;
      app.addHook("onRequest", async (request) => {
        seen.push(request);
      });
      return app;
    },
    async fetch() {
      const inner = await mounts.fetch();
      return (request: Request) => {
        seen.push(request);
        return inner(request);
      };
    },
  };
}

/**
 * One request of a diagnostics table: the status it gets, and the one message the channel carries
 * for it (`message`, without its `request`), or none (`undefined`).
 */
export interface DiagnosticRow<M = object> {
  name: string;
  request: RowRequest;
  status: number;
  message: M | undefined;
  /** Decided before Fastify routes the request: the message names Fastify's `request.raw`. */
  beforeRouting?: boolean;
}

/**
 * A package's channel through listening servers of each framework: each row's request gets its
 * status and exactly its one message (or none), whose `request` is the framework's own request
 * the server got (as `seen`, filled by the servers or by {@link recording}, holds it).
 *
 * @example diagnosticsTable("svc:conditional", (seen) => mounts(seen), rows);
 */
export function diagnosticsTable(
  channel: string,
  mounts: (seen: object[]) => Mounts,
  rows: readonly DiagnosticRow[],
  frameworks: readonly Framework[] = FRAMEWORKS,
): void {
  for (const framework of frameworks) {
    describe(`${channel} on ${framework}`, () => {
      const seen: object[] = [];
      let server: Listening;
      beforeAll(async () => {
        server = await serve(framework, mounts(seen));
      });
      afterAll(async () => {
        await server.close();
      });
      for (const row of rows) {
        it(row.name, async () => {
          const heard: { request?: unknown }[] = [];
          const listener = (message: unknown) => heard.push(message as { request?: unknown });
          seen.length = 0;
          subscribeDiagnostics(channel, listener);
          try {
            expect((await send(server.url, row.request)).status).toBe(row.status);
          } finally {
            unsubscribeDiagnostics(channel, listener);
          }
          if (row.message === undefined) {
            expect(heard).toEqual([]);
            return;
          }
          expect(heard).toEqual([{ request: expect.anything(), ...row.message }]);
          expect(seen).toHaveLength(1);
          const own = seen[0] as { raw?: object };
          expect(heard[0]?.request).toBe(framework === "fastify" && row.beforeRouting ? own.raw : own);
        });
      }
    });
  }
}

/** An error as the test servers' fallback error handling answers it: its status, its fields, `{ status, message }`. */
function fallbackError(err: unknown): { status: number; fields: Record<string, string>; body: string } {
  const e = err as {
    status?: unknown;
    statusCode?: unknown;
    headers?: unknown;
    message?: unknown;
    expose?: unknown;
  };
  const given =
    typeof e?.status === "number" ? e.status : typeof e?.statusCode === "number" ? e.statusCode : 500;
  const status = given >= 400 && given <= 599 ? given : 500;
  const fields: Record<string, string> = {};
  if (status < 500 && typeof e?.headers === "object" && e.headers !== null) {
    for (const [name, value] of Object.entries(e.headers))
      if (typeof value === "string") fields[name] = value;
  }
  const message = status < 500 && typeof e?.message === "string" ? e.message : "Internal Server Error";
  return { status, fields, body: JSON.stringify({ status, message }) };
}

/**
 * Error handling for a test's servers where the package under test is not the error record's
 * (`@svc/errors`' own adapters are tested by its table): the error's status and fields, a JSON
 * `{ status, message }`, the same on every framework. A 5xx says nothing of the exception.
 */
export const fallbackErrors = {
  express(err: unknown, _req: unknown, res: import("node:http").ServerResponse, _next: unknown): void {
    fallbackErrors.node(err, _req, res);
  },
  node(err: unknown, _req: unknown, res: import("node:http").ServerResponse): void {
    const e = fallbackError(err);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(e.fields)) res.setHeader(name, value);
    res.setHeader("Content-Type", "application/json");
    res.setHeader("Content-Length", Buffer.byteLength(e.body));
    res.statusCode = e.status;
    res.end(e.body);
  },
  fastify(
    err: unknown,
    _request: unknown,
    reply: { code(n: number): unknown; header(n: string, v: string): unknown; send(b: string): unknown },
  ): unknown {
    const e = fallbackError(err);
    reply.code(e.status);
    for (const [name, value] of Object.entries(e.fields)) reply.header(name, value);
    reply.header("content-type", "application/json");
    return reply.send(e.body);
  },
  /** Hono's `app.onError`: with the fields the gates in front recorded for the request (`withPassages`). */
  fetch(err: unknown, c?: { req: { raw: Request } }): Response {
    const e = fallbackError(err);
    const value: ResponseValue = {
      status: e.status,
      fields: { ...e.fields, "content-type": "application/json" },
      vary: [],
      body: Buffer.from(e.body),
    };
    const response = toResponse(value, c?.req.raw.method ?? "GET");
    if (c === undefined) return response;
    return withPassages(response, c.req.raw);
  },
};

/** A row's `body` check of an error response: the status the fallback record (or `@svc/errors`') names. */
export function errorStatus(want: number): (response: RowResponse) => void {
  return (response) => expect(JSON.parse(response.text).status).toBe(want);
}

/**
 * A Fastify app around a pipeline's adapter (`fastifyAdapter` of `@svc/kernel/fastify`): its
 * `rewriteUrl` and `plugin`, and {@link fallbackErrors}; the test adds its routes.
 */
export function fastifyPipelineApp(svc: {
  rewriteUrl: (this: unknown, req: import("node:http").IncomingMessage) => string;
  plugin: FastifyPluginCallback;
}): FastifyInstance {
  const app = Fastify({ rewriteUrl: svc.rewriteUrl });
  app.register(svc.plugin);
  app.setErrorHandler(fallbackErrors.fastify);
  return app as unknown as FastifyInstance;
}

/**
 * A Hono app around a pipeline's Fetch adapter (`fetchAdapter` of `@svc/kernel/fetch`): its
 * `getPath` and `middleware`, a 404 for what no route matches, and {@link fallbackErrors}.
 */
export function honoPipelineApp(svc: {
  getPath: (request: Request) => string;
  middleware: (c: never, next: () => Promise<void>) => Promise<Response | undefined>;
}): Hono {
  const app = new Hono({ getPath: svc.getPath });
  app.use(svc.middleware as never);
  app.notFound(() => {
    throw HttpError.notFound();
  });
  app.onError((err, c) => fallbackErrors.fetch(err, c));
  return app;
}
