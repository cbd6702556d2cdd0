import { exchangeOf } from "./exchange.js";
import type { HttpError } from "./http-error.js";
import { stringifyJson } from "./json.js";
import { checkOptionNames, refusedOption } from "./option-error.js";
import { releaseBody } from "./release.js";
import { checkRequestRule, type RequestRule, refuseRequest } from "./request-rule.js";
import {
  addVaryNames,
  type Body,
  type Fields,
  type FieldValue,
  isReply,
  type Reply,
  type ResponseValue,
  reply,
} from "./response.js";
import type {
  ApiVersion,
  Claim,
  Coder,
  CurrentState,
  Idempotency,
  PipelineRequest,
  Represented,
  Representer,
  Validators,
  VersionDecision,
  Versioner,
} from "./steps.js";
import { utf8Bytes } from "./utf8.js";

/**
 * The steps of a pipeline, each from the package that owns it. Every one is optional; the order
 * they run in is fixed (see {@link createPipeline}), whatever the order they are given in.
 */
export interface PipelineOptions {
  /** The API version of each request, decided before routing (`versions()` of `@svc/versioning`). */
  versioning?: Versioner | undefined;
  /**
   * Representations and their choice (`representations()` of `@svc/negotiate`).
   * @default JSON, whatever the request's `Accept` (RFC 9110 §12.5.1)
   */
  representations?: Representer | undefined;
  /** Content coding (`compression()` of `@svc/negotiate`). @default none (identity) */
  coding?: Coder | undefined;
  /** Validators, preconditions and cache policy (`validators()` of `@svc/conditional`). @default none */
  validators?: Validators | undefined;
}

/**
 * Options of one route's handler. What it takes of a request ({@link RequestRule}: `methods`,
 * `consumes`, `contentCodings`) is decided before its handler runs, so before any content the
 * handler would read: the 405 and 415 are the pipeline's rejections, as its 406 is.
 */
export interface RouteOptions extends RequestRule {
  /** Exactly-once execution per `Idempotency-Key` (`idempotency()` of `@svc/idempotency`). */
  idempotency?: Idempotency | undefined;
  /**
   * The media types a success of this route can be sent as, known before its handler runs: a
   * request that changes state none of them is acceptable to is refused with the 406 before its
   * handler (RFC 9110 §15.5.7), so nothing is written for a response the client refuses. `[]`: the
   * route answers without content (a 204), which no `Accept` refuses. Name a type here that only
   * some data can take (CSV for a collection) when this route's data always can.
   * @default the types of the representations that can represent any data
   */
  produces?: readonly string[] | undefined;
}

/** What the pipeline decided about a request before its handler ran. */
export interface Prepared {
  /** The versioning step's decision, when the pipeline has one. */
  readonly version: VersionDecision | undefined;
  /**
   * The refusal to answer instead of running the handler: the version's (404, 400, 406, 415), or
   * the coding's 406. The version's fields go on that response too.
   */
  readonly refusal: unknown;
}

/** What a handler learns beside its request. */
export interface HandlerContext {
  /** The request's API version, when the pipeline versions requests. */
  readonly version: ApiVersion | undefined;
  /** The key this execution claimed, when the route is idempotent and the request carried a key. */
  readonly claim: Claim | undefined;
}

/** A response the pipeline made, and the coding it still has to apply. */
interface Built {
  value: ResponseValue;
  coding: string;
}

const SAFE = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);
const NOT_PREPARED: Prepared = Object.freeze({ version: undefined, refusal: undefined });

/** RFC 9110 §15.3.5, §15.3.6, §15.4.5: no content. */
function noContent(status: number): boolean {
  return status === 204 || status === 205 || status === 304;
}

function isSuccessful(status: number): boolean {
  return status >= 200 && status < 300;
}

function lowerCased(headers: Readonly<Record<string, FieldValue>>): Fields {
  const fields: Fields = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value !== undefined) fields[name.toLowerCase()] = value;
  }
  return fields;
}

function isStream(body: unknown): body is NodeJS.ReadableStream {
  return typeof (body as NodeJS.ReadableStream | null)?.pipe === "function";
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === "function";
}

/** The chosen representation's content and metadata on the response value. */
function represented(value: ResponseValue, chosen: Represented): ResponseValue {
  value.fields["content-type"] = chosen.contentType;
  if (chosen.language !== undefined) value.fields["content-language"] = chosen.language;
  if (chosen.fields !== undefined) Object.assign(value.fields, lowerCased(chosen.fields));
  addVaryNames(value.vary, chosen.vary);
  value.body = chosen.body;
  return value;
}

/** Text as UTF-8 bytes; bytes as they are. */
function bytesOf(body: string | Uint8Array): Uint8Array {
  return typeof body === "string" ? utf8Bytes(body) : body;
}

/**
 * The default representation step: JSON (RFC 8259) whatever `Accept` says. RFC 9110 §12.5.1: a
 * server may "disregard the header field by treating the response as if it is not subject to
 * content negotiation for that request header", so the response does not vary on it.
 */
const JSON_ONLY: Representer = {
  preflight() {},
  represent(_request, data) {
    return json(data);
  },
  async *variants(_request, data) {
    yield json(data);
  },
};

function json(data: unknown): Represented {
  return {
    contentType: "application/json",
    language: undefined,
    body: utf8Bytes(stringifyJson(data)),
    vary: [],
  };
}

/**
 * `Last-Modified` without a validators step: the date as an HTTP-date, never later than now (RFC
 * 9110 §8.8.2.1: an origin server "MUST NOT send a Last-Modified date that is later than the
 * server's time of message origination").
 */
function plainLastModified(value: ResponseValue, date: Date | undefined): void {
  if (date === undefined || Number.isNaN(date.getTime())) return;
  const now = Date.now();
  value.fields["last-modified"] = (date.getTime() > now ? new Date(now) : date).toUTCString();
}

/**
 * A response pipeline: one place, in one order, where a handler's result becomes a status,
 * fields and bytes. Framework-free: the adapters (`pipeline.node()`, `pipeline.express()`) give it
 * header strings and plain values and write the {@link ResponseValue} it returns.
 */
export class Pipeline {
  readonly #versioning: Versioner | undefined;
  readonly #representer: Representer;
  readonly #coder: Coder | undefined;
  readonly #validators: Validators | undefined;

  constructor(options: PipelineOptions) {
    this.#versioning = options.versioning;
    this.#representer = options.representations ?? JSON_ONLY;
    this.#coder = options.coding;
    this.#validators = options.validators;
  }

  /** Whether this pipeline decides versions before routing (its adapter must then run in front of the routes). */
  get versions(): boolean {
    return this.#versioning !== undefined;
  }

  /**
   * What is decided before routing: the version, and whether any content coding is acceptable. A
   * refusal is returned, not thrown, beside the version's fields, which every response carries,
   * the refusal's too. What the route's response can be is known only once it is routed: the 406
   * of a write is decided by {@link Pipeline.run}, before its handler.
   */
  prepare(request: PipelineRequest, target: string): Prepared {
    const version = this.#versioning?.resolve(request, target);
    // The decision, for what reads it after routing on any framework (`versioned()`).
    if (version !== undefined && typeof request.native === "object" && request.native !== null)
      exchangeOf(request.native).version = version;
    if (version?.error !== undefined) return { version, refusal: version.error };
    try {
      this.#coder?.preflight(request);
    } catch (refusal) {
      return { version, refusal };
    }
    return version === undefined ? NOT_PREPARED : { version, refusal: undefined };
  }

  /**
   * Runs `handler` for `request` and makes its result the response: first the 405 or 415 when the
   * route takes no such method or content ({@link RequestRule}); for a request that changes
   * state, the 406 when none of the types the route `produces` is acceptable (before a key
   * is claimed or anything written); a replay when the route is
   * idempotent and the key's response is recorded; else the handler's result represented,
   * validated, checked against the preconditions, recorded for the key, and coded. Rejects with
   * the `HttpError` to answer (a 304 is a response value, a 412 or 406 an error), or the
   * handler's own error.
   */
  async run(
    request: PipelineRequest,
    prepared: Prepared,
    handler: (context: HandlerContext) => unknown,
    route?: RouteOptions,
  ): Promise<ResponseValue> {
    // Each `await` is a turn of the microtask queue: a route without idempotency, a representation
    // serialised synchronously and a response left uncoded take none beyond the handler's.
    // RFC 9110 §15.5.6 and §15.5.16: a method or content the route does not take is refused before
    // anything reads the content or decides the answer's representation.
    if (
      route !== undefined &&
      (route.methods !== undefined || route.consumes !== undefined || route.contentCodings !== undefined)
    ) {
      checkRequestRule(route);
      const headers = request.view.headers;
      const refusal = refuseRequest(
        {
          method: methodOf(request),
          contentType: headers["content-type"],
          contentEncoding: headers["content-encoding"],
        },
        route,
      );
      if (refusal !== undefined) throw refusal;
    }
    // RFC 9110 §15.5.7 for what this route can answer, not for everything the pipeline offers: a
    // write refused only after its handler ran would have changed state for a response never sent.
    this.#representer.preflight(
      request,
      prepared.version?.label,
      !SAFE.has(methodOf(request)),
      route?.produces,
    );
    const idempotency = route?.idempotency;
    const started = idempotency === undefined ? undefined : await idempotency.begin(request);
    if (started?.replay !== undefined) return this.code(request, this.replayed(request, started.replay));
    const claim = started as Claim | undefined;
    let built: Built;
    try {
      const result = await handler({ version: prepared.version?.version, claim });
      const building = this.build(request, prepared, result);
      built = isThenable(building) ? await building : building;
    } catch (err) {
      const committed = claim === undefined ? undefined : await claim.release(err);
      if (committed?.replay !== undefined)
        return this.code(request, this.replayed(request, committed.replay));
      throw err;
    }
    if (claim !== undefined) await claim.complete(built.value);
    return this.code(request, built);
  }

  /**
   * The response for a handler's `result` (a {@link Reply}, or data to represent) without running
   * a handler or an idempotency step: represented, validated, checked, coded.
   */
  async respond(request: PipelineRequest, prepared: Prepared, result: unknown): Promise<ResponseValue> {
    return this.code(request, await this.build(request, prepared, result));
  }

  /**
   * RFC 9110 §13.2.2 before a write, on the resource's current state: the tag of each of its
   * representations is made the way a GET's would be (the same bytes, the same version label),
   * only until one matches the request's `If-Match` / `If-None-Match`. Resolves to go on; rejects
   * with the 412. `current` undefined: the resource does not exist, and unless the write
   * `creates` it, its response is the handler's 404, so the preconditions are ignored (§13.2.1).
   */
  async checkWrite(
    request: PipelineRequest,
    prepared: Prepared,
    current: { data: unknown; lastModified?: Date | undefined } | undefined,
    creates = false,
  ): Promise<void> {
    if (this.#validators === undefined) return;
    const state: CurrentState | undefined =
      current === undefined
        ? undefined
        : {
            variants: this.#representer.variants(request, current.data, {
              label: prepared.version?.label,
              fallback: false,
              reply: reply(current.data),
            }),
            lastModified: current.lastModified,
          };
    await this.#validators.beforeWrite(request, state, creates);
  }

  /** The handler's result as a response value, up to (not including) its content coding. */
  private build(request: PipelineRequest, prepared: Prepared, result: unknown): Built | Promise<Built> {
    const r: Reply = isReply(result) ? result : result === undefined ? reply.empty() : reply(result);
    const value: ResponseValue = {
      status: r.status,
      fields: lowerCased(r.headers),
      vary: [],
      body: undefined,
    };
    const label = prepared.version?.label;
    if (noContent(r.status)) {
      // RFC 9110 §8.6: no Content-Length in a 204 (nor representation metadata for no content).
      value.fields["content-type"] = null;
      value.fields["content-language"] = null;
      value.fields["content-length"] = null;
    } else if (r.kind === "data") {
      const chosen = this.#representer.represent(request, r.data, {
        label,
        fallback: !SAFE.has(methodOf(request)),
        reply: r,
      });
      if (isThenable(chosen)) {
        return Promise.resolve(chosen).then((later) => this.validated(request, r, represented(value, later)));
      }
      represented(value, chosen);
    } else if (r.kind === "bytes" && r.body !== undefined) {
      value.body = isStream(r.body) ? r.body : bytesOf(r.body);
    }
    return this.validated(request, r, value);
  }

  /** A response value, represented, through the coding decision, validators and preconditions. */
  private validated(request: PipelineRequest, r: Reply, value: ResponseValue): Built {
    const length = value.body === undefined || isStream(value.body) ? undefined : value.body.byteLength;
    const coding = this.#coder?.choose(request, value, length) ?? "identity";
    const validators = this.#validators;
    if (validators === undefined) {
      plainLastModified(value, r.lastModified);
      return { value, coding };
    }
    if (isSuccessful(value.status)) validators.validate(request, value, coding, r.lastModified);
    else {
      plainLastModified(value, r.lastModified);
      validators.settle?.(request, value, coding);
    }
    const method = methodOf(request);
    const safe = method === "GET" || method === "HEAD";
    if (safe && isSuccessful(value.status)) {
      const outcome = validators.evaluate(request, value);
      if (outcome === 412) {
        // The 412 is written in the response's place: a stream it had will not be read.
        release(value.body);
        throw validators.failed(value);
      }
      if (outcome === 304) {
        validators.notModified(request, value);
        release(value.body);
        value.body = undefined;
        return { value, coding: "identity" };
      }
    }
    return { value, coding };
  }

  /** A recorded response, for this request's coding. */
  private replayed(request: PipelineRequest, recorded: ResponseValue): Built {
    const value: ResponseValue = {
      status: recorded.status,
      fields: { ...recorded.fields },
      vary: [...recorded.vary],
      body: recorded.body,
    };
    const length = value.body === undefined || isStream(value.body) ? undefined : value.body.byteLength;
    return { value, coding: this.#coder?.choose(request, value, length) ?? "identity" };
  }

  /** Applies the content coding decided for the response (a HEAD only gets its fields). */
  private code(request: PipelineRequest, { value, coding }: Built): ResponseValue | Promise<ResponseValue> {
    if (coding === "identity" || this.#coder === undefined || noContent(value.status)) return value;
    return this.coded(request, value, coding, this.#coder);
  }

  private async coded(
    request: PipelineRequest,
    value: ResponseValue,
    coding: string,
    coder: Coder,
  ): Promise<ResponseValue> {
    value.fields["content-encoding"] = coding;
    // RFC 9110 §8.6: the coded length is not the identity one; a coded body goes out chunked,
    // and a HEAD (§9.3.2: the GET's fields) may leave the length out.
    value.fields["content-length"] = null;
    if (methodOf(request) === "HEAD") {
      release(value.body);
      value.body = undefined;
    } else if (value.body !== undefined) {
      value.body = await coder.encode(coding, value.body);
    }
    return value;
  }
}

/** The method the steps compare (`GET` for a view that names none, as `node:http` never leaves it). */
function methodOf(request: PipelineRequest): string {
  return request.view.method ?? "GET";
}

/** A stream that will not be read (a 304 in place of a file, a HEAD) is released. */
function release(body: Body | undefined): void {
  if (body !== undefined && isStream(body)) releaseBody(body);
}

const PIPELINE_OPTIONS = ["versioning", "representations", "coding", "validators"];

/**
 * A response pipeline over the steps given. Whatever they are, a handler's result goes through
 * them in one fixed order, so that no step sees another's work half done:
 *
 * 1. before routing, the version (`versioning`); before the handler, the 405 and 415 when the
 *    route takes no such method or content (`methods`, `consumes`, `contentCodings`), then, for a
 *    write, the 406 when none of the types its route produces is acceptable;
 * 2. the representation chosen (media type, language, version label) and serialised once;
 * 3. its content coding decided (a coded response is another representation, RFC 9110 §8.8.3);
 * 4. its validators computed on those bytes and the default cache policy applied (`validators`);
 * 5. the request's preconditions evaluated on them (RFC 9110 §13.2.2): 304 or 412 in its place;
 * 6. for an idempotent route, the response recorded for the key (before coding);
 * 7. the coding applied, then one write.
 *
 * @example
 * const svc = createPipeline({ representations: representations([json, xml]), validators: validators() });
 * app.get("/employees/:id", svc.express(async (req) => employees.get(req.params.id)));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
export function createPipeline(options: PipelineOptions = {}): Pipeline {
  if (typeof options !== "object" || options === null) {
    throw refusedOption("kernel", "options", options, "an object of steps");
  }
  checkOptionNames("kernel", options, PIPELINE_OPTIONS, "createPipeline");
  const shapes: Record<string, readonly string[]> = {
    versioning: ["resolve"],
    representations: ["preflight", "represent", "variants"],
    coding: ["preflight", "choose", "encode"],
    validators: ["validate", "evaluate", "notModified", "failed", "beforeWrite"],
  };
  for (const name of PIPELINE_OPTIONS) {
    const step = (options as Record<string, unknown>)[name];
    if (step === undefined) continue;
    const methods = shapes[name] as readonly string[];
    if (
      typeof step !== "object" ||
      step === null ||
      !methods.every((m) => typeof (step as Record<string, unknown>)[m] === "function")
    ) {
      throw refusedOption("kernel", name, step, `a step with ${methods.join(", ")}`, "createPipeline");
    }
  }
  return new Pipeline(options);
}

export type { HttpError };
