/**
 * Options refused at construction. Every @svc factory checks its options once, when it is
 * created, and throws one of these: a `TypeError` (Node's convention for a wrong argument) with a
 * stable `code` a caller can match on, `ERR_SVC_<PACKAGE>_<OPTION>`, in the style of Node's own
 * `ERR_INVALID_ARG_TYPE` codes.
 *
 * @see https://nodejs.org/api/errors.html#errorcode
 */

/** A refused option: a `TypeError` with a stable `code` naming the package and the option. */
export interface OptionError extends TypeError {
  /** `ERR_SVC_<PACKAGE>_<OPTION>`, e.g. `ERR_SVC_AUTH_BASIC_CONCURRENCY` for auth's `basic.concurrency`. */
  code: string;
}

/**
 * How a refused value is shown in the message: strings quoted, functions and plain objects named
 * (never their contents, which may hold secrets), lists item by item, the rest as `String` does.
 */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (value === null || value instanceof RegExp || value instanceof Date) return String(value);
  if (Array.isArray(value)) return `[${value.map(describeValue).join(", ")}]`;
  if (typeof value === "object") return "an object";
  return String(value);
}

/**
 * The stable code of a refused option: list positions dropped, camelCase split, punctuation made
 * `_`, in the package name too (`soap-envelope` → `SOAP_ENVELOPE`). `("versioning", "deprecated.1.sunset")` → `ERR_SVC_VERSIONING_DEPRECATED_SUNSET`.
 */
export function optionErrorCode(pkg: string, option: string): string {
  return `ERR_SVC_${constantCase(pkg)}_${constantCase(option.replace(/\.\d+(?=\.|$)/g, ""))}`;
}

function constantCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toUpperCase();
}

/**
 * The `TypeError` for a refused option, with its message as given and the code of
 * {@link optionErrorCode}.
 *
 * @example throw optionError("ratelimit", "timeoutMs", "RedisStore: timeoutMs must be a positive number of milliseconds");
 */
export function optionError(pkg: string, option: string, message: string): OptionError {
  const err = new TypeError(message) as OptionError;
  err.code = optionErrorCode(pkg, option);
  return err;
}

/**
 * The `TypeError` for a refused option that names the option, what was given and what is
 * accepted: `<label> must be <accepted>, got <given>`.
 *
 * @example throw refusedOption("hal", "trustProxy", -1, "true, false, a hop count, addresses or a function", "@svc/hal: trustProxy");
 */
export function refusedOption(
  pkg: string,
  option: string,
  given: unknown,
  accepted: string,
  label: string = option,
): OptionError {
  return optionError(pkg, option, `${label} must be ${accepted}, got ${describeValue(given)}`);
}
