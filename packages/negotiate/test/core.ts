import { createServer, type IncomingMessage, type Server } from "node:http";
import { Readable } from "node:stream";
import { errorHandler } from "@svc/errors/express";
import {
  createPipeline,
  HttpError,
  isHttpError,
  type PipelineOptions,
  type PipelineRequest,
  type ResponseValue,
} from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fieldName, pipelineRequest, writeResponse } from "@svc/kernel/node";
import { type Listening, listen, rawRequest } from "@svc/test-utils";
import express, { type Response as ExpressResponse, type NextFunction, type Request } from "express";

/** A route's handler: what a `svc.handle` handler returns, from the request's plain values. */
export type Route = (request: PipelineRequest) => unknown;

/** Requests as `fetch` makes them, answered by the pipeline in memory or by a listening app. */
export type Client = (
  path: string,
  init?: { method?: string; headers?: Record<string, string> },
) => Promise<Response>;

async function bytesOf(body: ResponseValue["body"]): Promise<Buffer | undefined> {
  if (body === undefined) return undefined;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const chunks: Buffer[] = [];
  for await (const chunk of Readable.from(body as AsyncIterable<unknown>))
    chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/** The response value as the kernel's `writeResponse` would put it on the wire. */
async function toResponse(value: ResponseValue, method: string): Promise<Response> {
  const headers = new Headers();
  for (const [name, field] of Object.entries(value.fields)) {
    if (field === null || field === undefined) continue;
    for (const line of typeof field === "string" ? [field] : field) headers.append(fieldName(name), line);
  }
  if (value.vary.length > 0) headers.set("Vary", value.vary.join(", "));
  const streamed = value.body !== undefined && !(value.body instanceof Uint8Array);
  const bytes = method === "HEAD" && streamed ? undefined : await bytesOf(value.body);
  if (method === "HEAD" && streamed) {
    // As the adapters release it: an error the stream raises once released concerns no response.
    const stream = value.body as NodeJS.ReadableStream & { destroy(): void };
    stream.on("error", () => {});
    stream.destroy();
  }
  if (bytes !== undefined && !streamed) headers.set("Content-Length", String(bytes.length));
  else headers.delete("content-length");
  if (value.status === 205) headers.set("Content-Length", "0");
  const empty = method === "HEAD" || NULL_BODY.has(value.status);
  return new Response(empty ? null : (bytes ?? null), { status: value.status, headers });
}

/** An error as a JSON record, its fields included (what the app's error handler sends). */
function errorResponse(err: unknown): Response {
  const status = isHttpError(err) ? err.status : 500;
  const headers = new Headers({ "Content-Type": "application/json; charset=utf-8" });
  if (isHttpError(err)) for (const [k, v] of Object.entries(err.headers ?? {})) headers.set(k, String(v));
  const code = (err as { code?: unknown }).code;
  return new Response(JSON.stringify({ status, message: (err as Error).message, code }), { status, headers });
}

/**
 * The pipeline over `steps`, answering `routes` in memory: `prepare`, the route's handler, `run`,
 * and the value turned into a `Response` as the kernel's `writeResponse` writes it. No socket, no
 * framework: the tables over the package's cores run through it.
 */
export function inMemory(steps: PipelineOptions, routes: Record<string, Route>): Client {
  const pipeline = createPipeline(steps);
  return async (path, init = {}) => {
    const method = (init.method ?? "GET").toUpperCase();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;
    const request: PipelineRequest = { view: { method, headers }, path };
    try {
      const prepared = pipeline.prepare(request, path);
      if (prepared.refusal !== undefined) throw prepared.refusal;
      const route = routes[prepared.version?.target ?? path];
      if (route === undefined) throw HttpError.notFound();
      return await toResponse(await pipeline.run(request, prepared, () => route(request)), method);
    } catch (err) {
      return errorResponse(err);
    }
  };
}

/** The same routes on a listening Express app (4 or 5, by the project), through `svc.handle`. */
export async function onExpress(
  steps: PipelineOptions,
  routes: Record<string, Route>,
  extend?: (app: express.Express) => void,
): Promise<Listening & { client: Client; raw: Client }> {
  const svc = expressAdapter(createPipeline(steps));
  const app = express();
  app.use(svc.prepare);
  extend?.(app);
  for (const [path, route] of Object.entries(routes)) {
    app.all(
      path,
      svc.handle((req: Request) => route({ view: req, path: req.path })),
    );
  }
  app.use(errorHandler({ logger: { error() {} } }));
  app.use((err: unknown, _req: Request, res: ExpressResponse, _next: NextFunction) => {
    res.status(500).json({ message: (err as Error).message });
  });
  const server = await listen(app);
  return {
    ...server,
    client: (path, init = {}) => fetch(`${server.url}${path}`, init),
    // The bytes as sent: fetch would decode a coded body.
    raw: async (path, init = {}) => {
      const res = await rawRequest(`${server.url}${path}`, init.method ?? "GET", init.headers ?? {});
      const headers = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) for (const line of [value].flat()) headers.append(name, line);
      }
      const empty = NULL_BODY.has(res.status) || (init.method ?? "GET").toUpperCase() === "HEAD";
      return new Response(empty ? null : res.body, { status: res.status, headers });
    },
  };
}

/**
 * A plain `node:http` server answering every request through the pipeline over `steps` with
 * what `dataOf` returns: `pipelineRequest`, `prepare`, `run`, `writeResponse`, and a 500 for an
 * error (the README's core on `node:http`).
 */
export function pipelineServer(steps: PipelineOptions, dataOf: (req: IncomingMessage) => unknown): Server {
  const pipeline = createPipeline(steps);
  return createServer((req, res) => {
    const request = pipelineRequest(req, res);
    const fail = () => {
      if (res.headersSent) res.destroy();
      else {
        res.statusCode = 500;
        res.end();
      }
    };
    const prepared = pipeline.prepare(request, req.url ?? "/");
    if (prepared.refusal !== undefined) return fail();
    pipeline
      .run(request, prepared, () => dataOf(req))
      .then((value) => writeResponse(res, value, req.method ?? "GET"))
      .catch(fail);
  });
}
