/**
 * Parsing of the `Authorization` request header and building of `WWW-Authenticate` challenges
 * (RFC 9110 §11). Pure functions over strings, usable without Express.
 */

/** The parsed `Authorization` header: a scheme (lower-cased) and its credentials. */
export interface AuthorizationCredentials {
  /** The scheme, lower-cased: RFC 9110 §11.1 "auth-scheme ... is case-insensitive". */
  scheme: string;
  /** Whatever follows the scheme and its separating space(s), possibly `""`. */
  credentials: string;
}

// RFC 9110 §5.6.2: token = 1*tchar
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 9110 §11.2: token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

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
  const value = header.trim();
  if (value === "") return undefined;
  const space = value.indexOf(" ");
  const scheme = space === -1 ? value : value.slice(0, space);
  if (!TOKEN.test(scheme)) return undefined;
  // credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]: any number of spaces separate.
  const credentials = space === -1 ? "" : value.slice(space + 1).replace(/^ +/, "");
  return { scheme: scheme.toLowerCase(), credentials };
}

/**
 * True when `value` matches RFC 9110's `token68`, the syntax of Bearer and Basic credentials.
 *
 * @example
 * isToken68("eyJhbGciOi.eyJzdWIi.c2ln") // true
 * isToken68("a b") // false
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11.2
 */
export function isToken68(value: string): boolean {
  return TOKEN68.test(value);
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
    parts.push(`${name}=${quote(value)}`);
  }
  return parts.length === 0 ? scheme : `${scheme} ${parts.join(", ")}`;
}

function quote(value: string): string {
  // Control characters cannot appear in a header at all; drop them rather than throw.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, "");
  return `"${clean.replace(/[\\"]/g, "\\$&")}"`;
}
