/** Characters of a name or value from the message that an error message or fault Reason shows. */
export const SHOWN_LENGTH = 100;

/**
 * `text` cut to its first `max` characters, counted in code points. A character outside the
 * Basic Multilingual Plane is two UTF-16 code units (a surrogate pair); a cut between them would
 * leave a lone surrogate, which is no XML Char (XML 1.0 §2.2: `#x10000-#x10FFFF` is one character,
 * `#xD800-#xDFFF` none), so a Reason carrying it would go out as U+FFFD or not well-formed.
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
 * `text`, from the message, as an error message or fault Reason shows it: cut to `max`
 * characters ({@link cutCharacters}) with `…`. Names and values are bounded only by
 * `limits.maxBytes`, and a Reason that echoed one whole would be as large as the message.
 */
export function shown(text: string, max = SHOWN_LENGTH): string {
  const cut = cutCharacters(text, max);
  return cut.length < text.length ? `${cut}…` : cut;
}
