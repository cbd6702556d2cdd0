/**
 * The `TypeError` for a refused option, with a stable `code` to match on:
 * `ERR_SVC_RATELIMIT_<OPTION>` (`timeoutMs` → `ERR_SVC_RATELIMIT_TIMEOUT_MS`).
 *
 * @example throw optionError("rate limit", "windowMs", "windowMs must be a number >= 1, got 0")
 * @see https://nodejs.org/api/errors.html#errorcode
 */
export function optionError(owner: string, option: string, message: string): TypeError & { code: string } {
  return Object.assign(new TypeError(`${owner}: ${message}`), {
    code: `ERR_SVC_RATELIMIT_${option.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`,
  });
}
