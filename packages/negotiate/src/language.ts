import { parseQList, type QItem } from "@svc/kernel";
import { frozenQList, lowestWeights, memoLast } from "./headers.js";

// RFC 4647 §2.1: language-range = (1*8ALPHA *("-" 1*8alphanum)) / "*" (bounded repetition: linear).
const LANGUAGE_RANGE = /^(?:\*|[a-z]{1,8}(?:-[a-z0-9]{1,8})*)$/;
const isLanguageRange = (value: string) => LANGUAGE_RANGE.test(value);

const NONE: readonly QItem[] = Object.freeze([]);

/**
 * A range named twice (`de;q=0, de`) has the lowest weight it is given, as in `Accept-Encoding`:
 * q=0 is "not acceptable" (RFC 9110 §12.4.2) and no duplicate undoes it. Ranges are compared
 * case-insensitively (RFC 4647 §2), as `parseQList` lower-cases them.
 */
const parsed = memoLast((header) => frozenQList(lowestWeights(parseQList(header, isLanguageRange))));

/** How well `range` names `tag`: 3 exact, 2 range is a prefix of the tag, 1 tag is a prefix of the range, 0 `*`. */
function languageSpecificity(range: string, tag: string): number {
  if (range === "*") return 0;
  if (range === tag) return 3;
  if (tag.startsWith(`${range}-`)) return 2;
  // A client asking for `de-CH` is better served by `de` than by nothing (RFC 4647 §3.4 lookup).
  if (range.startsWith(`${tag}-`)) return 1;
  return -1;
}

/**
 * Picks the language the client prefers according to `Accept-Language` (RFC 9110 §12.5.4, basic
 * filtering of RFC 4647 §3.3.1 with a lookup fallback from `de-CH` to `de`, which a refusal such
 * as `de-CH;q=0` does not take: it refuses `de-CH` only). An absent, empty or
 * wholly invalid header selects the first offer; `undefined` means the client excluded every offer.
 * A range listed twice has the lowest weight it is given (`de, de;q=0` refuses `de`).
 * Ties on q go to the more specific match, then to the server's order.
 *
 * @example
 * selectLanguage("fr-CH, fr;q=0.9, en;q=0.8", ["en", "fr"]); // → "fr"
 * selectLanguage("de-AT", ["en", "de"]); // → "de"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.4
 */
export function selectLanguage(
  acceptLanguage: string | undefined,
  offers: readonly string[],
): string | undefined {
  const first = offers[0];
  if (first === undefined) return undefined;
  const items = acceptLanguage === undefined ? NONE : parsed(acceptLanguage);
  if (items.length === 0) return first;
  let best: string | undefined;
  let bestQ = 0;
  let bestS = -1;
  for (const offer of offers) {
    const tag = offer.toLowerCase();
    let q = 0;
    let s = -1;
    for (const item of items) {
      const is = languageSpecificity(item.value, tag);
      // The fallback from `de-CH` to `de` serves a request; a refusal (q=0, RFC 9110 §12.4.2:
      // "not acceptable") of `de-CH` names that variant only, which `de` is not (RFC 4647 §3.3.1:
      // a range matches a tag equal to it or that it is a prefix of), so it leaves `de` to the
      // client's other ranges (`*`) instead of refusing the whole language.
      if (is === 1 && item.q === 0) continue;
      // Ranges naming the tag equally well (de-CH and de-AT both falling back to de) give it the
      // higher weight: the order of a weighted list carries no preference (RFC 9110 §12.4.2), so
      // "de-CH;q=0.1, de-AT;q=0.9" and "de-AT;q=0.9, de-CH;q=0.1" select the same language.
      if (is > s || (is === s && item.q > q)) {
        s = is;
        q = item.q;
      }
    }
    if (s < 0 || q <= 0) continue;
    if (best === undefined || q > bestQ || (q === bestQ && s > bestS)) {
      best = offer;
      bestQ = q;
      bestS = s;
    }
  }
  return best;
}
