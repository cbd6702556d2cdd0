import type { OptionError } from "@svc/kernel";
import { refusedOption } from "@svc/kernel/internal";

/** An option refused at construction: a `TypeError` with a stable `code` to match on. */
export type VersioningOptionError = OptionError;

/**
 * The `TypeError` for a refused option: it names the option, what was given and what is
 * accepted. The code drops list positions: `deprecated.1.sunset` → `ERR_SVC_VERSIONING_DEPRECATED_SUNSET`.
 *
 * @example throw optionError("uri.prefix", "v/", "letters")
 */
export function optionError(
  option: string,
  given: unknown,
  accepted: string,
  label = `versions: ${option}`,
): VersioningOptionError {
  return refusedOption("versioning", option, given, accepted, label);
}
