/** SP or HTAB, the whitespace of RFC 9110 §5.6.3 (`OWS = *( SP / HTAB )`). */
export function isOws(c: string | undefined): boolean {
  return c === " " || c === "\t";
}
