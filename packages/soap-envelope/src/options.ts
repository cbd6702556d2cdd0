import type { OptionError } from "@svc/kernel";
import { refusedOption } from "@svc/kernel/internal";

// Every option of this package's factories is checked once, at construction, and a refused one
// throws a `TypeError` with the stable code `ERR_SVC_SOAP_ENVELOPE_<OPTION>` (from @svc/errors)
// naming the option, what was given and what is accepted.

/** A refused option: `<label> must be <accepted>, got <given>`, code `ERR_SVC_SOAP_ENVELOPE_<OPTION>`. */
export function optionError(
  option: string,
  given: unknown,
  accepted: string,
  label = `@svc/soap-envelope: ${option}`,
): OptionError {
  return refusedOption("soap-envelope", option, given, accepted, label);
}

/** A non-null, non-array object (`undefined` stands for `{}`). */
export function checkObject(value: unknown, option: string, keys: readonly string[]): void {
  if (value === undefined) return;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw optionError(option, value, `an object with ${keys.join(", ")}`);
  }
  for (const key of Object.keys(value)) {
    // A misspelt option (`maxbytes`, node-soap's `path`) would otherwise be silently ignored.
    if (!keys.includes(key)) {
      throw optionError(option, key, `an object with ${keys.join(", ")} (unknown option)`);
    }
  }
}

const CLARK_NAME = /^\{[^{}]*\}[^{}\s]+$/;

/** A list of header block names as Clark names, `{ns}local` or `{*}local`. */
export function checkNameList(value: unknown, option: string): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((n) => typeof n === "string" && CLARK_NAME.test(n))) {
    throw optionError(option, value, 'a list of element names as "{namespace}local" or "{*}local"');
  }
  return value;
}

/** `(…) => …`, when given. */
export function checkFunction(value: unknown, option: string, accepted: string): void {
  if (value !== undefined && typeof value !== "function") throw optionError(option, value, accepted);
}

/** `longAs`: how `xs:long` is decoded. */
export function checkLongAs(value: unknown, option: string, label?: string): void {
  if (value !== undefined && value !== "bigint" && value !== "string") {
    throw optionError(option, value, '"bigint" or "string"', label);
  }
}

/** `strict`: whether a contract's defects are refused (`true`, the default) or passed over. */
export function checkStrict(value: unknown, option: string, label?: string): void {
  if (value !== undefined && typeof value !== "boolean")
    throw optionError(option, value, "true or false", label);
}

/** The `typeof` each named member of a value must have, for {@link hasMembers}. */
export type MemberTypes = Readonly<Record<string, "string" | "function">>;

/** The members {@link hasMembers} found, typed. */
export type WithMembers<T extends MemberTypes> = {
  [K in keyof T]: T[K] extends "string" ? string : (...args: never[]) => unknown;
};

/**
 * Whether `value` is an object (not `null`) whose members named in `types` have those `typeof`s,
 * read in that order: the shape of an option or an argument, checked before its members are used.
 */
export function hasMembers<const T extends MemberTypes>(value: unknown, types: T): value is WithMembers<T> {
  if (typeof value !== "object" || value === null) return false;
  for (const name in types) if (typeof (value as Record<string, unknown>)[name] !== types[name]) return false;
  return true;
}

/** A logger: an object with an `error(obj, msg)` method (pino fits). */
export function checkLogger(value: unknown, option = "logger", label?: string): void {
  if (value !== undefined && !hasMembers(value, { error: "function" }))
    throw optionError(option, value, "an object with an error(obj, msg) method", label);
}

/** An absolute URI: a scheme, then `:` (RFC 3986 §3.1). */
export const ABSOLUTE_URI = /^[a-z][a-z0-9+.-]*:/i;

/**
 * `schemaLocations`: remote locations a contract imports, each with the local file that stands for
 * it. Keys are absolute URIs, compared in their RFC 3986 §6.2.2 normal form (`new URL().href`), so
 * `HTTP://Example.com/a.xsd` and `http://example.com/a.xsd` are one.
 */
export function checkSchemaLocations(
  value: unknown,
  option: string,
  label?: string,
): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  if (value === undefined) return out;
  const accepted =
    'an object mapping absolute URLs to file paths ({ "https://example.com/types.xsd": "schemas/types.xsd" })';
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw optionError(option, value, accepted, label);
  }
  for (const [url, file] of Object.entries(value)) {
    const normal = ABSOLUTE_URI.test(url) ? canParseUrl(url) : undefined;
    if (normal === undefined)
      throw optionError(option, url, `${accepted}: a key is not an absolute URL`, label);
    if (typeof file !== "string" || file === "") {
      throw optionError(option, file, `${accepted}: the value of ${url} is not a file path`, label);
    }
    out.set(normal, file);
  }
  return out;
}

/** The normal form of an absolute URL, undefined when it is not one. */
function canParseUrl(url: string): string | undefined {
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
}

/** The SOAP versions an error path answers in: `["1.1", "1.2"]` when not given. */
export function checkVersions(value: unknown): readonly ("1.1" | "1.2")[] {
  const versions = value ?? ["1.1", "1.2"];
  if (
    !Array.isArray(versions) ||
    versions.length === 0 ||
    !versions.every((v: unknown) => v === "1.1" || v === "1.2")
  ) {
    throw optionError("versions", versions, 'a non-empty list of "1.1" and "1.2"');
  }
  return versions;
}
