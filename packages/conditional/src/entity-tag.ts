import { trimOws } from "@svc/kernel";
import { refusedOption } from "@svc/kernel/internal";
import { isOws } from "./ows.js";

/** One entity tag of a header: its opaque part (with quotes) and whether it was weak. */
interface ParsedTag {
  weak: boolean;
  opaque: string;
}

const ENTITY_TAG = /^(W\/)?("[\x21\x23-\x7e\x80-\xff]*")$/;

function parseTag(tag: string): ParsedTag | undefined {
  // OWS only (RFC 9110 §5.6.3): `"7"<A0>` is no entity-tag (§8.8.3).
  const m = ENTITY_TAG.exec(trimOws(tag));
  return m?.[2] === undefined ? undefined : { weak: m[1] !== undefined, opaque: m[2] };
}

/** Whether `tag` is one entity-tag (RFC 9110 §8.8.3): `"v7"` or `W/"v7"`, not `v7`. */
export function isEntityTag(tag: string): boolean {
  return typeof tag === "string" && parseTag(tag) !== undefined;
}

const OPAQUE_TAG = /^"[\x21\x23-\x7e\x80-\xff]*"$/;

/**
 * Parses an `If-Match` / `If-None-Match` value: `"*"` or a list of entity tags (RFC 9110 §13.1.1,
 * §13.1.2: `#entity-tag`, with the empty elements and optional whitespace of §5.6.1). A malformed
 * member (`x"v1"`, two tags without a comma between them, `"x,"v1"`) is dropped up to the next
 * comma outside a quoted string and never matches. One pass, each character looked at a bounded number of times, however long or
 * hostile the value: a backtracking expression scanning for tags took quadratic time on a run of
 * spaces.
 *
 * A `value` that is not a string is refused with a `TypeError` of code
 * `ERR_SVC_CONDITIONAL_VALUE`, `undefined` included: an absent field is no list (an empty list
 * fails every `If-Match`, an absent one holds), so the caller tests for it first, as §13.2.2
 * evaluates each precondition only when it is present.
 *
 * @example parseEtagList('"a", W/"b"') // → [{ weak: false, opaque: '"a"' }, { weak: true, opaque: '"b"' }]
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.1.1
 */
export function parseEtagList(value: string): "*" | ParsedTag[] {
  if (typeof value !== "string")
    throw refusedOption(
      "conditional",
      "value",
      value,
      'a string: an If-Match or If-None-Match field value ("*" or entity-tags); an absent field is no list, so test for undefined first',
      "parseEtagList: value",
    );
  // `"*"` (§13.1.1) with OWS around it at most: `<A0>*` is a malformed list, not `*`.
  if (trimOws(value) === "*") return "*";
  const out: ParsedTag[] = [];
  const n = value.length;
  let i = 0;
  while (i < n) {
    const c = value[i];
    if (c === "," || isOws(c)) {
      i++;
      continue;
    }
    const start = i;
    const weak = value.startsWith("W/", i);
    const open = weak ? i + 2 : i;
    // entity-tag = [ weak ] opaque-tag; opaque-tag = DQUOTE *etagc DQUOTE (§8.8.3)
    const close = value[open] === '"' ? value.indexOf('"', open + 1) : -1;
    if (close !== -1) {
      let end = close + 1;
      while (isOws(value[end])) end++;
      const opaque = value.slice(open, close + 1);
      if ((end === n || value[end] === ",") && OPAQUE_TAG.test(opaque)) {
        out.push({ weak, opaque });
        i = end;
        continue;
      }
    }
    i = afterMember(value, start);
  }
  return out;
}

/**
 * Where the list member starting at `start` ends: after the next comma outside a quoted string,
 * or at the end of `value`. RFC 9110 §8.8.3 lets an opaque-tag hold a comma (etagc includes
 * %x2C), and §5.6.1 separates list members by the commas between them: `"x,"v1"` is one
 * (malformed) member, the tag `"x,"` followed by `v1"`, and `"v1"` is no member of it. Counting
 * from the member's start to its first comma made the rest, `"v1"`, a member of its own, which
 * matched. No escapes: etagc has no quoted-pair, so each DQUOTE opens or closes a quoted string.
 */
function afterMember(value: string, start: number): number {
  let quoted = false;
  for (let j = start; j < value.length; j++) {
    const c = value[j];
    if (c === '"') quoted = !quoted;
    else if (c === "," && !quoted) return j + 1;
  }
  return value.length;
}

/** What {@link strongMatch} and {@link weakMatch} accept as a tag. */
const TAG_ACCEPTS =
  'a string: an entity-tag ("v7" or W/"v7"); a missing tag matches none, so test for undefined first';

/** `tag` parsed for a comparison (a malformed one compares with nothing), or refused. */
function comparedTag(tag: string, label: string): ParsedTag | undefined {
  if (typeof tag !== "string") throw refusedOption("conditional", "tag", tag, TAG_ACCEPTS, label);
  return parseTag(tag);
}

/**
 * RFC 9110 §8.8.3.2 strong comparison: both tags strong and identical. A malformed tag (`v7`)
 * matches none; anything but a string, `undefined` and `null` included, is refused with a
 * `TypeError` of code `ERR_SVC_CONDITIONAL_TAG` (a resource without a tag has nothing to compare:
 * the caller tests for it, as `evaluateIfRange` does).
 * @example strongMatch('"a"', '"a"') // → true; strongMatch('W/"a"', '"a"') // → false
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.3.2
 */
export function strongMatch(a: string, b: string): boolean {
  const x = comparedTag(a, "strongMatch: a");
  const y = comparedTag(b, "strongMatch: b");
  return x !== undefined && y !== undefined && !x.weak && !y.weak && x.opaque === y.opaque;
}

/**
 * RFC 9110 §8.8.3.2 weak comparison: opaque parts identical, weakness ignored. Its arguments are
 * refused as {@link strongMatch}'s are.
 * @example weakMatch('W/"a"', '"a"') // → true
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.3.2
 */
export function weakMatch(a: string, b: string): boolean {
  const x = comparedTag(a, "weakMatch: a");
  const y = comparedTag(b, "weakMatch: b");
  return x !== undefined && y !== undefined && x.opaque === y.opaque;
}

/** True when `list` (an If-Match / If-None-Match value) contains a tag matching `current`. */
export function listMatches(list: "*" | ParsedTag[], current: string, strong: boolean): boolean {
  if (list === "*") return true;
  const cur = parseTag(current);
  if (!cur) return false;
  return list.some((t) => t.opaque === cur.opaque && (!strong || (!t.weak && !cur.weak)));
}
