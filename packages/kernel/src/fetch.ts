/**
 * `@svc/kernel/fetch`: the response pipeline and gates on the Fetch API (`Request` in, `Response`
 * out), for any Fetch server (Deno, Bun, workers, `@hono/node-server`) and as Hono middleware.
 * This module decides nothing: it turns a `Request` into what the cores read and their response
 * value into a `Response`.
 *
 * @packageDocumentation
 */
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import {
  exchangeIfAny,
  exchangeOf,
  type Gate,
  type HandlerContext,
  HttpError,
  isAnswer,
  mergeVary,
  type Passage,
  type Pipeline,
  type PipelineRequest,
  type Prepared,
  type RequestView,
  type ResponseValue,
  type RouteOptions,
  splitList,
} from "@svc/kernel";
import { buildResponse, isCodedBody, isCodedContent } from "./coded-response.js";
import { fieldName, lowerFieldName } from "./field-name.js";
import { refusedOption } from "./option-error.js";
import { releaseBody } from "./release.js";
import { requestSlot } from "./request-slot.js";
import type { FieldValue } from "./response.js";
import { malformedEscape, originForm } from "./target.js";
import { UNREAD_BODY_DEFAULTS, type UnreadBodyBounds, unreadBodyAction } from "./unread-body.js";

/** What a Fetch server knows of a request beyond the `Request` itself. */
export interface ConnectionInfo {
  /** The connection's other end (for a client's bucket, for trusting a proxy). */
  readonly address?: string | undefined;
  /** Whether the connection is TLS. @default the request URL's scheme is `https:` */
  readonly encrypted?: boolean | undefined;
  /**
   * The fields as received, name and value alternating. A `Request`'s `Headers` join a repeated
   * field into one value, so a second `Host` or `Authorization` can only be refused when the
   * server hands over what it received (`@hono/node-server` does: see {@link honoConnection}).
   */
  readonly rawHeaders?: readonly string[] | undefined;
  /**
   * The request-target as received (`/employees/1`, or `http://shop.example/employees/1` in
   * absolute-form). A `Request`'s URL no longer tells which form the client sent: when it is
   * given, an absolute-form target's authority is the request's host in place of `Host` (RFC 9112
   * §3.2.2), as on `node:http` and Express, for the base URL of links and the host check.
   * `@hono/node-server` hands it over (see {@link honoConnection}).
   * @default unknown: the host is read from `Host`
   */
  readonly target?: string | undefined;
}

/** The part of a Hono `Context` the Hono middleware reads and sets. */
export interface HonoContextLike {
  readonly req: { readonly raw: Request };
  /** `@hono/node-server` puts the `node:http` request here (`env.incoming`). */
  readonly env?: unknown;
  res: Response;
}

/** A Hono middleware: `app.use(middleware)`. */
export type HonoMiddleware = (c: HonoContextLike, next: () => Promise<void>) => Promise<Response | undefined>;

/** A Fetch handler: what `Deno.serve`, `Bun.serve`, a worker's `fetch` and `@hono/node-server` call. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** The connection of each request, made once for the middlewares that ask. */
const connections = requestSlot<ConnectionInfo>();

/**
 * What the server under Hono tells about the connection, read from Hono's `c.env`:
 * - `@hono/node-server` (`c.env.incoming`, the `node:http` request): the address, TLS, the fields
 *   and the request-target as received;
 * - `Bun.serve` (`c.env`, or `c.env.server`, is Bun's `Server`): the address
 *   (`server.requestIP(request)`);
 * - `Deno.serve` (`c.env` is the handler's `info`): the address (`info.remoteAddr.hostname`).
 *
 * - whatever {@link withConnection} was told for the request, first.
 *
 * Elsewhere (a worker, which is told no peer), nothing: wrap the app in {@link withConnection}
 * there. The same object for every call on one request, so the middlewares
 * of a request share one {@link fetchView}.
 */
export function honoConnection(c: HonoContextLike): ConnectionInfo | undefined {
  const told = connections.get(c.req.raw);
  if (told !== undefined) return told;
  const env = c.env;
  if (typeof env !== "object" || env === null) return undefined;
  const incoming = (env as { incoming?: IncomingMessage }).incoming;
  if (typeof incoming === "object" && incoming !== null && incoming.socket !== undefined)
    return remembered(incoming, () => ({
      address: incoming.socket.remoteAddress,
      encrypted: (incoming.socket as { encrypted?: boolean }).encrypted === true,
      rawHeaders: incoming.rawHeaders,
      target: incoming.url,
    }));
  const request = c.req.raw;
  const server = (env as { server?: unknown }).server ?? env;
  const requestIP = (server as { requestIP?: unknown }).requestIP;
  if (typeof requestIP === "function")
    return remembered(request, () => ({
      address: (requestIP.call(server, request) as { address?: string } | null)?.address,
    }));
  const remote = (env as { remoteAddr?: { hostname?: unknown } }).remoteAddr;
  if (typeof remote === "object" && remote !== null && typeof remote.hostname === "string") {
    const address = remote.hostname;
    return remembered(request, () => ({ address }));
  }
  return undefined;
}

/**
 * `handler` (a Fetch server's handler: `app.fetch` of Hono), telling every `@svc` Hono middleware
 * the connection of each request: what `connectionOf(request, env)` returns is what
 * {@link honoConnection} gives for it, ahead of what the server hands Hono as `c.env`. For a
 * server that tells the application the peer some other way: on Cloudflare Workers, the
 * `CF-Connecting-IP` field, which Cloudflare's edge sets to the client's address (a client cannot
 * choose it there; a server reachable around such a proxy must not read the field).
 *
 * @example
 * export default {
 *   fetch: withConnection(app.fetch, (request) => ({
 *     address: request.headers.get("cf-connecting-ip") ?? undefined,
 *   })),
 * };
 */
export function withConnection<Rest extends unknown[], R>(
  handler: (request: Request, ...rest: Rest) => R,
  connectionOf: (request: Request, ...rest: Rest) => ConnectionInfo | undefined,
): (request: Request, ...rest: Rest) => R {
  if (typeof handler !== "function")
    throw refusedOption("kernel", "handler", handler, "a Fetch handler", "withConnection: handler");
  if (typeof connectionOf !== "function")
    throw refusedOption(
      "kernel",
      "connectionOf",
      connectionOf,
      "a function (request) => { address } | undefined",
      "withConnection: connectionOf",
    );
  return (request, ...rest) => {
    const info = connectionOf(request, ...rest);
    if (info !== undefined) connections.set(request, Object.freeze({ ...info }));
    return handler(request, ...rest);
  };
}

function remembered(key: object, read: () => ConnectionInfo): ConnectionInfo {
  const known = connections.get(key);
  if (known !== undefined) return known;
  const info = Object.freeze(read());
  connections.set(key, info);
  return info;
}

/** What every view of one `Request` shares, read off it once; and its views so far. */
interface Reading {
  readonly method: string;
  readonly url: string;
  readonly encrypted: boolean;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  /** The view without connection info. */
  bare: RequestView | undefined;
  /** The view for `info`, the last connection info given. */
  info: ConnectionInfo | undefined;
  view: RequestView | undefined;
}

// One per copy of this module: where a process loads both the ESM and the CJS build, each reads
// a request once, and the views stay equal.
const readings = requestSlot<Reading>();

function readingOf(request: Request): Reading {
  const known = readings.get(request);
  if (known !== undefined) return known;
  const headers: IncomingHttpHeaders = {};
  const raw: string[] = [];
  const coding = clientAcceptEncoding(request);
  for (const [name, value] of request.headers) {
    if (coding !== undefined && name === "accept-encoding") continue;
    headers[name] = value;
    raw.push(name, value);
  }
  if (coding !== undefined && coding !== "") {
    headers["accept-encoding"] = coding;
    raw.push("accept-encoding", coding);
  }
  const url = request.url;
  const reading: Reading = {
    method: request.method.toUpperCase(),
    url: requestTarget(url),
    encrypted: url.startsWith("https:"),
    headers: Object.freeze(headers),
    rawHeaders: Object.freeze(raw),
    bare: undefined,
    info: undefined,
    view: undefined,
  };
  readings.set(request, reading);
  return reading;
}

/**
 * The `Accept-Encoding` the client sent, where the server in front replaced the field: Cloudflare's
 * edge hands a Worker `Accept-Encoding: br, gzip` whatever the client accepts, and the client's
 * own field in `request.cf.clientAcceptEncoding` (`""` when it sent none). A coding chosen from
 * the replaced field reaches a client that never asked for it (RFC 9110 §12.5.3).
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.3
 */
function clientAcceptEncoding(request: Request): string | undefined {
  const cf = (request as { cf?: { clientAcceptEncoding?: unknown } }).cf;
  const coding = typeof cf === "object" && cf !== null ? cf.clientAcceptEncoding : undefined;
  return typeof coding === "string" ? coding : undefined;
}

/**
 * The path and query of a `Request`'s URL, by the kernel's reading of an absolute-form target
 * (`originForm`), not the URL parser: Bun and Deno build the URL from `Host` as sent
 * (`http://a b/employees/1` for `Host: a b`), which the parser refuses, and the host check answers
 * for such a `Host` (400), so reading the path must not fail first. No fragment: none is part of
 * a request-target.
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3.2.1
 */
function requestTarget(url: string): string {
  const target = originForm(url);
  const fragment = target.indexOf("#");
  return fragment === -1 ? target : target.slice(0, fragment);
}

function viewOf(request: Request, reading: Reading, info: ConnectionInfo | undefined): RequestView {
  const socket = Object.freeze({
    remoteAddress: info?.address,
    encrypted: info?.encrypted ?? reading.encrypted,
  });
  const rawHeaders = info?.rawHeaders ?? reading.rawHeaders;
  const { method, url, headers } = reading;
  const target = info?.target;
  const view: RequestView =
    target === undefined
      ? { method, url, headers, rawHeaders, socket }
      : { method, url, headers, rawHeaders, socket, originalUrl: target };
  // The view stands for its `Request` in the exchanges (`exchangeOf(view)`), as Fastify's request
  // stands for `raw`; not enumerable, so the view reads as the plain fields it is.
  Object.defineProperty(view, "raw", { value: request });
  return Object.freeze(view);
}

/**
 * A `Request` as a {@link RequestView}: the fields by lower-case name (`Headers` already joins a
 * repeated one), the path and query of its URL, and the connection `info` gives; with `info.target`,
 * the target as received in `originalUrl` (as Express names it), which the host of links and the
 * host check read (RFC 9112 §3.2.2). The view is recorded in the request's exchange
 * (`Exchange.view`: the last one made, for the cores handed only the `Request`).
 *
 * The `Request` is read once, at the first call for it: every package's middleware on the request
 * shares that reading, so a field set on `request.headers` afterwards is not seen (hand on a new
 * `Request` instead). The view is frozen, so no reader changes what the next one reads. The same
 * `info` object (what {@link honoConnection} returns for a request), or none, gives the same view
 * again; another `info` gets a view of its own, over the same fields.
 *
 * @example const view = fetchView(c.req.raw, honoConnection(c));
 */
export function fetchView(request: Request, info?: ConnectionInfo | undefined): RequestView {
  const reading = readingOf(request);
  let view: RequestView;
  if (info === undefined) {
    if (reading.bare === undefined) reading.bare = viewOf(request, reading, undefined);
    view = reading.bare;
  } else {
    if (reading.info !== info || reading.view === undefined) {
      reading.view = viewOf(request, reading, info);
      reading.info = info;
    }
    view = reading.view;
  }
  exchangeOf(request).view = view;
  return view;
}

/** Whether a field name appears on more than one line of `rawHeaders` (names compared case-insensitively). */
function repeatsAnyField(rawHeaders: readonly string[] | undefined): boolean {
  if (rawHeaders === undefined || rawHeaders.length < 4) return false;
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = String(rawHeaders[i]).toLowerCase();
    if (seen.has(name)) return true;
    seen.add(name);
  }
  return false;
}

/**
 * What the pipeline reads of a `Request`: its view, and its path as routed; `body`, the content
 * the handler read, is recorded in the request's exchange for the steps that read it.
 */
export function fetchPipelineRequest(
  request: Request,
  options: { info?: ConnectionInfo | undefined; path?: string | undefined; body?: unknown } = {},
): PipelineRequest {
  if (options.body !== undefined) exchangeOf(request).body = { value: options.body };
  return readView(request, fetchView(request, options.info), options.path);
}

/** The pipeline's reading of a request from its view: the path is the target's, unless routed otherwise. */
function readView(request: Request, view: RequestView, path: string | undefined): PipelineRequest {
  const url = view.url ?? "/";
  const query = url.indexOf("?");
  return {
    view,
    path: path ?? (query === -1 ? url : url.slice(0, query)),
    native: request,
  };
}

/** Sets `fields` on `headers`: a `null` one removed, a list as separate lines (`Set-Cookie`). */
function setFields(headers: Headers, fields: Passage["fields"]): void {
  if (fields === undefined) return;
  for (const name of Object.keys(fields)) {
    const value = fields[name];
    if (value === undefined) continue;
    if (value === null) {
      headers.delete(name);
      continue;
    }
    if (typeof value === "string") headers.set(name, value);
    else {
      headers.delete(name);
      for (const line of value) headers.append(name, line);
    }
  }
}

function appendVaryTo(headers: Headers, names: readonly string[] | undefined): void {
  if (names === undefined || names.length === 0) return;
  const vary = mergeVary(headers.get("vary") ?? undefined, names);
  if (vary !== undefined) headers.set("vary", vary);
}

/** Field names as people reading a trace expect them; a `Headers` compares them case-insensitively anyway. */
function spelledHeaders(value: ResponseValue, preset: Headers | undefined): Headers {
  const headers = new Headers(preset);
  const fields = value.fields;
  for (const name of Object.keys(fields)) {
    const field = fields[name];
    if (field === null || field === undefined) headers.delete(name);
    else if (name === "link" && headers.has("link")) {
      headers.set("link", `${headers.get("link")}, ${typeof field === "string" ? field : field.join(", ")}`);
    } else if (typeof field === "string") headers.set(fieldName(name), field);
    else {
      headers.delete(name);
      for (const line of field) headers.append(fieldName(name), line);
    }
  }
  appendVaryTo(headers, value.vary);
  return headers;
}

/**
 * A response value as a `Response`: its status, its fields over `preset` (the fields set in
 * front, a `null` one removed, a `Link` appended), its `Vary` appended, and its content (whole
 * bytes with `Content-Length`, a stream as a `ReadableStream`). A HEAD gets the fields only (RFC
 * 9110 §9.3.2). Content with a `Content-Encoding` is already coded, and goes as it is on a runtime
 * that would code it again (`encodeBody: "manual"` on Cloudflare Workers).
 */
export function toResponse(value: ResponseValue, method: string, preset?: Headers | undefined): Response {
  return withContent(value, method, spelledHeaders(value, preset));
}

/**
 * The fields of the pipeline's response to a request, in one `Headers` with each field appended
 * once: the passages' (a later gate's field replacing an earlier one's, their `Vary` names first),
 * then the value's own over them, as {@link toResponse} over a preset of the passages and
 * {@link withPassages} give them. Names go in lower case: a `Headers` keeps them so, and checks
 * and lowers each name again on every `has`, `get` and `set`, which a response of a dozen fields
 * would pay twice or three times over.
 */
function pipelineHeaders(value: ResponseValue, passages: readonly Passage[]): Headers {
  const fields = new Map<string, FieldValue>();
  let vary: string | undefined;
  for (const passage of passages) {
    const own = passage.fields;
    if (own !== undefined)
      for (const name in own) {
        const field = own[name];
        const lower = lowerFieldName(name);
        if (field === undefined) continue;
        if (lower === "vary") vary = field === null ? undefined : joined(field);
        else if (field === null) fields.delete(lower);
        else fields.set(lower, field);
      }
    if (passage.vary !== undefined && passage.vary.length > 0) vary = mergeVary(vary, passage.vary) ?? vary;
  }
  const own = value.fields;
  for (const name in own) {
    const field = own[name];
    if (name === "vary") vary = field === null || field === undefined ? undefined : joined(field);
    else if (field === null || field === undefined) fields.delete(name);
    else if (name === "link" && fields.has("link"))
      fields.set("link", `${joined(fields.get("link") as FieldValue)}, ${joined(field)}`);
    else fields.set(name, field);
  }
  if (value.vary.length > 0) vary = mergeVary(vary, value.vary) ?? vary;
  if (vary !== undefined) fields.set("vary", vary);
  const headers = new Headers();
  for (const [name, field] of fields) {
    if (typeof field === "string") headers.append(name, field);
    else for (const line of field) headers.append(name, line);
  }
  return headers;
}

function joined(field: FieldValue): string {
  return typeof field === "string" ? field : field.join(", ");
}

/** `value`'s content on `headers`: see {@link toResponse}. */
function withContent(value: ResponseValue, method: string, headers: Headers): Response {
  const body = value.body;
  const coded = isCodedContent(headers.get("content-encoding"));
  if (body === undefined) {
    if (value.status === 205) headers.set("content-length", "0");
    return buildResponse(null, { status: value.status, headers }, coded);
  }
  if (typeof (body as NodeJS.ReadableStream).pipe === "function") {
    headers.delete("content-length");
    if (method === "HEAD") {
      releaseBody(body);
      return buildResponse(null, { status: value.status, headers }, coded);
    }
    return buildResponse(webStream(body as NodeJS.ReadableStream), { status: value.status, headers }, coded);
  }
  const bytes = body as Uint8Array;
  headers.set("content-length", String(bytes.byteLength));
  return buildResponse(method === "HEAD" ? null : bytes, { status: value.status, headers }, coded);
}

const encoder = new TextEncoder();

/**
 * A Node.js stream (or anything async-iterable with `pipe`) as a `ReadableStream` of bytes, read
 * as the response is, through its async iterator: a cancelled response ends the iteration, which
 * destroys a Node.js `Readable`. No `node:stream` (`Readable.toWeb`): this entry runs where there
 * is no Node.js.
 *
 * @see https://streams.spec.whatwg.org/#rs-model
 */
function webStream(body: NodeJS.ReadableStream): ReadableStream<Uint8Array> {
  const iterator = (body as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await iterator.next();
        if (next.done) {
          controller.close();
          return;
        }
        const chunk = next.value;
        if (typeof chunk === "string") controller.enqueue(encoder.encode(chunk));
        else if (chunk instanceof Uint8Array) controller.enqueue(chunk);
        else throw new TypeError(`A response stream gave a chunk that is not bytes: ${typeof chunk}`);
      },
      async cancel() {
        try {
          await iterator.return?.();
        } finally {
          releaseBody(body);
        }
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The refused-body policy (`UnreadBodyOptions` of `@svc/kernel`) on the Fetch API: `response`
 * with `Connection: close` when `request`'s content was never read and is over
 * `bounds.maxBytes` or of unknown length (chunked), so the server closes the connection after it
 * rather than read an unbounded body to keep it. A smaller remainder is left to the server, which
 * owns the socket (`@hono/node-server` discards one within 500 ms, else closes); a runtime that
 * sets its own `Connection` (HTTP/2, a worker) ignores the field. Content read in part counts as
 * read: whatever read it decided.
 *
 * @example return settleUnreadRequest(request, toResponse(value, request.method));
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-9.6
 */
export function settleUnreadRequest(
  request: Request,
  response: Response,
  bounds: UnreadBodyBounds = UNREAD_BODY_DEFAULTS,
): Response {
  const framing = request.headers;
  const action = unreadBodyAction(
    framing.get("content-length") ?? undefined,
    framing.get("transfer-encoding") ?? undefined,
    bounds,
  );
  if (action !== "close") return response;
  // Only now the body: on `@hono/node-server` reading it makes the whole `Request` (its
  // `AbortSignal` and listeners) that a request without framing fields never needs.
  if (request.body === null || request.bodyUsed) return response;
  try {
    response.headers.set("connection", "close");
    return response;
  } catch {
    // Immutable headers (a Response from fetch()): a new Response around the same body.
    const headers = new Headers(response.headers);
    headers.set("connection", "close");
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}

/**
 * `response` with a passage's fields and `Vary` added, in place as Hono's own middleware sets
 * fields after `next()`. A `Response` whose headers are immutable (one from `fetch()`) is the one
 * case copied: a new `Response` around the same body.
 */
export function withPassage(response: Response, passage: Passage): Response {
  try {
    addPassageTo(response.headers, passage);
    return response;
  } catch (err) {
    // Only an immutable `Headers` throws, on its first write, before any field changed.
    if (!(err instanceof TypeError)) throw err;
    const headers = new Headers(response.headers);
    addPassageTo(headers, passage);
    const init = { status: response.status, statusText: response.statusText, headers };
    return buildResponse(response.body, init, isCodedBody(response));
  }
}

/**
 * `response` with every passage recorded for `request` ({@link addPassage}), in the order they were
 * given, as the other frameworks' responses have them: a gate's field only where the response set
 * none of that name, and the gates' `Vary` names in front of the response's own (a gate in front
 * sets them on `node:http`'s response before the route appends its own). Applying it again changes
 * nothing, so each gate of a chain may call it after `next()`.
 */
export function withPassages(response: Response, request: Request): Response {
  const passages = exchangeIfAny(request)?.passages;
  if (passages === undefined || passages.length === 0) return response;
  // Each gate of a chain calls this after `next()` with the same response: the innermost applies
  // every passage, and the others, finding them applied, only look. `Headers` checks and
  // lower-cases each name on every `has`, `get` and `set`, so applying them again costs as much.
  const done = applied.get(request);
  if (done !== undefined && done.response === response && done.count === passages.length) return response;
  let out = response;
  try {
    addPassagesTo(response.headers, passages);
  } catch (err) {
    // Only an immutable `Headers` throws, on its first write, before any field changed.
    if (!(err instanceof TypeError)) throw err;
    const headers = new Headers(response.headers);
    addPassagesTo(headers, passages);
    const init = { status: response.status, statusText: response.statusText, headers };
    out = buildResponse(response.body, init, isCodedBody(response));
  }
  applied.set(request, { response: out, count: passages.length });
  return out;
}

/** The response {@link withPassages} last gave for a request, and how many passages it carries. */
const applied = requestSlot<{ response: Response; count: number }>();

function addPassagesTo(headers: Headers, passages: readonly Passage[]): void {
  // A later gate's field replaces an earlier one's (as it does on `node:http`'s response, where
  // the limiter behind another reports both policies); the route's own fields win over all.
  const fields: Record<string, NonNullable<Passage["fields"]>[string]> = {};
  let vary: string | undefined;
  for (const passage of passages) {
    if (passage.fields !== undefined) Object.assign(fields, passage.fields);
    if (passage.vary !== undefined && passage.vary.length > 0) vary = mergeVary(vary, passage.vary) ?? vary;
  }
  setMissingFields(headers, fields);
  if (vary === undefined) return;
  const own = headers.get("vary");
  const names = own === null ? [] : splitList(own);
  // An over-long `Vary` of the route's is kept as it is, the gates' names appended.
  const merged = names === undefined ? mergeVary(own, vary.split(", ")) : (mergeVary(vary, names) ?? vary);
  if (merged !== undefined && merged !== own) headers.set("vary", merged);
}

function addPassageTo(headers: Headers, passage: Passage): void {
  if (passage.fields !== undefined) setMissingFields(headers, passage.fields);
  appendVaryTo(headers, passage.vary);
}

/** The route's own fields win over the gates': theirs are set only where the route set none. */
function setMissingFields(headers: Headers, fields: NonNullable<Passage["fields"]>): void {
  const missing: Record<string, NonNullable<Passage["fields"]>[string]> = {};
  let any = false;
  for (const name of Object.keys(fields))
    if (!headers.has(name)) {
      missing[name] = fields[name] ?? null;
      any = true;
    }
  if (any) setFields(headers, missing);
}

/** `c.res = response` only when it is another `Response`: Hono's setter rebuilds the response. */
function replaceResponse(c: HonoContextLike, response: Response): void {
  if (response !== c.res) c.res = response;
}

/**
 * Records `passage` for every response to `request`, an error's included. A `Request` has no
 * response in front to set fields on, as `node:http`'s has: what a gate or the version decision
 * adds to every response waits in the request's exchange (`exchangeOf(request).passages`), for
 * the route's response ({@link withPassage}) and for an error's (`@svc/errors/fetch` reads
 * {@link passagesOf}).
 */
export function addPassage(request: Request, passage: Passage): void {
  exchangeOf(request).passages.push(passage);
}

const NO_PASSAGES: readonly Passage[] = Object.freeze([]);

/** The passages recorded for `request`, in the order they were given. */
export function passagesOf(request: Request): readonly Passage[] {
  return exchangeIfAny(request)?.passages ?? NO_PASSAGES;
}

/** A Fetch-API middleware: Hono middleware as called, with `wrap` for any other Fetch server. */
export interface FetchMiddleware extends HonoMiddleware {
  /** `handler` behind the gate, for a Fetch server without Hono: `export default { fetch: gate.wrap(app) }`. */
  wrap(handler: FetchHandler, info?: (request: Request) => ConnectionInfo | undefined): FetchHandler;
}

/**
 * A {@link Gate} on the Fetch API: as Hono middleware (`app.use(fetchGate(gate))`, the connection
 * read from `@hono/node-server` when it is there), and as a wrapper of any Fetch handler
 * (`fetchGate(gate).wrap(handler)`). A passage's fields go on the route's response (the route's
 * own fields of the same name win); an answer is the response; a refusal is thrown, for Hono's
 * `app.onError` or the wrapper from `@svc/errors/fetch` to answer.
 */
export function fetchGate(gate: Gate<Request>): FetchMiddleware {
  const middleware = async (c: HonoContextLike, next: () => Promise<void>): Promise<Response | undefined> => {
    const request = c.req.raw;
    const outcome = await gate(fetchView(request, honoConnection(c)), request);
    if (outcome !== undefined && outcome !== null && isAnswer(outcome)) {
      return settleUnreadRequest(request, toResponse(outcome.answer, request.method.toUpperCase()));
    }
    if (outcome !== undefined && outcome !== null) addPassage(request, outcome);
    await next();
    if (outcome !== undefined && outcome !== null) replaceResponse(c, withPassages(c.res, request));
    return undefined;
  };
  return Object.assign(middleware, {
    wrap(handler: FetchHandler, info?: (request: Request) => ConnectionInfo | undefined): FetchHandler {
      return async (request: Request) => {
        const outcome = await gate(fetchView(request, info?.(request)), request);
        if (outcome === undefined || outcome === null) return handler(request);
        if (isAnswer(outcome))
          return settleUnreadRequest(request, toResponse(outcome.answer, request.method.toUpperCase()));
        addPassage(request, outcome);
        return withPassages(await handler(request), request);
      };
    },
  });
}

/** A pipeline on the Fetch API: see {@link fetchAdapter}. */
export interface FetchPipeline {
  /**
   * Hono's `getPath` option (`new Hono({ getPath: svc.getPath })`), needed when the pipeline
   * versions requests by path: Hono routes on the path it returns, the `/v<N>` prefix stripped,
   * and the version is decided with it, once per request.
   */
  readonly getPath: (request: Request) => string;
  /**
   * Hono middleware for the whole app (`app.use(svc.middleware)`): the version's fields on every
   * response, the version's refusal (or a write's 406) thrown for `app.onError`.
   */
  readonly middleware: HonoMiddleware;
  /**
   * The response to `request`: `handler`'s result through the pipeline. Rejects with the error to
   * answer, for `app.onError` or `@svc/errors/fetch`. `body`: the request content the handler read,
   * for an idempotent route's fingerprint; by default what `parseBody` of `@svc/negotiate/fetch`
   * read of `request` (the request's exchange).
   */
  respond(
    request: Request,
    handler: (context: HandlerContext) => unknown,
    options?: { route?: RouteOptions | undefined; body?: unknown; info?: ConnectionInfo | undefined },
  ): Promise<Response>;
  /** RFC 9110 §13.2.2 before a write, inside its handler (see `Pipeline.checkWrite`); rejects with the 412. */
  preconditions(
    request: Request,
    current: { data: unknown; lastModified?: Date | undefined } | undefined,
    creates?: boolean,
  ): Promise<void>;
}

/**
 * The Fetch-API adapter of a pipeline, for Hono and for any Fetch server.
 *
 * @example
 * const svc = fetchAdapter(createPipeline());
 * const app = new Hono({ getPath: svc.getPath });
 * app.use(svc.middleware);
 * app.get("/employees/:id", (c) => svc.respond(c.req.raw, () => employees.get(c.req.param("id"))));
 */
export function fetchAdapter(pipeline: Pipeline): FetchPipeline {
  const decided = requestSlot<{ prepared: Prepared; path: string; read: PipelineRequest; info: unknown }>();
  const decide = (request: Request, info?: ConnectionInfo | undefined) => {
    const first = decided.get(request);
    // Hono asks `getPath` first, with the `Request` alone: when the middleware then brings the
    // field lines as received and a name repeats in them, the decision is made again on those
    // lines (the path stays the one routed), so a step refuses a repeated singleton field here as
    // on the other frameworks. Without a repeated name, the joined `Headers` read the same.
    if (first !== undefined && (first.info !== undefined || !repeatsAnyField(info?.rawHeaders))) return first;
    const view = fetchView(request, info);
    const target = view.url ?? "/";
    const read = readView(request, view, undefined);
    const prepared = pipeline.prepare(read, target);
    const routed = prepared.version?.target ?? target;
    const query = routed.indexOf("?");
    const path = first?.path ?? (query === -1 ? routed : routed.slice(0, query));
    const ready = { prepared, path, read, info };
    decided.set(request, ready);
    if (prepared.version !== undefined && first?.prepared.version === undefined)
      addPassage(request, prepared.version);
    return ready;
  };
  const withVersion = (response: Response, request: Request, prepared: Prepared): Response =>
    prepared.version === undefined ? response : withPassages(response, request);
  return {
    getPath: (request) => decide(request).path,
    middleware: async (c, next) => {
      const { prepared } = decide(c.req.raw, honoConnection(c));
      if (prepared.refusal !== undefined) throw prepared.refusal;
      await next();
      replaceResponse(c, withVersion(c.res, c.req.raw, prepared));
      return undefined;
    },
    async respond(request, handler, options = {}) {
      const { prepared, path, read, info } = decide(request, options.info);
      if (prepared.refusal !== undefined) throw prepared.refusal;
      // A route matched a path with a `%` that begins no percent-encoding (RFC 3986 §2.1): its
      // parameter cannot be decoded, a 400 as Express's router answers it.
      if (malformedEscape(path)) throw HttpError.badRequest();
      // The request as read for the decision, unless this call knows more of the connection.
      // The body the handler read, in place of what a body parser of the packages recorded.
      if (options.body !== undefined) exchangeOf(request).body = { value: options.body };
      const pipelineRequest =
        options.info === undefined || options.info === info
          ? { ...read, path }
          : fetchPipelineRequest(request, { info: options.info, path });
      const value = await pipeline.run(pipelineRequest, prepared, handler, options.route);
      const passages = passagesOf(request);
      const headers = pipelineHeaders(value, passages);
      const response = settleUnreadRequest(
        request,
        withContent(value, request.method.toUpperCase(), headers),
      );
      // The gates' `withPassages` after `next()` find every passage on it already.
      if (passages.length > 0) applied.set(request, { response, count: passages.length });
      return response;
    },
    preconditions(request, current, creates = false) {
      const ready = decided.get(request);
      return pipeline.checkWrite(
        ready === undefined ? fetchPipelineRequest(request) : { ...ready.read, path: ready.path },
        ready?.prepared ?? NOT_PREPARED,
        current,
        creates,
      );
    },
  };
}

const NOT_PREPARED: Prepared = Object.freeze({ version: undefined, refusal: undefined });
