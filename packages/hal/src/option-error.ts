import type { OptionError } from "@svc/kernel";
import { refusedOption } from "@svc/kernel/internal";

export type { OptionError };

/**
 * The `TypeError` for a refused option: it names the option, what was given and what is accepted,
 * and carries `code` `ERR_SVC_HAL_<OPTION>` (`trustProxy` → `ERR_SVC_HAL_TRUST_PROXY`).
 *
 * @example throw optionError("allowedHosts", "hosts", [], "a non-empty list of host names")
 */
export function optionError(owner: string, option: string, given: unknown, accepted: string): OptionError {
  return refusedOption("hal", option, given, accepted, `${owner}: ${option}`);
}
