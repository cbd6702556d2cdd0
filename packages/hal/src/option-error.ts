/** A construction-time refusal of one option, with a stable `code` to match on. */
export type OptionError = TypeError & { code: string };

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (value === null) return "null";
  if (Array.isArray(value)) return `[${value.map(show).join(", ")}]`;
  if (typeof value === "object") return "an object";
  return String(value);
}

/**
 * The `TypeError` for a refused option: it names the option, what was given and what is accepted,
 * and carries `code` `ERR_SVC_HAL_<OPTION>` (`trustProxy` → `ERR_SVC_HAL_TRUST_PROXY`).
 *
 * @example throw optionError("allowedHosts", "hosts", [], "a non-empty list of host names")
 */
export function optionError(owner: string, option: string, given: unknown, accepted: string): OptionError {
  const err = new TypeError(`${owner}: ${option} must be ${accepted}, got ${show(given)}`) as OptionError;
  err.code = `ERR_SVC_HAL_${option.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()}`;
  return err;
}
