// XML 1.0 §2.8 XMLDecl ::= '<?xml' VersionInfo EncodingDecl? ..., §4.3.3 EncodingDecl ::=
// S 'encoding' Eq ('"' EncName '"' | "'" EncName "'"), EncName ::= [A-Za-z] ([A-Za-z0-9._] | '-')*.
// Anchored, no overlapping repetition, run on the first 512 characters only: linear and bounded.
const ENCODING_DECL =
  /^<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(?:"1\.[0-9]+"|'1\.[0-9]+')[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(?:"([A-Za-z][A-Za-z0-9._-]*)"|'([A-Za-z][A-Za-z0-9._-]*)')/;

/**
 * The encoding an XML document's declaration names, in lower case, or `undefined` when the
 * document does not start with a declaration that names one. RFC 7303 §3.2 (with XML 1.0 §4.3.3
 * and Appendix F): without a byte order mark or a `charset` parameter, this names the encoding.
 * Only the first 512 characters are read; pass the start of the body (as Latin-1 text when the
 * bytes are not decoded yet: the declaration is ASCII).
 *
 * @example xmlDeclaredEncoding('<?xml version="1.0" encoding="ISO-8859-1"?><a/>') // "iso-8859-1"
 * @see https://www.w3.org/TR/xml/#NT-EncodingDecl
 */
export function xmlDeclaredEncoding(text: string): string | undefined {
  const match = ENCODING_DECL.exec(text.length > 512 ? text.slice(0, 512) : text);
  return (match?.[1] ?? match?.[2])?.toLowerCase();
}
