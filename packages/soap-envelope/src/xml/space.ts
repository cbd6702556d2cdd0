// XML 1.0 §2.3: S ::= (#x20 | #x9 | #xD | #xA)+. That is all the white space XML knows.
// JavaScript's `trim()` and `\s` also take U+00A0, U+FEFF, U+2028, U+3000 and the other Unicode
// spaces, which are character data to XML: a value wrapped in them is outside every collapsed
// lexical space (XML Schema Part 2 §4.3.6), and element-only content holding them is invalid
// (XML Schema Part 1 §3.4.4, Element Locally Valid (Complex Type) 2.3).

/** Matches a character that is not XML white space. */
export const XML_NON_WHITESPACE = /[^ \t\n\r]/;

function isXmlSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d;
}

/** `value` without the XML white space at its ends; other Unicode spaces stay. */
export function trimXml(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isXmlSpace(value.charCodeAt(start))) start++;
  while (end > start && isXmlSpace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}
