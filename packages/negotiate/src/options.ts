import {
  checkOptionNames,
  optionError as codedOptionError,
  type OptionError,
  parseMediaType,
  refusedOption,
} from "@svc/errors";
import { defaultRepresentations, type Representation } from "./representation.js";

/** Options of {@link negotiate}'s compression. */
export interface CompressionOptions {
  /**
   * Responses smaller than this many bytes are sent uncoded (unless the client refused `identity`).
   * @default 1024
   */
  threshold?: number;
  /**
   * zlib level of gzip and deflate (0–9); br is always sent at brotli quality 4.
   * @default zlib's default level
   */
  level?: number;
}

/** Options of {@link negotiate} and {@link createNegotiator}. */
export interface NegotiateOptions {
  /**
   * Representations offered by `res.represent`, in order of server preference (the first one is
   * sent when `Accept` is absent or `*\/*`).
   * @default [json, xml, csv, text, html]
   */
  representations?: readonly Representation[];
  /**
   * Language tags the app can answer in, first is the default. Empty: no language negotiation,
   * no `Content-Language`.
   * @default []
   */
  languages?: readonly string[];
  /**
   * Response compression with `node:zlib` (br, gzip, deflate), or `false`.
   * zstd is not offered: Node 20 has no zstd in `zlib`.
   * @default { threshold: 1024 }
   */
  compression?: CompressionOptions | false;
}

/** The compression settings, resolved once. */
export interface CompressionConfig {
  readonly threshold: number;
  readonly level: number | undefined;
  /** The content codings offered, in server preference (RFC 9110 §8.4.1). */
  readonly codings: readonly string[];
}

/** {@link NegotiateOptions} checked and resolved once, at construction. */
export interface NegotiateConfig {
  readonly representations: readonly Representation[];
  readonly offeredMediaTypes: readonly string[];
  readonly languages: readonly string[];
  /** More than one language: responses vary on `Accept-Language` (RFC 9110 §12.5.5). */
  readonly varyLanguage: boolean;
  readonly compression: CompressionConfig | undefined;
}

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
      (rep.canRepresent !== undefined && typeof rep.canRepresent !== "function")
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

// RFC 5646 §2.1, as a language-tag's shape: 1*8ALPHA *("-" 1*8alphanum).
const LANGUAGE_TAG = /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/i;
const CODINGS: readonly string[] = Object.freeze(["br", "gzip", "deflate"]);
const LANGUAGES = 'an array of language tags (RFC 5646), such as ["en", "de-CH"]';

function resolveLanguages(languages: unknown): readonly string[] {
  if (languages === undefined) return [];
  // A string is iterable: "en" would otherwise be the two languages "e" and "n".
  if (!Array.isArray(languages)) throw refused("negotiate", "languages", languages, LANGUAGES);
  for (const l of languages as unknown[]) {
    if (typeof l !== "string" || !LANGUAGE_TAG.test(l)) throw refused("negotiate", "languages", l, LANGUAGES);
  }
  return languages as readonly string[];
}

function resolveCompression(options: unknown): CompressionConfig | undefined {
  if (options === false) return undefined;
  if (options !== undefined && (options === null || typeof options !== "object" || Array.isArray(options))) {
    throw refused("negotiate", "compression", options, "false or an object { threshold?, level? }");
  }
  checkOptionNames("negotiate", options, ["threshold", "level"], "negotiate", "compression");
  const { threshold = 1024, level } = (options ?? {}) as CompressionOptions;
  if (typeof threshold !== "number" || !Number.isSafeInteger(threshold) || threshold < 0) {
    throw refused("negotiate", "compression.threshold", threshold, "a non-negative integer (bytes)");
  }
  // zlib's levels: -1 (its default), 0 (none) to 9 (best); anything else fails every deflate.
  if (
    level !== undefined &&
    (typeof level !== "number" || !Number.isInteger(level) || level < -1 || level > 9)
  ) {
    throw refused("negotiate", "compression.level", level, "an integer from -1 to 9 (zlib levels)");
  }
  return { threshold, level, codings: CODINGS };
}

const NEGOTIATE_OPTIONS = ["representations", "languages", "compression"];

/**
 * Checks {@link NegotiateOptions} once and resolves the defaults, so a request does no option work.
 * Refusals are `TypeError`s with `code` `ERR_SVC_NEGOTIATE_<OPTION>`.
 */
export function resolveConfig(options: NegotiateOptions = {}): NegotiateConfig {
  checkOptionNames("negotiate", options, NEGOTIATE_OPTIONS, "negotiate");
  const representations = validateRepresentations(
    options.representations ?? defaultRepresentations,
    "negotiate",
  );
  const languages = resolveLanguages(options.languages);
  return Object.freeze({
    representations,
    offeredMediaTypes: Object.freeze(representations.map((r) => r.mediaType)),
    languages,
    varyLanguage: languages.length > 1,
    compression: resolveCompression(options.compression),
  });
}
