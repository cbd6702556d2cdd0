import { isToken, type OptionError } from "@svc/kernel";
import { checkBooleanOption, checkOptionNames, optionError, refusedOption } from "@svc/kernel/internal";

/** Options of {@link formatCacheControl}: the directives of RFC 9111 §5.2.2 a route may want. */
export interface CacheControlOptions {
  /**
   * `public` (shared caches may store it, even when authenticated) or `private` (only the client's own cache).
   * @default neither
   */
  visibility?: "public" | "private";
  /**
   * `max-age` in seconds.
   * @default none
   */
  maxAge?: number;
  /**
   * `s-maxage` in seconds, for shared caches.
   * @default none
   */
  sMaxAge?: number;
  /**
   * `no-cache`: store, but revalidate (with the ETag) before every reuse.
   * @default false
   */
  noCache?: boolean;
  /**
   * `no-store`: never store (balances, personal data).
   * @default false
   */
  noStore?: boolean;
  /**
   * `must-revalidate`.
   * @default false
   */
  mustRevalidate?: boolean;
  /**
   * `immutable` (RFC 8246).
   * @default false
   */
  immutable?: boolean;
  /**
   * `stale-while-revalidate` in seconds (RFC 5861).
   * @default none
   */
  staleWhileRevalidate?: number;
  /**
   * `no-transform`: intermediaries (and compression) must not change the content.
   * @default false
   */
  noTransform?: boolean;
}

/** A refused option of {@link formatCacheControl}: `ERR_SVC_CONDITIONAL_<OPTION>`. */
function refused(option: string, given: unknown, accepted: string): OptionError {
  return refusedOption("conditional", option, given, accepted, `cacheControl: ${option}`);
}

const FLAG_OPTIONS = ["noCache", "noStore", "mustRevalidate", "immutable", "noTransform"] as const;
const DIRECTIVE_OPTIONS = ["visibility", "maxAge", "sMaxAge", "staleWhileRevalidate", ...FLAG_OPTIONS];

/** `<directive>=<seconds>` (RFC 9111 §1.2.2: delta-seconds, a non-negative integer). */
function seconds(
  option: keyof CacheControlOptions,
  directive: string,
  value: number | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw refused(option, value, `a non-negative integer of seconds (${directive})`);
  }
  return `${directive}=${value}`;
}

/**
 * Builds a `Cache-Control` value, rejecting contradictions (`no-store` with `max-age`) and bad numbers.
 *
 * @example formatCacheControl({ visibility: "public", maxAge: 3600 }) // → "public, max-age=3600"
 * @see https://www.rfc-editor.org/rfc/rfc9111#section-5.2.2
 */
export function formatCacheControl(options: CacheControlOptions): string {
  if (options === null || typeof options !== "object") {
    throw refused("options", options, "an object of directives");
  }
  checkOptionNames("conditional", options, DIRECTIVE_OPTIONS, "cacheControl");
  for (const flag of FLAG_OPTIONS) {
    checkBooleanOption("conditional", flag, options[flag], `cacheControl: ${flag}`);
  }
  if (
    options.visibility !== undefined &&
    options.visibility !== "public" &&
    options.visibility !== "private"
  ) {
    throw refused("visibility", options.visibility, '"public" or "private"');
  }
  if (
    options.noStore &&
    (options.maxAge !== undefined || options.sMaxAge !== undefined || options.immutable)
  ) {
    // RFC 9111 §5.2.2.5: no-store forbids storing what max-age, s-maxage and immutable describe.
    throw refused("noStore", options.noStore, "false when maxAge, sMaxAge or immutable is set");
  }
  const parts = [
    options.visibility,
    options.noStore ? "no-store" : undefined,
    options.noCache ? "no-cache" : undefined,
    seconds("maxAge", "max-age", options.maxAge),
    seconds("sMaxAge", "s-maxage", options.sMaxAge),
    seconds("staleWhileRevalidate", "stale-while-revalidate", options.staleWhileRevalidate),
    options.mustRevalidate ? "must-revalidate" : undefined,
    options.immutable ? "immutable" : undefined,
    options.noTransform ? "no-transform" : undefined,
  ].filter((p): p is string => p !== undefined);
  if (parts.length === 0) {
    throw optionError(
      "conditional",
      "options",
      "cacheControl: options must name at least one directive (visibility, maxAge, noCache, noStore, ...), got none",
    );
  }
  return parts.join(", ");
}

/** Options of `validators()`. */
export interface ValidatorsOptions {
  /**
   * `Cache-Control` for successful GET/HEAD responses that set neither it nor `Expires`, or
   * `false` to leave them without one. `no-cache` lets clients and caches store the response but
   * makes them revalidate it (cheaply, with the ETag) before each reuse. A response that sets a
   * cookie gets it with `private` added and `public` dropped, unless it says `private` or
   * `no-store` already (RFC 9111 §7.3: `Set-Cookie` does not keep a shared cache from storing it).
   * @default "no-cache"
   */
  defaultCacheControl?: string | false;
  /**
   * Writes (`requiredMethods`) must carry a precondition (`If-Match`, `If-Unmodified-Since` or
   * `If-None-Match`) when their handler checks them (`preconditions(req, current)`): 428 otherwise
   * (RFC 6585 §3), against lost updates.
   * @default false
   */
  required?: boolean;
  /**
   * The methods `required` applies to.
   * @default ["PUT", "PATCH", "DELETE"]
   */
  requiredMethods?: readonly string[];
  /**
   * What a write's `If-Match` / `If-None-Match` tags are compared with: the tag of any
   * representation of the current state (`"any"`: a client that read the XML may PUT JSON with
   * the XML tag; every tag proves which state it saw), or only the tag of the representation
   * the request negotiates, as a GET with its headers would be answered (`"selected"`: RFC 9110
   * §13.1.1 compares with "the selected representation"; a client holding the JSON tag does not
   * pass a write that negotiates HAL+JSON).
   * @default "any"
   */
  writeMatch?: "any" | "selected";
}

const VALIDATORS_OPTIONS = ["defaultCacheControl", "required", "requiredMethods", "writeMatch"];

/** The options of `validators()`, checked and resolved once, at construction. */
export interface ValidatorsConfig {
  /** `Cache-Control` for successful GET/HEAD responses that set none, or `false`. */
  readonly defaultCacheControl: string | false;
  /** The methods that must carry a precondition (upper case), or `undefined` when none must. */
  readonly required: ReadonlySet<string> | undefined;
  /** Whether a write's tags are compared with the negotiated representation's only. */
  readonly selectedOnly: boolean;
}

/** Resolves and refuses the options of `validators()` (`ERR_SVC_CONDITIONAL_<OPTION>`). */
export function resolveValidatorsConfig(options: ValidatorsOptions): ValidatorsConfig {
  checkOptionNames("conditional", options, VALIDATORS_OPTIONS, "validators");
  const cacheControl = options.defaultCacheControl ?? "no-cache";
  if (cacheControl !== false && (typeof cacheControl !== "string" || cacheControl.trim() === "")) {
    throw refusedOption(
      "conditional",
      "defaultCacheControl",
      cacheControl,
      "a non-empty string or false",
      "validators: defaultCacheControl",
    );
  }
  if (options.required !== undefined && typeof options.required !== "boolean") {
    throw refusedOption("conditional", "required", options.required, "true or false", "validators: required");
  }
  const methods = requiredMethodsOption(options.requiredMethods, "validators");
  const writeMatch = options.writeMatch ?? "any";
  if (writeMatch !== "any" && writeMatch !== "selected") {
    throw refusedOption(
      "conditional",
      "writeMatch",
      writeMatch,
      '"any" or "selected"',
      "validators: writeMatch",
    );
  }
  return {
    defaultCacheControl: cacheControl,
    required: options.required === true ? methods : undefined,
    selectedOnly: writeMatch === "selected",
  };
}

/**
 * The `requiredMethods` option of `validators()` and `preconditions()` (`factory`): method tokens
 * (RFC 9110 §9.1), upper-cased; PUT, PATCH and DELETE when left out.
 */
export function requiredMethodsOption(
  value: readonly string[] | undefined,
  factory: string,
): ReadonlySet<string> {
  const methods = value ?? ["PUT", "PATCH", "DELETE"];
  if (!Array.isArray(methods) || !methods.every((m) => typeof m === "string" && isToken(m))) {
    throw refusedOption(
      "conditional",
      "requiredMethods",
      methods,
      "a list of method names (RFC 9110 §9.1 tokens)",
      `${factory}: requiredMethods`,
    );
  }
  return new Set(methods.map((m: string) => m.toUpperCase()));
}
