import { checkOptionNames } from "@svc/kernel/internal";
import { optionError } from "./option-error.js";
import { isCalendarDay } from "./scheme.js";

/** When a version is (or will be) deprecated and sunset, and where that is explained. */
export interface DeprecationPolicy {
  /**
   * RFC 9745: the moment the version is (or becomes) deprecated. A `Date`, or an ISO 8601 string:
   * a date (`2026-01-01`, UTC) or a date-time with `Z` or an offset (`2026-01-01T00:00:00Z`).
   */
  deprecation: Date | string;
  /**
   * RFC 8594: the moment the version stops answering. Must not be earlier than `deprecation`.
   * @default undefined (no `Sunset` header)
   */
  sunset?: Date | string;
  /**
   * Documentation of the deprecation, sent as `Link: <...>; rel="deprecation"` (RFC 9745 §4).
   * @default undefined
   */
  link?: string;
  /**
   * Documentation of the sunset, sent as `Link: <...>; rel="sunset"` (RFC 8594 §6).
   * @default undefined
   */
  sunsetLink?: string;
}

/** A policy resolved once, at construction, into the exact header values. */
export interface DeprecationHeaders {
  deprecation: string;
  sunset: string | undefined;
  links: string[];
}

/**
 * The strings read as one instant everywhere: the ECMAScript date time string format (a profile
 * of ISO 8601), a date alone (UTC) or a date-time with `Z` or an offset. RFC 9745 §2 and RFC 8594
 * §3 each send one instant; `Date.parse` reads a date-time without `Z` or an offset in the
 * server's local time zone (replicas in different zones sent different Deprecation and Sunset
 * values) and any other string by the engine's own rules (`"1"` is 2001-01-01 local time).
 */
const INSTANT =
  /^([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?:[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2}))?$/;

function parseInstant(value: string): Date | undefined {
  const m = INSTANT.exec(value);
  if (m === null) return undefined;
  const [, year, month, day] = m;
  if (month !== undefined && day !== undefined && !isCalendarDay(Number(year), Number(month), Number(day))) {
    return undefined;
  }
  return new Date(value);
}

function toDate(value: Date | string, label: string, field: string): Date {
  const date =
    value instanceof Date
      ? new Date(value.getTime())
      : typeof value === "string"
        ? parseInstant(value)
        : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw optionError(
      `deprecated.${field}`,
      value,
      "a valid Date or ISO 8601 string (2026-01-01, or a date-time with Z or an offset)",
      `${label}: ${field}`,
    );
  }
  return date;
}

/**
 * RFC 8594 §3: `Sunset = HTTP-date`; RFC 9110 §5.6.7: in an IMF-fixdate `year = 4DIGIT`. A date
 * after 9999 (or before 0001) has no such year, and `toUTCString()` would write `10000` or `-0001`,
 * a field value no recipient can parse. (Deprecation is an RFC 9651 Date, integer seconds: any
 * year a `Date` holds can be written.)
 */
function checkHttpDateYear(date: Date, label: string): void {
  const year = date.getUTCFullYear();
  if (year < 1 || year > 9999) {
    const accepted = "a date from year 0001 to 9999 (an HTTP-date, RFC 9110 §5.6.7)";
    throw optionError("deprecated.sunset", date.toISOString(), accepted, `${label}: sunset`);
  }
}

function checkLink(value: string, label: string, field: string): string {
  // A Link target is a URI-Reference inside <...> (RFC 8288 §3): no angle brackets, quotes or
  // whitespace, and ASCII only (RFC 3986 §2: an IRI's other characters are percent-encoded). A
  // control character or one above U+00FF made Node refuse the Link header, so every response
  // of the deprecated version was a 500.
  let valid = typeof value === "string" && value !== "" && !/[^\x21-\x7e]|[<>"]/.test(value);
  try {
    if (valid) new URL(value, "http://base.invalid/");
  } catch {
    valid = false;
  }
  if (!valid) throw optionError(`deprecated.${field}`, value, "a URI", `${label}: ${field}`);
  return value;
}

/**
 * RFC 9745 §2: the Deprecation field is an Item Structured Header whose value is a Date
 * (RFC 9651 §3.3.7): `@` followed by integer seconds since the epoch.
 *
 * @example formatDeprecation(new Date("2026-01-01T00:00:00Z")) // "@1767225600"
 * @see https://www.rfc-editor.org/rfc/rfc9745#section-2
 */
export function formatDeprecation(date: Date): string {
  return `@${Math.floor(date.getTime() / 1000)}`;
}

/**
 * RFC 8594 §3: `Sunset = HTTP-date` (the IMF-fixdate of RFC 9110 §5.6.7).
 *
 * @example formatSunset(new Date("2026-07-01T00:00:00Z")) // "Wed, 01 Jul 2026 00:00:00 GMT"
 * @see https://www.rfc-editor.org/rfc/rfc8594#section-3
 */
export function formatSunset(date: Date): string {
  return date.toUTCString();
}

/**
 * Validates a deprecation policy and turns it into header values; a sunset earlier than the
 * deprecation, an invalid date or a malformed link is a `TypeError` at construction, with `code`
 * `ERR_SVC_VERSIONING_DEPRECATED_<FIELD>` (`ERR_SVC_VERSIONING_DEPRECATED_SUNSET`, ...).
 *
 * @example deprecationHeaders({ deprecation: "2026-01-01T00:00:00Z", sunset: "2026-07-01T00:00:00Z" }, "version 1")
 * @see https://www.rfc-editor.org/rfc/rfc9745#section-3
 */
export function deprecationHeaders(policy: DeprecationPolicy, label: string): DeprecationHeaders {
  if (policy === null || typeof policy !== "object") {
    throw optionError(
      "deprecated",
      policy,
      "a deprecation policy object { deprecation, sunset?, link?, sunsetLink? }",
      label,
    );
  }
  checkOptionNames(
    "versioning",
    policy,
    ["deprecation", "sunset", "link", "sunsetLink"],
    label,
    "deprecated",
  );
  const deprecation = toDate(policy.deprecation, label, "deprecation");
  const sunset = policy.sunset === undefined ? undefined : toDate(policy.sunset, label, "sunset");
  if (sunset !== undefined) checkHttpDateYear(sunset, label);
  // RFC 9745 §3: "the value of Sunset [...] SHOULD NOT be earlier than the value of Deprecation"
  if (sunset !== undefined && sunset.getTime() < deprecation.getTime()) {
    const accepted = `no earlier than deprecation (${deprecation.toISOString()})`;
    throw optionError("deprecated.sunset", sunset.toISOString(), accepted, `${label}: sunset`);
  }
  const links: string[] = [];
  if (policy.link !== undefined) links.push(`<${checkLink(policy.link, label, "link")}>; rel="deprecation"`);
  if (policy.sunsetLink !== undefined) {
    links.push(`<${checkLink(policy.sunsetLink, label, "sunsetLink")}>; rel="sunset"`);
  }
  return {
    deprecation: formatDeprecation(deprecation),
    sunset: sunset === undefined ? undefined : formatSunset(sunset),
    links,
  };
}
