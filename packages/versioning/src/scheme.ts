import type { ApiVersion } from "@svc/kernel";

/**
 * How an API spells its versions, read off the configured `versions`:
 * - `integer`: numbers `1`, `2` (`/v2/`, `API-Version: 2`);
 * - `major.minor`: strings `"1.0"`, `"1.2"` (`/v1.2/`, `API-Version: 1.2`), ordered per component
 *   (`1.10` after `1.9`);
 * - `date`: ISO 8601 calendar dates `"2026-11-25"` (`API-Version: 2026-11-25`, as Azure's
 *   `api-version` and Stripe's `Stripe-Version`), ordered chronologically.
 */
export type VersionScheme = "integer" | "major.minor" | "date";

/** One scheme's grammar and order. Internal. */
export interface SchemeRules {
  readonly name: VersionScheme;
  /**
   * What looks like a version of the scheme in a path prefix (any number of digits): it names a
   * version, one the API may not have (`/v99999999999`, `/v2026-02-30`).
   */
  readonly shape: RegExp;
  /** The version of a spelling that is one, else `undefined`: one spelling per version. */
  read(text: string): ApiVersion | undefined;
  /** Negative when `a` comes before `b`. */
  compare(a: ApiVersion, b: ApiVersion): number;
  /** An example, for messages. */
  readonly example: string;
}

// One spelling per version: no leading zero. RFC 3986 §6.2: `/v01/x` and `/v1/x` are different
// URIs that no normalisation makes equal, and RFC 6838 §4.2 compares media type names as strings,
// so `vnd.svc.v01+json` is not `vnd.svc.v1+json`; read as version 1, every version had many
// URLs (duplicate cache entries, intermediaries' path rules bypassed by another spelling) and a
// client asking for `v01` got a response labelled with a type it did not list.
const NUMBER = /^(?:0|[1-9]\d{0,8})$/;
const MAJOR_MINOR = /^(?:0|[1-9]\d{0,8})\.(?:0|[1-9]\d{0,8})$/;
// RFC 3339 §5.6 `full-date` (ISO 8601 calendar date, four-digit year).
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether day `day` exists in month `month` (1-12) of `year`: `Date` rolls Feb 30 over to Mar 2. */
export function isCalendarDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12) return false;
  const last = new Date(0);
  last.setUTCFullYear(year, month, 0);
  return day >= 1 && day <= last.getUTCDate();
}

function majorMinor(v: ApiVersion): [number, number] {
  const [major = "", minor = ""] = String(v).split(".");
  return [Number(major), Number(minor)];
}

const INTEGER: SchemeRules = {
  name: "integer",
  shape: /^(?:0|[1-9]\d*)$/,
  read: (text) => (NUMBER.test(text) ? Number(text) : undefined),
  compare: (a, b) => Number(a) - Number(b),
  example: "2",
};

const MAJOR_MINOR_RULES: SchemeRules = {
  name: "major.minor",
  shape: /^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)$/,
  read: (text) => (MAJOR_MINOR.test(text) ? text : undefined),
  compare(a, b) {
    const [am, an] = majorMinor(a);
    const [bm, bn] = majorMinor(b);
    return am - bm || an - bn;
  },
  example: "1.2",
};

const DATE_RULES: SchemeRules = {
  name: "date",
  shape: DATE,
  read(text) {
    const m = DATE.exec(text);
    if (m === null) return undefined;
    return isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3])) ? text : undefined;
  },
  // Four-digit years, two-digit months and days: the string order is the calendar's.
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  example: "2026-11-25",
};

/** The rules of each scheme. Internal. */
export const SCHEMES: Readonly<Record<VersionScheme, SchemeRules>> = {
  integer: INTEGER,
  "major.minor": MAJOR_MINOR_RULES,
  date: DATE_RULES,
};

/**
 * The scheme of one configured version: a positive integer number, a `major.minor` string or an
 * ISO date string; `undefined` for anything else (`"2"`, `1.5`, `"2026-02-30"`, `"v1"`).
 */
export function schemeOf(version: unknown): VersionScheme | undefined {
  if (typeof version === "number") {
    return Number.isInteger(version) && version >= 1 && version <= 999_999_999 ? "integer" : undefined;
  }
  if (typeof version !== "string") return undefined;
  if (MAJOR_MINOR_RULES.read(version) !== undefined) return "major.minor";
  if (DATE_RULES.read(version) !== undefined) return "date";
  return undefined;
}

/**
 * The scheme of a key of an object keyed by version (`deprecated`, `versioned()`'s handlers):
 * object keys are strings, so `"2"` is the integer 2 there.
 */
export function keyVersion(key: string, rules: SchemeRules): ApiVersion | undefined {
  if (rules.name === "integer") return /^[1-9]\d{0,8}$/.test(key) ? Number(key) : undefined;
  return rules.read(key);
}
