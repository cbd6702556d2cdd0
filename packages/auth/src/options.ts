import { type OptionError, refusedOption } from "@svc/errors";

export type { OptionError };

/**
 * The `TypeError` thrown at construction for a refused option: it names the option, what was
 * given and what is accepted, and carries a stable `code` (`basic.failureLimit.perClient` →
 * `ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_PER_CLIENT`) a caller can test for.
 */
export function optionError(option: string, given: unknown, accepted: string): OptionError {
  return refusedOption("auth", option, given, accepted, `@svc/auth: ${option}`);
}
