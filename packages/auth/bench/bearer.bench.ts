import type { ServerResponse } from "node:http";
import { createLocalJWKSet, jwtVerify } from "jose";
import { bench, describe } from "vitest";
import { authenticate } from "../src/express.js";
import { type AuthRequest, createBearerVerifier, createTokenIssuer } from "../src/index.js";

// Bearer verification per request: the authenticate() middleware on a request-shaped object,
// with the verified-token cache (the default) and without it, plus jose alone as the floor of
// what verification costs. Same ES256 token, local JWKS, so no network is measured.
const issuer = createTokenIssuer({ issuer: "https://issuer.bench/", audience: "api", ttl: 3600 });
const jwks = await issuer.jwks();
const { access_token: token } = await issuer.issue({
  id: "alice",
  scopes: ["read", "write"],
  roles: ["admin"],
});
const common = { jwks, algorithms: ["ES256"], issuer: "https://issuer.bench/", audience: "api" } as const;

const cached = authenticate({ realm: "api", bearer: createBearerVerifier({ ...common }) });
const uncached = authenticate({ realm: "api", bearer: createBearerVerifier({ ...common, cache: false }) });
const localJwks = createLocalJWKSet(jwks);
const res = {} as ServerResponse;

function run(mw: typeof cached): Promise<void> {
  const req = { headers: { authorization: `Bearer ${token}` }, url: "/employees" } as unknown as AuthRequest;
  return new Promise((resolve, reject) => {
    void mw(req, res, (err?: unknown) => (err ? reject(err) : resolve()));
  });
}

describe("Bearer ES256 verification per request", () => {
  bench("authenticate, verified-token cache on (default)", async () => {
    await run(cached);
  });
  bench("authenticate, cache: false (verify every request)", async () => {
    await run(uncached);
  });
  bench("jose jwtVerify alone (no middleware)", async () => {
    await jwtVerify(token, localJwks, {
      algorithms: ["ES256"],
      issuer: "https://issuer.bench/",
      audience: "api",
    });
  });
});
