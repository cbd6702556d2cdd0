import * as jose from "jose";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type BearerOptions,
  createBearerVerifier,
  createTokenIssuer,
  type TokenIssuerOptions,
} from "../src/index.js";
import type { CryptoKey, JSONWebKeySet, JWK, JWTPayload } from "../src/jose-types.js";

// The public API declares jose's types itself (src/jose-types.ts); an application's own jose
// values go in, and what comes out goes into jose, with no cast. `npm run typecheck` checks the
// types below against the jose installed; the calls check the values.
describe("jose's types and this package's", () => {
  it("fit each other both ways", () => {
    expectTypeOf<jose.JWK>().toExtend<JWK>();
    expectTypeOf<JWK>().toExtend<jose.JWK>();
    expectTypeOf<jose.JSONWebKeySet>().toExtend<JSONWebKeySet>();
    expectTypeOf<JSONWebKeySet>().toExtend<jose.JSONWebKeySet>();
    expectTypeOf<jose.JWTPayload>().toExtend<JWTPayload>();
    expectTypeOf<JWTPayload>().toExtend<jose.JWTPayload>();
    expectTypeOf<jose.CryptoKey>().toEqualTypeOf<CryptoKey>();
  });

  it("an application's jose keys, JWKs and callbacks typed with jose's types go in; jwks() goes into jose", async () => {
    const { publicKey, privateKey } = await jose.generateKeyPair("ES256", { extractable: true });
    const jwk: jose.JWK = { ...(await jose.exportJWK(publicKey)), kid: "k1", use: "sig" };
    const principal = (payload: jose.JWTPayload) => ({ id: String(payload.sub) });
    const issuerOptions: TokenIssuerOptions = {
      issuer: "https://issuer.test/",
      audience: "api",
      privateKey,
    };
    const issuer = createTokenIssuer(issuerOptions);
    const { access_token } = await issuer.issue({ id: "alice" });

    const jwks: jose.JSONWebKeySet = await issuer.jwks();
    const verified = await jose.jwtVerify(access_token, jose.createLocalJWKSet(jwks), { audience: "api" });
    expect(verified.payload.sub).toBe("alice");

    const byKey: BearerOptions = { key: publicKey, algorithms: ["ES256"], audience: "api", principal };
    expect((await createBearerVerifier(byKey).verify(access_token)).id).toBe("alice");
    const byJwk: BearerOptions = { key: jwk, algorithms: ["ES256"], audience: "api", principal };
    expect((await createBearerVerifier(byJwk).verify(access_token)).id).toBe("alice");
    const bySet: BearerOptions = { jwks, algorithms: ["ES256"], audience: "api", principal };
    expect((await createBearerVerifier(bySet).verify(access_token)).id).toBe("alice");
  });
});
