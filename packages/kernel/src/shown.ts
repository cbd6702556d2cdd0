/**
 * `text` cut to its first `max` characters, counted in code points. A character outside the
 * Basic Multilingual Plane is two UTF-16 code units (a surrogate pair); a cut between them would
 * leave a lone surrogate, which no XML document (XML 1.0 §2.2: `#xD800-#xDFFF` is no Char) and no
 * well-formed UTF-8 JSON text (RFC 8259 §8.1) carries as it is.
 *
 * @example cutCharacters("a\u{1F600}b", 2) // "a\u{1F600}"
 * @internal
 */
export function cutCharacters(text: string, max: number): string {
  // At most `max` code units is at most `max` code points: nothing to cut.
  if (text.length <= max) return text;
  let end = 0;
  for (let n = 0; n < max && end < text.length; n++) {
    const unit = text.charCodeAt(end);
    const low = text.charCodeAt(end + 1);
    end += unit >= 0xd800 && unit <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
  }
  return text.slice(0, end);
}

/**
 * A value from the request as an error message shows it: cut to `max` characters
 * ({@link cutCharacters}) with `…` when cut. A field or name is bounded only by the request's
 * limits, and a message that echoed one whole would be as large as the request.
 *
 * @example shown("x".repeat(50), 40) // 40 × "x" then "…"
 * @internal
 */
export function shown(text: string, max: number): string {
  const cut = cutCharacters(text, max);
  return cut.length < text.length ? `${cut}…` : cut;
}
