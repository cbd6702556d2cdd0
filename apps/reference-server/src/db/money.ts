/**
 * Money as the service stores it: an integer count of the currency's minor unit (cents for EUR),
 * so sums and differences are exact on both databases. JSON carries the major unit as a number
 * with at most the currency's minor-unit digits; the two conversions here are exact.
 */

/** The currency of products, orders, payments, salaries and budgets. */
export const SERVICE_CURRENCY = "EUR";

/**
 * The largest amount, in minor units, the service keeps: fifteen digits, so every amount has one
 * exact decimal form as a JSON number (any decimal of at most 15 significant digits survives the
 * round trip through an IEEE 754 double).
 */
export const MAX_MINOR = 999_999_999_999_999;

const digitsCache = new Map<string, number>();

/**
 * The minor-unit digits of an ISO 4217 currency (EUR 2, JPY 0, BHD 3), from the CLDR data
 * `Intl` carries; a well-formed code it does not know gets 2.
 *
 * @example minorDigits("JPY") // 0
 * @see https://www.iso.org/iso-4217-currency-codes.html
 */
export function minorDigits(currency: string): number {
  let digits = digitsCache.get(currency);
  if (digits === undefined) {
    try {
      digits =
        new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions()
          .maximumFractionDigits ?? 2;
    } catch {
      digits = 2;
    }
    // At most 26^3 well-formed codes exist, so the cache is bounded.
    digitsCache.set(currency, digits);
  }
  return digits;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * An amount in the major unit as minor units, or undefined when it has more fraction digits than
 * `digits` (`5e-11`, `0.001` for EUR), is not finite, or is beyond {@link MAX_MINOR}. The number's
 * shortest decimal form decides, so `0.1` is 10 cents and not a binary approximation of it.
 *
 * @example toMinor(12.34, 2) // 1234
 */
export function toMinor(amount: number, digits: number): number | undefined {
  if (!Number.isFinite(amount)) return undefined;
  const match = DECIMAL.exec(String(amount));
  if (!match) return undefined; // exponent forms: beyond 10^21 or finer than 10^-6
  const [, sign, whole = "0", fraction = ""] = match;
  if (fraction.length > digits) return undefined;
  const minor = Number(`${whole}${fraction.padEnd(digits, "0")}`);
  if (!Number.isSafeInteger(minor) || minor > MAX_MINOR) return undefined;
  return sign === "-" && minor !== 0 ? -minor : minor;
}

/**
 * Minor units (a number or a BigInt, as the database returns them) as the major-unit number JSON
 * carries. Exact: the result's shortest decimal form is the amount's own. A BigInt (a sum past
 * 2^53 minor units) is read from its decimal form, so the result is the double nearest the
 * amount: `Number(minor) / 100` rounded twice and gave 999999999999990.1 for 99999999999999000n.
 *
 * @example fromMinor(1234, 2) // 12.34
 */
export function fromMinor(minor: unknown, digits: number): number {
  if (typeof minor === "bigint") {
    const sign = minor < 0n ? "-" : "";
    const abs = String(minor < 0n ? -minor : minor).padStart(digits + 1, "0");
    return Number(`${sign}${abs.slice(0, abs.length - digits)}.${abs.slice(abs.length - digits)}`);
  }
  return Number(minor) / 10 ** digits;
}

/** Minor units of EUR as an `xs:decimal` lexical form with two fraction digits (`12.30`). */
export function minorToDecimal(minor: number, digits = 2): string {
  const sign = minor < 0 ? "-" : "";
  const abs = String(Math.abs(minor)).padStart(digits + 1, "0");
  return digits === 0
    ? `${sign}${abs}`
    : `${sign}${abs.slice(0, abs.length - digits)}.${abs.slice(abs.length - digits)}`;
}
