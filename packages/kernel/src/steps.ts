import type { RequestView } from "./gate.js";
import type { HttpError } from "./http-error.js";
import type { Body, Fields, FieldValue, Reply, ResponseValue } from "./response.js";

/**
 * What every step of the pipeline reads of a request: its {@link RequestView} (method, target,
 * fields, connection), and what the pipeline adds beside it: the path as routed, the response
 * fields set in front, and the framework's request, whose exchange (`exchangeOf(native)`) holds
 * what steps in front recorded (the parsed body, the principal). No framework object is read
 * through it but by the callbacks an application gives a step. The adapters build it once.
 */
export interface PipelineRequest {
  /** The request as its adapter's view read it. */
  readonly view: RequestView;
  /** The request's path, as routed (without a version prefix the versioning step stripped). */
  readonly path: string;
  /**
   * A response field set in front of the pipeline (by middleware: `Cache-Control`, `Set-Cookie`,
   * `Expires`), which a step's decision depends on; `undefined` when none is set.
   */
  readonly preset?: ((name: string) => FieldValue | undefined) | undefined;
  /**
   * The framework's own request object: the key of the request's exchange, and what the callbacks
   * an application gives a step are handed.
   */
  readonly native?: unknown;
}

/** One representation of a response's data, chosen and serialised. */
export interface Represented {
  /** The `Content-Type` it is sent with (`application/json`, `text/csv; charset=utf-8`). */
  readonly contentType: string;
  /** Its `Content-Language`, when the pipeline offers languages. */
  readonly language: string | undefined;
  /** Its identity bytes, or a stream of them. */
  readonly body: Body;
  /** The request fields the choice depended on (`Accept`, `Accept-Language`). */
  readonly vary: readonly string[];
  /**
   * Response fields that belong to this representation only, such as the `Content-Disposition`
   * of a PDF (RFC 6266) that its JSON alternative must not carry.
   */
  readonly fields?: Readonly<Record<string, FieldValue>> | undefined;
}

/** What the representation step is told about one response. */
export interface Choice {
  /** The media type the versioning step labels this request's JSON with (`application/vnd.svc.v2+json`). */
  readonly label: string | undefined;
  /**
   * The request's method changed state before the response was chosen (POST, PUT, PATCH, DELETE):
   * instead of a 406 after the side effect, `Accept` is disregarded and the default sent (RFC 9110
   * §12.5.1); a 406 for such a request is answered before its handler runs ({@link Representer.preflight}).
   */
  readonly fallback: boolean;
  /** The handler's reply: its status, and which representations it allows. */
  readonly reply: Reply;
}

/**
 * Chooses and serialises representations (RFC 9110 §12): `@svc/negotiate`'s `representations()`.
 * The pipeline's default sends JSON whatever `Accept` says (RFC 9110 §12.5.1 lets a server
 * disregard it).
 */
export interface Representer {
  /**
   * Before the handler runs, once routed: for a request that `changesState`, throws the 406 when
   * none of the types its route `produces` is acceptable (by default the types of the
   * representations that can represent any data), so that no write runs for a response refused
   * after it. `produces` empty: the route answers without content, which nothing refuses.
   */
  preflight(
    request: PipelineRequest,
    label: string | undefined,
    changesState: boolean,
    produces?: readonly string[] | undefined,
  ): void;
  /** The representation of `data` the client prefers, serialised once; throws the 406 when none fits. */
  represent(request: PipelineRequest, data: unknown, choice: Choice): Represented | Promise<Represented>;
  /**
   * Each representation of `data` this request could be answered with, in server preference, made
   * only as they are read: what a write's `If-Match` is compared with (RFC 9110 §13.1.1).
   */
  variants(request: PipelineRequest, data: unknown, choice: Choice): AsyncIterable<Represented>;
}

/** Content coding (RFC 9110 §8.4): `@svc/negotiate`'s `compression()`. */
export interface Coder {
  /** Before the handler runs: throws the 406 when the request refuses every coding, identity included (§12.5.3). */
  preflight(request: PipelineRequest): void;
  /**
   * The coding `value` gets for this request (`identity` for none), decided before its validators
   * (a coded response is another representation, RFC 9110 §8.8.3); adds `Accept-Encoding` to its
   * `vary` when the answer depended on it. `length` is undefined for a stream.
   */
  choose(request: PipelineRequest, value: ResponseValue, length: number | undefined): string;
  /** `body` in `coding`. */
  encode(coding: string, body: Body): Body | Promise<Body>;
}

/** The outcome of RFC 9110 §13.2.2 for a response: send it, or a 304 / 412 in its place. */
export type PreconditionOutcome = "proceed" | 304 | 412;

/** A resource's current state, as a write's preconditions are compared with it. */
export interface CurrentState {
  /** Each representation the client could hold, made as they are read (the default first). */
  readonly variants: AsyncIterable<Represented>;
  /** When the resource last changed. */
  readonly lastModified: Date | undefined;
}

/** Validators, preconditions and cache policy (RFC 9110 §8.8, §13; RFC 9111): `@svc/conditional`'s `validators()`. */
export interface Validators {
  /** A 2xx's validators (`ETag` of its bytes, `Last-Modified`) and default cache policy, its coding decided. */
  validate(
    request: PipelineRequest,
    value: ResponseValue,
    coding: string,
    lastModified: Date | undefined,
  ): void;
  /**
   * The fields of a response that is no 2xx, which gets no validators of its own: a reply's own
   * `ETag` checked, a reply's own 304 made the 304 of RFC 9110 §15.4.5. Optional.
   */
  settle?(request: PipelineRequest, value: ResponseValue, coding: string): void;
  /** RFC 9110 §13.2.2 for this 2xx to a GET or HEAD, on its validators. */
  evaluate(request: PipelineRequest, value: ResponseValue): PreconditionOutcome;
  /** Makes `value` the 304 of RFC 9110 §15.4.5. */
  notModified(request: PipelineRequest, value: ResponseValue): void;
  /** The 412 for `value` (RFC 9110 §15.5.13), carrying its validators. */
  failed(value: ResponseValue): HttpError;
  /**
   * RFC 9110 §13.2.2 before a write, on the current state (`undefined`: the resource does not
   * exist). Resolves to go on, or rejects with the 412. `creates`: the write would create an absent
   * resource (a 2xx); otherwise its response would be a 404 and the preconditions are ignored (§13.2.1).
   */
  beforeWrite(request: PipelineRequest, current: CurrentState | undefined, creates: boolean): Promise<void>;
}

/**
 * An API version as the versioning step decides it: a `number` for integer versions (`2`), a
 * `string` for the other schemes (`"1.2"`, `"2026-11-25"`). Integer versions stay numbers, so
 * code comparing `version === 2` or keying handlers `{ 1: h1, 2: h2 }` keeps working.
 */
export type ApiVersion = number | string;

/** The version a request asked for, decided before routing: `@svc/versioning`'s `versions()`. */
export interface VersionDecision {
  /** The request-target to route (a `/v<N>` prefix stripped). */
  readonly target: string;
  /** The version, or undefined on a version-neutral path that named none. */
  readonly version: ApiVersion | undefined;
  /** The `/v<N>` prefix stripped from the path, or `""`. */
  readonly prefix: string;
  /** The vendor media type the version's JSON is labelled with, when the media type strategy chose it. */
  readonly label: string | undefined;
  /** Fields every response to the request carries (`API-Supported-Versions`, `Deprecation`, `Sunset`, `Link`). */
  readonly fields: Fields;
  /** The request fields the decision depended on. */
  readonly vary: readonly string[];
  /** The refusal (404, 400, 406, 415), when the request names no version the API has. */
  readonly error: HttpError | undefined;
}

/** Decides a request's version before routing. */
export interface Versioner {
  resolve(request: PipelineRequest, target: string): VersionDecision;
}

/** A response recorded for a key, to replay. */
export interface Replay {
  readonly replay: ResponseValue;
}

/** A key claimed for one execution of the handler. */
export interface Claim {
  readonly replay?: undefined;
  /** Records the response the request ended with (before content coding), for retries to replay. */
  complete(value: ResponseValue): Promise<void>;
  /**
   * The handler failed with no response to record: the key is free for a retry. Resolves to a
   * {@link Replay} when the key's outcome had already committed with the handler's effect (a
   * failure after the commit): that response answers the request instead of the error, as a
   * retry's replay would, and the key is not freed.
   */
  release(error: unknown): Promise<Replay | undefined>;
}

/** Exactly-once execution for a request key: `@svc/idempotency`'s `idempotency()`. */
export interface Idempotency {
  /**
   * Before the handler: the response to replay, a claim to complete, or `undefined` (no key, or
   * a method it does not cover). Rejects with an `HttpError` (400, 409, 422) the client is sent.
   */
  begin(request: PipelineRequest): Promise<Replay | Claim | undefined>;
}
