import { optionError as codedOptionError, type OptionError } from "@svc/errors";

/**
 * The `TypeError` for a refused option, with a stable `code` to match on:
 * `ERR_SVC_RATELIMIT_<OPTION>` (`timeoutMs` → `ERR_SVC_RATELIMIT_TIMEOUT_MS`).
 *
 * @example throw optionError("rate limit", "windowMs", "windowMs must be a number >= 1, got 0")
 */
export function optionError(owner: string, option: string, message: string): OptionError {
  return codedOptionError("ratelimit", option, `${owner}: ${message}`);
}
