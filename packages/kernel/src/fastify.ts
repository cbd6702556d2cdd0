/**
 * `@svc/kernel/fastify`: the response pipeline and gates on Fastify 5. Fastify's own request,
 * `reply`, hooks and error handler carry what the framework-free cores decide; this module
 * decides nothing.
 *
 * @packageDocumentation
 */
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import {
  type Body,
  compileTrust,
  exchangeOf,
  type FieldValue,
  type Gate,
  type GateOutcome,
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
  type RoutingRules,
  reasonPhrase,
  type TrustHop,
  type TrustOption,
} from "@svc/kernel";
import { optionError } from "@svc/kernel/internal";
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyPluginOptions,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
  onRequestHookHandler,
  RawServerDefault,
  RouteHandlerMethod,
} from "fastify";
import {
  type AllowedMethodsOptions,
  type AllowedMethodsRoute,
  allowedMethodsRoute,
  type Refusals,
  routingPlugin,
} from "./fastify-routing.js";
import { lowerFieldName } from "./field-name.js";
import { checkRoutingOptions, type RoutedTarget } from "./method-routing.js";
import { pipelineRequest } from "./node.js";
import { presetFields } from "./preset-fields.js";
import { releaseBody } from "./release.js";
import { checkRequestRule } from "./request-rule.js";
import { requestSlot } from "./request-slot.js";
import { settleUnreadBody } from "./settle-body.js";
import { malformedEscape, routerTarget } from "./target.js";

/**
 * What the pipeline reads of a Fastify request: its view ({@link fastifyView}), its path as
 * routed; Fastify's parsed body is recorded in the exchange's `body`, for the steps that read it.
 */
export function fastifyRequest(request: FastifyRequest, reply?: FastifyReply | undefined): PipelineRequest {
  const view = fastifyView(request);
  if (request.body !== undefined) exchangeOf(request.raw).body = { value: request.body };
  const url = request.url;
  const query = url.indexOf("?");
  return {
    view,
    path: query === -1 ? url : url.slice(0, query),
    preset: reply === undefined ? undefined : presetFields(reply),
    native: request,
  };
}

/**
 * What Fastify's `trustProxy` server option takes, compiled from `option` with Express's meaning
 * (`compileTrust`): `Fastify({ trustProxy: fastifyTrustProxy(1) })` trusts the nearest proxy, as
 * `app.set("trust proxy", 1)` does on Express, so `request.ip` and every @svc package's client
 * (`requestFacts`) name the same client on both frameworks, on every Fastify 5 release. Fastify
 * 5.12.1 and later read a bare hop count (`trustProxy: 1`) as trusting no peer, so the @svc
 * plugins refuse one (see {@link appWide}). Refused forms are a `TypeError` with `code`
 * `ERR_SVC_KERNEL_TRUST_PROXY`.
 *
 * @example const app = Fastify({ trustProxy: fastifyTrustProxy(process.env.TRUST_PROXY === "1" ? 1 : "loopback") });
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
 */
export function fastifyTrustProxy(option: TrustOption): (address: string, hop: number) => boolean {
  return compileTrust(option);
}

/** Fastify's options by instance: an encapsulated instance inherits its root's. */
const trustOf = new WeakMap<object, TrustHop | false>();

/**
 * The refusal of a hop count as Fastify's own `trustProxy`: Fastify before 5.12.1 reads it as
 * Express does, 5.12.1 and later as trusting no peer, so `request.ip` would name the proxy where
 * Express names the client.
 */
function hopCountRefused(option: number): Error {
  return optionError(
    "kernel",
    "trustProxy",
    `@svc/kernel/fastify: Fastify's trustProxy is the hop count ${option}, which Fastify 5.12.1 and later read as trusting no peer (request.ip is then the proxy) while Express trusts the ${option} nearest hops; pass Fastify({ trustProxy: fastifyTrustProxy(${option}) }) of @svc/kernel/fastify, which means the same on every framework`,
  );
}

/**
 * Fastify's own `trustProxy` server option, compiled as Fastify compiles it (its Server reference
 * documents the forms): `true` every peer, addresses and CIDR ranges (a comma-separated string or
 * a list) compiled by proxy-addr, a function `(address, hop)` as it is (what
 * {@link fastifyTrustProxy} gives); `false` when the option is off. A hop count above 0 is
 * refused (see `hopCountRefused`). Fastify keeps the option on the instance under a symbol only
 * (`initialConfig` leaves it out), so it is found by that symbol's description; an instance
 * without it trusts no peer, as Fastify's default does.
 */
function fastifyTrust(server: object | undefined): TrustHop | false {
  if (server === undefined || server === null) return false;
  const known = trustOf.get(server);
  if (known !== undefined) return known;
  let option: unknown;
  for (let o: object | null = server; o !== null; o = Object.getPrototypeOf(o)) {
    const key = Object.getOwnPropertySymbols(o).find((s) => s.description === "fastify.options");
    if (key !== undefined) {
      option = ((o as Record<symbol, unknown>)[key] as { trustProxy?: unknown } | undefined)?.trustProxy;
      break;
    }
  }
  // Not remembered: every request through a view of this server is refused the same way.
  if (typeof option === "number" && option > 0) throw hopCountRefused(option);
  let trust: TrustHop | false = false;
  if (option === true || typeof option === "function") trust = compileTrust(option as TrustHop | true);
  else if ((typeof option === "string" && option !== "") || Array.isArray(option)) {
    try {
      trust = compileTrust(option as string | string[]);
    } catch {
      // Fastify refuses such an address when it starts: no request reaches here with it.
      trust = false;
    }
  }
  trustOf.set(server, trust);
  return trust;
}

/** Each Fastify instance's routing rules, read once from its configuration. */
const routingRules = new WeakMap<object, RoutingRules>();
const FASTIFY_DEFAULT_ROUTING: RoutingRules = Object.freeze({ caseSensitive: true, strict: true });

/**
 * How a Fastify instance's router compares paths: `caseSensitive` (on by default) and
 * `ignoreTrailingSlash` (off by default), from its configuration (`routerOptions` in Fastify 5.3+,
 * the top-level options before).
 * @see https://fastify.dev/docs/latest/Reference/Server/#routeroptions
 */
function fastifyRouting(server: FastifyInstance | undefined): RoutingRules {
  if (server === undefined) return FASTIFY_DEFAULT_ROUTING;
  let rules = routingRules.get(server);
  if (rules === undefined) {
    type Config = { caseSensitive?: boolean; ignoreTrailingSlash?: boolean };
    const config = server.initialConfig as (Config & { routerOptions?: Config }) | undefined;
    const caseSensitive = config?.routerOptions?.caseSensitive ?? config?.caseSensitive;
    const ignoreTrailingSlash = config?.routerOptions?.ignoreTrailingSlash ?? config?.ignoreTrailingSlash;
    rules = Object.freeze({ caseSensitive: caseSensitive !== false, strict: ignoreTrailingSlash !== true });
    routingRules.set(server, rules);
  }
  return rules;
}

/**
 * A Fastify request as the @svc cores read it ({@link RequestView}): `request.raw`'s method,
 * target, fields and connection, recorded in the request's exchange (`Exchange.view`) with
 * Fastify's own `trustProxy` server option, where `requestFacts` looks for a framework's setting when
 * no trust is given (as it reads Express's `trust proxy`). So the client address, scheme and host a package reads behind a proxy
 * follow `Fastify({ trustProxy })`, as `request.ip`, `request.protocol` and `request.host` do,
 * unless the package's own `trustProxy` option says otherwise. Gates under {@link fastifyGate}
 * are given this view. A hop count as Fastify's `trustProxy` is refused (a `TypeError` with
 * `code` `ERR_SVC_KERNEL_TRUST_PROXY`): give {@link fastifyTrustProxy}'s function instead.
 *
 * @example
 * const app = Fastify({ trustProxy: fastifyTrustProxy("loopback") });
 * app.get("/", (request) => ({ origin: requestFacts(fastifyView(request)).origin }));
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
 */
export function fastifyView(request: FastifyRequest): RequestView {
  const raw = request.raw;
  // Made once per request, for the gates and routes that read it: kept in the exchange.
  const exchange = exchangeOf(raw);
  const known = exchange.view;
  // The raw request itself, recorded by the `node:http` entry (the version step of `rewriteUrl`
  // reads it before any hook), is replaced by the view that records Fastify's trust.
  if (known !== undefined && known !== raw) return known;
  // Fastify's trust, for `requestFacts` of every package, in the request's exchange; the view
  // stands for `raw` there (`raw`), as Fastify's own request does.
  exchange.trust = fastifyTrust(request.server);
  exchange.routing = fastifyRouting(request.server);
  const view: RequestView & { readonly raw: IncomingMessage } = {
    method: raw.method,
    url: raw.url,
    originalUrl: (raw as { originalUrl?: string }).originalUrl ?? raw.url,
    headers: raw.headers,
    rawHeaders: raw.rawHeaders,
    socket: raw.socket,
    raw,
  };
  exchange.view = view;
  return view;
}

/** Whether a response of `status` has content in its GET (RFC 9110 §6.4.1: not 1xx, 204, 304). */
function hasContent(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304;
}

function isStream(body: Body): body is NodeJS.ReadableStream {
  return typeof (body as NodeJS.ReadableStream).pipe === "function";
}

/** Appends `field` to a `Link` set in front (RFC 8288 §3.5: several links, one list). */
function appendLink(reply: FastifyReply, field: FieldValue): void {
  const before = reply.getHeader("link");
  const lines = (list: FieldValue | number): string[] =>
    typeof list === "string" || typeof list === "number" ? [String(list)] : [...list];
  reply.header("link", before === undefined ? field : [...lines(before), ...lines(field)].join(", "));
}

/** A passage's fields on the reply, its `Vary` appended to the reply's. */
export function setReplyPassage(reply: FastifyReply, passage: Passage): void {
  const fields = passage.fields;
  if (fields !== undefined) {
    for (const name in fields) {
      const value = fields[name];
      if (value === null) reply.removeHeader(name);
      else if (value !== undefined) reply.header(lowerFieldName(name), value);
    }
  }
  if (passage.vary !== undefined && passage.vary.length > 0) {
    const vary = mergeVary(reply.getHeader("vary") as FieldValue | undefined, passage.vary);
    if (vary !== undefined) reply.header("vary", vary);
  }
}

/**
 * Sends a response value through Fastify's `reply` (its `onSend` hooks and logging see it as any
 * other reply): the status, its fields over those set in front (a `null` one removed, a `Link`
 * appended), its `Vary` appended, and the content: whole bytes with `Content-Length`, a stream
 * piped. A HEAD gets the fields only (RFC 9110 §9.3.2). Returns the reply, for an async handler
 * to return. Names are given in lower case, as Fastify stores and writes them: `reply.header`
 * lower-cases each name, a new string per field and request for any other spelling.
 */
export function sendValue(reply: FastifyReply, value: ResponseValue, method: string): FastifyReply {
  // Content not read whole (a hook answered before Fastify's parser ran) follows the refused-body
  // policy, as on every framework.
  settleUnreadBody(reply.request.raw, reply.raw);
  reply.code(value.status);
  // Fastify writes the head with Node's `writeHead(status)`, which takes the response's
  // `statusMessage` over `http.STATUS_CODES`: RFC 9110's phrase, as on Express and node:http.
  reply.raw.statusMessage = reasonPhrase(value.status);
  const fields = value.fields;
  for (const name in fields) {
    const field = fields[name];
    if (field === null || field === undefined) reply.removeHeader(name);
    else if (name === "link") appendLink(reply, field);
    else reply.header(name, field);
  }
  if (value.vary.length > 0) {
    const vary = mergeVary(reply.getHeader("vary") as FieldValue | undefined, value.vary);
    if (vary !== undefined) reply.header("vary", vary);
  }
  const body = value.body;
  if (body === undefined) {
    // RFC 9110 §15.3.6: a 205 says it has no content with Content-Length: 0.
    if (value.status === 205) reply.header("content-length", "0");
    // A HEAD whose GET has content (its coded length unknown), or a HEAD's 304: an empty stream,
    // as below, since Fastify's HEAD route says Content-Length: 0 of nothing (RFC 9110 §8.6: only
    // the GET's length, in a 304 too).
    else if (
      method === "HEAD" &&
      (hasContent(value.status) || value.status === 304) &&
      reply.getHeader("content-length") === undefined
    )
      return reply.send(Readable.from([]));
    return reply.send();
  }
  if (isStream(body)) {
    reply.removeHeader("content-length");
    if (method === "HEAD") {
      // An empty stream, not nothing: Fastify's HEAD route would otherwise say Content-Length: 0
      // of a GET that is sent chunked, with no length (RFC 9110 §8.6 lets HEAD leave it out).
      releaseBody(body);
      return reply.send(Readable.from([]));
    }
    return reply.send(body instanceof Readable ? body : Readable.from(body as AsyncIterable<unknown>));
  }
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  reply.header("content-length", String(bytes.byteLength));
  // A HEAD's bytes too: Fastify's HEAD route takes their length and sends none of them.
  return reply.send(bytes);
}

/**
 * A {@link Gate} as a Fastify hook (`onRequest` or `preHandler`), given the request's
 * {@link fastifyView} (Fastify's `trustProxy` with it): a passage's fields go on the reply and the
 * request goes on; an answer is sent (the route does not run); a refusal (thrown
 * or rejected) goes to Fastify's error handler (`@svc/errors/fastify`). A callback hook: a gate
 * that decides at once (a memory store, a host check) goes on in the same turn, with no promise.
 *
 * @example app.addHook("onRequest", fastifyGate(gate));
 */
export function fastifyGate(gate: Gate<FastifyRequest>): onRequestHookHandler {
  return function svcGate(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) {
    let outcome: ReturnType<Gate<FastifyRequest>>;
    try {
      outcome = gate(fastifyView(request), request);
    } catch (err) {
      done(refusal(err));
      return;
    }
    if (isThenable(outcome))
      outcome.then(
        (decided) => applyOutcome(request, reply, decided, done),
        (err: unknown) => done(refusal(err)),
      );
    else applyOutcome(request, reply, outcome, done);
  } as onRequestHookHandler;
}

/** A refusal for `done`: one without a value still refuses (a 500), as a rejected async hook does. */
function refusal(err: unknown): Error {
  return (err ?? new Error("A gate refused the request without a reason")) as Error;
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === "function";
}

/** A gate's outcome on the reply: an answer sent (the hooks stop there), else on to `done`. */
function applyOutcome(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: GateOutcome,
  done: (err?: Error) => void,
): void {
  if (outcome === undefined || outcome === null) {
    done();
    return;
  }
  if (isAnswer(outcome)) {
    // Sent, `done` not called: Fastify runs no further hook and no handler for the request.
    try {
      sendValue(reply, outcome.answer, request.method.toUpperCase());
    } catch (err) {
      done(err as Error);
    }
    return;
  }
  setReplyPassage(reply, outcome);
  done();
}

/**
 * A plugin that applies to the whole application, not only to what is registered inside it
 * (Fastify's `skip-override`, what `fastify-plugin` sets), named in Fastify's logs and errors.
 * Its registration fails (and so `ready` and `listen`) on an instance whose `trustProxy` is a hop
 * count, with the `TypeError` `ERR_SVC_KERNEL_TRUST_PROXY` naming {@link fastifyTrustProxy}: the
 * @svc packages and Fastify's `request.ip` would otherwise name different clients.
 */
export function appWide<Options extends FastifyPluginOptions>(
  name: string,
  plugin: FastifyPluginCallback<Options>,
): FastifyPluginCallback<Options> {
  const checked = function svcPlugin(
    this: unknown,
    app: FastifyInstance,
    options: Options,
    done: (err?: Error) => void,
  ) {
    try {
      fastifyTrust(app);
    } catch (err) {
      done(err as Error);
      return;
    }
    return plugin.call(this, app, options, done);
  };
  Object.defineProperty(checked, "name", { value: plugin.name || "svcPlugin" });
  const marked = checked as unknown as FastifyPluginCallback<Options> & Record<symbol, unknown>;
  marked[Symbol.for("skip-override")] = true;
  marked[Symbol.for("fastify.display-name")] = name;
  marked[Symbol.for("plugin-meta")] = { name, fastify: "5.x" };
  return marked;
}

/** The decision made for a raw request before routing. */
interface Decided {
  readonly prepared: Prepared;
  /** The target held a stray `%`, escaped for Fastify's router (`rewriteUrl`). */
  escaped?: boolean;
}

/** What a Fastify handler under the pipeline is given beside its request. */
export type FastifyHandler = (request: FastifyRequest, context: HandlerContext) => unknown;

/** A pipeline's Fastify adapter: see {@link fastifyAdapter}. */
export interface FastifyPipeline {
  /**
   * Fastify's `rewriteUrl` server option (`Fastify({ rewriteUrl: svc.rewriteUrl })`): Fastify
   * routes before any hook runs, so the `/v<N>` prefix of a pipeline that versions requests by
   * path is stripped here, once, and the version decided with it; the target is then given to
   * the router as {@link fastifyRewriteUrl} gives it (an absolute-form of any scheme by its path,
   * `*` to no route, a stray `%` escaped).
   */
  readonly rewriteUrl: (this: unknown, req: IncomingMessage) => string;
  /**
   * The plugin (`app.register(svc.plugin)`), for the whole application: an `onRequest` hook that
   * sets the version's fields on the reply and answers its refusal, or a write's 406, through
   * Fastify's error handler.
   */
  readonly plugin: FastifyPluginCallback;
  /**
   * A route handler that runs `handler` through the pipeline and sends its response value with
   * `reply`; its error goes to Fastify's error handler.
   */
  handle(handler: FastifyHandler, route?: RouteOptions): RouteHandlerMethod<RawServerDefault>;
  /** RFC 9110 §13.2.2 before a write, inside its handler (see `Pipeline.checkWrite`); rejects with the 412. */
  preconditions(
    request: FastifyRequest,
    current: { data: unknown; lastModified?: Date | undefined } | undefined,
    creates?: boolean,
  ): Promise<void>;
}

/**
 * Fastify's `rewriteUrl` server option for an application without a pipeline
 * (`Fastify({ rewriteUrl: fastifyRewriteUrl })`): the request-target given to Fastify's router so
 * that it routes what Express's router routes. An absolute-form target of any scheme by its path
 * (`GET ftp://api.example/employees/7` is `/employees/7`, RFC 9112 §3.2.2), the asterisk-form
 * (`*`, RFC 9112 §3.2.4) to no route, and a `%` of the path that begins no percent-encoding
 * escaped (`/%ZZ` is no route, a 404, not Fastify's own 400 before any hook). A pipeline's
 * adapter does the same after its version step (`fastifyAdapter(pipeline).rewriteUrl`).
 *
 * @example const app = Fastify({ rewriteUrl: fastifyRewriteUrl });
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3.2
 */
export function fastifyRewriteUrl(this: unknown, req: IncomingMessage): string {
  return routerTarget(req.url ?? "/");
}

/**
 * The Fastify 5 adapter of a pipeline.
 *
 * @example
 * const svc = fastifyAdapter(createPipeline({ versioning: versions({ versions: [1, 2] }) }));
 * const app = Fastify({ rewriteUrl: svc.rewriteUrl });
 * await app.register(svc.plugin);
 * app.get("/employees/:id", svc.handle(async (request) => employees.get(request.params.id)));
 */
export function fastifyAdapter(pipeline: Pipeline): FastifyPipeline {
  // The decision rides on the raw request in this adapter's own slot, gone with the request.
  const slot = requestSlot<Decided>();
  const decide = (req: IncomingMessage): Decided => {
    let ready = slot.get(req);
    if (ready === undefined) {
      const prepared = pipeline.prepare(pipelineRequest(req), req.url ?? "/");
      ready = { prepared };
      slot.set(req, ready);
    }
    return ready;
  };
  const plugin = appWide(
    "@svc/kernel",
    (app: FastifyInstance, _options: unknown, done: (err?: Error) => void) => {
      app.addHook(
        "onRequest",
        function svcPrepared(request: FastifyRequest, reply: FastifyReply, next: (err?: Error) => void) {
          const { prepared } = decide(request.raw);
          if (prepared.version !== undefined) setReplyPassage(reply, prepared.version);
          if (prepared.refusal === undefined) next();
          else next(prepared.refusal as Error);
        },
      );
      done();
    },
  );
  return {
    rewriteUrl(req) {
      const url = req.url ?? "/";
      const ready = decide(req);
      const version = ready.prepared.version;
      const target = version === undefined ? url : version.target;
      // RFC 3986 §2.1: a `%` that begins no percent-encoding. Fastify's router would refuse the
      // request before any hook (without the fields the steps set); routed with the `%` escaped,
      // it answers as Express's router does: no route, 404; a route, whose parameter holds the
      // `%`, 400 from `handle`.
      if (malformedEscape(target)) ready.escaped = true;
      return routerTarget(target);
    },
    plugin: plugin as FastifyPluginCallback,
    handle(handler, route) {
      if (route !== undefined) checkRequestRule(route);
      // Not an async function: Fastify sends what it throws as it sends a rejection, and the
      // pipeline's own promise is the one Fastify waits on, with no second promise around it.
      return function svcHandler(request: FastifyRequest, reply: FastifyReply) {
        const ready = decide(request.raw);
        if (ready.prepared.refusal !== undefined) throw ready.prepared.refusal;
        // A route matched a path whose stray `%` was escaped: a parameter that cannot be decoded.
        if (ready.escaped === true) throw HttpError.badRequest();
        const read = fastifyRequest(request, reply);
        return pipeline
          .run(read, ready.prepared, (context) => handler(request, context), route)
          .then((value) => sendValue(reply, value, request.method.toUpperCase()));
      } as RouteHandlerMethod<RawServerDefault>;
    },
    preconditions(request, current, creates = false) {
      return pipeline.checkWrite(
        fastifyRequest(request),
        slot.get(request.raw)?.prepared ?? NOT_PREPARED,
        current,
        creates,
      );
    },
  };
}

const NOT_PREPARED: Prepared = Object.freeze({ version: undefined, refusal: undefined });

export type { AllowedMethodsOptions, AllowedMethodsRoute } from "./fastify-routing.js";
export type { RoutedTarget } from "./method-routing.js";

/** Options of {@link expressRouting}: the errors its refusals are, for the application's error handler. */
export interface ExpressRoutingOptions {
  /**
   * The error of a request whose `:name` parameter matched an empty segment (`GET /things/` and a
   * `/things/:id` route): Express's router matches no route there, so it is the 404 of a path no
   * route has. `notFoundError` of `@svc/errors` gives the error record's own message.
   * @default (target) => HttpError.notFound()
   */
  notFound?: ((target: RoutedTarget) => Error) | undefined;
  /**
   * The error of a method a path lacks, given the path's `Allow` list, which the error carries as
   * its `Allow` field (RFC 9110 §15.5.6: the origin server MUST send it). `methodNotAllowedError`
   * of `@svc/errors` gives the error record's own message.
   * @default (target, allowed) => HttpError.methodNotAllowed(allowed)
   */
  methodNotAllowed?: ((target: RoutedTarget, allowed: readonly string[]) => Error) | undefined;
}

/** The router settings of {@link ExpressServerOptions}: Express's, with `strict` and `caseSensitive` on. */
export interface ExpressRouterOptions {
  /** `/Things` is no `/things` (Express's `case sensitive routing`). */
  readonly caseSensitive: true;
  /** `/things/` is no `/things` (Express's `strict routing`). */
  readonly ignoreTrailingSlash: false;
  /** `//things` is no `/things`, as on Express. */
  readonly ignoreDuplicateSlashes: false;
  /**
   * Long enough for any parameter of a request line Node.js accepts (its header limit, 16 KiB by
   * default): Express's router has no such limit, and past Fastify's default of 100 characters
   * its router matches no route (a 414) where a route's handler answers on Express.
   */
  readonly maxParamLength: number;
}

/**
 * Fastify's server options under which its router routes as Express's: see
 * {@link expressRouting}. `routerOptions` is read by Fastify 5.5 and later; before, give its fields
 * as server options of their own.
 */
export interface ExpressServerOptions {
  /** A GET route answers HEAD through its own handler (the plugin adds HEAD to it), as on Express. */
  readonly exposeHeadRoutes: false;
  /** Fastify's router as Express's: see {@link ExpressRouterOptions}. */
  readonly routerOptions: ExpressRouterOptions;
  /** {@link fastifyRewriteUrl}; a pipeline's adapter gives its own (`fastifyAdapter(p).rewriteUrl`). */
  readonly rewriteUrl: (this: unknown, req: IncomingMessage) => string;
  /**
   * A target Fastify's router refuses before any route (a parameter that is no UTF-8, `%C0%AF`: a
   * 400, as Express's router answers it) goes to the application's error handler, as every other
   * error does, where Fastify would otherwise write its own JSON.
   */
  readonly frameworkErrors: NonNullable<FastifyServerOptions["frameworkErrors"]>;
}

/** What {@link expressRouting} gives: server options, a plugin, and a path's explicit `Allow` list. */
export interface ExpressRouting {
  /** Spread into `Fastify({ ...routing.serverOptions })`: see {@link ExpressServerOptions}. */
  readonly serverOptions: ExpressServerOptions;
  /** `app.register(routing.plugin)`, before the routes: see {@link expressRouting}. */
  readonly plugin: FastifyPluginCallback;
  /**
   * A path's OPTIONS and 405 answers with `allow` as its `Allow` list (in that order, `OPTIONS`
   * added last when missing), for `app.route(...)` in the context whose hooks they run behind, as
   * `route.all(allowedMethods(allow))` is placed on Express: OPTIONS answers 204 with `Allow` and
   * `options.fields`, any method `allow` lacks is refused in `onRequest`. Hooks of the route's own
   * may be added from `preParsing` on (a permission check in front of OPTIONS: the 405s are
   * refused before it). The path's routes then add no refusals of their own. `allow` must be a
   * non-empty array of method names (`ERR_SVC_KERNEL_ALLOW`), `fields` an object of string values
   * (`ERR_SVC_KERNEL_FIELDS`).
   *
   * @example app.route({ ...routing.allowedMethods("/things", ["GET", "HEAD", "POST"], { fields: { "Accept-Post": "application/json" } }), preParsing: mayRead });
   * @see https://www.rfc-editor.org/rfc/rfc9110#section-9.3.7
   */
  allowedMethods(
    path: string,
    allow: readonly string[],
    options?: AllowedMethodsOptions,
  ): AllowedMethodsRoute;
}

/** A target the router refused before any route, handed to the application's error handler. */
const svcFrameworkErrors = function svcFrameworkErrors(
  error: Error,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const server = request.server;
  return server.errorHandler.call(server, error, request, reply);
} as unknown as ExpressServerOptions["frameworkErrors"];

const EXPRESS_SERVER_OPTIONS: ExpressServerOptions = Object.freeze({
  exposeHeadRoutes: false,
  routerOptions: Object.freeze({
    caseSensitive: true,
    ignoreTrailingSlash: false,
    ignoreDuplicateSlashes: false,
    maxParamLength: 16 * 1024,
  }),
  rewriteUrl: fastifyRewriteUrl,
  frameworkErrors: svcFrameworkErrors,
} as const);

/**
 * Express's routing on Fastify 5, for an application that answers the same on both: each path
 * answers every method, as `route.all()` lets an Express route. Spread `serverOptions` into
 * `Fastify(...)` and register `plugin` before the routes; for each route added after it:
 * - OPTIONS answers 204 with `Allow`, and every other method the path lacks is a 405 with `Allow`
 *   (RFC 9110 §15.5.6), refused in `onRequest`: before the body is read, and before Fastify's own
 *   400 for a QUERY without `Content-Type`. These routes are added in the context of the path's
 *   first route (behind its hooks), once that context has loaded what it registered so far; a
 *   route of the same path added later, after an awaited `register`, is refused with the
 *   `TypeError` `ERR_SVC_KERNEL_ROUTE_ORDER`. `allowedMethods` gives a path's list and place
 *   itself;
 * - a GET route answers HEAD through its own handler (RFC 9110 §9.3.2);
 * - a `:name` parameter matches a non-empty segment only (`GET /things/` is `notFound`'s 404, not
 *   the route of `/things/:id`), and one with a `%` that begins no percent-encoding is a 400 (RFC
 *   3986 §2.1; `serverOptions.rewriteUrl` lets the router reach the route with it).
 * Fastify's router learns every method Node's parser accepts (`addHttpMethod`), so `PROPFIND` is
 * a 405 too, not a 404. The errors go to the application's error handler: `notFound` and
 * `methodNotAllowed` make them (`ERR_SVC_KERNEL_NOT_FOUND`, `ERR_SVC_KERNEL_METHOD_NOT_ALLOWED`,
 * checked once, here).
 *
 * @example
 * const routing = expressRouting({ notFound: notFoundError, methodNotAllowed: methodNotAllowedError });
 * const app = Fastify({ ...routing.serverOptions });
 * await app.register(errorPlugin);
 * await app.register(routing.plugin);
 * app.get("/things/:id", async (request) => things.get((request.params as { id: string }).id));
 * // DELETE /things/7 → 405, Allow: GET, HEAD, OPTIONS; OPTIONS /things/7 → 204; GET /things/ → 404
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6
 * @see https://expressjs.com/en/5x/api.html#router.route
 */
export function expressRouting(options?: ExpressRoutingOptions): ExpressRouting {
  const given = checkRoutingOptions(options);
  const refusals: Refusals = {
    notFound: given.notFound ?? (() => HttpError.notFound()),
    methodNotAllowed: given.methodNotAllowed ?? ((_target, allowed) => HttpError.methodNotAllowed(allowed)),
  };
  return {
    serverOptions: EXPRESS_SERVER_OPTIONS,
    plugin: appWide("@svc/kernel/express-routing", routingPlugin(refusals)),
    allowedMethods: (path, allow, routeOptions) => allowedMethodsRoute(refusals, path, allow, routeOptions),
  };
}
