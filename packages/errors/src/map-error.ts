import { HttpError, isHttpError } from "@svc/kernel";
import { describeValue } from "@svc/kernel/internal";
import type { ErrorMapper } from "./options.js";
import { toHttpError } from "./to-http-error.js";

/**
 * What a `mapError` mapper decided for one record, as the `svc:errors` message says it: the
 * mapper's place in the list (0 for a single function) and whether it `"mapped"` the error (it
 * returned the record's `HttpError`), `"threw"`, or returned something `"invalid"` (neither an
 * `HttpError` nor `undefined`): those two give the logged 500 record.
 */
export interface MapperDecision {
  readonly index: number;
  readonly outcome: "mapped" | "threw" | "invalid";
}

/** The `HttpError` a thrown value is answered with, and what the log line carries for it. */
export interface MappedError {
  /** The error the record is built from. */
  readonly error: HttpError;
  /**
   * What the log line's `err` is: what was thrown, or for a mapper that failed, that failure with
   * what was thrown as its `cause`.
   */
  readonly logged: unknown;
  /** Set when a mapper decided the record. */
  readonly mapper?: MapperDecision;
}

/**
 * The `HttpError` {@link errorValue} answers `thrown` with: an `HttpError` as it is; anything else
 * through `mappers` in order (the first `HttpError` returned wins, `undefined` passes on), then
 * `toHttpError`'s built-in rules and their 500. A mapper that throws, or returns anything but an
 * `HttpError` or `undefined` (a promise included: mappers are synchronous), is the server's bug:
 * a 500, whose logged failure keeps `thrown` as its `cause`, never an exception out of the error
 * handler (which, on plain `node:http`, would end the process).
 *
 * @example const { error } = mappedError(err, [(e) => (e instanceof ZodError ? HttpError.unprocessable() : undefined)]);
 * @see https://www.rfc-editor.org/rfc/rfc9457#section-3
 */
export function mappedError(thrown: unknown, mappers: readonly ErrorMapper[] = []): MappedError {
  if (mappers.length === 0 || isHttpError(thrown)) return { error: toHttpError(thrown), logged: thrown };
  for (let index = 0; index < mappers.length; index++) {
    const mapper = mappers[index] as ErrorMapper;
    let result: unknown;
    try {
      result = mapper(thrown);
    } catch (failure) {
      // AggregateError: the mapper's failure (its stack) and the error it was mapping (the cause)
      // both reach the log, which writes an AggregateError's members and its cause chain.
      const logged = new AggregateError(
        [failure],
        `mapError (mapper ${index}) threw; the error it was mapping is the cause`,
        { cause: thrown },
      );
      return failed(thrown, logged, { index, outcome: "threw" });
    }
    if (result === undefined) continue;
    if (isHttpError(result))
      return { error: toHttpError(result), logged: thrown, mapper: { index, outcome: "mapped" } };
    const logged = new TypeError(
      `mapError (mapper ${index}) returned ${describeResult(result)}, not an HttpError or undefined; the error it was mapping is the cause`,
      { cause: thrown },
    );
    return failed(thrown, logged, { index, outcome: "invalid" });
  }
  return { error: toHttpError(thrown), logged: thrown };
}

function failed(thrown: unknown, logged: Error, mapper: MapperDecision): MappedError {
  return { error: HttpError.internal(undefined, { cause: thrown }), logged, mapper };
}

/** A short, safe description of what a mapper returned (a getter of it is never read). */
function describeResult(result: unknown): string {
  try {
    if (result instanceof Promise) return "a promise (mappers are synchronous)";
    if (result instanceof Error) return `an ${result.name}`;
    return describeValue(result);
  } catch {
    return typeof result;
  }
}
