import type { OptionError } from "@svc/kernel";
import { optionError as codedOptionError, refusedOption } from "@svc/kernel/internal";

/**
 * The `TypeError` for a refused option, with a stable `code` to match on:
 * `ERR_SVC_RATELIMIT_<OPTION>` (`timeoutMs` → `ERR_SVC_RATELIMIT_TIMEOUT_MS`).
 *
 * @example throw optionError("rate limit", "windowMs", "windowMs must be a number >= 1, got 0")
 */
export function optionError(owner: string, option: string, message: string): OptionError {
  return codedOptionError("ratelimit", option, `${owner}: ${message}`);
}

/**
 * {@link optionError} in the shape `<owner>: <option> must be <accepted>, got <given>`.
 *
 * @example throw refused("rate limit", "skip", true, "a function (req, res) => boolean | Promise<boolean>")
 */
export function refused(owner: string, option: string, given: unknown, accepted: string): OptionError {
  return refusedOption("ratelimit", option, given, accepted, `${owner}: ${option}`);
}
