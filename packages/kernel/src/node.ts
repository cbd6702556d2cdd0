import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import {
  appendVary,
  type Body,
  type FieldValue,
  type Gate,
  type HandlerContext,
  isAnswer,
  type Passage,
  type Pipeline,
  type PipelineRequest,
  type Prepared,
  type ResponseValue,
  type RouteOptions,
} from "@svc/kernel";

/**
 * Field names as they are usually spelled: each hyphen-separated part capitalised, except the
 * acronyms of the fields the pipeline writes. Names are case-insensitive (RFC 9110 §5.1); the
 * spelling is only what people reading a trace expect.
 */
const SPELLED: Readonly<Record<string, string>> = {
  etag: "ETag",
  "www-authenticate": "WWW-Authenticate",
  "content-md5": "Content-MD5",
  "x-ratelimit-limit": "X-RateLimit-Limit",
  "x-ratelimit-remaining": "X-RateLimit-Remaining",
  "x-ratelimit-reset": "X-RateLimit-Reset",
  "x-correlation-id": "X-Correlation-ID",
  "api-supported-versions": "API-Supported-Versions",
  "api-deprecated-versions": "API-Deprecated-Versions",
  "api-version": "API-Version",
};

const spelled = new Map<string, string>(Object.entries(SPELLED));

/** `name` (lower case) spelled for the wire; a bounded cache of the names seen. */
export function fieldName(name: string): string {
  const known = spelled.get(name);
  if (known !== undefined) return known;
  let out = "";
  let upper = true;
  for (const ch of name) {
    out += upper ? ch.toUpperCase() : ch;
    upper = ch === "-";
  }
  if (spelled.size < 512) spelled.set(name, out);
  return out;
}

/**
 * What the pipeline reads of a `node:http` request, built once per request: `res` answers for the
 * fields middleware in front set on the response.
 */
export function pipelineRequest(
  req: IncomingMessage,
  res?: ServerResponse | undefined,
  path?: string | undefined,
): PipelineRequest {
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  return {
    method: (req.method ?? "GET").toUpperCase(),
    headers: req.headers,
    rawHeaders: req.rawHeaders,
    path: path ?? (query === -1 ? url : url.slice(0, query)),
    body: (req as IncomingMessage & { body?: unknown }).body,
    preset: res === undefined ? undefined : (name) => res.getHeader(name) as FieldValue | undefined,
    native: req,
  };
}

function isStream(body: Body): body is NodeJS.ReadableStream {
  return typeof (body as NodeJS.ReadableStream).pipe === "function";
}

/**
 * Pipes a streamed body into the response, settling when the response is done. A response closed
 * before the body was all read (the client went away mid-download) destroys the body: `pipe` only
 * unpipes it, and a paused file stream or cursor nobody reads again keeps its descriptor open.
 */
function sendStream(res: ServerResponse, body: NodeJS.ReadableStream): Promise<void> {
  const stream = body instanceof Readable ? body : Readable.from(body as AsyncIterable<unknown>);
  return new Promise<void>((resolve, reject) => {
    stream.once("error", reject);
    res.once("finish", resolve);
    res.once("close", () => {
      if (!stream.readableEnded) stream.destroy();
      resolve();
    });
    stream.pipe(res);
  });
}

/**
 * Appends a response's `Link` to the links set in front of the pipeline (a preload hint, a
 * version's deprecation link) instead of putting it in their place.
 * @see https://www.rfc-editor.org/rfc/rfc8288#section-3.5 — several Link field lines, or one
 *   comma-separated list, carry all their links.
 */
function appendLink(res: ServerResponse, field: FieldValue): void {
  const before = res.getHeader("link");
  if (before === undefined) {
    res.setHeader("Link", field as string | string[]);
    return;
  }
  const lines = (list: FieldValue | number): string[] =>
    typeof list === "string" || typeof list === "number" ? [String(list)] : [...list];
  res.setHeader("Link", [...lines(before), ...lines(field)].join(", "));
}

/**
 * Writes a pipeline's response: its status, its fields over those set in front of it (a `null`
 * field removed; a `Link` appended to the links there), its `Vary` appended to the one there, and its content in one write (`Content-Length`
 * for whole bytes; a stream piped with backpressure). A HEAD gets the fields and no content (RFC
 * 9110 §9.3.2). Rejects when the response has already started, or when a streamed body fails
 * (the connection is then cut by whoever handles the error: its head is gone).
 */
export function writeResponse(res: ServerResponse, value: ResponseValue, method: string): Promise<void> {
  if (res.headersSent) return Promise.reject(new Error("@svc/kernel: the response has already started"));
  res.statusCode = value.status;
  const fields = value.fields;
  for (const name in fields) {
    const field = fields[name];
    if (field === null || field === undefined) res.removeHeader(name);
    else if (name === "link") appendLink(res, field);
    else res.setHeader(fieldName(name), field as string | string[]);
  }
  if (value.vary.length > 0) appendVary(res, ...value.vary);
  const body = value.body;
  if (body === undefined) {
    // RFC 9110 §15.3.6: a 205 has no content, and says so with Content-Length: 0 (Node would
    // otherwise frame it as chunked).
    if (value.status === 205) res.setHeader("Content-Length", 0);
    res.end();
    return Promise.resolve();
  }
  if (isStream(body)) {
    res.removeHeader("content-length");
    if (method === "HEAD") {
      // The GET would be chunked: no length either (RFC 9110 §8.6 lets HEAD leave it out).
      (body as { destroy?: () => void }).destroy?.();
      res.end();
      return Promise.resolve();
    }
    return sendStream(res, body);
  }
  res.setHeader("Content-Length", body.byteLength);
  if (method === "HEAD") res.end();
  else res.end(body);
  return Promise.resolve();
}

/** Sets a passage's fields on the response, and appends its `Vary`. */
export function setPassage(res: ServerResponse, passage: Passage): void {
  const fields = passage.fields;
  if (fields !== undefined) {
    for (const name of Object.keys(fields)) {
      const value = fields[name];
      if (value === null) res.removeHeader(name);
      else if (value !== undefined) res.setHeader(fieldName(name.toLowerCase()), value as string | string[]);
    }
  }
  if (passage.vary !== undefined && passage.vary.length > 0) appendVary(res, ...passage.vary);
}

/**
 * A {@link Gate} on `node:http`: resolves `true` when the gate answered the request (the answer is
 * written), `false` when the request goes on (the passage's fields are set on `res`); rejects with
 * the gate's refusal, for the caller's error handling (`@svc/errors/node`) to answer.
 *
 * @example
 * const limited = nodeGate(gate);
 * createServer(async (req, res) => {
 *   try {
 *     if (await limited(req, res)) return;
 *     res.end("hello");
 *   } catch (err) {
 *     sendError(req, res, err);
 *   }
 * });
 */
export function nodeGate(
  gate: Gate<IncomingMessage>,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  return async (req, res) => {
    const outcome = await gate(req, req);
    if (outcome === undefined || outcome === null) return false;
    if (isAnswer(outcome)) {
      await writeResponse(res, outcome.answer, (req.method ?? "GET").toUpperCase());
      return true;
    }
    setPassage(res, outcome);
    return false;
  };
}

/** A pipeline on plain `node:http`: see {@link nodeAdapter}. */
export interface NodePipeline {
  /**
   * The version decision and the preflight of `req` (once per request), its version's fields set
   * on `res`; rejects with the refusal. `path`: the routed path, the version prefix stripped.
   */
  prepare(req: IncomingMessage, res: ServerResponse): Promise<{ prepared: Prepared; path: string }>;
  /**
   * Runs `handler` through the pipeline and writes its response; rejects with the error to answer
   * (nothing written), for the caller's error handling.
   */
  respond(
    req: IncomingMessage,
    res: ServerResponse,
    handler: (context: HandlerContext) => unknown,
    route?: RouteOptions,
  ): Promise<void>;
  /** RFC 9110 §13.2.2 before a write, on the resource's current data (see `Pipeline.checkWrite`). */
  preconditions(
    req: IncomingMessage,
    current: { data: unknown; lastModified?: Date | undefined } | undefined,
    creates?: boolean,
  ): Promise<void>;
}

/**
 * The `node:http` adapter of a pipeline: no router, so the request's path (without a version
 * prefix) is what `prepare` resolves to, for the application's own dispatch.
 *
 * @example
 * const svc = nodeAdapter(createPipeline());
 * createServer((req, res) => {
 *   svc.respond(req, res, () => ({ hello: "world" })).catch((err) => sendError(req, res, err));
 * });
 */
export function nodeAdapter(pipeline: Pipeline): NodePipeline {
  const decided = new WeakMap<IncomingMessage, { prepared: Prepared; path: string }>();
  const decide = (req: IncomingMessage, res: ServerResponse) => {
    let ready = decided.get(req);
    if (ready === undefined) {
      const target = req.url ?? "/";
      const prepared = pipeline.prepare(pipelineRequest(req, res), target);
      const version = prepared.version;
      const routed = version === undefined ? target : version.target;
      if (version !== undefined) setPassage(res, version);
      const query = routed.indexOf("?");
      ready = { prepared, path: query === -1 ? routed : routed.slice(0, query) };
      decided.set(req, ready);
    }
    return ready;
  };
  return {
    prepare(req, res) {
      const ready = decide(req, res);
      return ready.prepared.refusal === undefined
        ? Promise.resolve(ready)
        : Promise.reject(ready.prepared.refusal);
    },
    async respond(req, res, handler, route) {
      const ready = decide(req, res);
      if (ready.prepared.refusal !== undefined) throw ready.prepared.refusal;
      const request = pipelineRequest(req, res, ready.path);
      const value = await pipeline.run(request, ready.prepared, handler, route);
      await writeResponse(res, value, request.method);
    },
    preconditions(req, current, creates = false) {
      const ready = decided.get(req);
      return pipeline.checkWrite(
        pipelineRequest(req, undefined, ready?.path),
        ready?.prepared ?? NOT_PREPARED,
        current,
        creates,
      );
    },
  };
}

const NOT_PREPARED: Prepared = Object.freeze({ version: undefined, refusal: undefined });
