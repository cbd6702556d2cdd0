/**
 * What one error record may carry, the same in every format it is rendered in (the JSON record,
 * RFC 9457 problem details as JSON and as XML, Appendix B): a member cut here is cut everywhere, so
 * no format fails (or succeeds) on a value another one sends.
 */

/**
 * How many arrays and objects deep an extension member's value is sent, the member's own value
 * being the first: a value nested deeper is the text {@link CUT_MARK}, in every format.
 */
export const MAX_EXTENSION_DEPTH = 32;

/** What stands in the place of what was cut: U+2026 HORIZONTAL ELLIPSIS. */
export const CUT_MARK = "\u2026";

/** Whether JSON has no text for `value`: left out of an object, `null` in an array. */
export function hasNoJson(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

/**
 * `value` as JSON.stringify would write it, as plain data (strings, finite numbers, booleans, null,
 * BigInts, arrays, plain objects), so every format renders the same value: ECMA-262
 * SerializeJSONProperty's `toJSON(key)` (a `Date` is its ISO text) and unwrapping of Number,
 * String, Boolean and BigInt objects; a number that is not finite is `null`; SerializeJSONArray's
 * every index up to `length` (an empty slot, a function, a symbol or `undefined` is `null`);
 * SerializeJSONObject's own enumerable members (those JSON has no text for left out). Beyond
 * {@link MAX_EXTENSION_DEPTH} an array or object is {@link CUT_MARK}. A cycle has no JSON text:
 * the `TypeError` JSON.stringify would throw, which the error handler answers with a logged 500
 * in every format.
 */
export function jsonData(key: string, raw: unknown, depth = 0, ancestors: object[] = []): unknown {
  let value = raw;
  if (value !== null && (typeof value === "object" || typeof value === "bigint")) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") value = toJSON.call(value, key);
  }
  if (value instanceof Number) value = Number(value);
  else if (value instanceof String) value = String(value);
  else if (value instanceof Boolean || value instanceof BigInt) value = value.valueOf();
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value !== "object" || value === null) return value;
  if (ancestors.includes(value)) throw new TypeError("an extension member's value holds a cycle");
  if (depth >= MAX_EXTENSION_DEPTH) return CUT_MARK;
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      const items: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        const item = jsonData(String(i), value[i], depth + 1, ancestors);
        items.push(hasNoJson(item) ? null : item);
      }
      return items;
    }
    const members: Record<string, unknown> = {};
    for (const name of Object.keys(value)) {
      const member = jsonData(name, (value as Record<string, unknown>)[name], depth + 1, ancestors);
      // defineProperty: a member named `__proto__` (JSON.parse makes one) stays a member.
      if (!hasNoJson(member)) {
        Object.defineProperty(members, name, {
          value: member,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    return members;
  } finally {
    ancestors.pop();
  }
}
