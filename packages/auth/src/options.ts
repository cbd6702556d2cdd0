/** A refused option: a `TypeError` with a stable `code` naming the option. */
export interface OptionError extends TypeError {
  /** `ERR_SVC_AUTH_<OPTION>`, e.g. `ERR_SVC_AUTH_BASIC_CONCURRENCY` for `basic.concurrency`. */
  code: string;
}

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (value === null) return "null";
  if (typeof value === "object") return Array.isArray(value) ? "an array" : "an object";
  return String(value);
}

/**
 * The `TypeError` thrown at construction for a refused option: it names the option, what was
 * given and what is accepted, and carries a stable `code` (`basic.failureLimit.perClient` →
 * `ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_PER_CLIENT`) a caller can test for.
 */
export function optionError(option: string, given: unknown, accepted: string): OptionError {
  const err = new TypeError(`@svc/auth: ${option} must be ${accepted}, got ${show(given)}`) as OptionError;
  err.code = `ERR_SVC_AUTH_${option
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toUpperCase()}`;
  return err;
}
