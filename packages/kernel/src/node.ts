import type { IncomingMessage, ServerResponse } from "node:http";
import {
  appendVaryList,
  exchangeIfAny,
  exchangeOf,
  type Gate,
  type HandlerContext,
  HttpError,
  isAnswer,
  type Passage,
  type Pipeline,
  type PipelineRequest,
  type Prepared,
  type RequestView,
  type ResponseValue,
  type RouteOptions,
} from "@svc/kernel";

import { presetFields } from "./preset-fields.js";
import { requestSlot } from "./request-slot.js";
import { malformedEscape, targetPath } from "./target.js";
import { fieldName, holdVary, writeValue } from "./write.js";

export { settleUnreadBody } from "./settle-body.js";
export { holdTickShape } from "./tick-shape.js";
export { fieldName, writeValue };

/**
 * A `node:http` request as the @svc cores read it: the request itself is a {@link RequestView},
 * recorded in its exchange (`Exchange.view`) for the cores handed only the request. Gates under
 * {@link nodeGate} are given it.
 *
 * @example createServer((req, res) => res.end(requestFacts(nodeView(req)).client));
 */
export function nodeView(req: IncomingMessage): RequestView {
  const exchange = exchangeOf(req);
  if (exchange.view === undefined) exchange.view = req;
  return exchange.view;
}

/**
 * What the pipeline reads of a `node:http` request, built once per request: its view, and `res`
 * answering for the fields middleware in front set on the response. The content a body parser in
 * front left as `req.body` (Express's `express.json()`) is recorded in the exchange's `body`
 * when no parser of the packages recorded one, for the steps that read it (idempotency's
 * fingerprint).
 */
export function pipelineRequest(
  req: IncomingMessage,
  res?: ServerResponse | undefined,
  path?: string | undefined,
): PipelineRequest {
  const view = nodeView(req);
  const exchange = exchangeOf(req);
  if (exchange.body === undefined) {
    const parsed = (req as IncomingMessage & { body?: unknown }).body;
    if (parsed !== undefined) exchange.body = { value: parsed };
  }
  const url = view.url ?? "/";
  const query = url.indexOf("?");
  return {
    view,
    path: path ?? (query === -1 ? url : url.slice(0, query)),
    preset: res === undefined ? undefined : presetFields(res),
    native: req,
  };
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

/**
 * Sets a passage's fields on the response, and appends its `Vary`: to the names a `chain` holds
 * for the request while it runs its gates (set with theirs, in one field), else to the response's.
 */
export function setPassage(res: ServerResponse, passage: Passage): void {
  const fields = passage.fields;
  if (fields !== undefined) {
    for (const name of Object.keys(fields)) {
      const value = fields[name];
      if (value === null) res.removeHeader(name);
      else if (value !== undefined) res.setHeader(fieldName(name.toLowerCase()), value as string | string[]);
    }
  }
  const vary = passage.vary;
  if (vary === undefined || vary.length === 0) return;
  const req = (res as ServerResponse & { req?: IncomingMessage }).req;
  const exchange = req === undefined ? undefined : exchangeIfAny(req);
  if (exchange?.heldVary === undefined) appendVaryList(res, vary);
  else holdVary(exchange, vary);
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
    const outcome = await gate(nodeView(req), req);
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
  const decided = requestSlot<{ prepared: Prepared; path: string }>();
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
      await writeResponse(res, value, (req.method ?? "GET").toUpperCase());
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
