import { parseQList } from "@svc/kernel";
import { frozenQList, lowestWeights, memoLast } from "./headers.js";

/**
 * RFC 9110 §8.4.1.1, §8.4.1.3: "A recipient SHOULD consider "x-compress" to be equivalent to
 * "compress"", and "x-gzip" to "gzip". Coding names are case-insensitive (§8.4.1), and
 * `parseQList` has lower-cased them.
 */
const canonicalCoding = (coding: string) =>
  coding === "x-gzip" ? "gzip" : coding === "x-compress" ? "compress" : coding;

/**
 * content-coding = token, and `*` is itself a token (RFC 9110 §12.5.3). A coding named twice
 * (`gzip;q=0, gzip`, or `x-gzip;q=0, gzip`) has the lowest weight it is given, as every Accept*
 * field read here: §12.5.3 makes q=0 "not acceptable", and no later duplicate undoes that.
 */
const parsed = memoLast((header) => frozenQList(lowestWeights(parseQList(header), canonicalCoding)));

/**
 * Picks a content coding according to `Accept-Encoding` (RFC 9110 §12.5.3), or `undefined` when
 * nothing the server offers is acceptable, `identity` included (→ 406).
 *
 * - No header: `identity` (any coding would be acceptable, but an uncoded response is always safe).
 * - An empty header: "the user agent does not want any content coding" → `identity`.
 * - `identity` stays acceptable unless `identity;q=0` or `*;q=0` excludes it; when the client lists
 *   codings but neither `identity` nor `*`, identity gets the lowest listed weight, as `negotiator`
 *   does, and a listed coding wins a tie with it wherever `identity` stands in `offers`
 *   (`selectEncoding("gzip", ["identity", "gzip"])` → `"gzip"`).
 * - A coding named twice (`gzip;q=0, gzip`) has the lowest weight it is given, so a refusal
 *   stands; `x-gzip` is `gzip` (§8.4.1.3).
 * - Other ties on q (codings the client named, or `identity` named or given by `*`) go to the
 *   server's order of `offers`.
 *
 * @param offers codings the server can produce, in order of preference (`identity` is implied)
 * @example
 * selectEncoding("gzip, br", ["br", "gzip", "deflate"]); // → "br"
 * selectEncoding("identity;q=0", ["br", "gzip"]); // → undefined
 * selectEncoding("gzip", ["identity", "gzip"]); // → "gzip"
 * selectEncoding("gzip, identity", ["identity", "gzip"]); // → "identity" (named, so the server's order)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.3
 */
export function selectEncoding(
  acceptEncoding: string | undefined,
  offers: readonly string[],
): string | undefined {
  if (acceptEncoding === undefined || acceptEncoding.trim() === "") return "identity";
  const items = parsed(acceptEncoding);
  if (items.length === 0) return "identity";
  let star: number | undefined;
  let identity: number | undefined;
  let minQ = 1;
  for (const item of items) {
    if (item.value === "*") star = item.q;
    else if (item.value === "identity") identity = item.q;
    if (item.q > 0 && item.q < minQ) minQ = item.q;
  }
  const candidates = offers.includes("identity") ? offers : [...offers, "identity"];
  let best: string | undefined;
  let bestQ = 0;
  let bestImplied = false;
  for (const offer of candidates) {
    const coding = canonicalCoding(offer.toLowerCase());
    let q = items.find((item) => item.value === coding)?.q;
    // `identity` the client did not name (nor `*`): acceptable, but only as a fallback.
    const implied = q === undefined && coding === "identity" && identity === undefined && star === undefined;
    if (q === undefined) {
      if (coding === "identity") q = identity ?? (star === 0 ? 0 : (star ?? minQ));
      else q = star ?? 0;
    }
    if (q > bestQ || (q === bestQ && q > 0 && bestImplied && !implied)) {
      best = offer;
      bestQ = q;
      bestImplied = implied;
    }
  }
  return best;
}
