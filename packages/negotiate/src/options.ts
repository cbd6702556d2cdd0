import { optionError as codedOptionError, type OptionError, parseMediaType } from "@svc/errors";
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

/** Every representation is a concrete media type with a serializer (RFC 9110 §8.3.1). */
export function validateRepresentations(list: readonly Representation[], where: string): void {
  for (const r of list) {
    if (!r || typeof r.mediaType !== "string" || typeof r.serialize !== "function") {
      throw optionError(
        "representations",
        `${where}: every representation needs a mediaType string and a serialize function`,
      );
    }
    const parsed = parseMediaType(r.mediaType);
    if (parsed === undefined || parsed.type === "*" || parsed.subtype === "*") {
      throw optionError("representations", `${where}: "${r.mediaType}" is not a concrete media type`);
    }
  }
}

// RFC 5646 §2.1, as a language-tag's shape: 1*8ALPHA *("-" 1*8alphanum).
const LANGUAGE_TAG = /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/i;
const CODINGS: readonly string[] = Object.freeze(["br", "gzip", "deflate"]);

function resolveLanguages(languages: readonly string[]): readonly string[] {
  for (const l of languages) {
    if (typeof l !== "string" || !LANGUAGE_TAG.test(l)) {
      throw optionError("languages", `negotiate: "${String(l)}" is not a language tag`);
    }
  }
  return languages;
}

function resolveCompression(options: CompressionOptions | false | undefined): CompressionConfig | undefined {
  if (options === false) return undefined;
  const threshold = options?.threshold ?? 1024;
  if (!Number.isInteger(threshold) || threshold < 0) {
    throw optionError(
      "compression.threshold",
      "negotiate: compression.threshold must be a non-negative integer",
    );
  }
  const level = options?.level;
  if (level !== undefined && (!Number.isInteger(level) || level < -1 || level > 9)) {
    throw optionError(
      "compression.level",
      `negotiate: compression.level must be an integer from -1 to 9, got ${String(level)}`,
    );
  }
  return { threshold, level, codings: CODINGS };
}

/**
 * Checks {@link NegotiateOptions} once and resolves the defaults, so a request does no option work.
 * Refusals are `TypeError`s with `code` `ERR_SVC_NEGOTIATE_<OPTION>`.
 */
export function resolveConfig(options: NegotiateOptions = {}): NegotiateConfig {
  const representations = options.representations ?? defaultRepresentations;
  validateRepresentations(representations, "negotiate");
  if (representations.length === 0) {
    throw optionError("representations", "negotiate: representations must not be empty");
  }
  const languages = resolveLanguages(options.languages ?? []);
  return Object.freeze({
    representations,
    offeredMediaTypes: Object.freeze(representations.map((r) => r.mediaType)),
    languages,
    varyLanguage: languages.length > 1,
    compression: resolveCompression(options.compression),
  });
}
