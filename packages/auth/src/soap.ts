import type { IncomingMessage } from "node:http";
import { sha1 } from "@noble/hashes/legacy";
import { WSSE_NS, WSU_NS, type XmlElement } from "@svc/errors";
import { exchangeOf, principalKey } from "@svc/kernel";
import {
  attemptOf,
  type BasicOutcome,
  type BasicVerifier,
  createBasicVerifier,
  isBasicVerifier,
  notJudged,
  type VerifyPassword,
} from "./basic-verifier.js";
import { concatBytes, equalBytes, fromBase64, toBase64, utf8 } from "./bytes.js";
import {
  authChannel,
  publishAuthentication,
  publishSoapRefusal,
  SOAP_MISSING,
  SOAP_REPLAYED,
} from "./diagnostics.js";
import { sha256 } from "./digest.js";
import { memoryNonceStore, type NonceStore } from "./nonce-store.js";
import { checkNames, checkOptions, optionError } from "./options.js";
import { type Principal, type PrincipalInit, toPrincipal } from "./principal.js";

// The element shape and the WS-Security namespaces are shared with @svc/soap-envelope: one
// definition of each, in @svc/errors.
export { WSSE_NS, WSU_NS, type XmlElement };

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
 * SOAP credentials that failed. `message` is the standard WS-Security fault string, or the text
 * given as `options.message` (safe to send, `expose` is true: `@svc/soap-envelope` sends it as
 * the fault's Reason); `code` and `namespace` name the fault subcode (`wsse:FailedAuthentication`);
 * `reason` says what exactly failed, for the server log only. `status` is 401 so that, passed to
 * `next(err)` outside a SOAP handler, it still renders as a 401.
 *
 * @example
 * soapEndpoint({ wsdl, handlers, authenticate: soapCredentials.authenticate }); // SoapAuthError → env:Sender, wsse:<code>
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
  constructor(code: SoapAuthErrorCode, reason: string, options?: { cause?: unknown; message?: string }) {
    super(options?.message ?? FAULT_STRINGS[code], options);
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
   * `PasswordDigest`, whose check needs the clear password: see `getPassword`. It runs through a
   * verifier built for it (bounded hashing and a verified-credentials cache with the defaults of
   * {@link createBasicVerifier}, no failure budgets); give `verifier` instead to share one.
   */
  verify?: VerifyPassword;
  /**
   * The verifier of {@link createBasicVerifier} that `authenticate({ basic })` uses too: clear
   * passwords (`Authentication` and `PasswordText`) go through its `check` (failure budgets
   * before any hashing, the verified-credentials cache, the bounded hashing), and each
   * `PasswordDigest` attempt through its failure budgets, so a client and a user name have one
   * budget across HTTP Basic and SOAP. Exclusive with `verify`.
   * @default undefined
   */
  verifier?: BasicVerifier;
  /**
   * Returns the clear (or reversibly stored) password of `username`, or `undefined` for an
   * unknown user: needed only for `PasswordDigest`, which hashes the password with the nonce
   * and creation time. Storing recoverable passwords is the price of digest; prefer
   * `PasswordText` over TLS with `verify` when you can.
   * @default undefined (PasswordDigest is refused)
   */
  getPassword?: (username: string) => Promise<StoredPassword | undefined> | StoredPassword | undefined;
  /**
   * Namespace of the `Authentication` header block. `null` accepts it in any
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

/**
 * Who sent the message: the budgets of a {@link SoapCredentialsOptions.verifier} are kept per
 * client. `address` (an IP address or any client key) wins over `request`, whose address is read
 * as the verifier's `failureLimit.clientAddress` reads it (by default the client `requestFacts` resolves
 * behind the framework's trust, as `req.ip` on Express).
 *
 * @example
 * await soapCredentials.verify(headerBlocks, { request: context.http });
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface SoapClient {
  /** The client's address or key; `undefined` with no `request` skips the client budget. */
  address?: string | undefined;
  /** The HTTP request that carried the envelope. */
  request?: (IncomingMessage & { ip?: string | undefined }) | undefined;
}

/**
 * SOAP header credentials checked with options resolved once, from
 * {@link createSoapCredentialsVerifier}.
 *
 * @example
 * const principal = await soapCredentials.verify(headerBlocks, { request: req });
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0.pdf
 */
export interface SoapCredentialsVerifier {
  /** The principal of the credentials in `headerBlocks`; throws like {@link verifySoapCredentials}. */
  verify(headerBlocks: readonly XmlElement[], client?: SoapClient): Promise<Principal>;
  /**
   * The `authenticate` hook of `@svc/soap-envelope`'s `createSoapService`/`soapEndpoint` (a bound
   * function): the credentials of the SOAP header when the envelope carries any, checked as
   * {@link verify} checks them with `context.http` as the client; else the principal that
   * {@link authenticate} set from the HTTP `Authorization` header (`context.http.principal`).
   * Header credentials naming another user than that principal are refused (`InvalidSecurity`:
   * whose request it is would be a guess), and no credentials at all are a `FailedAuthentication`.
   * Refusals are {@link SoapAuthError}s, which the SOAP service sends as a Sender fault with the
   * `wsse` subcode (WS-Security 1.1 §12); a spent budget or full hashing slots an `HttpError`.
   *
   * @example
   * soapEndpoint({ wsdl, handlers, authenticate: soapCredentials.authenticate });
   */
  readonly authenticate: (
    headerBlocks: readonly XmlElement[],
    context?: SoapHookContext,
  ) => Promise<Principal>;
}

/** What the {@link SoapCredentialsVerifier.authenticate} hook reads of the SOAP service's context. */
export interface SoapHookContext {
  /**
   * The HTTP request that carried the envelope: the principal `authenticate()` found from its
   * `Authorization` field (recorded in the request's exchange, `exchangeOf(req)` of
   * `@svc/kernel`, by every framework's `authenticate`), and the client's address.
   */
  readonly http?: (IncomingMessage & { principal?: Principal; ip?: string | undefined }) | undefined;
}

interface SoapConfig {
  verifier: BasicVerifier;
  /** Whether clear passwords can be checked (`verify` or `verifier` given). */
  clear: boolean;
  getPassword: SoapCredentialsOptions["getPassword"];
  authenticationNamespace: string | null;
  allowAuthenticationHeader: boolean;
  maxAgeMs: number;
  skewMs: number;
  requireNonceForText: boolean;
  nonceStore: NonceStore;
  now: () => number;
  /** The Reason sent when neither the envelope nor the HTTP request carries credentials. */
  missingMessage: string;
}

// One process-wide default: callers that build a fresh options object per message must still
// share one replay cache (nonces are random, so sharing across configurations is harmless).
let defaultStore: NonceStore | undefined;

// `verifySoapCredentials` resolves its options per call: the verifier of a `verify` callback is
// kept with the callback, so its hashing slots bound every call that passes that callback.
const verifiers = new WeakMap<VerifyPassword, BasicVerifier>();
// Digest only: the steps run without budgets and without slots (no hashing), so one is enough.
let digestOnly: BasicVerifier | undefined;

function bool(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw optionError(name, value, "true or false");
  return value;
}

function seconds(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
    throw optionError(name, value, "a non-negative number of seconds");
  return value;
}

const SOAP_OPTIONS = Object.keys({
  verify: 0,
  verifier: 0,
  getPassword: 0,
  authenticationNamespace: 0,
  allowAuthenticationHeader: 0,
  maxAge: 0,
  clockSkew: 0,
  requireNonceForText: 0,
  nonceStore: 0,
  now: 0,
} satisfies Record<keyof SoapCredentialsOptions, 0>);

const CLIENT_OPTIONS = Object.keys({ address: 0, request: 0 } satisfies Record<keyof SoapClient, 0>);

function resolveConfig(options: SoapCredentialsOptions): SoapConfig {
  checkOptions(options, SOAP_OPTIONS, "soap", "an object { verify or verifier, getPassword?, ... }");
  const { verify, verifier, getPassword } = options;
  if (verify !== undefined && typeof verify !== "function")
    throw optionError("soap.verify", verify, "a function (username, password) => principal");
  if (verifier !== undefined && !isBasicVerifier(verifier))
    throw optionError("soap.verifier", verifier, "a verifier made by createBasicVerifier()");
  if (verify !== undefined && verifier !== undefined)
    throw optionError(
      "soap.verify",
      verify,
      "absent when verifier is given (its verify checks the passwords)",
    );
  if (getPassword !== undefined && typeof getPassword !== "function")
    throw optionError("soap.getPassword", getPassword, "a function (username) => password");
  if (verify === undefined && verifier === undefined && getPassword === undefined)
    throw optionError("soap", options, "an object with verify, verifier or getPassword");
  const ns = options.authenticationNamespace ?? null;
  if (ns !== null && typeof ns !== "string")
    throw optionError("soap.authenticationNamespace", ns, "a namespace URI string or null");
  const store = options.nonceStore;
  if (store !== undefined && typeof store?.claim !== "function")
    throw optionError("soap.nonceStore", store, "a store with claim(nonce, ttlMs)");
  const now = options.now ?? Date.now;
  if (typeof now !== "function") throw optionError("soap.now", now, "a function () => milliseconds");
  let resolved = verifier;
  if (resolved === undefined && verify !== undefined) {
    resolved = verifiers.get(verify);
    if (resolved === undefined) {
      resolved = createBasicVerifier({ verify });
      verifiers.set(verify, resolved);
    }
  }
  resolved ??= digestOnly ??= createBasicVerifier({ verify: () => null, cache: false });
  defaultStore ??= memoryNonceStore();
  const allowAuthenticationHeader = bool(
    options.allowAuthenticationHeader,
    "soap.allowAuthenticationHeader",
    true,
  );
  return {
    verifier: resolved,
    clear: verify !== undefined || verifier !== undefined,
    getPassword,
    authenticationNamespace: ns,
    allowAuthenticationHeader,
    maxAgeMs: seconds(options.maxAge, "soap.maxAge", 300) * 1000,
    skewMs: seconds(options.clockSkew, "soap.clockSkew", 60) * 1000,
    requireNonceForText: bool(options.requireNonceForText, "soap.requireNonceForText", false),
    nonceStore: store ?? defaultStore,
    now,
    missingMessage: `Credentials are required: a SOAP ${allowAuthenticationHeader ? "Authentication or " : ""}wsse:Security header, or HTTP Authorization`,
  };
}

/**
 * The outcome of the verifier's steps as this module reports it: the principal, a
 * {@link SoapAuthError} for bad credentials, or an `HttpError` the SOAP layer renders with its
 * status and `Retry-After` (429 a Sender fault, 503 a Receiver fault: SOAP 1.2 Part 2 §7.5.2.2
 * leaves these statuses to HTTP).
 */
function settle(outcome: BasicOutcome, reason: string): Principal {
  switch (outcome.result) {
    case "authenticated":
      return toPrincipal(outcome.principal, "soap", outcome.principal.issuer);
    case "blocked":
    case "busy":
      throw notJudged(outcome);
    default:
      throw new SoapAuthError("FailedAuthentication", reason);
  }
}

function addressOf(config: SoapConfig, client: SoapClient | undefined): string | undefined {
  if (client === undefined) return undefined;
  if (client.address !== undefined) return client.address;
  return client.request ? config.verifier.clientAddress(client.request) : undefined;
}

function child(el: XmlElement, ns: string | null, name: string): XmlElement[] {
  return el.children.filter((c) => c.localName === name && (ns === null || c.namespace === ns));
}

function single(el: XmlElement, ns: string | null, name: string, reason: string): XmlElement | undefined {
  const found = child(el, ns, name);
  if (found.length > 1) throw new SoapAuthError("InvalidSecurity", `duplicate ${name} in ${reason}`);
  return found[0];
}

/** RFC 3339 / xsd:dateTime as WS-Security uses it; a zone is required so the instant is exact. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * The instant of an xsd:dateTime with a zone, or `NaN` when the text is not one. `Date.parse`
 * alone rolls a day the month lacks over into the next month (`2026-02-30` → March 2nd) and takes
 * any zone offset up to 23:59; XML Schema 1.1 Part 2 §3.3.7 (dateTime) and §E.3.2 refuse both:
 * "the day value must be no more than 30 if month is one of 4, 6, 9, or 11; no more than 29 if
 * month is 2; and no more than 28 if month is 2 and year is not divisible by 4, or is divisible
 * by 100 but not by 400", and `timezoneFrag` runs from -14:00 to +14:00. `24:00:00` is the
 * `endOfDayFrag`, the first instant of the next day.
 */
function dateTimeInstant(text: string): number {
  const m = DATE_TIME.exec(text);
  if (m === null) return Number.NaN;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days =
    month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  if (month < 1 || month > 12 || day < 1 || day > days) return Number.NaN;
  const endOfDay = hour === 24 && minute === 0 && second === 0 && /^0*$/.test(m[7] ?? "");
  if ((hour > 23 && !endOfDay) || minute > 59 || second > 59) return Number.NaN;
  const zoneHours = m[8] === undefined ? 0 : Number(m[8]);
  const zoneMinutes = m[9] === undefined ? 0 : Number(m[9]);
  if (zoneMinutes > 59 || zoneHours > 14 || (zoneHours === 14 && zoneMinutes !== 0)) return Number.NaN;
  return Date.parse(text);
}

function constantTimeEqual(a: string, b: string): boolean {
  return equalBytes(sha256(a), sha256(b));
}

async function checkPassword(
  config: SoapConfig,
  username: string,
  password: string,
  address: string | undefined,
): Promise<Principal> {
  if (!config.clear)
    throw new SoapAuthError("UnsupportedSecurityToken", "no verify callback for clear passwords");
  // A throwing verify (user store down) is a server fault, not bad credentials: it propagates.
  const outcome = await config.verifier.check({ username, password }, address);
  return settle(outcome, "wrong user name or password");
}

/**
 * Authenticates a SOAP message from its `Header` blocks, and resolves to the principal
 * (`scheme: "soap"`). Accepts:
 *
 * - WS-Security `wsse:Security/wsse:UsernameToken` with `PasswordText` (checked by `verify`) or
 *   `PasswordDigest` = Base64(SHA-1(nonce + created + password)) (checked with `getPassword`);
 *   `wsu:Created` must be within `maxAge` (and at most `clockSkew` ahead), and each `Nonce` is
 *   accepted once within that window.
 * - The plain `Authentication/Username/Password` block, checked by `verify`.
 *
 * Clear passwords go through a Basic verifier (`verifier`, or one kept for `verify`): the
 * failure budgets (with `verifier`'s `failureLimit`, per `client`), the verified-credentials
 * cache and the bounded hashing; a digest through the budgets.
 *
 * Failures throw {@link SoapAuthError}, whose message is the standard fault string and whose
 * `code` is the `wsse` fault subcode. A spent failure budget throws an `HttpError` 429 with
 * `Retry-After` (RFC 6585 §4), all hashing slots taken an `HttpError` 503 with `Retry-After`
 * (RFC 9110 §15.6.4): `@svc/soap-envelope` renders them as a Sender and a Receiver fault with
 * that status and header. Errors thrown by `verify`/`getPassword` pass through as is. Options are
 * resolved per call: a hook checking every message builds {@link createSoapCredentialsVerifier}
 * once instead.
 *
 * @example
 * const principal = await verifySoapCredentials(envelope.headers, {
 *   verify: (user, password) => users.check(user, password),
 *   getPassword: (user) => users.clearPassword(user),
 * }, { address: req.socket.remoteAddress });
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0.pdf
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0.pdf
 */
export async function verifySoapCredentials(
  headerBlocks: readonly XmlElement[],
  options: SoapCredentialsOptions,
  client?: SoapClient,
): Promise<Principal> {
  return check(resolveConfig(options), headerBlocks, client);
}

/**
 * Resolves and validates the options of {@link verifySoapCredentials} once (a refused option
 * throws a `TypeError` with `code` `ERR_SVC_AUTH_SOAP_<OPTION>`), for a hook that checks every
 * message. With `verifier`, a failed attempt spends the client's and the user name's failure
 * budget, and a spent budget refuses the next attempt before any password or digest is checked:
 * an `HttpError` 429 with `Retry-After`; the hashing bound sheds with an `HttpError` 503.
 *
 * @example
 * const basic = createBasicVerifier({ verify, failureLimit: { perClient: failures, perUsername: failures } });
 * const soapCredentials = createSoapCredentialsVerifier({ verifier: basic, getPassword });
 * app.use(authenticate({ realm: "api", basic })); // one budget for HTTP Basic and SOAP headers
 * soapEndpoint({ wsdl, handlers, authenticate: (blocks, ctx) => soapCredentials.verify(blocks, { request: ctx.http }) });
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0.pdf
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export function createSoapCredentialsVerifier(options: SoapCredentialsOptions): SoapCredentialsVerifier {
  const config = resolveConfig(options);
  return {
    verify: (headerBlocks, client) => check(config, headerBlocks, client),
    authenticate: (headerBlocks, context) => authenticateMessage(config, headerBlocks, context),
  };
}

async function check(
  config: SoapConfig,
  headerBlocks: readonly XmlElement[],
  client: SoapClient | undefined,
): Promise<Principal> {
  // A misspelt `adress` would skip the client's failure budget in silence.
  checkNames(client, CLIENT_OPTIONS, "client");
  const block = credentialsBlock(config, headerBlocks);
  if (block === undefined) {
    throw new SoapAuthError("FailedAuthentication", "no credentials in the SOAP header");
  }
  return verifyBlock(config, block, addressOf(config, client));
}

/**
 * See {@link SoapCredentialsVerifier.authenticate}. With the HTTP request at hand, what the header
 * decided is published on `svc:auth` (scheme `soap`), as `authenticate` publishes the HTTP
 * credentials' decision.
 */
async function authenticateMessage(
  config: SoapConfig,
  headerBlocks: readonly XmlElement[],
  context: SoapHookContext | undefined,
): Promise<Principal> {
  const request = context?.http;
  if (request === undefined || !authChannel.hasSubscribers)
    return headerPrincipal(config, headerBlocks, request);
  try {
    const principal = await headerPrincipal(config, headerBlocks, request);
    // The HTTP credentials' principal, already published by `authenticate`, is not told twice.
    if (principal.scheme === "soap") publishAuthentication(request, principal);
    return principal;
  } catch (err) {
    publishSoapRefusal(request, err);
    throw err;
  }
}

async function headerPrincipal(
  config: SoapConfig,
  headerBlocks: readonly XmlElement[],
  request: SoapHookContext["http"],
): Promise<Principal> {
  // What authenticate() recorded for the request, on whichever framework it ran.
  const fromHttp =
    request === undefined
      ? undefined
      : (exchangeOf(request).authentication?.principal as Principal | undefined);
  const block = credentialsBlock(config, headerBlocks);
  if (block === undefined) {
    if (fromHttp) return fromHttp;
    throw new SoapAuthError("FailedAuthentication", SOAP_MISSING, {
      message: config.missingMessage,
    });
  }
  const principal = await verifyBlock(
    config,
    block,
    request ? config.verifier.clientAddress(request) : undefined,
  );
  // Two different users in one request: whose request it is would be a guess.
  if (fromHttp && principalKey(fromHttp) !== principalKey(principal)) {
    throw new SoapAuthError("InvalidSecurity", "the SOAP header and the Authorization header differ", {
      message: "The SOAP header and the Authorization header name different users",
    });
  }
  return principal;
}

/**
 * The one header block carrying credentials (`wsse:Security`, or `Authentication` when allowed),
 * `undefined` for none. Two sets of credentials make it unclear whose request this is: refused
 * rather than one picked.
 */
function credentialsBlock(config: SoapConfig, headerBlocks: readonly XmlElement[]): XmlElement | undefined {
  if (!Array.isArray(headerBlocks))
    throw new TypeError("verifySoapCredentials: headerBlocks must be an array");
  const authNs = config.authenticationNamespace;
  let found: XmlElement | undefined;
  for (const b of headerBlocks) {
    const credentials =
      (b.namespace === WSSE_NS && b.localName === "Security") ||
      (config.allowAuthenticationHeader &&
        b.localName === "Authentication" &&
        (authNs === null || b.namespace === authNs));
    if (!credentials) continue;
    if (found !== undefined) {
      throw new SoapAuthError("InvalidSecurity", "more than one credentials header block");
    }
    found = b;
  }
  return found;
}

function verifyBlock(config: SoapConfig, block: XmlElement, address: string | undefined): Promise<Principal> {
  if (block.namespace === WSSE_NS && block.localName === "Security")
    return usernameToken(block, config, address);
  const authNs = config.authenticationNamespace;
  const username = single(block, authNs, "Username", "Authentication");
  const password = single(block, authNs, "Password", "Authentication");
  if (!username || !password || username.text.trim() === "") {
    throw new SoapAuthError("InvalidSecurityToken", "Authentication lacks Username or Password");
  }
  return checkPassword(config, username.text.trim(), password.text, address);
}

/** A `wsse:Security` block's UsernameToken, checked (UsernameToken Profile 1.0 §3-4). */
async function usernameToken(
  security: XmlElement,
  config: SoapConfig,
  address: string | undefined,
): Promise<Principal> {
  const token = readToken(security);
  const digest = token.type === PASSWORD_DIGEST;
  if ((digest || config.requireNonceForText) && (!token.nonce || !token.created)) {
    throw new SoapAuthError("InvalidSecurityToken", "Nonce and Created are required");
  }
  const created = token.created === undefined ? undefined : checkCreated(config, token.created);
  const nonce = token.nonce === undefined ? undefined : nonceBytes(token.nonce);
  const principal = digest
    ? await checkDigest(config, token, nonce as Uint8Array, created ?? "", address)
    : await checkPassword(config, token.username, token.password.text, address);
  // Claimed only after the credentials check out, so an attacker without the password cannot
  // burn nonces a legitimate client is about to use.
  if (nonce) {
    const fresh = await config.nonceStore.claim(toBase64(nonce), config.maxAgeMs + config.skewMs);
    if (!fresh) throw new SoapAuthError("FailedAuthentication", SOAP_REPLAYED);
  }
  return principal;
}

/** The parts of a UsernameToken, each at most once. */
interface UsernameTokenParts {
  username: string;
  password: XmlElement;
  /** `Password/@Type`, PasswordText or PasswordDigest. */
  type: string;
  nonce: XmlElement | undefined;
  created: XmlElement | undefined;
}

function readToken(security: XmlElement): UsernameTokenParts {
  const tokens = child(security, WSSE_NS, "UsernameToken");
  if (tokens.length === 0)
    throw new SoapAuthError("UnsupportedSecurityToken", "no UsernameToken in Security");
  if (tokens.length > 1) throw new SoapAuthError("InvalidSecurity", "more than one UsernameToken");
  const token = tokens[0] as XmlElement;
  const usernameEl = single(token, WSSE_NS, "Username", "UsernameToken");
  const password = single(token, WSSE_NS, "Password", "UsernameToken");
  const nonce = single(token, WSSE_NS, "Nonce", "UsernameToken");
  const created = single(token, WSU_NS, "Created", "UsernameToken");
  const username = usernameEl?.text.trim() ?? "";
  if (username === "" || !password) {
    throw new SoapAuthError("InvalidSecurityToken", "UsernameToken lacks Username or Password");
  }
  // UsernameToken Profile 1.0 §3.1: Type defaults to PasswordText when absent.
  const type = password.attributes.Type ?? PASSWORD_TEXT;
  if (type !== PASSWORD_TEXT && type !== PASSWORD_DIGEST) {
    throw new SoapAuthError("UnsupportedSecurityToken", `unsupported password type ${type.slice(0, 100)}`);
  }
  return { username, password, type, nonce, created };
}

/** `wsu:Created`'s text, once it is an instant within the freshness window. */
function checkCreated(config: SoapConfig, createdEl: XmlElement): string {
  const created = createdEl.text.trim();
  const at = dateTimeInstant(created);
  if (Number.isNaN(at))
    throw new SoapAuthError("InvalidSecurityToken", "Created is not an xsd:dateTime with a zone");
  const now = config.now();
  // UsernameToken Profile 1.0 §4: reject "a UsernameToken with a timestamp that is older than
  // the defined period of time"; a future Created beyond the allowed skew is refused too.
  if (at < now - config.maxAgeMs) throw new SoapAuthError("MessageExpired", "Created is older than maxAge");
  if (at > now + config.skewMs) throw new SoapAuthError("MessageExpired", "Created is in the future");
  return created;
}

/** The `Nonce`'s bytes: base64Binary, at least 8 of them. */
function nonceBytes(nonceEl: XmlElement): Uint8Array {
  const encoding = nonceEl.attributes.EncodingType ?? BASE64_BINARY;
  const nonceText = nonceEl.text.trim();
  if (encoding !== BASE64_BINARY || !/^[A-Za-z0-9+/]+={0,2}$/.test(nonceText) || nonceText.length > 256) {
    throw new SoapAuthError("InvalidSecurityToken", "Nonce is not base64Binary");
  }
  const bytes = fromBase64(nonceText) ?? new Uint8Array(0);
  // Profile §4: "the Nonce ... cached for the same period as the freshness window".
  if (bytes.length < 8) throw new SoapAuthError("InvalidSecurityToken", "Nonce is shorter than 8 bytes");
  return bytes;
}

/**
 * A PasswordDigest through the verifier's steps without the cache (a digest is never sent twice)
 * and without a hashing slot (SHA-1 is cheap): a spent budget refuses before the digest is
 * checked, and a wrong digest spends the client's and the user name's budget like a wrong password.
 */
async function checkDigest(
  config: SoapConfig,
  token: UsernameTokenParts,
  nonce: Uint8Array,
  created: string,
  address: string | undefined,
): Promise<Principal> {
  const getPassword = config.getPassword;
  if (!getPassword) {
    throw new SoapAuthError("UnsupportedSecurityToken", "PasswordDigest needs getPassword");
  }
  const { username } = token;
  const given = token.password.text.trim();
  const run = async () => {
    const stored = await getPassword(username);
    const clear = typeof stored === "string" ? stored : stored?.password;
    // Profile §3.1: Password_Digest = Base64 ( SHA-1 ( nonce + created + password ) )
    const expected = toBase64(sha1(concatBytes([nonce, utf8(created), utf8(clear ?? "")])));
    if (!constantTimeEqual(expected, given) || clear === undefined) return null;
    return typeof stored === "string" || stored === undefined
      ? { id: username }
      : {
          id: stored.id ?? username,
          ...(stored.roles ? { roles: stored.roles } : {}),
          ...(stored.scopes ? { scopes: stored.scopes } : {}),
        };
  };
  const outcome = await attemptOf(config.verifier)({ username, gated: false, run }, address);
  return settle(outcome, "wrong digest or unknown user");
}
