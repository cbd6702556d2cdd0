import { createHash, timingSafeEqual } from "node:crypto";
import type { VerifyPassword } from "./basic-verifier.js";
import { memoryNonceStore, type NonceStore } from "./nonce-store.js";
import { type Principal, type PrincipalInit, toPrincipal } from "./principal.js";

/**
 * A parsed XML element, as the SOAP envelope parser hands out the `Header` blocks. Structural:
 * any parser producing this shape works.
 */
export interface XmlElement {
  /** Namespace URI, `""` when none. */
  namespace: string;
  localName: string;
  /** `"{nsURI}local"` for qualified attributes, `"local"` for unqualified. */
  attributes: Record<string, string>;
  /** Child elements in document order. */
  children: XmlElement[];
  /** Concatenated direct text content. */
  text: string;
}

/** OASIS WS-Security 1.0 secext namespace (`wsse`). */
export const WSSE_NS = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
/** OASIS WS-Security 1.0 utility namespace (`wsu`). */
export const WSU_NS = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
const UT_PROFILE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0";
/** `Password/@Type` for a clear-text password. */
export const PASSWORD_TEXT = `${UT_PROFILE}#PasswordText`;
/** `Password/@Type` for Base64(SHA-1(nonce + created + password)). */
export const PASSWORD_DIGEST = `${UT_PROFILE}#PasswordDigest`;
const BASE64_BINARY =
  "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary";

/**
 * WS-Security fault codes (SOAP Message Security 1.0 §12), the subcode a SOAP fault should carry.
 * `MessageExpired` lives in the `wsu` namespace, the others in `wsse`.
 */
export type SoapAuthErrorCode =
  | "FailedAuthentication"
  | "InvalidSecurity"
  | "InvalidSecurityToken"
  | "UnsupportedSecurityToken"
  | "MessageExpired";

// The fault strings of WS-Security §12: deliberately say nothing about which check failed.
const FAULT_STRINGS: Record<SoapAuthErrorCode, string> = {
  FailedAuthentication: "The security token could not be authenticated or authorized",
  InvalidSecurity: "An error was discovered processing the <wsse:Security> header",
  InvalidSecurityToken: "An invalid security token was provided",
  UnsupportedSecurityToken: "An unsupported token was provided",
  MessageExpired: "The message has expired",
};

/**
 * SOAP credentials that failed. `message` is the standard WS-Security fault string (safe to send);
 * `code` and `namespace` name the fault subcode (`wsse:FailedAuthentication`); `reason` says what
 * exactly failed, for the server log only. `status` is 401 so that, passed to `next(err)` outside
 * a SOAP handler, it still renders as a 401.
 *
 * @example
 * catch (err) {
 *   if (err instanceof SoapAuthError) return sendFault({ subcode: { ns: err.namespace, local: err.code }, reason: err.message });
 * }
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0.pdf (§12)
 */
export class SoapAuthError extends Error {
  readonly code: SoapAuthErrorCode;
  /** Namespace URI of `code`: `wsu` for `MessageExpired`, else `wsse`. */
  readonly namespace: string;
  /** What failed, for logs; never send it to the client. */
  readonly reason: string;
  readonly status = 401;
  readonly expose = true;
  constructor(code: SoapAuthErrorCode, reason: string, options?: { cause?: unknown }) {
    super(FAULT_STRINGS[code], options);
    this.name = "SoapAuthError";
    this.code = code;
    this.namespace = code === "MessageExpired" ? WSU_NS : WSSE_NS;
    this.reason = reason;
  }
}

/** What `getPassword` returns: the clear password, and optionally the principal's details. */
export type StoredPassword = string | ({ password: string } & Partial<PrincipalInit>);

/** Options of {@link verifySoapCredentials}. */
export interface SoapCredentialsOptions {
  /**
   * Checks a user name and clear password: the same callback as Basic. Serves
   * `Authentication/Username/Password` and UsernameToken `PasswordText`. It cannot serve
   * `PasswordDigest`, whose check needs the clear password: see `getPassword`.
   */
  verify?: VerifyPassword;
  /**
   * Returns the clear (or reversibly stored) password of `username`, or `undefined` for an
   * unknown user: needed only for `PasswordDigest`, which hashes the password with the nonce
   * and creation time. Storing recoverable passwords is the price of digest; prefer
   * `PasswordText` over TLS with `verify` when you can.
   * @default undefined (PasswordDigest is refused)
   */
  getPassword?: (username: string) => Promise<StoredPassword | undefined> | StoredPassword | undefined;
  /**
   * Namespace of the `Authentication` header block (spec part 5). `null` accepts it in any
   * namespace, matched by local names only.
   * @default null
   */
  authenticationNamespace?: string | null;
  /**
   * Accept the plain `Authentication/Username/Password` block as well as WS-Security.
   * @default true
   */
  allowAuthenticationHeader?: boolean;
  /**
   * How old (seconds) a UsernameToken's `wsu:Created` may be.
   * @default 300
   */
  maxAge?: number;
  /**
   * How far (seconds) `Created` may lie in the future, for clock skew.
   * @default 60
   */
  clockSkew?: number;
  /**
   * Require `Nonce` and `Created` with `PasswordText` too (they are always required for
   * `PasswordDigest`), so plain-text tokens cannot be replayed either.
   * @default false
   */
  requireNonceForText?: boolean;
  /**
   * Where used nonces are remembered; use `redisNonceStore` across several instances.
   * @default one memoryNonceStore() shared by the whole process
   */
  nonceStore?: NonceStore;
  /**
   * The clock in milliseconds, for tests.
   * @default Date.now
   */
  now?: () => number;
}

// One process-wide default: callers that build a fresh options object per message must still
// share one replay cache (nonces are random, so sharing across configurations is harmless).
let defaultStore: NonceStore | undefined;

function child(el: XmlElement, ns: string | null, name: string): XmlElement[] {
  return el.children.filter((c) => c.localName === name && (ns === null || c.namespace === ns));
}

function single(el: XmlElement, ns: string | null, name: string, reason: string): XmlElement | undefined {
  const found = child(el, ns, name);
  if (found.length > 1) throw new SoapAuthError("InvalidSecurity", `duplicate ${name} in ${reason}`);
  return found[0];
}

/** RFC 3339 / xsd:dateTime as WS-Security uses it; a zone is required so the instant is exact. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function constantTimeEqual(a: string, b: string): boolean {
  const x = createHash("sha256").update(a, "utf8").digest();
  const y = createHash("sha256").update(b, "utf8").digest();
  return timingSafeEqual(x, y);
}

async function checkPassword(
  options: SoapCredentialsOptions,
  username: string,
  password: string,
): Promise<Principal> {
  if (!options.verify)
    throw new SoapAuthError("UnsupportedSecurityToken", "no verify callback for clear passwords");
  // A throwing verify (user store down) is a server fault, not bad credentials: it propagates.
  const result = await options.verify(username, password);
  if (!result) throw new SoapAuthError("FailedAuthentication", "wrong user name or password");
  return toPrincipal(result, "soap");
}

/**
 * Authenticates a SOAP message from its `Header` blocks (spec part 5), and resolves to the
 * principal (`scheme: "soap"`). Accepts:
 *
 * - WS-Security `wsse:Security/wsse:UsernameToken` with `PasswordText` (checked by `verify`) or
 *   `PasswordDigest` = Base64(SHA-1(nonce + created + password)) (checked with `getPassword`);
 *   `wsu:Created` must be within `maxAge` (and at most `clockSkew` ahead), and each `Nonce` is
 *   accepted once within that window.
 * - The plain `Authentication/Username/Password` block, checked by `verify`.
 *
 * Failures throw {@link SoapAuthError}, whose message is the standard fault string and whose
 * `code` is the `wsse` fault subcode. Errors thrown by `verify`/`getPassword` pass through as is.
 *
 * @example
 * const principal = await verifySoapCredentials(envelope.headers, {
 *   verify: (user, password) => users.check(user, password),
 *   getPassword: (user) => users.clearPassword(user),
 * });
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0.pdf
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0.pdf
 */
export async function verifySoapCredentials(
  headerBlocks: readonly XmlElement[],
  options: SoapCredentialsOptions,
): Promise<Principal> {
  if (typeof options !== "object" || options === null)
    throw new TypeError("verifySoapCredentials: options are required");
  if (options.verify === undefined && options.getPassword === undefined) {
    throw new TypeError("verifySoapCredentials: give verify and/or getPassword");
  }
  if (!Array.isArray(headerBlocks))
    throw new TypeError("verifySoapCredentials: headerBlocks must be an array");

  const security = headerBlocks.filter((b) => b.namespace === WSSE_NS && b.localName === "Security");
  const authNs = options.authenticationNamespace ?? null;
  const legacy =
    options.allowAuthenticationHeader === false
      ? []
      : headerBlocks.filter(
          (b) => b.localName === "Authentication" && (authNs === null || b.namespace === authNs),
        );

  if (security.length + legacy.length === 0) {
    throw new SoapAuthError("FailedAuthentication", "no credentials in the SOAP header");
  }
  // Two sets of credentials make it unclear whose request this is: refuse rather than pick one.
  if (security.length + legacy.length > 1) {
    throw new SoapAuthError("InvalidSecurity", "more than one credentials header block");
  }
  const [sec] = security;
  if (sec) return usernameToken(sec, options);
  const auth = legacy[0] as XmlElement;
  const ns = authNs === null ? null : authNs;
  const username = single(auth, ns, "Username", "Authentication");
  const password = single(auth, ns, "Password", "Authentication");
  if (!username || !password || username.text.trim() === "") {
    throw new SoapAuthError("InvalidSecurityToken", "Authentication lacks Username or Password");
  }
  return checkPassword(options, username.text.trim(), password.text);
}

async function usernameToken(security: XmlElement, options: SoapCredentialsOptions): Promise<Principal> {
  const tokens = child(security, WSSE_NS, "UsernameToken");
  if (tokens.length === 0)
    throw new SoapAuthError("UnsupportedSecurityToken", "no UsernameToken in Security");
  if (tokens.length > 1) throw new SoapAuthError("InvalidSecurity", "more than one UsernameToken");
  const token = tokens[0] as XmlElement;
  const usernameEl = single(token, WSSE_NS, "Username", "UsernameToken");
  const passwordEl = single(token, WSSE_NS, "Password", "UsernameToken");
  const nonceEl = single(token, WSSE_NS, "Nonce", "UsernameToken");
  const createdEl = single(token, WSU_NS, "Created", "UsernameToken");
  const username = usernameEl?.text.trim() ?? "";
  if (username === "" || !passwordEl) {
    throw new SoapAuthError("InvalidSecurityToken", "UsernameToken lacks Username or Password");
  }
  // UsernameToken Profile 1.0 §3.1: Type defaults to PasswordText when absent.
  const type = passwordEl.attributes.Type ?? PASSWORD_TEXT;
  if (type !== PASSWORD_TEXT && type !== PASSWORD_DIGEST) {
    throw new SoapAuthError("UnsupportedSecurityToken", `unsupported password type ${type.slice(0, 100)}`);
  }
  const digest = type === PASSWORD_DIGEST;

  if ((digest || options.requireNonceForText) && (!nonceEl || !createdEl)) {
    throw new SoapAuthError("InvalidSecurityToken", "Nonce and Created are required");
  }

  const now = (options.now ?? Date.now)();
  const maxAgeMs = (options.maxAge ?? 300) * 1000;
  const skewMs = (options.clockSkew ?? 60) * 1000;
  let created: string | undefined;
  if (createdEl) {
    created = createdEl.text.trim();
    const at = DATE_TIME.test(created) ? Date.parse(created) : Number.NaN;
    if (Number.isNaN(at))
      throw new SoapAuthError("InvalidSecurityToken", "Created is not an xsd:dateTime with a zone");
    // UsernameToken Profile 1.0 §4: reject "a UsernameToken with a timestamp that is older than
    // the defined period of time"; a future Created beyond the allowed skew is refused too.
    if (at < now - maxAgeMs) throw new SoapAuthError("MessageExpired", "Created is older than maxAge");
    if (at > now + skewMs) throw new SoapAuthError("MessageExpired", "Created is in the future");
  }

  let nonceBytes: Buffer | undefined;
  if (nonceEl) {
    const encoding = nonceEl.attributes.EncodingType ?? BASE64_BINARY;
    const nonceText = nonceEl.text.trim();
    if (encoding !== BASE64_BINARY || !/^[A-Za-z0-9+/]+={0,2}$/.test(nonceText) || nonceText.length > 256) {
      throw new SoapAuthError("InvalidSecurityToken", "Nonce is not base64Binary");
    }
    nonceBytes = Buffer.from(nonceText, "base64");
    // Profile §4: "the Nonce ... cached for the same period as the freshness window".
    if (nonceBytes.length < 8)
      throw new SoapAuthError("InvalidSecurityToken", "Nonce is shorter than 8 bytes");
  }

  let principal: Principal;
  if (digest) {
    if (!options.getPassword) {
      throw new SoapAuthError("UnsupportedSecurityToken", "PasswordDigest needs getPassword");
    }
    const stored = await options.getPassword(username);
    const clear = typeof stored === "string" ? stored : stored?.password;
    // Profile §3.1: Password_Digest = Base64 ( SHA-1 ( nonce + created + password ) )
    const expected = createHash("sha1")
      .update(nonceBytes as Buffer)
      .update(created ?? "", "utf8")
      .update(clear ?? "", "utf8")
      .digest("base64");
    const ok = constantTimeEqual(expected, passwordEl.text.trim());
    if (!ok || clear === undefined)
      throw new SoapAuthError("FailedAuthentication", "wrong digest or unknown user");
    const init: PrincipalInit =
      typeof stored === "string" || stored === undefined
        ? { id: username }
        : {
            id: stored.id ?? username,
            ...(stored.roles ? { roles: stored.roles } : {}),
            ...(stored.scopes ? { scopes: stored.scopes } : {}),
          };
    principal = toPrincipal(init, "soap");
  } else {
    principal = await checkPassword(options, username, passwordEl.text);
  }

  // Claimed only after the credentials check out, so an attacker without the password cannot
  // burn nonces a legitimate client is about to use.
  if (nonceBytes) {
    defaultStore ??= memoryNonceStore();
    const store = options.nonceStore ?? defaultStore;
    const fresh = await store.claim(nonceBytes.toString("base64"), maxAgeMs + skewMs);
    if (!fresh) throw new SoapAuthError("FailedAuthentication", "replayed nonce");
  }
  return principal;
}
