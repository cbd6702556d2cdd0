import type { IncomingMessage } from "node:http";
import { HttpError, isHttpError } from "@svc/errors";
import { exchangeIfAny, type Passage, type RequestView, repeatsField } from "@svc/kernel";
import { requestSlot } from "@svc/kernel/internal";
import {
  type AuthorizationCredentials,
  challenge,
  isToken68,
  parseAuthorization,
} from "./authorization-header.js";
import { decodeBasicCredentials } from "./basic.js";
import {
  type BasicOptions,
  type BasicVerifier,
  createBasicVerifier,
  isBasicVerifier,
  notJudged,
} from "./basic-verifier.js";
import {
  type BearerOptions,
  type BearerVerifier,
  CACHED,
  type CachedLookup,
  createBearerVerifier,
  InvalidTokenError,
  type VerifiedToken,
} from "./bearer.js";
import { type Confirmation, confirmationOf } from "./confirmation.js";
import { authChannel, publishAuthentication, publishRefusal } from "./diagnostics.js";
import {
  boundThumbprint,
  checkProof,
  DpopBindingError,
  type DpopConfig,
  DpopNonceError,
  type DpopOptions,
  DpopProofError,
  DpopReplayStoreError,
  freshNonce,
  resolveDpop,
  verifyProof,
} from "./dpop.js";
import { checkOptions, codedError, optionError } from "./options.js";
import type { Principal } from "./principal.js";
import { queryNamesAccessToken } from "./redaction.js";

/** Options of `authenticate`. */
export interface AuthenticateOptions {
  /** Accept `Authorization: Bearer <JWT>` (RFC 6750): options, or a verifier built once and shared. */
  bearer?: BearerOptions | BearerVerifier;
  /**
   * Accept `Authorization: Basic <base64(user:password)>` (RFC 7617): options, or a verifier from
   * {@link createBasicVerifier} built once and shared (its failure budgets, hashing slots and
   * cache then serve every `authenticate()` it is given to).
   */
  basic?: BasicOptions | BasicVerifier;
  /**
   * Accept DPoP-bound access tokens, `Authorization: DPoP <JWT>` with a `DPoP` proof (RFC 9449):
   * the tokens are verified by `bearer`, which is required with it; each proof is checked against
   * the request (method, URI, time, access token hash, key binding, one use). Bearer tokens stay
   * accepted beside it unless `dpop.required`.
   */
  dpop?: DpopOptions;
  /** The protection space named in every challenge (RFC 9110 §11.5). */
  realm: string;
  /**
   * Let requests without any credentials through without a principal (`requestState(req).principal`
   * of `@svc/kernel` is `undefined`; bad credentials are still a 401); {@link requireScopes} and
   * friends then answer 401 with the challenge.
   * @default false
   */
  optional?: boolean;
}

/** The parts of a request `authenticate` reads and writes (Express's `Request` fits). */
export interface AuthRequest extends IncomingMessage {
  /**
   * Written by `authenticate` of `@svc/auth/express` under its `requestProperty` compatibility
   * option only; read the principal with `requestState(req).principal` of `@svc/kernel`.
   */
  principal?: Principal;
  /** Express's client address (it honours `trust proxy`); the socket's peer is used without it. */
  ip?: string | undefined;
  originalUrl?: string;
  body?: unknown;
}

/** The protection space of an authenticator: what a 401 or 403 challenge names. */
export interface AuthRealm {
  /** The realm named in every challenge (RFC 9110 §11.5). */
  readonly realm: string;
  /** The challenge(s) sent with a 401 for missing credentials, one per enabled scheme. */
  readonly challenges: string;
}

/**
 * The outcome of authenticating one request: who made it (`undefined` when `optional` let a
 * request without credentials through) and the realm the authorization guards challenge in.
 */
export interface AuthContext extends AuthRealm {
  /** Who made the request, from verified credentials only; `undefined` without credentials under `optional`. */
  readonly principal: Principal | undefined;
}

function isVerifier(value: BearerOptions | BearerVerifier): value is BearerVerifier {
  return typeof (value as BearerVerifier).verify === "function";
}

/** True when the URL's query carries `access_token`, however its name is spelled or encoded (RFC 6750 §2.3). */
function queryHasAccessToken(url: string | undefined): boolean {
  if (!url) return false;
  const q = url.indexOf("?");
  if (q === -1) return false;
  const hash = url.indexOf("#", q);
  return queryNamesAccessToken(url.slice(q + 1, hash === -1 ? undefined : hash));
}

/**
 * The authentication decision of `authenticate`, without a framework: options resolved
 * once, then one `RequestView` at a time.
 */
export interface Authenticator extends AuthRealm {
  /**
   * Authenticates the request `view` describes. Resolves to its {@link AuthContext}; rejects with
   * the `HttpError` to answer: 401 with the challenge(s) (`error="invalid_token"` for a Bearer
   * token that fails), 400 `invalid_request` (a repeated `Authorization`, a token in the query),
   * 429 or 503 with `Retry-After` (failure budget, busy), as `authenticate` documents.
   * `request` is the framework's request `view` was made from (Fastify's `request`, a Fetch
   * `Request`), which the `svc:auth` messages carry; without it, `view` itself.
   */
  authenticate(view: RequestView, request?: object): Promise<AuthContext>;
  /**
   * The same decision without a promise where none is needed: the principal (`undefined`: no
   * credentials, under `optional`) at once for a Bearer token in the verified-token cache, else a
   * promise of it; a refusal is thrown (or rejected) as the `HttpError` to answer. For an adapter
   * whose framework calls on synchronously (Express's `next`). `request` as for `authenticate`.
   */
  decide(view: RequestView, request?: object): Principal | undefined | Promise<Principal | undefined>;
  /**
   * The fields every response to a request this authenticator let through carries, as a gate's
   * `Passage` of `@svc/kernel`, for the adapter to set the framework's way (`setPassage` of
   * `@svc/kernel/node`, `setReplyPassage`, `addPassage` of `@svc/kernel/fetch`): with
   * `dpop.nonce`, a fresh `DPoP-Nonce` for a request authenticated with DPoP (RFC 9449 §9).
   * `undefined` for any other request. `view` is the one given to `authenticate` or `decide`.
   */
  passage(view: RequestView): Passage | undefined;
}

/** The passage of each request DPoP authenticated with `dpop.nonce` set, by its view. */
const passages = requestSlot<Passage>();

/**
 * The framework-free core of `authenticate`: the options checked and resolved once (a
 * refused one throws here), then a decision per request from its `RequestView`. The adapters
 * of `@svc/auth/node`, `/fastify` and `/fetch` are built on it; so can any other.
 *
 * @example
 * const auth = createAuthenticator({ realm: "api", bearer: { secret, algorithms: ["HS256"] } });
 * const { principal } = await auth.authenticate(req); // a node:http request is a RequestView
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11.6
 */
export function createAuthenticator(options: AuthenticateOptions): Authenticator {
  const config = resolveAuthenticateConfig(options);
  const { realm, challenges } = config.context;
  const contextOf = (principal: Principal | undefined): AuthContext => ({ principal, realm, challenges });
  return {
    realm,
    challenges,
    authenticate(view, request = view) {
      try {
        const decided = observedDecide(config, view, request);
        return decided instanceof Promise ? decided.then(contextOf) : Promise.resolve(contextOf(decided));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    decide: (view, request = view) => observedDecide(config, view, request),
    passage: (view) => passages.get(view),
  };
}

/**
 * {@link decide}, published on `svc:auth` when anyone listens: with no subscriber, one property
 * read more than the decision itself.
 */
function observedDecide(
  config: AuthenticateConfig,
  view: RequestView,
  request: object,
): Principal | undefined | Promise<Principal | undefined> {
  if (!authChannel.hasSubscribers) return decide(config, view);
  let decided: Principal | undefined | Promise<Principal | undefined>;
  try {
    decided = decide(config, view);
  } catch (err) {
    publishRefusal(request, view.headers.authorization, err);
    throw err;
  }
  if (!(decided instanceof Promise)) {
    publishAuthentication(request, decided);
    return decided;
  }
  return decided.then(
    (principal) => {
      if (authChannel.hasSubscribers) publishAuthentication(request, principal);
      return principal;
    },
    (err: unknown) => {
      if (authChannel.hasSubscribers) publishRefusal(request, view.headers.authorization, err);
      throw err;
    },
  );
}

/** The options of `authenticate`, checked and resolved once: verifiers built, challenges written. */
interface AuthenticateConfig {
  bearer: BearerVerifier | undefined;
  /** `dpop`, resolved; `undefined` when DPoP is not accepted. */
  dpop: DpopConfig | undefined;
  /** Whether `Authorization: Bearer` is accepted (`bearer` given, and not `dpop.required`). */
  acceptsBearer: boolean;
  /** `bearer.acceptBoundTokens`: a token with a `cnf` claim is taken as a Bearer token. */
  acceptsBoundTokens: boolean;
  realm: string;
  basic: BasicVerifier | undefined;
  optional: boolean;
  /** The Bearer verifier's synchronous cache lookup, bound once (see {@link CACHED}). */
  cached: ((token: string) => VerifiedToken | undefined) | undefined;
  /** What the authorization guards read from the request. */
  context: AuthRealm;
  /** `Bearer realm="...", error="invalid_token"` (RFC 6750 §3.1). */
  invalidTokenChallenge: string;
  /** `Bearer realm="...", error="invalid_request"` (RFC 6750 §3.1). */
  invalidRequestChallenge: string;
  /** `Basic realm="...", charset="UTF-8"` (RFC 7617 §2.1). */
  basicChallenge: string;
}

/** What a realm's quoted-string can carry (RFC 9110 §5.6.4: SP, VCHAR, obs-text). */
const REALM = /^[\x20-\x7e\x80-\xff]+$/;

const AUTHENTICATE_OPTIONS = Object.keys({
  realm: 0,
  bearer: 0,
  basic: 0,
  dpop: 0,
  optional: 0,
} satisfies Record<keyof AuthenticateOptions, 0>);

function resolveAuthenticateConfig(options: AuthenticateOptions): AuthenticateConfig {
  checkOptions(
    options,
    AUTHENTICATE_OPTIONS,
    "options",
    "an object { realm, bearer?, basic?, dpop?, optional? }",
  );
  const realm = options.realm;
  // RFC 9110 §11.5: realm is a quoted-string, whose qdtext and quoted-pair carry SP, VCHAR and
  // obs-text (%x80-FF) only. A control character would be dropped from every challenge, and a
  // character above U+00FF cannot be sent in a field at all: Node refuses the header, so every
  // 401 became an error page without its challenge. Refused here, once.
  if (typeof realm !== "string" || !REALM.test(realm))
    throw optionError("realm", realm, "a non-empty string of printable ASCII or Latin-1 characters");
  if (options.bearer === undefined && options.basic === undefined && options.dpop === undefined)
    throw optionError(
      "options",
      options,
      "an object with bearer, basic or both (enable at least one scheme)",
    );
  const optional = options.optional ?? false;
  if (typeof optional !== "boolean") throw optionError("optional", optional, "true or false");
  const bearer = resolveBearer(options.bearer);
  const dpop = resolveDpop(options.dpop);
  // RFC 9449 §7.1: the resource server validates the access token as it would a bearer token;
  // `bearer` says how (keys, issuer, audience), so DPoP without it has nothing to verify with.
  if (dpop !== undefined && bearer === undefined)
    throw codedError("dpop", "dpop needs bearer: the options the DPoP-bound access tokens are verified with");
  const acceptsBearer = bearer !== undefined && dpop?.required !== true;
  if (options.basic !== undefined && (typeof options.basic !== "object" || options.basic === null))
    throw optionError("basic", options.basic, "basic options or a verifier from createBasicVerifier()");
  const basic =
    options.basic === undefined
      ? undefined
      : isBasicVerifier(options.basic)
        ? options.basic
        : createBasicVerifier(options.basic);
  const bearerChallenge = challenge("Bearer", { realm });
  // RFC 7617 §2.1: charset="UTF-8" tells the client to encode user-id and password as UTF-8.
  const basicChallenge = challenge("Basic", { realm, charset: "UTF-8" });
  // RFC 9449 §7.1: the DPoP challenge names the proof algorithms accepted in `algs`.
  const dpopChallenge = dpop ? challenge("DPoP", { realm, algs: dpop.algs }) : undefined;
  const challenges = [
    acceptsBearer ? bearerChallenge : undefined,
    dpopChallenge,
    basic ? basicChallenge : undefined,
  ]
    .filter((c): c is string => c !== undefined)
    .join(", ");
  return {
    bearer,
    dpop,
    acceptsBearer,
    acceptsBoundTokens: bearer?.acceptBoundTokens === true,
    realm,
    basic,
    optional,
    cached: (bearer as (BearerVerifier & CachedLookup) | undefined)?.[CACHED]?.bind(bearer),
    context: { realm, challenges },
    invalidTokenChallenge: challenge("Bearer", { realm, error: "invalid_token" }),
    // With DPoP alone, the challenge of the one token scheme accepted.
    invalidRequestChallenge: challenge(acceptsBearer ? "Bearer" : "DPoP", {
      realm,
      error: "invalid_request",
    }),
    basicChallenge,
  };
}

/** `bearer`: a verifier given as is, or one built from options. */
function resolveBearer(option: BearerOptions | BearerVerifier | undefined): BearerVerifier | undefined {
  if (option === undefined) return undefined;
  if (typeof option !== "object" || option === null)
    throw optionError("bearer", option, "bearer options or a verifier with verify(token)");
  return isVerifier(option) ? option : createBearerVerifier(option);
}

/**
 * The per-request flow: query and body tokens refused, then the `Authorization` header; a Bearer
 * token in the verified-token cache is answered without a promise (the hot path). Returns the
 * principal (`undefined`: no credentials, `optional`), or a promise of it; a refusal is thrown
 * (or rejected) as the `HttpError` to answer.
 */
function decide(
  config: AuthenticateConfig,
  view: RequestView,
): Principal | undefined | Promise<Principal | undefined> {
  // RFC 6750 §2.3/§5.3: query (and form) tokens leak into logs and history;
  // refuse them outright, even next to a valid header ("more than one method", §3.1).
  // Only with Bearer enabled. RFC 6750 §1: "This specification describes how to use bearer
  // tokens in HTTP requests to access OAuth 2.0 protected resources"; its §2.2/§2.3 rules are
  // for a resource server that accepts them. With Basic alone, `access_token` names no credential
  // here and is the resource's own data (a third-party token being stored, say), passed through.
  if (config.bearer !== undefined && carriesTokenOutsideHeader(view))
    throw invalidRequest(config, "Access tokens are accepted only in the Authorization header");
  const header = view.headers.authorization;
  // Node keeps only the first of several Authorization field lines and drops the rest unseen.
  if (header !== undefined && repeatsAuthorization(view))
    throw invalidRequest(config, "The request carries more than one Authorization header");
  const parsed = parseAuthorization(header);
  if (
    parsed === undefined ||
    (parsed.scheme !== "bearer" && parsed.scheme !== "basic" && parsed.scheme !== "dpop") ||
    (parsed.scheme === "bearer" && !config.acceptsBearer)
  ) {
    // `optional`: no credentials at all pass; an unknown scheme is still refused.
    if (config.optional && (header === undefined || /^[ \t]*$/.test(header))) return undefined;
    throw missing(config);
  }
  if (parsed.scheme === "bearer") {
    // A token verified before and still in the cache: no promise, no await, no token68 check
    // (RFC 6750 §2.1: the verifier caches only JWS compact tokens, each a token68), and its
    // binding as the cache recorded it when the token was verified. A miss is checked below,
    // before any verification.
    const hit = config.cached?.(parsed.credentials);
    const bound = refusedBinding(config, parsed.credentials, hit);
    if (bound !== undefined) throw boundAsBearer(config, bound);
    if (hit !== undefined) return hit.principal;
  }
  return verifyCredentials(config, view, parsed);
}

/**
 * How a token sent as `Bearer` is bound when that binding refuses it, else `undefined`: as the
 * verified-token cache recorded it (`hit`), else read from the token. Sent as
 * `Bearer`, a bound token proves no possession of its key, so whoever copied it could use it.
 * @see https://www.rfc-editor.org/rfc/rfc9449#section-7.2 (a `jkt` token as Bearer, beside DPoP: "MUST reject")
 * @see https://www.rfc-editor.org/rfc/rfc8705#section-3 (a certificate-bound token: its certificate must be checked)
 */
function refusedBinding(
  config: AuthenticateConfig,
  token: string,
  hit: VerifiedToken | undefined,
): Confirmation | undefined {
  if (config.acceptsBoundTokens && config.dpop === undefined) return undefined;
  const bound = hit === undefined ? confirmationOf(token) : hit.bound;
  return bound !== undefined && (!config.acceptsBoundTokens || bound === "jkt") ? bound : undefined;
}

/**
 * More than one `Authorization` field line. RFC 9110 §5.3: only a list-based field may be sent
 * in several lines, and `Authorization` is not one (§11.6.2: one set of credentials). Using the
 * first, as Node's `req.headers` does, while a proxy in front may have judged another is how
 * credentials get confused; RFC 6750 §3.1 answers more than one credential with invalid_request.
 */
function repeatsAuthorization(view: RequestView): boolean {
  return repeatsField(view.rawHeaders, "authorization");
}

/**
 * An `access_token` in the query string or in a parsed form body (RFC 6750 §2.2, §2.3). An
 * `application/x-www-form-urlencoded` body is §2.2's method and always refused; in any other body
 * (JSON) the field is refused only without an `Authorization` header, where it can only be meant
 * as the credential. Next to one, it is the resource's own data (a third-party token being
 * stored, say), which the header's credentials are allowed to send.
 */
function carriesTokenOutsideHeader(view: RequestView): boolean {
  const body = exchangeIfAny(view)?.body?.value;
  return (
    queryHasAccessToken(view.originalUrl ?? view.url) ||
    (typeof body === "object" &&
      body !== null &&
      Object.hasOwn(body, "access_token") &&
      (view.headers.authorization === undefined || isFormEncoded(view.headers["content-type"])))
  );
}

function isFormEncoded(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semi = contentType.indexOf(";");
  const essence = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  return essence === "application/x-www-form-urlencoded";
}

/** The credentials verified by their scheme's verifier; anything unexpected is a 500. */
async function verifyCredentials(
  config: AuthenticateConfig,
  view: RequestView,
  parsed: AuthorizationCredentials,
): Promise<Principal> {
  const { bearer, basic, dpop } = config;
  try {
    if (parsed.scheme === "bearer" && bearer) return await verifyBearer(config, bearer, parsed.credentials);
    if (parsed.scheme === "dpop" && bearer && dpop)
      return await verifyDpop(config, bearer, dpop, view, parsed.credentials);
    if (parsed.scheme === "basic" && basic) return await verifyBasic(config, basic, view, parsed.credentials);
  } catch (err) {
    // A callback's own HttpError (a 503 from a user store that is down) keeps its status.
    throw isHttpError(err) ? err : HttpError.internal("Authentication failed unexpectedly", { cause: err });
  }
  // A scheme this middleware does not accept: the same 401 as no credentials.
  throw missing(config);
}

async function verifyBearer(
  config: AuthenticateConfig,
  bearer: BearerVerifier,
  token: string,
): Promise<Principal> {
  // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token
  if (!isToken68(token)) throw invalidRequest(config, "The Authorization header is malformed");
  let result: unknown;
  try {
    result = await bearer.verify(token);
  } catch (err) {
    throw bearerRefusal(err, (cause) => invalidToken(config, cause)) ?? err;
  }
  // A verifier of one's own that answers a bad token with null, undefined or false (as a Basic
  // verify callback does) proved nothing: passing on without a principal let every route without
  // a guard serve the request. RFC 6750 §3.1 invalid_token, as for a token the verifier threw on.
  if (result === null || result === undefined || result === false) throw invalidToken(config);
  // Anything else that is no principal is the verifier's bug: a TypeError, so a 500.
  return checkedPrincipal(result);
}

/**
 * `Authorization: DPoP <token>` (RFC 9449 §7.1): the proof's cheap checks first (one field, its
 * size, header and claims, the nonce), then the access token as `bearer` verifies it (from its
 * cache when known), then its binding to the proof's key, the proof's signature and its `jti`.
 */
async function verifyDpop(
  config: AuthenticateConfig,
  bearer: BearerVerifier,
  dpop: DpopConfig,
  view: RequestView,
  token: string,
): Promise<Principal> {
  // RFC 9449 §7.1: the DPoP scheme's credentials are a token68, as Bearer's b64token.
  if (!isToken68(token)) throw invalidRequest(config, "The Authorization header is malformed");
  let checked: ReturnType<typeof checkProof>;
  try {
    checked = checkProof(dpop, view, token);
  } catch (err) {
    throw dpopRefusal(config, dpop, err);
  }
  let principal = config.cached?.(token)?.principal;
  if (principal === undefined) {
    let result: unknown;
    try {
      result = await bearer.verify(token);
    } catch (err) {
      throw bearerRefusal(err, dpopInvalidToken(config, dpop)) ?? err;
    }
    if (result === null || result === undefined || result === false)
      throw dpopInvalidToken(config, dpop)(undefined);
    principal = checkedPrincipal(result);
  }
  // RFC 9449 §7.1: a token presented with the DPoP scheme must be bound to a key (`cnf.jkt`).
  const jkt = boundThumbprint(token);
  if (jkt === undefined) throw dpopInvalidToken(config, dpop)(new InvalidTokenError("ERR_DPOP_UNBOUND"));
  try {
    await verifyProof(dpop, checked, jkt);
  } catch (err) {
    throw dpopRefusal(config, dpop, err);
  }
  // RFC 9449 §9, §8.2: a new nonce may come in any response; the client uses the latest.
  const nonce = freshNonce(dpop);
  if (nonce !== undefined) passages.set(view, { fields: { "DPoP-Nonce": nonce } });
  return { ...principal, scheme: "dpop" };
}

/** The answer to a proof `checkProof` or `verifyProof` refused, or the error itself if unexpected. */
function dpopRefusal(config: AuthenticateConfig, dpop: DpopConfig, err: unknown): unknown {
  /**
   * RFC 9449 §7.1: the 401 of `error`, in the DPoP challenge with the algorithms accepted; §9: a
   * nonce refusal carries the `DPoP-Nonce` to use.
   */
  const unauthorized = (message: string, cause: DpopProofError | DpopNonceError, error: string) =>
    HttpError.unauthorized(message, {
      code: error,
      cause,
      headers: {
        "WWW-Authenticate": challenge("DPoP", {
          realm: config.realm,
          error,
          error_description: cause.message,
          algs: dpop.algs,
        }),
        ...(cause instanceof DpopNonceError ? { "DPoP-Nonce": cause.nonce } : undefined),
      },
    });
  if (err instanceof DpopProofError)
    return unauthorized("The DPoP proof is invalid", err, "invalid_dpop_proof");
  if (err instanceof DpopNonceError)
    // RFC 9449 §9: "the resource server responds with ... use_dpop_nonce ... and a DPoP-Nonce".
    return unauthorized("A DPoP nonce is required", err, "use_dpop_nonce");
  if (err instanceof DpopBindingError)
    return dpopInvalidToken(config, dpop)(new InvalidTokenError("ERR_DPOP_KEY_MISMATCH", { cause: err }));
  if (err instanceof DpopReplayStoreError) {
    // RFC 9110 §15.6.4: the store's own hint (a full memoryNonceStore: until its earliest proof
    // leaves), else 5 seconds.
    const retryAfter = (err.cause as { retryAfter?: unknown } | null | undefined)?.retryAfter;
    const seconds =
      typeof retryAfter === "number" && Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 5;
    return HttpError.serviceUnavailable(seconds, "Credentials cannot be verified right now", { cause: err });
  }
  return err;
}

/** RFC 9449 §7.1 and RFC 6750 §3.1: 401 `invalid_token` in the DPoP challenge. */
function dpopInvalidToken(config: AuthenticateConfig, dpop: DpopConfig): (cause: unknown) => HttpError {
  const header = challenge("DPoP", { realm: config.realm, error: "invalid_token", algs: dpop.algs });
  return (cause) =>
    HttpError.unauthorized("The access token is invalid", {
      code: "invalid_token",
      ...(cause === undefined ? {} : { cause }),
      headers: { "WWW-Authenticate": header },
    });
}

/** What a bound token sent as `Bearer` is told, and the reason `svc:auth` publishes, by binding. */
const BOUND_AS_BEARER: Readonly<Record<Confirmation, { reason: string; description: string }>> = {
  jkt: {
    reason: "ERR_DPOP_BOUND",
    description: "The access token is bound to a DPoP key and is not accepted as a bearer token",
  },
  "x5t#S256": {
    reason: "ERR_CERTIFICATE_BOUND",
    description: "The access token is bound to a client certificate and is not accepted as a bearer token",
  },
  cnf: {
    reason: "ERR_KEY_BOUND",
    description: "The access token is bound to a key and is not accepted as a bearer token",
  },
};

/**
 * A bound token sent as `Bearer`: 401 `invalid_token` saying so (the client holds the token and
 * learns nothing new), with the DPoP challenge beside when DPoP is accepted, so the client knows
 * the scheme to use.
 * @see https://www.rfc-editor.org/rfc/rfc9449#section-7.2
 */
function boundAsBearer(config: AuthenticateConfig, bound: Confirmation): HttpError {
  const { realm, dpop } = config;
  const { reason, description } = BOUND_AS_BEARER[bound];
  const bearer = challenge("Bearer", { realm, error: "invalid_token", error_description: description });
  return HttpError.unauthorized("The access token is invalid", {
    code: "invalid_token",
    cause: new InvalidTokenError(reason),
    headers: {
      "WWW-Authenticate":
        dpop === undefined ? bearer : `${bearer}, ${challenge("DPoP", { realm, algs: dpop.algs })}`,
    },
  });
}

/** `value` when it has a principal's shape, else a `TypeError` naming the verifier. */
function checkedPrincipal(value: unknown): Principal {
  const p = value as Partial<Principal> | null;
  const strings = (list: unknown) => Array.isArray(list) && list.every((v) => typeof v === "string");
  if (
    typeof p !== "object" ||
    p === null ||
    typeof p.id !== "string" ||
    p.id === "" ||
    !strings(p.roles) ||
    !strings(p.scopes)
  )
    throw new TypeError("bearer.verify resolved to no principal { id, roles, scopes, scheme }");
  return p as Principal;
}

/**
 * RFC 6750 §3.1: 401 with `error="invalid_token"`, and nothing that says why: the why is its
 * `cause` (jose's error, or the verifier's `InvalidTokenError`), for the log only.
 */
function invalidToken(config: AuthenticateConfig, cause?: unknown): HttpError {
  return HttpError.unauthorized("The access token is invalid", {
    code: "invalid_token",
    ...(cause === undefined ? {} : { cause }),
    headers: { "WWW-Authenticate": config.invalidTokenChallenge },
  });
}

/** The answer to a token the verifier refused, or undefined for an unexpected failure. */
function bearerRefusal(err: unknown, invalid: (cause: unknown) => HttpError): HttpError | undefined {
  if (!(err instanceof Error)) return undefined;
  // RFC 6750 §3.1: invalid_token, and nothing that says why.
  if (err.name === "InvalidTokenError") return invalid(tokenCause(err));
  if (err.name === "KeySourceUnavailableError") {
    // The issuer's keys are unreachable: the token may be fine, so no 401 (which would
    // send clients to re-authenticate); a 503 they can retry, with the cause logged.
    // RFC 9110 §15.6.4: a 503 server "MAY send a Retry-After header field (Section 10.2.3) to
    // suggest an appropriate amount of time for the client to wait before retrying": the rest of
    // the key source's failure cool-down when it says so, else 5 seconds.
    const retryAfter = (err as { retryAfter?: unknown }).retryAfter;
    const seconds =
      typeof retryAfter === "number" && Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 5;
    return HttpError.serviceUnavailable(seconds, "Credentials cannot be verified right now", { cause: err });
  }
  return undefined;
}

/**
 * What a refused token's 401 carries as its `cause`: jose's error when jose refused it (the
 * `JWTExpired`, `JWSSignatureVerificationFailed`, ... it threw), else the `InvalidTokenError`.
 */
function tokenCause(err: Error): unknown {
  const cause = err.cause;
  return typeof cause === "object" &&
    cause !== null &&
    (cause as { name?: unknown }).name !== undefined &&
    typeof (cause as { code?: unknown }).code === "string" &&
    String((cause as { code: string }).code).startsWith("ERR_J")
    ? cause
    : err;
}

async function verifyBasic(
  config: AuthenticateConfig,
  basic: BasicVerifier,
  view: RequestView,
  credentials: string,
): Promise<Principal> {
  const outcome = await basic.check(decodeBasicCredentials(credentials), basic.clientAddress(view));
  switch (outcome.result) {
    case "authenticated":
      return outcome.principal;
    case "blocked":
    case "busy":
      throw notJudged(outcome);
    default:
      throw HttpError.unauthorized("The user name or password is wrong", {
        code: "invalid_credentials",
        headers: { "WWW-Authenticate": config.basicChallenge },
      });
  }
}

/** No usable credentials: 401 with one challenge per enabled scheme (RFC 9110 §11.6.1). */
function missing(config: AuthenticateConfig): HttpError {
  return HttpError.unauthorized("Authentication is required", {
    headers: { "WWW-Authenticate": config.context.challenges },
  });
}

/**
 * A request RFC 6750 §3.1 calls `invalid_request`: 400, with the Bearer challenge naming it when
 * Bearer is enabled. Without it, no challenge: RFC 9110 §11.6.1 has a challenge say which
 * credentials might affect the response, and Bearer ones would not.
 */
function invalidRequest(config: AuthenticateConfig, message: string): HttpError {
  return HttpError.badRequest(message, {
    code: "invalid_request",
    ...(config.bearer ? { headers: { "WWW-Authenticate": config.invalidRequestChallenge } } : {}),
  });
}
