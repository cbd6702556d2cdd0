import type { OptionError } from "@svc/kernel";
import {
  checkOptionNames,
  optionError as coded,
  isTimerDelay,
  MAX_TIMER_MS,
  refusedOption,
} from "@svc/kernel/internal";

export type { OptionError };

/**
 * The `TypeError` thrown at construction for a refused option: it names the option, what was
 * given and what is accepted, and carries a stable `code` (`basic.failureLimit.perClient` →
 * `ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_PER_CLIENT`) a caller can test for.
 */
export function optionError(option: string, given: unknown, accepted: string): OptionError {
  return refusedOption("auth", option, given, accepted, `@svc/auth: ${option}`);
}

/**
 * The same coded `TypeError` with a message of its own, for a value that must not be shown
 * (a secret, a key) or a refusal about several options together.
 */
export function codedError(option: string, message: string): OptionError {
  return coded("auth", option, `@svc/auth: ${message}`);
}

/**
 * Refuses an options object (at `path`: `"bearer.cache"`, or `"options"` for a factory's own) that
 * is not an object or has a name `known` does not list, with the closest known name (code
 * `ERR_SVC_AUTH_UNKNOWN_OPTION`): TypeScript catches a misspelling only in an object literal, and
 * an ignored `issur` turned the `iss` check off without a word.
 */
export function checkNames(options: unknown, known: readonly string[], path: string): void {
  checkOptionNames("auth", options, known, "@svc/auth", path);
}

/**
 * Refuses options (at `path`) that are not an object, saying they must be `accepted`, then a name
 * in them `known` does not list ({@link checkNames}). Options that may be left out are checked
 * only when given.
 */
export function checkOptions(
  options: unknown,
  known: readonly string[],
  path: string,
  accepted: string,
): asserts options is object {
  if (typeof options !== "object" || options === null) throw optionError(path, options, accepted);
  checkNames(options, known, path);
}

/** `value` when it is a non-negative finite number, else the refusal for `option`. */
export function nonNegativeNumber(value: unknown, option: string, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
    throw optionError(option, value, `a non-negative number of ${what}`);
  return value;
}

/** `value` when it is a positive finite number, else the refusal for `option`. */
export function positiveNumber(value: unknown, option: string, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
    throw optionError(option, value, `a positive number of ${what}`);
  return value;
}

/** `value` when it is a function (a clock, a hook), else the refusal for `option`. */
export function functionOption<F>(value: F, option: string, accepted: string): F {
  if (typeof value !== "function") throw optionError(option, value, accepted);
  return value;
}

/**
 * `value` when it is a download timeout `AbortSignal.timeout` honours: whole milliseconds from 1 to
 * 2^31 - 1. A fraction made it throw on every download, a larger value overflowed to 1 ms and 0
 * aborted at once: each a 503 on every request, where the refusal belongs at construction.
 */
export function timeoutMilliseconds(value: unknown, option: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_TIMER_MS)
    throw optionError(option, value, `a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`);
  return value;
}

/**
 * `value` when it is a span of milliseconds a timer could also wait: a finite number above 0 and
 * at most 2^31 - 1 (a cool-down of 0 would be none at all).
 */
export function positiveMilliseconds(value: unknown, option: string): number {
  if (!isTimerDelay(value))
    throw optionError(option, value, `a number of milliseconds above 0 and at most ${MAX_TIMER_MS}`);
  return value;
}
