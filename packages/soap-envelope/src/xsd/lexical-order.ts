/** Digits a duration's component may have for a range facet to compare it exactly. */
const DURATION_DIGITS = 30;

/** A valid duration as its months and seconds, both signed (exact decimal strings for seconds). */
function durationParts(v: string): { months: bigint; seconds: string } | undefined {
  const m =
    /^(-?)P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d+))?S)?)?$/.exec(v);
  if (m === null) return undefined;
  const parts = m.slice(2, 8).map((d) => d ?? "0");
  if (parts.some((d) => d.length > DURATION_DIGITS) || (m[8] ?? "").length > DURATION_DIGITS)
    return undefined;
  const [y, mo, d, h, mi, s] = parts.map((p) => BigInt(p)) as [
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
  ];
  const sign = m[1] === "-" ? -1n : 1n;
  const whole = (d * 86400n + h * 3600n + mi * 60n + s) * sign;
  const frac = m[8] ?? "";
  const negative = sign < 0n && (whole !== 0n || /[1-9]/.test(frac));
  const seconds = `${negative && whole === 0n ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
  return { months: (y * 12n + mo) * sign, seconds };
}

/** -1, 0, 1, or NaN when the durations are not ordered (Part 2 §3.2.6.2). */
export function compareDuration(a: string, b: string): number {
  const x = durationParts(a);
  const y = durationParts(b);
  if (x === undefined || y === undefined) return Number.NaN;
  const bySeconds = compareDecimal(x.seconds, y.seconds);
  if (x.months === y.months) return bySeconds;
  const byMonths = x.months < y.months ? -1 : 1;
  if (bySeconds === 0 || bySeconds === byMonths) return byMonths;
  // Months and seconds disagree: a month is 28 to 31 days, so x - y lies between these bounds.
  const months = Number(x.months - y.months);
  const seconds = Number(x.seconds) - Number(y.seconds);
  const low = seconds + months * (months > 0 ? 28 : 31) * 86400;
  const high = seconds + months * (months > 0 ? 31 : 28) * 86400;
  if (low > 0) return 1;
  if (high < 0) return -1;
  return Number.NaN;
}

/**
 * An xs:decimal lexical's sign, integer digits without leading zeros and fraction digits without
 * trailing zeros. Scanned with indices: `f.replace(/0+$/, "")` is quadratic in a run of zeros
 * followed by another digit on a backtracking engine (it retries from every zero of the run), so
 * a fraction of 100,000 zeros and a 1 cost about 25 s of CPU.
 */
export function splitDecimal(v: string): { negative: boolean; int: string; frac: string } {
  const first = v.charCodeAt(0);
  const negative = first === 0x2d;
  let start = negative || first === 0x2b ? 1 : 0;
  let dot = v.indexOf(".", start);
  if (dot === -1) dot = v.length;
  while (start < dot && v.charCodeAt(start) === 0x30) start++;
  let end = v.length;
  while (end > dot + 1 && v.charCodeAt(end - 1) === 0x30) end--;
  const int = v.slice(start, dot);
  const frac = end > dot + 1 ? v.slice(dot + 1, end) : "";
  return { negative: negative && (int !== "" || frac !== ""), int, frac };
}

/** Compares two xs:decimal lexicals exactly, without binary floating point. */
export function compareDecimal(a: string, b: string): number {
  const x = splitDecimal(a);
  const y = splitDecimal(b);
  if (x.negative !== y.negative) return x.negative ? -1 : 1;
  const sign = x.negative ? -1 : 1;
  if (x.int.length !== y.int.length) return sign * (x.int.length < y.int.length ? -1 : 1);
  if (x.int !== y.int) return sign * (x.int < y.int ? -1 : 1);
  const len = Math.max(x.frac.length, y.frac.length);
  const fx = x.frac.padEnd(len, "0");
  const fy = y.frac.padEnd(len, "0");
  if (fx === fy) return 0;
  return sign * (fx < fy ? -1 : 1);
}
