import { MAX_EXTENSION_MEMBERS } from "@svc/kernel/internal";

/**
 * What one error record may carry, the same in every format it is rendered in (the JSON record,
 * RFC 9457 problem details as JSON and as XML, Appendix B): a member cut here is cut everywhere, so
 * no format fails (or succeeds) on a value another one sends.
 */

/**
 * What one error record carries at most, so that an error's text (a 4xx message built from the
 * request, a validation library's list of every failure) cannot make its response any size:
 *
 * - `message`: code points of the record's `message`, the problem's `detail` (RFC 9457 §3.1.4);
 * - `fieldErrors`: entries of `errors`, and `fieldErrorText`: code points of each `field` and
 *   `message` in them;
 * - `extensionMembers`: members of `extensions` (more is refused by `HttpError`), and of any object
 *   inside them (a larger object is sent as `"…"`);
 * - `items`: items of an array inside an extension member (then one more item, `"…"`);
 * - `text`: code points of one string (or member name) inside an extension member, and
 *   `extensionText`: of all of them in one record together;
 * - `extensionValues`: values (strings, numbers, arrays, objects, ...) of all extension members
 *   together, after which each is `"…"` (an array ends with it);
 * - `depth`: {@link MAX_EXTENSION_DEPTH}.
 *
 * Text is cut on code points, never between the two halves of a surrogate pair, to one code point
 * less than the limit followed by {@link CUT_MARK}. The error itself keeps its whole text, for the
 * logger.
 */
export const ERROR_RECORD_LIMITS = Object.freeze({
  message: 4096,
  fieldErrors: 100,
  fieldErrorText: 1024,
  extensionMembers: MAX_EXTENSION_MEMBERS,
  items: 100,
  text: 1024,
  extensionText: 16384,
  extensionValues: 1000,
  depth: 32,
});

/**
 * How many arrays and objects deep an extension member's value is sent, the member's own value
 * being the first: a value nested deeper is the text {@link CUT_MARK}, in every format.
 */
export const MAX_EXTENSION_DEPTH: number = ERROR_RECORD_LIMITS.depth;

/** What stands in the place of what was cut: U+2026 HORIZONTAL ELLIPSIS. */
export const CUT_MARK = "\u2026";

/** Whether JSON has no text for `value`: left out of an object, `null` in an array. */
export function hasNoJson(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

/**
 * `text` cut to at most `limit` code points (at least 1): when longer, its first `limit - 1` code
 * points then {@link CUT_MARK}. Code points, as RFC 8259 §7 and XML 1.0 §2.2 count characters: a
 * surrogate pair is one, kept whole or left out whole, so the cut never leaves a lone surrogate
 * (which UTF-8 cannot encode). Reads at most `limit` code points of a long text.
 */
export function cutText(text: string, limit: number): { text: string; codePoints: number } {
  const max = Math.max(1, limit);
  let i = 0;
  let count = 0;
  let beforeLast = 0; // the index after `max - 1` code points
  while (i < text.length) {
    if (count === max) return { text: `${text.slice(0, beforeLast)}${CUT_MARK}`, codePoints: max };
    if (count === max - 1) beforeLast = i;
    const c = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    i += c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
    count++;
  }
  return { text, codePoints: count };
}

/** What is left of one record's {@link ERROR_RECORD_LIMITS} for its extension members. */
export interface ExtensionBudget {
  values: number;
  text: number;
}

export function extensionBudget(): ExtensionBudget {
  return { values: ERROR_RECORD_LIMITS.extensionValues, text: ERROR_RECORD_LIMITS.extensionText };
}

/** A string inside an extension member, cut to what `budget` has left (see {@link cutText}). */
function budgetedText(text: string, budget: ExtensionBudget): string {
  const cut = cutText(text, Math.min(ERROR_RECORD_LIMITS.text, budget.text));
  budget.text -= cut.codePoints;
  return cut.text;
}

/** {@link CUT_MARK} in the place of a value, charged as the string it is. */
function markIn(budget: ExtensionBudget): string {
  budget.text -= 1;
  return CUT_MARK;
}

/**
 * `value` as JSON.stringify would write it, as plain data (strings, finite numbers, booleans, null,
 * BigInts, arrays, plain objects), so every format renders the same value: ECMA-262
 * SerializeJSONProperty's `toJSON(key)` (a `Date` is its ISO text) and unwrapping of Number,
 * String, Boolean and BigInt objects; a number that is not finite is `null`; SerializeJSONArray's
 * every index up to `length` (an empty slot, a function, a symbol or `undefined` is `null`);
 * SerializeJSONObject's own enumerable members (those JSON has no text for left out). Cut to
 * {@link ERROR_RECORD_LIMITS} from `budget`, each cut marked {@link CUT_MARK}: an array or object
 * beyond {@link MAX_EXTENSION_DEPTH}, or an object of more than `extensionMembers` members, is the
 * mark; an array keeps `items` items then the mark; strings and member names are cut by
 * {@link cutText}. A cycle has no JSON text: the `TypeError` JSON.stringify would throw, which the
 * error handler answers with a logged 500 in every format.
 */
export function jsonData(
  key: string,
  raw: unknown,
  budget: ExtensionBudget = extensionBudget(),
  depth = 0,
  ancestors: object[] = [],
): unknown {
  let value = raw;
  if (value !== null && (typeof value === "object" || typeof value === "bigint")) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") value = toJSON.call(value, key);
  }
  if (value instanceof Number) value = Number(value);
  else if (value instanceof String) value = String(value);
  else if (value instanceof Boolean || value instanceof BigInt) value = value.valueOf();
  if (hasNoJson(value)) return value;
  budget.values -= 1;
  if (typeof value === "string") return budgetedText(value, budget);
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  // A BigInt is written with every digit (stringifyJson): one too long to be any id is cut.
  if (typeof value === "bigint")
    return value.toString().length > ERROR_RECORD_LIMITS.text ? markIn(budget) : value;
  if (typeof value !== "object" || value === null) return value;
  if (ancestors.includes(value)) throw new TypeError("an extension member's value holds a cycle");
  if (depth >= MAX_EXTENSION_DEPTH) return markIn(budget);
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      const items: unknown[] = [];
      const length = value.length;
      for (let i = 0; i < length; i++) {
        if (i === ERROR_RECORD_LIMITS.items || budget.values <= 0) {
          items.push(CUT_MARK);
          break;
        }
        const item = jsonData(String(i), value[i], budget, depth + 1, ancestors);
        items.push(hasNoJson(item) ? null : item);
      }
      return items;
    }
    const names = Object.keys(value);
    if (names.length > ERROR_RECORD_LIMITS.extensionMembers) return markIn(budget);
    const members: Record<string, unknown> = {};
    for (const name of names) {
      const member =
        budget.values <= 0
          ? CUT_MARK
          : jsonData(name, (value as Record<string, unknown>)[name], budget, depth + 1, ancestors);
      // defineProperty: a member named `__proto__` (JSON.parse makes one) stays a member.
      if (!hasNoJson(member)) {
        Object.defineProperty(members, budgetedText(name, budget), {
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
