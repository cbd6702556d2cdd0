import { type HttpError, isChallengeList, type UnreadBodyBounds, type UnreadBodyOptions } from "@svc/kernel";
import { checkOptionNames, type OptionError, refusedOption, resolveUnreadBody } from "@svc/kernel/internal";
import type { DefaultErrorFormat } from "./error-format.js";
import type { Logger } from "./logger.js";
import { type ErrorRenderer, rendererList } from "./renderer.js";

/**
 * Turns an error the handlers do not know (a validation library's, a JWT library's, a database
 * driver's) into the `HttpError` it means, or returns `undefined` to leave it to the next mapper
 * and then to the built-in rules (a 500 for what none knows). Called synchronously, once per
 * failed request, with what was thrown when that is not an `HttpError`.
 *
 * @example
 * const conflict: ErrorMapper = (err) =>
 *   (err as { code?: unknown }).code === "23505" ? HttpError.conflict("It exists already", { cause: err }) : undefined;
 */
export type ErrorMapper = (err: unknown) => HttpError | undefined;

/** The part of a {@link Logger} the error handlers call: `error(obj, msg)`, and `info(obj, msg)` when it has one (4xx). */
export type ErrorLogger = Pick<Logger, "error" | "info">;

/**
 * The options every error adapter takes (`errorHandler`, `errorResponder`, `errorPlugin`,
 * `onError`, `withErrors`); `Args` are what its `correlationId` reads of the framework's request
 * (`(req, res)` on Express and `node:http`, `(request, reply)` on Fastify, `(request)` on Fetch).
 */
export interface ErrorOptions<Args extends unknown[] = unknown[]> {
  /**
   * Where 5xx exceptions are logged (`error`), once per failed request, with the correlation id;
   * and each 4xx with what was thrown (`info`, when the logger has it).
   * @default the request's own logger (pino-http's `req.log`, Fastify's `request.log`) when there is one, else one JSON line on stderr
   */
  logger?: ErrorLogger;
  /**
   * Reads the request's correlation id for the log line.
   * @default on Express `res.locals.correlationId`, else (every framework) the `X-Correlation-ID` request header
   */
  correlationId?: (...args: Args) => string | undefined;
  /**
   * Base URI for problem `type`s: an error with `code: "out_of_stock"` gets
   * `type: <base>out_of_stock`. Without it every problem is `about:blank` (RFC 9457 §4.2.1).
   * @default undefined
   */
  problemTypeBase?: string;
  /**
   * The clock, for tests. When it throws or returns no valid `Date`, the record carries the system
   * clock's time and the failure is logged.
   * @default () => new Date()
   */
  now?: () => Date;
  /**
   * The `WWW-Authenticate` challenge(s) a 401 gets when neither the error nor the response carries
   * one (RFC 9110 §15.5.2: the server MUST send at least one challenge), as one field value:
   * `'Bearer realm="api"'`, or a list, `'Bearer realm="api", Basic realm="api"'`. Checked at
   * construction against §11.6.1. Without it such a 401 goes out as it is, and the handler warns
   * once (`process.emitWarning`, code `SVC_ERRORS_401_WITHOUT_CHALLENGE`): no scheme is invented.
   * @default undefined
   */
  wwwAuthenticate?: string;
  /**
   * The bounds of the refused-body policy for an error answered before the request's content was
   * read whole (a 413, 415, 401 in front of a body): a remainder of at most `maxBytes` is read
   * and discarded within `timeoutMs` to keep the connection, a larger or chunked one closes it
   * (`Connection: close`). See `UnreadBodyOptions` of `@svc/kernel`.
   * @default { maxBytes: 65536, timeoutMs: 1000 }
   */
  unreadBody?: UnreadBodyOptions;
  /**
   * What an error is rendered as when the client's `Accept` does not choose (no `Accept`, `*\/*`,
   * equal q-values, nothing the handler produces): `"record"`, the error record as JSON, or
   * `"problem"`, RFC 9457 problem details as `application/problem+json` (and
   * `application/problem+xml` ranked before the XML record). A client that names a rendering
   * still gets it: `Accept: application/json` the record, `application/problem+json` the problem.
   * @default "record"
   * @see https://www.rfc-editor.org/rfc/rfc9457#section-3
   */
  defaultFormat?: DefaultErrorFormat;
  /**
   * One mapper, or a list tried in order, turning a thrown value that is not an `HttpError`
   * (a `ZodError`, jose's `JWTExpired`, a `pg` unique violation) into the `HttpError` it means,
   * before the built-in rules and their default 500. The first `HttpError` returned wins;
   * `undefined` passes. A mapper that throws or returns anything else gives a logged 500 record,
   * the original error as the `cause` of the logged failure.
   * @default none
   */
  mapError?: ErrorMapper | readonly ErrorMapper[];
  /**
   * One renderer, or a list tried in order, that renders the errors of the requests it answers in
   * a format of its own instead of the record: a SOAP endpoint's faults (`soapFaults` of
   * `@svc/soap-envelope`). The status, the error's fields, the log lines and the `svc:errors`
   * message stay this handler's. A renderer that throws or returns no rendering is logged, and the
   * request gets the record.
   * @default none
   */
  renderers?: ErrorRenderer | readonly ErrorRenderer[];
}

/**
 * {@link ErrorOptions} checked and resolved once, at construction, for an adapter and for
 * `errorValue`.
 * Made by {@link errorConfig}; it also holds whether a missing challenge was warned about.
 */
export interface ErrorConfig<Args extends unknown[] = unknown[]> extends ErrorValueConfig {
  /** The `logger` option; without it, the request's own logger, else `fallbackLogger`. */
  readonly logger: ErrorLogger | undefined;
  /** The `correlationId` option; without it, the adapter's default. */
  readonly correlationId: ((...args: Args) => string | undefined) | undefined;
  /** The `unreadBody` option, resolved. */
  readonly unreadBody: UnreadBodyBounds;
}

/** The part of an {@link ErrorConfig} `errorValue` reads: what decides the response. */
export interface ErrorValueConfig {
  readonly problemTypeBase: string | undefined;
  /** The `defaultFormat` option. */
  readonly defaultFormat?: DefaultErrorFormat;
  /** The `mapError` option as a list, in order (empty without it). */
  readonly mappers?: readonly ErrorMapper[];
  /** The `renderers` option as a list, in order (empty without it). */
  readonly renderers?: readonly ErrorRenderer[];
  readonly now: () => Date;
  readonly wwwAuthenticate: string | undefined;
  /** Warned once per configuration: see `wwwAuthenticate`. */
  readonly warned: { challenge: boolean; proxyChallenge: boolean };
}

function newDate(): Date {
  return new Date();
}

const ERROR_OPTIONS = [
  "logger",
  "correlationId",
  "problemTypeBase",
  "now",
  "wwwAuthenticate",
  "unreadBody",
  "defaultFormat",
  "mapError",
  "renderers",
];

const DEFAULT_FORMATS: readonly unknown[] = ["record", "problem"];

/** `mapError` as a list: one function, or a non-empty list of functions; `undefined` otherwise. */
function mapperList(mapError: unknown): readonly ErrorMapper[] | undefined {
  if (mapError === undefined) return [];
  if (typeof mapError === "function") return [mapError as ErrorMapper];
  if (!Array.isArray(mapError) || mapError.length === 0) return undefined;
  if (!mapError.every((m) => typeof m === "function")) return undefined;
  return Object.freeze([...(mapError as ErrorMapper[])]);
}

/**
 * The `TypeError` for the option `option` of the adapter `adapter` (code `ERR_SVC_ERRORS_<OPTION>`):
 * it got `given` and accepts `accepted`.
 */
export function refusedErrorOption(
  adapter: string,
  option: string,
  given: unknown,
  accepted: string,
): OptionError {
  return refusedOption("errors", option, given, accepted, `${adapter}: ${option}`);
}

/** Checks an adapter's `logger` option: an object with an `error(obj, msg)` method, or none. */
export function checkLogger(logger: unknown, adapter: string): void {
  if (logger !== undefined && typeof (logger as Partial<Logger> | null)?.error !== "function")
    throw refusedErrorOption(adapter, "logger", logger, "an object with an error(obj, msg) method");
}

/** Checks an adapter's `now` option: a function returning the current `Date`, or none. */
export function checkNow(now: unknown, adapter: string): void {
  if (now !== undefined && typeof now !== "function")
    throw refusedErrorOption(adapter, "now", now, "a function () => Date");
}

/**
 * Checks an error adapter's options once, at construction (a `TypeError` with code
 * `ERR_SVC_ERRORS_<OPTION>` naming what it got and what it accepts; an unknown name with a "did
 * you mean"), and resolves them for `errorValue`. `name` is the adapter's, for the message.
 *
 * @example const config = errorConfig({ problemTypeBase: "https://example.com/problems/" }, "myAdapter");
 * @see https://www.rfc-editor.org/rfc/rfc9457#section-3.1.1
 */
export function errorConfig<Args extends unknown[] = unknown[]>(
  options: ErrorOptions<Args> = {},
  name = "errorHandler",
): ErrorConfig<Args> {
  checkOptionNames("errors", options, ERROR_OPTIONS, name);
  const { logger, problemTypeBase, correlationId, now, wwwAuthenticate } = options;
  checkLogger(logger, name);
  if (
    problemTypeBase !== undefined &&
    (typeof problemTypeBase !== "string" || !URL.canParse(problemTypeBase))
  ) {
    throw refusedErrorOption(name, "problemTypeBase", problemTypeBase, "an absolute URI");
  }
  if (correlationId !== undefined && typeof correlationId !== "function") {
    throw refusedErrorOption(
      name,
      "correlationId",
      correlationId,
      "a function (req, res) => string | undefined",
    );
  }
  checkNow(now, name);
  if (wwwAuthenticate !== undefined && !isChallengeList(wwwAuthenticate)) {
    throw refusedErrorOption(
      name,
      "wwwAuthenticate",
      wwwAuthenticate,
      'one or more challenges (RFC 9110 §11.6.1, `Bearer realm="api"`, `Basic realm="api", charset="UTF-8"`)',
    );
  }
  const { defaultFormat = "record", mapError } = options;
  if (!DEFAULT_FORMATS.includes(defaultFormat)) {
    throw refusedErrorOption(name, "defaultFormat", defaultFormat, '"record" or "problem"');
  }
  const mappers = mapperList(mapError);
  if (mappers === undefined) {
    throw refusedErrorOption(
      name,
      "mapError",
      mapError,
      "a function (err) => HttpError | undefined, or a non-empty list of them",
    );
  }
  const renderers = rendererList(options.renderers);
  if (renderers === undefined) {
    throw refusedErrorOption(
      name,
      "renderers",
      options.renderers,
      "a renderer { name, render(error, request) }, or a list of them",
    );
  }
  const unreadBody = resolveUnreadBody("errors", options.unreadBody, name);
  return {
    defaultFormat,
    mappers,
    renderers,
    logger,
    correlationId,
    unreadBody,
    problemTypeBase,
    now: now ?? newDate,
    wwwAuthenticate,
    warned: { challenge: false, proxyChallenge: false },
  };
}
