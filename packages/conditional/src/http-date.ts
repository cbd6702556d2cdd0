import type { IncomingHttpHeaders } from "node:http";
import { fieldLines, trimOws } from "@svc/kernel";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH = `(?<month>${MONTHS.join("|")})`;
const TIME = "(?<h>\\d{2}):(?<m>\\d{2}):(?<s>\\d{2})";

// RFC 9110 §5.6.7, the three formats a recipient MUST accept, each anchored and without nested
// repetition (linear on any input):
//   IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
//   rfc850-date  Sunday, 06-Nov-94 08:49:37 GMT
//   asctime-date Sun Nov  6 08:49:37 1994
const IMF_FIXDATE = new RegExp(
  `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (?<day>\\d{2}) ${MONTH} (?<year>\\d{4}) ${TIME} GMT$`,
);
const RFC850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (?<day>\\d{2})-${MONTH}-(?<year>\\d{2}) ${TIME} GMT$`,
);
const ASCTIME_DATE = new RegExp(
  `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} (?<day>[ \\d]\\d) ${TIME} (?<year>\\d{4})$`,
);

/** Each format with whether its year has two digits (rfc850-date). */
const FORMATS: readonly (readonly [RegExp, boolean])[] = [
  [IMF_FIXDATE, false],
  [RFC850_DATE, true],
  [ASCTIME_DATE, false],
];

/**
 * RFC 9110 §5.6.7: "Recipients of a timestamp value in rfc850-date format, which uses a two-digit
 * year, MUST interpret a timestamp that appears to be more than 50 years in the future as
 * representing the most recent year in the past that had the same last two digits."
 */
function fullYear(twoDigits: number, now: Date): number {
  const current = now.getUTCFullYear();
  const year = current - (current % 100) + twoDigits;
  return year > current + 50 ? year - 100 : year;
}

/** Seconds since the epoch of a calendar date and time of day, or `undefined` if there is no such date. */
function toSeconds(
  year: number,
  month: string,
  day: number,
  h: string,
  m: string,
  s: string,
): number | undefined {
  const monthIndex = MONTHS.indexOf(month);
  const hours = Number(h);
  const minutes = Number(m);
  const seconds = Number(s);
  // §5.6.7: hour 00-23, minute 00-59, second 00-60 (a leap second).
  if (hours > 23 || minutes > 59 || seconds > 60) return undefined;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(year, monthIndex, day);
  // 31 Feb is not a date: Date would roll it over into March.
  if (date.getUTCMonth() !== monthIndex || date.getUTCDate() !== day) return undefined;
  return Math.floor(date.getTime() / 1000) + hours * 3600 + minutes * 60 + seconds;
}

/**
 * Parses an HTTP-date (RFC 9110 §5.6.7) into whole seconds since the epoch: IMF-fixdate and the
 * two obsolete formats, rfc850-date and asctime-date, which "a recipient that parses a timestamp
 * value in an HTTP field MUST accept". Anything else, including what `Date.parse` would guess at
 * (`2026-01-01`, a list of two dates, `31 Feb`), is `undefined`, so a precondition carrying it is
 * ignored as §13.1.3 and §13.1.4 require.
 *
 * @example parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT") // → 784111777
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7
 */
export function parseHttpDate(value: string | undefined, now: Date = new Date()): number | undefined {
  if (value === undefined) return undefined;
  // OWS only (§5.6.3): a date with U+00A0 beside it is no HTTP-date, to be ignored.
  const text = trimOws(value);
  for (const [format, twoDigitYear] of FORMATS) {
    const g = format.exec(text)?.groups;
    if (g === undefined) continue;
    const year = twoDigitYear ? fullYear(Number(g.year), now) : Number(g.year);
    return toSeconds(year, g.month as string, Number(g.day), g.h as string, g.m as string, g.s as string);
  }
  return undefined;
}

/** The date preconditions: each one HTTP-date, of which Node keeps only the first field line. */
const DATE_FIELDS = ["if-modified-since", "if-unmodified-since"] as const;

/**
 * The request's header fields with `If-Modified-Since` and `If-Unmodified-Since` as received. RFC
 * 9110 §5.3: field lines of one name combine into one list, "separated by a comma"; Node keeps the
 * first line of these two fields and drops the others, so two dates looked like one valid date.
 * Joined, such a value is no HTTP-date, and is ignored as §13.1.3 ("A recipient MUST ignore
 * If-Modified-Since if [...] the field value has more than one member") and §13.1.4 ("including
 * when the field value appears to be a list of dates") require. `req.headers` itself unless one
 * of them came on several lines (read only when present: the usual request pays nothing).
 */
export function withDateLists(req: {
  headers: IncomingHttpHeaders;
  headersDistinct?: NodeJS.Dict<string[]> | undefined;
  /** Read when `headersDistinct` is absent (a pipeline request carries the raw field lines). */
  rawHeaders?: readonly string[] | undefined;
}): IncomingHttpHeaders {
  let headers = req.headers;
  for (const name of DATE_FIELDS) {
    if (headers[name] === undefined) continue;
    const lines = req.headersDistinct?.[name] ?? fieldLines(req.rawHeaders, name);
    if (lines.length < 2) continue;
    if (headers === req.headers) headers = { ...headers };
    headers[name] = lines.join(", ");
  }
  return headers;
}
