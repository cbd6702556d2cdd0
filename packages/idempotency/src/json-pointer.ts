/**
 * A JSON Pointer (RFC 6901) as its reference tokens, or undefined when `pointer` is not one.
 * RFC 6901 §3: `json-pointer = *( "/" reference-token )`, and `~` only as `~0` or `~1`; so the
 * empty string is the whole document and any other pointer starts with `/`.
 *
 * @example parseJsonPointer("/items/0/a~1b") // ["items", "0", "a/b"]
 * @see https://www.rfc-editor.org/rfc/rfc6901#section-3
 */
export function parseJsonPointer(pointer: string): string[] | undefined {
  if (typeof pointer !== "string") return undefined;
  if (pointer === "") return [];
  if (!pointer.startsWith("/") || /~(?![01])/.test(pointer)) return undefined;
  // §4: "first transforming any occurrence of the sequence '~1' to '/', and then transforming
  // any occurrence of the sequence '~0' to '~'", so `~01` is the text `~1`.
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** What {@link selectJsonPointer} answers for a pointer that references no value. */
export const NOTHING: unique symbol = Symbol("nothing");

/** RFC 6901 §4: an array index is `0` or digits without a leading zero. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/**
 * The value `tokens` reference in `document`, or {@link NOTHING}: a member that is absent (own
 * members only, so `/constructor` selects nothing), an index past the end, `-` (§4: "the
 * (nonexistent) member after the last array element") or a token below a primitive.
 *
 * @example selectJsonPointer({ a: [1, 2] }, ["a", "1"]) // 2
 * @see https://www.rfc-editor.org/rfc/rfc6901#section-4
 */
export function selectJsonPointer(document: unknown, tokens: readonly string[]): unknown {
  let value = document;
  for (const token of tokens) {
    if (Array.isArray(value)) {
      if (!ARRAY_INDEX.test(token) || Number(token) >= value.length) return NOTHING;
      value = value[Number(token)];
    } else if (value !== null && typeof value === "object" && Object.hasOwn(value, token)) {
      value = (value as Record<string, unknown>)[token];
    } else {
      return NOTHING;
    }
  }
  return value === undefined ? NOTHING : value;
}
