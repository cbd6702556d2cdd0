/** An option refused at construction: a `TypeError` with a stable `code` to match on. */
export interface VersioningOptionError extends TypeError {
  /** `ERR_SVC_VERSIONING_<OPTION>`: `header.names` → `ERR_SVC_VERSIONING_HEADER_NAMES`. */
  code: string;
}

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (value === null || value instanceof RegExp || value instanceof Date) return String(value);
  if (typeof value === "object")
    return Array.isArray(value) ? `[${value.map(show).join(", ")}]` : "an object";
  return String(value);
}

/**
 * The `TypeError` for a refused option: it names the option, what was given and what is
 * accepted. The code drops list positions: `deprecated.1.sunset` → `ERR_SVC_VERSIONING_DEPRECATED_SUNSET`.
 *
 * @example throw optionError("uri.prefix", "v/", "letters")
 * @see https://nodejs.org/api/errors.html#errorcode
 */
export function optionError(
  option: string,
  given: unknown,
  accepted: string,
  label = `apiVersioning: ${option}`,
): VersioningOptionError {
  const err = new TypeError(`${label} must be ${accepted}, got ${show(given)}`) as VersioningOptionError;
  const name = option
    .replace(/\.\d+(?=\.|$)/g, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/\W+/g, "_");
  err.code = `ERR_SVC_VERSIONING_${name.toUpperCase()}`;
  return err;
}
