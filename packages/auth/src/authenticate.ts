import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, type NextFunction } from "@svc/errors";
import { challenge, isToken68, parseAuthorization } from "./authorization-header.js";
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
} from "./bearer.js";
import type { Principal } from "./principal.js";
import { queryNamesAccessToken } from "./redaction.js";

/** Options of {@link authenticate}. */
export interface AuthenticateOptions {
  /** Accept `Authorization: Bearer <JWT>` (RFC 6750): options, or a verifier built once and shared. */
  bearer?: BearerOptions | BearerVerifier;
  /**
   * Accept `Authorization: Basic <base64(user:password)>` (RFC 7617): options, or a verifier from
   * {@link createBasicVerifier} built once and shared (its failure budgets, hashing slots and
   * cache then serve every `authenticate()` it is given to).
   */
  basic?: BasicOptions | BasicVerifier;
  /** The protection space named in every challenge (RFC 9110 §11.5). */
  realm: string;
  /**
   * Let requests without any credentials through without `req.principal` (bad credentials are
   * still a 401); {@link requireScopes} and friends then answer 401 with the challenge.
   * @default false
   */
  optional?: boolean;
}

/** The parts of a request {@link authenticate} reads and writes (Express's `Request` fits). */
export interface AuthRequest extends IncomingMessage {
  principal?: Principal;
  /** Express's client address (it honours `trust proxy`); the socket's peer is used without it. */
  ip?: string | undefined;
  originalUrl?: string;
  body?: unknown;
}

interface AuthContext {
  realm: string;
  bearer: boolean;
  /** The challenge(s) sent with a 401 for missing credentials. */
  challenges: string;
}

/** Where {@link authenticate} leaves its context on a request (a property, not a WeakMap entry per request). */
const CONTEXT = Symbol("@svc/auth context");

/** The context {@link authenticate} left on a request, for the authorization guards. */
export function authContextOf(req: object): AuthContext | undefined {
  return (req as { [CONTEXT]?: AuthContext })[CONTEXT];
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
 * Express middleware that authenticates every request from its `Authorization` header and sets
 * `req.principal = { id, roles, scopes, scheme }`.
 *
 * - No credentials (or an unsupported scheme): 401 with one `WWW-Authenticate` challenge per
 *   enabled scheme (`Bearer realm="..."`, `Basic realm="...", charset="UTF-8"`).
 * - A Bearer token that fails verification: 401 with `error="invalid_token"` and nothing that
 *   says why (RFC 6750 §3.1); a malformed Bearer header: 400 with `error="invalid_request"`.
 * - Bad Basic credentials: 401 with the Basic challenge. With `basic.failureLimit`, a client or
 *   user name over its failure budget: 429 with `Retry-After`, checked before any hashing (RFC
 *   6585 §4); all hashing slots and the queue taken: 503 with `Retry-After` (RFC 9110 §15.6.4).
 * - A remote JWKS that cannot be fetched: 503 with `Retry-After` (the server's fault, not the token's).
 * - `access_token` in the query string or a parsed form body: 400, never accepted (RFC 6750
 *   §2.3, §5.3: a token in a URI leaks into logs and browser history).
 * - Scheme names are case-insensitive (RFC 9110 §11.1). No sessions, no cookies.
 *
 * @example
 * app.use(authenticate({
 *   realm: "employees",
 *   bearer: { jwksUri: "https://issuer.example/jwks.json", algorithms: ["ES256"], issuer, audience },
 *   basic: {
 *     verify: async (user, password) => ((await checkUser(user, password)) ? { id: user } : null),
 *     failureLimit: { perClient: failures, perUsername: failures }, // createRateLimiter from @svc/ratelimit
 *   },
 * }));
 * @see https://www.rfc-editor.org/rfc/rfc6750
 * @see https://www.rfc-editor.org/rfc/rfc7617
 */
export function authenticate(options: AuthenticateOptions) {
  if (typeof options !== "object" || options === null)
    throw new TypeError("authenticate: options are required");
  if (typeof options.realm !== "string" || options.realm === "") {
    throw new TypeError("authenticate: options.realm must be a non-empty string");
  }
  if (options.bearer === undefined && options.basic === undefined) {
    throw new TypeError("authenticate: enable at least one scheme (bearer or basic)");
  }
  const realm = options.realm;
  const bearer =
    options.bearer === undefined
      ? undefined
      : isVerifier(options.bearer)
        ? options.bearer
        : createBearerVerifier(options.bearer);
  const basic =
    options.basic === undefined
      ? undefined
      : isBasicVerifier(options.basic)
        ? options.basic
        : createBasicVerifier(options.basic);
  const optional = options.optional ?? false;

  const bearerChallenge = challenge("Bearer", { realm });
  // RFC 7617 §2.1: charset="UTF-8" tells the client to encode user-id and password as UTF-8.
  const basicChallenge = challenge("Basic", { realm, charset: "UTF-8" });
  const all = [bearer ? bearerChallenge : undefined, basic ? basicChallenge : undefined]
    .filter((c): c is string => c !== undefined)
    .join(", ");
  const context: AuthContext = { realm, bearer: bearer !== undefined, challenges: all };

  const missing = () =>
    HttpError.unauthorized("Authentication is required", { headers: { "WWW-Authenticate": all } });
  const invalidToken = () =>
    HttpError.unauthorized("The access token is invalid", {
      code: "invalid_token",
      headers: { "WWW-Authenticate": challenge("Bearer", { realm, error: "invalid_token" }) },
    });
  const invalidRequest = (message: string) =>
    HttpError.badRequest(message, {
      code: "invalid_request",
      headers: { "WWW-Authenticate": challenge("Bearer", { realm, error: "invalid_request" }) },
    });
  const badBasic = () =>
    HttpError.unauthorized("The user name or password is wrong", {
      code: "invalid_credentials",
      headers: { "WWW-Authenticate": basicChallenge },
    });

  const cached = (bearer as (BearerVerifier & CachedLookup) | undefined)?.[CACHED]?.bind(bearer);

  return function svcAuthenticate(
    req: AuthRequest,
    _res: ServerResponse,
    next: NextFunction,
  ): void | Promise<void> {
    (req as AuthRequest & { [CONTEXT]?: AuthContext })[CONTEXT] = context;
    delete req.principal;
    // RFC 6750 §2.3/§5.3: query (and form) tokens leak into logs and history;
    // refuse them outright, even next to a valid header ("more than one method", §3.1).
    const body = req.body;
    if (
      queryHasAccessToken(req.originalUrl ?? req.url) ||
      (typeof body === "object" && body !== null && Object.hasOwn(body, "access_token"))
    ) {
      next(invalidRequest("Access tokens are accepted only in the Authorization header"));
      return;
    }
    const header = req.headers.authorization;
    const parsed = parseAuthorization(header);
    if (parsed === undefined || (parsed.scheme !== "bearer" && parsed.scheme !== "basic")) {
      if (optional && (header === undefined || header.trim() === "")) {
        next();
        return;
      }
      next(missing());
      return;
    }
    if (parsed.scheme === "bearer" && cached !== undefined && isToken68(parsed.credentials)) {
      // A token verified before and still in the cache: no promise, no await.
      const principal = cached(parsed.credentials);
      if (principal !== undefined) {
        req.principal = principal;
        next();
        return;
      }
    }
    return verifyCredentials(req, parsed, next);
  };

  async function verifyCredentials(
    req: AuthRequest,
    parsed: NonNullable<ReturnType<typeof parseAuthorization>>,
    next: NextFunction,
  ): Promise<void> {
    try {
      if (parsed.scheme === "bearer") {
        if (!bearer) {
          next(missing());
          return;
        }
        // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token
        if (!isToken68(parsed.credentials)) {
          next(invalidRequest("The Authorization header is malformed"));
          return;
        }
        try {
          req.principal = await bearer.verify(parsed.credentials);
        } catch (err) {
          if (err instanceof Error && err.name === "InvalidTokenError") {
            next(invalidToken());
            return;
          }
          if (err instanceof Error && err.name === "KeySourceUnavailableError") {
            // The issuer's keys are unreachable: the token may be fine, so no 401 (which would
            // send clients to re-authenticate); a 503 they can retry, with the cause logged.
            next(HttpError.serviceUnavailable(5, "Credentials cannot be verified right now", { cause: err }));
            return;
          }
          throw err;
        }
        next();
        return;
      }
      if (!basic) {
        next(missing());
        return;
      }
      const outcome = await basic.check(decodeBasicCredentials(parsed.credentials), basic.clientAddress(req));
      switch (outcome.result) {
        case "authenticated":
          req.principal = outcome.principal;
          next();
          return;
        case "blocked":
        case "busy":
          next(notJudged(outcome));
          return;
        default:
          next(badBasic());
          return;
      }
    } catch (err) {
      next(HttpError.internal("Authentication failed unexpectedly", { cause: err }));
    }
  }
}
