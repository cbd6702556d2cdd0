import {
  authenticate,
  authorize,
  createTokenIssuer,
  hashPassword,
  type Principal,
  type PrincipalInit,
  type TokenIssuer,
  verifyPassword,
} from "@svc/auth";
import type { Config, DemoUser } from "./config.js";

/** What each demo role may do: readers only read (spec part 5 rule 4: others get 403). */
const ROLE_SCOPES: Readonly<Record<DemoUser["role"], readonly string[]>> = {
  admin: ["read", "write"],
  reader: ["read"],
};

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Authentication material created once at start-up. */
export interface Security {
  issuer: TokenIssuer;
  jwks: Awaited<ReturnType<TokenIssuer["jwks"]>>;
  verify(username: string, password: string): Promise<PrincipalInit | null>;
  realm: string;
  issuerUrl: string;
}

/**
 * Hashes the demo users' passwords (scrypt, compared in constant time) and prepares the ES256
 * token issuer whose JWKS the Bearer verifier trusts. Tokens are signed with `JWT_PRIVATE_KEY`
 * when configured (instances of a fleet then accept each other's tokens), else with a key made
 * at start-up.
 */
export async function createSecurity(config: Config): Promise<Security> {
  // The demo passwords are public anyway; a cheaper scrypt cost keeps Basic requests fast.
  const users = await Promise.all(
    config.demoUsers.map(async (u) => ({ ...u, hash: await hashPassword(u.password, { logN: 12 }) })),
  );
  const issuerUrl = "urn:svc:reference-server";
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
    async verify(username, password) {
      const user = users.find((u) => u.username === username);
      // An unknown user costs the same scrypt work as a known one.
      if (!(await verifyPassword(password, user?.hash))) return null;
      if (!user) return null;
      return { id: user.username, roles: [user.role], scopes: [...ROLE_SCOPES[user.role]] };
    },
  };
}

/** Basic or Bearer on every resource request; no credentials pass on to the rate limit, then 401. */
export function authentication(security: Security) {
  return authenticate({
    realm: security.realm,
    optional: true,
    basic: { verify: security.verify },
    bearer: {
      jwks: security.jwks,
      algorithms: [security.issuer.algorithm],
      issuer: security.issuerUrl,
      audience: security.issuerUrl,
    },
  });
}

/** Reads need a principal; writes need the `write` scope (401 without credentials, else 403). */
export function permission() {
  return authorize(
    (principal: Principal, req) => SAFE_METHODS.has(req.method ?? "") || principal.scopes.includes("write"),
  );
}

/** `POST /auth/token` accepts Basic only: a token is not traded for a token. */
export function basicOnly(security: Security) {
  return authenticate({ realm: security.realm, basic: { verify: security.verify } });
}
