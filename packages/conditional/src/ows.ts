/** SP or HTAB, the whitespace of RFC 9110 §5.6.3 (`OWS = *( SP / HTAB )`). */
export function isOws(c: string | undefined): boolean {
  return c === " " || c === "\t";
}

const isOwsCode = (code: number) => code === 0x20 || code === 0x09;

/**
 * `value` without its leading and trailing OWS (SP and HTAB, RFC 9110 §5.6.3), and nothing else:
 * not `String.prototype.trim()`, which also strips U+00A0, a byte (A0, obs-text, §5.5) a field
 * value may hold, so that `<A0>*` read as `*` and `<A0>` beside a date as that HTTP-date. The
 * value itself when there is nothing to strip.
 */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOwsCode(value.charCodeAt(start))) start++;
  while (end > start && isOwsCode(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}
