/**
 * Parsing of the `Authorization` request header and building of `WWW-Authenticate` challenges
 * (RFC 9110 §11). Pure functions over strings, usable without Express. The token, token68 and
 * quoted-string grammar is the shared one of `@svc/errors`.
 */
import { isToken, isToken68, quoteString, trimOws } from "@svc/kernel";

export { isToken68 };

/** The parsed `Authorization` header: a scheme (lower-cased) and its credentials. */
export interface AuthorizationCredentials {
  /** The scheme, lower-cased: RFC 9110 §11.1 "auth-scheme ... is case-insensitive". */
  scheme: string;
  /** Whatever follows the scheme and its separating space(s), possibly `""`. */
  credentials: string;
}

/**
 * Splits `Authorization: <scheme> <credentials>`. Returns `undefined` when the header is absent,
 * empty, or its scheme is not a token.
 *
 * @example
 * parseAuthorization("bearer abc") // { scheme: "bearer", credentials: "abc" }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11.6.2
 */
export function parseAuthorization(header: string | undefined): AuthorizationCredentials | undefined {
  if (typeof header !== "string") return undefined;
  const value = trimOws(header);
  if (value === "") return undefined;
  const space = value.indexOf(" ");
  const scheme = space === -1 ? value : value.slice(0, space);
  // RFC 9110 §11.1: auth-scheme = token, case-insensitive. The usual spellings are tokens
  // already, in lower case without a new string.
  const lowered =
    scheme === "Bearer"
      ? "bearer"
      : scheme === "Basic"
        ? "basic"
        : isToken(scheme)
          ? scheme.toLowerCase()
          : undefined;
  if (lowered === undefined) return undefined;
  // credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]: any number of spaces separate.
  let start = space + 1;
  if (space !== -1) while (value.charCodeAt(start) === 0x20) start++;
  const credentials = space === -1 ? "" : value.slice(start);
  return { scheme: lowered, credentials };
}

/**
 * One challenge: `Scheme realm="...", name="value"`. Parameter values are always sent as
 * quoted-strings with `\` and `"` escaped (RFC 9110 §5.6.4).
 *
 * @example
 * challenge("Bearer", { realm: "api", error: "invalid_token" }) // 'Bearer realm="api", error="invalid_token"'
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11.3
 */
export function challenge(scheme: string, params: Readonly<Record<string, string | undefined>>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    parts.push(`${name}=${quoteString(value)}`);
  }
  return parts.length === 0 ? scheme : `${scheme} ${parts.join(", ")}`;
}
