import type { IncomingMessage, ServerResponse } from "node:http";
import {
  appendVary,
  exchangeIfAny,
  type FieldValue,
  type Gate,
  type HandlerContext,
  HttpError,
  isAnswer,
  type Passage,
  type Pipeline,
  type PipelineRequest,
  type Prepared,
  type ResponseValue,
  type RouteOptions,
} from "@svc/kernel";

import { malformedEscape, targetPath } from "./target.js";
import { fieldName, writeValue } from "./write.js";

export { settleUnreadBody } from "./settle-body.js";
export { fieldName };

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
    body: bodyOf(req),
    preset: res === undefined ? undefined : (name) => res.getHeader(name) as FieldValue | undefined,
    native: req,
  };
}

/**
 * The request content as parsed in front: what a body parser of the packages recorded in the
 * request's exchange, else what another parser left as `req.body` (Express's `express.json()`).
 */
function bodyOf(req: IncomingMessage): unknown {
  const parsed = exchangeIfAny(req)?.body;
  return parsed === undefined ? (req as IncomingMessage & { body?: unknown }).body : parsed.value;
}

/**
 * Writes a pipeline's response: its status, its fields over those set in front of it (a `null`
 * field removed; a `Link` appended to the links there), its `Vary` appended to the one there, and its content in one write (`Content-Length`
 * for whole bytes; a stream piped with backpressure). A HEAD gets the fields and no content (RFC
 * 9110 §9.3.2). Rejects when the response has already started, or when a streamed body fails
 * (the connection is then cut by whoever handles the error: its head is gone).
 */
export function writeResponse(res: ServerResponse, value: ResponseValue, method: string): Promise<void> {
  return writeValue(res, value, method) ?? Promise.resolve();
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
 * prefix, and of an absolute-form target of any scheme its path: `targetPath` of `@svc/kernel`)
 * is what `prepare` resolves to, for the application's own dispatch.
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
      ready = { prepared, path: targetPath(routed) };
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
      // A route matched a path with a `%` that begins no percent-encoding (RFC 3986 §2.1): its
      // parameter cannot be decoded, a 400 as Express's router answers it.
      if (malformedEscape(ready.path)) throw HttpError.badRequest();
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
