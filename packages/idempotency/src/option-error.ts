/** A construction-time refusal of one option, with a stable `code` to match on. */
export type OptionError = TypeError & { code: string };

/**
 * The `TypeError` for a refused option: it names the option, what was given and what is accepted,
 * and carries `code` `ERR_SVC_IDEMPOTENCY_<OPTION>` (`maxBytes` → `ERR_SVC_IDEMPOTENCY_MAX_BYTES`).
 *
 * @example throw optionError("MemoryStore", "maxBytes", 0, "a positive integer")
 * @see https://nodejs.org/api/errors.html#errorcode
 */
export function optionError(owner: string, option: string, got: unknown, accepted: string): OptionError {
  const shown =
    typeof got === "string" ? JSON.stringify(got) : typeof got === "function" ? "a function" : String(got);
  const err = new TypeError(`${owner}: ${option} must be ${accepted}, got ${shown}`) as OptionError;
  err.code = `ERR_SVC_IDEMPOTENCY_${option.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()}`;
  return err;
}
