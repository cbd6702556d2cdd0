import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type Exchange,
  exchangeOf,
  type Gate,
  type HandlerContext,
  headlessMiddleware,
  isAnswer,
  type Pipeline,
  type PipelineRequest,
  type Prepared,
  type RouteOptions,
} from "@svc/kernel";
import type { NextFunction } from "./async-route.js";
import type { TrustHop } from "./forwarded.js";
import { pipelineRequest, setPassage, writeResponse } from "./node.js";
import { checkBooleanOption, checkOptionNames } from "./option-error.js";
import { writeRequestProperty } from "./request-property.js";
import { checkRequestRule } from "./request-rule.js";
import { type RequestSlot, requestSlot } from "./request-slot.js";
import type { ApiVersion } from "./steps.js";
import { valueFor } from "./value-for.js";
import { writeValue } from "./write.js";

export { asyncRoute, type NextFunction } from "./async-route.js";
export { type ChainedHandler, chain } from "./chain.js";

declare global {
  // Express declares its request type in this global namespace; these are what `prepare` writes
  // under `expressAdapter(pipeline, { requestProperties: true })`, typed in every Express handler
  // without this package depending on @types/express.
  namespace Express {
    interface Request {
      /**
       * The API version the pipeline's versioning step resolved, written under the adapter's
       * `requestProperties` compatibility option; read `requestState(req).version` of `@svc/kernel`.
       */
      apiVersion?: ApiVersion | undefined;
      /**
       * The `/v<N>` prefix stripped from the path, or `""`, written under the adapter's
       * `requestProperties` compatibility option; read `routeOf(req).versionPrefix` of `@svc/kernel`.
       */
      apiVersionPrefix?: string | undefined;
    }
  }
}

/** The parts of an Express (4 or 5) request the adapter reads and sets. */
export interface PipelineIncoming extends IncomingMessage {
  /** Express: the whole request-target, kept when a prefix is stripped for routing. */
  originalUrl?: string;
  /** Express: the path as routed. */
  path?: string;
  /**
   * The API version the pipeline's versioning step resolved, written under
   * {@link ExpressAdapterOptions.requestProperties}; `requestState(req).version` reads it always.
   */
  apiVersion?: ApiVersion | undefined;
  /**
   * The `/v<N>` prefix stripped from the path, or `""`, written under
   * {@link ExpressAdapterOptions.requestProperties}; `routeOf(req).versionPrefix` reads it always.
   */
  apiVersionPrefix?: string | undefined;
  /** A body parser's result, read by idempotency's fingerprint. */
  body?: unknown;
}

/** The parts of an Express request {@link expressView} reads: its app's settings. */
export interface ExpressSettingsRequest extends IncomingMessage {
  /** Express's application (`req.app`), and its settings (a mounted app's inherit its parent's). */
  app?: { get(setting: string): unknown; readonly settings?: object } | undefined;
}

/**
 * An Express request as the @svc cores read it: the request itself, a `RequestView` (its
 * `originalUrl` the whole target as received), recorded in its exchange (`Exchange.view`) with
 * what the Express app it arrived on believes and routes by, for the packages' cores, which read
 * the exchange and never Express's app: the compiled `trust proxy` setting (`false`: no proxy
 * trusted, Express's default) and `case sensitive routing` / `strict routing`. Every @svc Express middleware calls it; an application's own code that hands
 * `req` to a core (`requestFacts(req)` of `@svc/kernel`) calls it first. Once per request: a
 * second call reads what the first recorded.
 *
 * @example
 * app.get("/where", (req, res) => res.json({ client: requestFacts(expressView(req)).client }));
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
 */
export function expressView<Req extends ExpressSettingsRequest>(req: Req): Req {
  const exchange = exchangeOf(req);
  if (exchange.routing !== undefined) return req;
  if (exchange.view === undefined) exchange.view = req;
  const app = req.app;
  if (typeof app?.get !== "function") {
    exchange.routing = EXPRESS_DEFAULT_ROUTING;
    if (exchange.trust === undefined) exchange.trust = false;
    return req;
  }
  // `app.get(name)` is `app.settings[name]` on Express 4 and 5 (a mounted app's settings inherit
  // its parent's): read without the call, which counts its arguments, each by its own name.
  const settings = app.settings as ExpressSettings | null | undefined;
  const read: ExpressSettings =
    typeof settings === "object" && settings !== null
      ? settings
      : {
          "trust proxy fn": app.get("trust proxy fn"),
          "case sensitive routing": app.get("case sensitive routing"),
          "strict routing": app.get("strict routing"),
        };
  if (exchange.trust === undefined) {
    const trust = read["trust proxy fn"];
    exchange.trust = typeof trust === "function" ? (trust as TrustHop) : false;
  }
  const caseSensitive = read["case sensitive routing"] === true;
  const strict = read["strict routing"] === true;
  exchange.routing = caseSensitive || strict ? { caseSensitive, strict } : EXPRESS_DEFAULT_ROUTING;
  return req;
}

/** The Express settings {@link expressView} reads. */
interface ExpressSettings {
  readonly "trust proxy fn"?: unknown;
  readonly "case sensitive routing"?: unknown;
  readonly "strict routing"?: unknown;
}

const EXPRESS_DEFAULT_ROUTING = Object.freeze({ caseSensitive: false, strict: false });

/**
 * A request's preparation (`pipeline.prepare()`, in front of routing), read by the routes'
 * handlers (`pipeline.express(handler)`) of the same pipeline, whichever of its adapters they come
 * from: the first pipeline's is kept in the request's exchange, and the slot, by pipeline, keeps
 * that of a request another pipeline prepared first. Kept with the request ({@link requestSlot}),
 * gone with it: no table of requests to look up and keep.
 */
const slots = new WeakMap<Pipeline, RequestSlot<Prepared>>();

/**
 * Prepares `req` (version, preflight), setting the version's fields on the response, the
 * refusal's included; the refusal is in the result. The decision is in the request's exchange;
 * `properties` also writes it on `req` (`req.apiVersion`, `req.apiVersionPrefix`).
 */
function prepareRequest(
  pipeline: Pipeline,
  req: PipelineIncoming,
  res: ServerResponse,
  properties: boolean,
): Prepared {
  expressView(req);
  const target = req.url ?? "/";
  const result = pipeline.prepare(pipelineRequest(req, res), target);
  const version = result.version;
  if (version !== undefined) {
    setPassage(res, version);
    if (version.target !== target) req.url = version.target;
    if (properties) {
      writeRequestProperty(req, "apiVersion", version.version);
      writeRequestProperty(req, "apiVersionPrefix", version.prefix);
    }
  }
  return result;
}

/** The options of {@link expressAdapter}. */
export interface ExpressAdapterOptions {
  /**
   * A compatibility option for applications written against 0.1 and 0.2: also write the version
   * `prepare` decided on Express's request, as `req.apiVersion` and `req.apiVersionPrefix`.
   * Handlers read it through `requestState(req).version` and `routeOf(req).versionPrefix` of
   * `@svc/kernel`, on every framework, and no package reads these properties.
   * @default false
   */
  requestProperties?: boolean;
}

const EXPRESS_ADAPTER_OPTIONS = Object.keys({ requestProperties: 0 } satisfies Record<
  keyof ExpressAdapterOptions,
  0
>);

/** Whether `options` asks for the request properties; a refused option throws its coded `TypeError`. */
function requestPropertiesOf(options: ExpressAdapterOptions | undefined): boolean {
  checkOptionNames("kernel", options, EXPRESS_ADAPTER_OPTIONS, "expressAdapter");
  const properties = options?.requestProperties ?? false;
  checkBooleanOption("kernel", "requestProperties", properties, "expressAdapter: requestProperties");
  return properties;
}

/** What an Express handler under the pipeline is given beside its request. */
export type ExpressHandler<Req extends IncomingMessage = IncomingMessage> = (
  req: Req,
  context: HandlerContext,
) => unknown;

/** A pipeline's Express adapter (Express 4 and 5): see {@link expressAdapter}. */
export interface ExpressPipeline {
  /**
   * The middleware for what is decided before routing: the request's version (a `/v<N>` prefix
   * stripped, so that routes are mounted once; `requestState(req).version`), and the 406 when no content
   * coding is acceptable. Mount it in front of the
   * routes; it is required when the pipeline versions requests by path (a handler alone reads a
   * version from headers, not from a path Express has already routed). Mounted more than once
   * (app-wide and on a router), it decides once: the first mount's decision stands.
   */
  readonly prepare: (req: IncomingMessage, res: ServerResponse, next: NextFunction) => void;
  /**
   * A route handler that runs `handler` through the pipeline: its result, a `Reply` or data, is
   * represented, validated, checked, coded and written in one write; its error (thrown or
   * rejected) goes to `next(err)`, so an async handler is safe under Express 4 too.
   */
  handle<Req extends IncomingMessage = IncomingMessage>(
    handler: ExpressHandler<Req>,
    route?: RouteOptions,
  ): (req: Req, res: ServerResponse, next: NextFunction) => void;
  /**
   * RFC 9110 §13.2.2 before a write, inside its handler, on the resource's current data (as its GET
   * would represent it: the tags compared are the ones a GET sends). `undefined`: the resource does
   * not exist; then, unless `creates`, the preconditions are ignored and the handler's 404 answers
   * (§13.2.1). Rejects with the 412.
   */
  preconditions(
    req: IncomingMessage,
    current: { data: unknown; lastModified?: Date | undefined } | undefined,
    creates?: boolean,
  ): Promise<void>;
}

/**
 * The Express adapter of a pipeline: its `prepare` middleware, its route `handle`r and its write
 * `preconditions`, all reading the same per-request decisions. The version decided is read with
 * `requestState(req).version` of `@svc/kernel`; `{ requestProperties: true }` also writes it on
 * `req`, as 0.1 and 0.2 did.
 *
 * @example
 * const svc = expressAdapter(createPipeline({ representations: representations([json, xml]) }));
 * app.use(svc.prepare);
 * app.get("/employees/:id", svc.handle(async (req) => employees.get(req.params.id)));
 */
export function expressAdapter(pipeline: Pipeline, options?: ExpressAdapterOptions): ExpressPipeline {
  const properties = requestPropertiesOf(options);
  const slot = valueFor(slots, pipeline, () => requestSlot<Prepared>());
  /**
   * The request's preparation by this pipeline, if any: in its exchange (one field read), or, for
   * a request another pipeline prepared first, in this pipeline's slot.
   */
  const preparedIn = (exchange: Exchange, req: IncomingMessage): Prepared | undefined => {
    const by = exchange.preparedBy;
    if (by === pipeline) return exchange.prepared as Prepared;
    return by === undefined ? undefined : slot.get(req);
  };
  const preparedOf = (req: IncomingMessage): Prepared | undefined => preparedIn(exchangeOf(req), req);
  const readyFor = (req: IncomingMessage, res: ServerResponse): Prepared => {
    const exchange = exchangeOf(req);
    const ready = preparedIn(exchange, req);
    if (ready !== undefined) return ready;
    const prepared = prepareRequest(pipeline, req as PipelineIncoming, res, properties);
    if (exchange.preparedBy === undefined) {
      exchange.preparedBy = pipeline;
      exchange.prepared = prepared;
    } else slot.set(req, prepared);
    return prepared;
  };
  return {
    prepare: headlessMiddleware(function svcPrepare(req, res, next) {
      // Mounted twice (app-wide and on a router), the second would read the path the first
      // stripped of its `/v<N>` and decide the version again: the first decision stands.
      const ready = readyFor(req, res);
      if (ready.refusal !== undefined) next(ready.refusal);
      else next();
    }),
    handle<Req extends IncomingMessage>(handler: ExpressHandler<Req>, route?: RouteOptions) {
      if (route !== undefined) checkRequestRule(route);
      return function svcHandler(req: Req, res: ServerResponse, next: NextFunction): void {
        const ready = readyFor(req, res);
        if (ready.refusal !== undefined) {
          next(ready.refusal);
          return;
        }
        const request: PipelineRequest = pipelineRequest(req, res, (req as PipelineIncoming).path);
        // No promise chained beyond what the work needs: the write of whole bytes is done at once.
        pipeline
          .run(request, ready, (context) => handler(req, context), route)
          .then((value) => {
            try {
              writeValue(res, value, (req.method ?? "GET").toUpperCase())?.catch(next);
            } catch (err) {
              next(err);
            }
          }, next);
      };
    },
    preconditions(req, current, creates = false) {
      const ready = preparedOf(req) ?? NOT_PREPARED;
      return pipeline.checkWrite(
        pipelineRequest(req, undefined, (req as PipelineIncoming).path),
        ready,
        current,
        creates,
      );
    },
  };
}

const NOT_PREPARED: Prepared = Object.freeze({ version: undefined, refusal: undefined });

/**
 * A {@link Gate} as Express (4 and 5) middleware: a passage's fields are set on the response and
 * the request goes on (`next()`); an answer is written; a refusal (thrown or rejected) goes to
 * `next(err)`, for the app's error handler (`errorHandler()` of `@svc/errors`).
 *
 * @example app.use(expressGate((view) => (view.headers["x-block"] ? { answer: blocked } : undefined)));
 */
export function expressGate(
  gate: Gate<IncomingMessage>,
): (req: IncomingMessage, res: ServerResponse, next: NextFunction) => void {
  // A gate decides; this writes its answer through `writeResponse` only: a `chain` may hold its `Vary`.
  return headlessMiddleware(function svcGate(
    req: IncomingMessage,
    res: ServerResponse,
    next: NextFunction,
  ): void {
    let pending: ReturnType<Gate<IncomingMessage>>;
    try {
      pending = gate(expressView(req), req);
    } catch (err) {
      next(err);
      return;
    }
    Promise.resolve(pending)
      .then((outcome) => {
        if (outcome === undefined || outcome === null) return next();
        if (isAnswer(outcome)) return writeResponse(res, outcome.answer, (req.method ?? "GET").toUpperCase());
        setPassage(res, outcome);
        return next();
      })
      .catch(next);
  });
}
