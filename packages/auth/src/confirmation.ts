/**
 * Tokens bound to a key or a certificate (the `cnf` claim of RFC 7800): which method binds a token
 * sent as `Bearer`, read from its payload before any verification. Pure over the token string.
 */
import { optionError } from "./options.js";

/**
 * How a token is bound (RFC 7800 §3.1 `cnf`): `"jkt"` to a DPoP key (RFC 9449 §6.1), `"x5t#S256"`
 * to a client certificate (RFC 8705 §3.1), `"cnf"` to a key some other way (a `jwk`, a `kid`).
 */
export type Confirmation = "jkt" | "x5t#S256" | "cnf";

/**
 * The method that binds `token`, or `undefined` for a token bound to nothing (or no JWT at all:
 * the verifier refuses those). Most tokens carry no `cnf`, so the payload is parsed only when its
 * text could name one: the letters `cnf`, or a `\u` escape that could spell them.
 *
 * @example
 * confirmationOf(token) // "jkt" for a DPoP-bound access token
 * @see https://www.rfc-editor.org/rfc/rfc7800#section-3.1
 */
export function confirmationOf(token: string): Confirmation | undefined {
  const first = token.indexOf(".");
  const second = token.indexOf(".", first + 1);
  if (first === -1 || second === -1) return undefined;
  const payload = token.slice(first + 1, second);
  let text: string;
  try {
    // Bytes as Latin-1 characters: every ASCII byte of the UTF-8 JSON is its own character.
    text = atob(payload.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return undefined;
  }
  if (!text.includes("cnf") && !text.includes("\\u")) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0))));
  } catch {
    return undefined;
  }
  if (typeof claims !== "object" || claims === null || !Object.hasOwn(claims, "cnf")) return undefined;
  const cnf = (claims as { cnf: unknown }).cnf;
  if (typeof cnf !== "object" || cnf === null) return "cnf";
  if (Object.hasOwn(cnf, "jkt")) return "jkt";
  if (Object.hasOwn(cnf, "x5t#S256")) return "x5t#S256";
  return "cnf";
}

/** `bearer.acceptBoundTokens`, checked once. */
export function acceptBoundTokensOption(value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw optionError("bearer.acceptBoundTokens", value, "true or false");
  return value;
}
