import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import {
  type AuthenticateOptions,
  type BasicLogger,
  type BasicVerifier,
  createBasicVerifier,
  createPasswordHasher,
  createTokenIssuer,
  type Principal,
  type PrincipalInit,
  type TokenIssuer,
} from "@svc/auth";
import { authenticate, authorize } from "@svc/auth/express";
import { type RequestView, requestFacts, type TrustHop } from "@svc/kernel";
import { createRateLimiter, type RateLimitStore } from "@svc/ratelimit";
import helmet, { type HelmetOptions } from "helmet";
import type { Config, DemoUser } from "./config.js";

/** What each demo role may do: readers only read (spec part 5 rule 4: others get 403). */
const ROLE_SCOPES: Readonly<Record<DemoUser["role"], readonly string[]>> = {
  admin: ["read", "write"],
  reader: ["read"],
};

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The `iss` of the service's own tokens, and the issuer its Basic and SOAP users belong to: one
 * user, one principal key, however the user signs in.
 */
export const SERVICE_ISSUER = "urn:svc:reference-server";

/** Authentication material created once at start-up. */
export interface Security {
  issuer: TokenIssuer;
  jwks: Awaited<ReturnType<TokenIssuer["jwks"]>>;
  verify(username: string, password: string): Promise<PrincipalInit | null>;
  /**
   * Whether the user a token names is still configured: a token outlives the user it was issued
   * to (the signing key stays, `JWT_PRIVATE_KEY`), and must not keep serving a removed one.
   */
  userExists(id: string): boolean;
  realm: string;
  issuerUrl: string;
  /**
   * The Basic verifier every Basic check (resource API, `POST /auth/token`, SOAP over HTTP Basic)
   * and every SOAP header credential (`soap/credentials.ts`) goes through: failure budgets,
   * bounded hashing, verified-credentials cache. Set by {@link guardBasic}; without it each
   * middleware gets its own verifier with the package defaults (in-memory failure budgets).
   */
  basic?: BasicVerifier;
}

/**
 * Hashes the demo users' passwords (scrypt, compared in constant time) and prepares the ES256
 * token issuer whose JWKS the Bearer verifier trusts. Tokens are signed with `JWT_PRIVATE_KEY`
 * when configured (instances of a fleet then accept each other's tokens), else with a key made
 * at start-up.
 */
export async function createSecurity(config: Config): Promise<Security> {
  // The demo passwords are public anyway; a cheaper scrypt cost keeps Basic requests fast. One
  // hasher for the stored hashes and the unknown-user stand-in, so both cost the same time.
  const passwords = createPasswordHasher({ logN: 12 });
  const users = await Promise.all(
    config.demoUsers.map(async (u) => ({ ...u, hash: await passwords.hash(u.password) })),
  );
  const issuerUrl = SERVICE_ISSUER;
  const issuer = createTokenIssuer({
    issuer: issuerUrl,
    audience: issuerUrl,
    ttl: 900,
    ...(config.jwtPrivateKey ? { privateKey: config.jwtPrivateKey } : {}),
  });
  return {
    issuer,
    jwks: await issuer.jwks(),
    realm: "svc",
    issuerUrl,
    userExists: (id) => users.some((u) => u.username === id),
    async verify(username, password) {
      const user = users.find((u) => u.username === username);
      // An unknown user costs the same scrypt work as a known one (the hasher's cost).
      if (!(await passwords.verify(password, user?.hash))) return null;
      if (!user) return null;
      // The service's own tokens name the same users: one principal key by Basic, SOAP or token.
      return {
        id: user.username,
        issuer: issuerUrl,
        roles: [user.role],
        scopes: [...ROLE_SCOPES[user.role]],
      };
    },
  };
}

/**
 * `security` with a shared Basic verifier whose failed attempts count per client address and per
 * user name in the rate-limit store (Redis for a fleet), before any password is hashed:
 * `RATE_LIMIT_MAX` failures per `RATE_LIMIT_WINDOW_SECONDS`, then 429 with `Retry-After` for
 * every Basic or SOAP-header attempt of that client, right password or not; the name's budget
 * refuses only clients that failed for that name themselves, so strangers cannot lock a user out.
 * Hashing runs at most 2 at a time with 16 waiting (beyond: 503 with `Retry-After`), and good
 * credentials are remembered for 60 s, so a flood of bad ones neither starves Bearer requests nor
 * known clients (spec part 8).
 *
 * @example const guarded = guardBasic(security, config, stores.rateLimit, logger);
 */
export function guardBasic(
  security: Security,
  config: Config,
  store: RateLimitStore,
  logger: BasicLogger,
): Security {
  const failures = createRateLimiter({
    limit: config.rateLimit.max,
    windowMs: config.rateLimit.windowSeconds * 1000,
    store,
    prefix: "authfail:",
  });
  const basic = createBasicVerifier({
    verify: security.verify,
    failureLimit: {
      perClient: failures,
      perUsername: failures,
      failMode: config.rateLimitFailMode,
      logger,
    },
  });
  return { ...security, basic };
}

/** Basic or Bearer on every resource request; no credentials pass on to the rate limit, then 401. */
export function authentication(security: Security) {
  return authenticate(authenticationOptions(security));
}

/** The options of {@link authentication}, for the framework's own authentication step. */
export function authenticationOptions(security: Security): AuthenticateOptions {
  return {
    realm: security.realm,
    optional: true,
    basic: security.basic ?? { verify: security.verify },
    bearer: {
      jwks: security.jwks,
      algorithms: [security.issuer.algorithm],
      issuer: security.issuerUrl,
      audience: security.issuerUrl,
      // Its own issuer types access tokens at+jwt: any other JWT of its key is refused (RFC 9068 §4).
      typ: "at+jwt",
      // The token of a user no longer configured is refused (401 invalid_token), signature or not.
      verifyPrincipal: (principal) => security.userExists(principal.id),
    },
  };
}

/** Reads need a principal; writes need the `write` scope (401 without credentials, else 403). */
export function permission() {
  return authorize(mayCall);
}

/** Whether `principal` may make a request with this method: reads, or writes with `write`. */
export function mayCall(principal: Principal, req: { method?: string | undefined }): boolean {
  return SAFE_METHODS.has(req.method ?? "") || principal.scopes.includes("write");
}

/**
 * `POST /auth/token` accepts Basic only: a token is not traded for a token. Without credentials
 * the request passes on without a principal, to the rate limit (per client IP) and then
 * {@link signedIn}'s 401, so it counts like any other, and the body is read only after both.
 */
export function basicOnly(security: Security) {
  return authenticate(basicOnlyOptions(security));
}

/** The options of {@link basicOnly}, for the framework's own authentication step. */
export function basicOnlyOptions(security: Security): AuthenticateOptions {
  return {
    realm: security.realm,
    optional: true,
    basic: security.basic ?? { verify: security.verify },
  };
}

/** 401 with the challenge of the `authenticate()` in front when the request has no principal. */
export function signedIn() {
  return authorize(() => true);
}

/**
 * The headers `helmet(options)` sets on every response, read once: with its default (static)
 * directives they do not depend on the request.
 */
export function helmetHeaders(options?: Readonly<HelmetOptions>): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const res = {
    setHeader: (name: string, value: unknown) => headers.push([name, String(value)]),
    removeHeader: () => {},
  };
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, () => {});
  return headers;
}

/**
 * The service's one rule for `Strict-Transport-Security` (RFC 6797 §7.2: an HSTS host MUST NOT
 * include it in responses over non-secure transport): helmet's security headers for a response
 * that travels over TLS, the same without HSTS otherwise. Over TLS means on a TLS connection, or
 * behind a proxy `trust` believes whose appended `X-Forwarded-Proto` says `https`, read as the
 * links' scheme is (`requestFacts`: the value the trusted chain appended, never a `Forwarded` the
 * proxy passed through from the client, nor the first value, which a client writes itself when
 * the proxy appends). The Express app, the Fastify app and the parser's refusals
 * ({@link clientErrorHeaders}) all answer by it.
 */
export function securityHeaders(trust: TrustHop): {
  readonly overTls: (req: RequestView) => boolean;
  readonly forRequest: (req: RequestView) => ReadonlyArray<readonly [string, string]>;
} {
  const overTls = (req: RequestView): boolean => {
    if (req.socket?.encrypted === true) return true;
    if (req.headers["x-forwarded-proto"] === undefined) return false;
    try {
      return requestFacts(req, trust).scheme === "https";
    } catch {
      // Forwarded fields that cannot be read: not known to be https; allowedHosts answers them.
      return false;
    }
  };
  const fields = fieldsOver();
  return { overTls, forRequest: (req) => fields(overTls(req)) };
}

/** helmet's headers read once, with `Strict-Transport-Security` only for a response over TLS. */
function fieldsOver(): (tls: boolean) => ReadonlyArray<readonly [string, string]> {
  const secure = helmetHeaders();
  const plain = secure.filter(([name]) => name.toLowerCase() !== "strict-transport-security");
  return (tls) => (tls ? secure : plain);
}

/**
 * The header fields @svc/errors' `clientErrorHandler` adds to its answer to a request the HTTP
 * parser refuses (such a request never reaches the app): the security headers by the one rule of
 * {@link securityHeaders} (no request was read, so the socket alone says whether it is TLS), and a
 * fresh correlation id.
 *
 * @example server.on("clientError", clientErrorHandler({ headers: clientErrorHeaders() }));
 */
export function clientErrorHeaders(): (socket: Duplex) => Array<readonly [string, string]> {
  const fields = fieldsOver();
  return (socket) => [
    ...fields((socket as { encrypted?: boolean }).encrypted === true),
    ["X-Correlation-ID", randomUUID()],
  ];
}
