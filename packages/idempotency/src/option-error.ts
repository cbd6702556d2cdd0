import { type OptionError, refusedOption } from "@svc/errors";

export type { OptionError };

/**
 * The `TypeError` for a refused option: it names the option, what was given and what is accepted,
 * and carries `code` `ERR_SVC_IDEMPOTENCY_<OPTION>` (`maxBytes` → `ERR_SVC_IDEMPOTENCY_MAX_BYTES`).
 *
 * @example throw optionError("MemoryStore", "maxBytes", 0, "a positive integer")
 */
export function optionError(owner: string, option: string, got: unknown, accepted: string): OptionError {
  return refusedOption("idempotency", option, got, accepted, `${owner}: ${option}`);
}
