import { isToken68 } from "./authorization-header.js";
import { fromBase64 } from "./bytes.js";

/** User name and password from `Authorization: Basic ...`. */
export interface BasicCredentials {
  username: string;
  password: string;
}

// ignoreBOM: TextDecoder drops a leading U+FEFF by default, so "\uFEFFalice:pw" reached verify as
// "alice:pw". RFC 7617 §2.1 names the charset, which leaves no place for a signature: RFC 3629 §6
// has such a leading EF BB BF read as the character U+FEFF, part of the user-id.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes Basic credentials (the part after `Basic `). Returns `undefined` for anything that is
 * not base64 of UTF-8 `user-id ":" password`.
 *
 * RFC 7617 §2: "the user-id and password are concatenated with a single colon" and "a user-id
 * containing a colon character is invalid": the first colon splits, so passwords may hold `:`.
 *
 * @example
 * decodeBasicCredentials("YWxpY2U6czNjcjp0") // { username: "alice", password: "s3cr:t" }
 * @see https://www.rfc-editor.org/rfc/rfc7617#section-2
 */
export function decodeBasicCredentials(token68: string): BasicCredentials | undefined {
  if (!isToken68(token68)) return undefined;
  // Only the base64 alphabet (RFC 4648 §4), padded at the end if at all.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(token68) || token68.length % 4 === 1) return undefined;
  const bytes = fromBase64(token68);
  if (bytes === undefined) return undefined;
  let decoded: string;
  try {
    // RFC 7617 §2.1: with charset="UTF-8" the client encodes as UTF-8; invalid UTF-8 is refused
    // rather than replaced, so two different byte strings never map to one password.
    decoded = UTF8.decode(bytes);
  } catch {
    return undefined;
  }
  const colon = decoded.indexOf(":");
  if (colon === -1) return undefined;
  // RFC 7617 §2: user-id and password must not contain control characters (CTL).
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing CTLs is the point
  if (/[\u0000-\u001f\u007f]/.test(decoded)) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
