import { type OptionError, parseMediaType } from "@svc/kernel";
import { optionError as codedOptionError, refusedOption } from "@svc/kernel/internal";
import type { Representation } from "./representation.js";

/** A refused option: a `TypeError` with a stable `code` naming the option. */
export type { OptionError };

/** The `TypeError` for a refused option, with `code` `ERR_SVC_NEGOTIATE_<OPTION>` (`maxAge` → `MAX_AGE`). */
export function optionError(option: string, message: string): OptionError {
  return codedOptionError("negotiate", option, message);
}

/**
 * The `TypeError` for a refused option that names it, what was given and what is accepted:
 * `<where>: <option> must be <accepted>, got <given>`, code `ERR_SVC_NEGOTIATE_<OPTION>`.
 */
export function refused(where: string, option: string, given: unknown, accepted: string): OptionError {
  return refusedOption("negotiate", option, given, accepted, `${where}: ${option}`);
}

/** The units of the `bytes` package (what body-parser's `limit` takes), powers of 1024. */
const BYTE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1024,
  mb: 1024 ** 2,
  gb: 1024 ** 3,
  tb: 1024 ** 4,
  pb: 1024 ** 5,
};

/** `100`, `1.5`, `1mb`, `100 KB`: digits, an optional fraction, optional spaces, an optional unit. */
const BYTE_SIZE = /^(\d{1,16}(?:\.\d{1,16})?) *([a-z]{1,2})?$/i;

const BYTE_LIMIT =
  'a non-negative integer (bytes) or a size as body-parser takes it ("100kb", "1mb", "1.5MB": b, kb, mb, gb, tb or pb, powers of 1024)';

/**
 * A byte limit option: a non-negative safe integer, or a size string in the syntax of the `bytes`
 * package that body-parser's `limit` reads (`"1mb"` = 1048576), rounded down to whole bytes as
 * `bytes` rounds it. Unlike `bytes`, a string is matched whole: `"1 megabyte"`, `"-1kb"` and
 * `"100abc"` are refused rather than read as far as they parse.
 *
 * @example byteLimit("parseBody", "limit", "1mb") // → 1048576
 */
export function byteLimit(where: string, option: string, value: unknown): number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  const m = typeof value === "string" ? BYTE_SIZE.exec(value) : null;
  const unit = m === null ? undefined : BYTE_UNITS[(m[2] ?? "b").toLowerCase()];
  const bytes = m?.[1] === undefined || unit === undefined ? Number.NaN : Math.floor(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes)) throw refused(where, option, value, BYTE_LIMIT);
  return bytes;
}

const REPRESENTATIONS =
  "a non-empty array of { mediaType, serialize, canRepresent? } with a concrete media type (RFC 9110 §8.3.1)";

/** Every representation is a concrete media type with a serializer (RFC 9110 §8.3.1). */
export function validateRepresentations(
  list: unknown,
  where: string,
  allowEmpty = false,
  option = "representations",
): readonly Representation[] {
  if (!Array.isArray(list) || (list.length === 0 && !allowEmpty)) {
    throw refused(where, option, list, REPRESENTATIONS);
  }
  for (const r of list as unknown[]) {
    const rep = r as Partial<Representation> | null;
    if (
      rep === null ||
      typeof rep !== "object" ||
      typeof rep.mediaType !== "string" ||
      typeof rep.serialize !== "function" ||
      (rep.canRepresent !== undefined && typeof rep.canRepresent !== "function") ||
      (rep.fields !== undefined && typeof rep.fields !== "function")
    ) {
      throw refused(where, option, r, REPRESENTATIONS);
    }
    const parsed = parseMediaType(rep.mediaType);
    if (parsed === undefined || parsed.type === "*" || parsed.subtype === "*") {
      throw refused(where, option, rep.mediaType, REPRESENTATIONS);
    }
  }
  return list as readonly Representation[];
}
