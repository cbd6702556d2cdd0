import { generateKeyPairSync } from "node:crypto";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../test/helpers.js";
import { authenticate, requireScopes } from "./express.js";
import { createTokenIssuer } from "./token-issuer.js";

const issuer = createTokenIssuer({ issuer: "https://issuer.test/", audience: "api", ttl: 120 });
let jwksServer: Listening;
let api: Listening;

beforeAll(async () => {
  const j = express();
  j.get("/.well-known/jwks.json", async (_req, res) => {
    res.json(await issuer.jwks());
  });
  jwksServer = await listen(j);
  api = await listen(
    app(
      authenticate({
        realm: "api",
        bearer: {
          jwksUri: `${jwksServer.url}/.well-known/jwks.json`,
          allowHttp: true,
          onWarning: () => {},
          algorithms: [issuer.algorithm],
          issuer: "https://issuer.test/",
          audience: "api",
        },
      }),
    ),
  );
});
afterAll(async () => {
  await api.close();
  await jwksServer.close();
});

describe("createTokenIssuer", () => {
  it("an ephemeral ES256 key: the token verifies through a served JWKS → 200", async () => {
    const response = await issuer.issue({ id: "alice", scopes: ["a", "b"], roles: ["r"] });
    expect(response.token_type).toBe("Bearer");
    expect(response.expires_in).toBe(120);
    const res = await fetch(`${api.url}/me`, {
      headers: { authorization: `Bearer ${response.access_token}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      id: "alice",
      issuer: "https://issuer.test/",
      scopes: ["a", "b"],
      roles: ["r"],
      scheme: "bearer",
    });
  });

  // RFC 6749 §5.1: expires_in is "the lifetime in seconds of the access token". An exp given in
  // claims (a shorter-lived token for one client, an expired one for a test) changed the token's
  // lifetime but the response still said ttl, so a client kept using a token the API refused.
  it.each([
    ["exp 30 s after iat", 30, 30],
    ["exp 60 s in the past", 0, -60],
  ])("claims with %s → expires_in %s, as a token endpoint sends it", async (_name, expiresIn, delta) => {
    const fixed = createTokenIssuer({
      issuer: "https://issuer.test/",
      audience: "api",
      ttl: 120,
      now: () => 1_800_000_000_000,
    });
    const t = express();
    t.post("/token", async (_req, res) => {
      res.json(await fixed.issue({ id: "alice" }, { exp: 1_800_000_000 + delta }));
    });
    const endpoint = await listen(t);
    try {
      const body = (await (await fetch(`${endpoint.url}/token`, { method: "POST" })).json()) as {
        access_token: string;
        expires_in: number;
      };
      expect(decodeJwt(body.access_token).exp).toBe(1_800_000_000 + delta);
      expect(body.expires_in).toBe(expiresIn);
    } finally {
      await endpoint.close();
    }
  });

  it("the token's header and claims", async () => {
    const { access_token } = await issuer.issue({ id: "alice" });
    const header = decodeProtectedHeader(access_token);
    const claims = decodeJwt(access_token);
    const [jwk] = (await issuer.jwks()).keys;
    expect(header).toEqual({ alg: "ES256", typ: "at+jwt", kid: jwk?.kid });
    expect(claims.exp).toBe((claims.iat as number) + 120);
    expect(claims).toMatchObject({ iss: "https://issuer.test/", aud: "api", sub: "alice" });
    expect(typeof claims.jti).toBe("string");
  });

  it("the token carries every claim RFC 9068 §2.2 requires of an at+jwt, client_id included", async () => {
    const claims = decodeJwt((await issuer.issue({ id: "svc-reporting" })).access_token);
    for (const name of ["iss", "exp", "aud", "sub", "client_id", "iat", "jti"])
      expect(claims, name).toHaveProperty(name);
    expect(claims.client_id).toBe("svc-reporting");
    // A caller that knows the client names it.
    const other = decodeJwt((await issuer.issue({ id: "alice" }, { client_id: "web-app" })).access_token);
    expect(other).toMatchObject({ sub: "alice", client_id: "web-app" });
  });

  it("the JWKS holds the public key only", async () => {
    const { keys } = await issuer.jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(keys[0]).not.toHaveProperty("d");
  });

  it("a given PKCS#8 PEM key with RS256 and a fixed kid", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const rs = createTokenIssuer({
      issuer: "i",
      audience: ["a1", "a2"],
      algorithm: "RS256",
      kid: "rsa-1",
      privateKey: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    });
    const { access_token } = await rs.issue({ id: "x" });
    expect(decodeProtectedHeader(access_token)).toMatchObject({ alg: "RS256", kid: "rsa-1" });
    expect(decodeJwt(access_token).aud).toEqual(["a1", "a2"]);
    expect((await rs.jwks()).keys[0]).toMatchObject({ kty: "RSA", kid: "rsa-1" });
  });

  it("a scope that is not one RFC 6749 §3.3 scope-token is refused, not split into several", async () => {
    // "read admin" joined into `scope` would come back as two scopes, "admin" among them.
    const guarded = await listen(
      app(
        authenticate({
          realm: "api",
          bearer: { jwks: await issuer.jwks(), algorithms: [issuer.algorithm], audience: "api" },
        }),
        requireScopes("admin"),
      ),
    );
    try {
      for (const scope of ["read admin", "read\tadmin", 'say"hi', "back\\slash", "", "caf\u00e9"]) {
        let token: string | undefined;
        try {
          token = (await issuer.issue({ id: "mallory", scopes: [scope] })).access_token;
        } catch (err) {
          expect(err).toBeInstanceOf(TypeError);
          continue;
        }
        const res = await fetch(`${guarded.url}/me`, { headers: { authorization: `Bearer ${token}` } });
        expect({ scope, status: res.status }).toEqual({ scope, status: "refused at issue()" });
      }
    } finally {
      await guarded.close();
    }
    // Well-formed scope-tokens still go through.
    const { access_token } = await issuer.issue({ id: "alice", scopes: ["employees:read", "a!#[]~"] });
    expect(decodeJwt(access_token).scope).toBe("employees:read a!#[]~");
  });

  it("misconfiguration → TypeError", () => {
    expect(() => createTokenIssuer({ issuer: "", audience: "a" })).toThrow(TypeError);
    expect(() => createTokenIssuer({ issuer: "i", audience: [] })).toThrow(TypeError);
    expect(() => createTokenIssuer({ issuer: "i", audience: "a", ttl: 0 })).toThrow(TypeError);
    // @ts-expect-error not a supported algorithm
    expect(() => createTokenIssuer({ issuer: "i", audience: "a", algorithm: "HS256" })).toThrow(TypeError);
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    expect(() => createTokenIssuer({ issuer: "i", audience: "a", privateKey: publicKey })).toThrow(TypeError);
  });

  it.each([
    ["an RSA key with ES256", "ES256", generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey],
    ["a P-384 key with ES256", "ES256", generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey],
    ["a P-256 key with RS256", "RS256", generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey],
    ["an Ed25519 key with ES384", "ES384", generateKeyPairSync("ed25519").privateKey],
    [
      "a 1024-bit RSA key with RS256 (RFC 7518 §3.3: 2048 or larger)",
      "RS256",
      generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey,
    ],
  ] as const)(
    "%s → TypeError at construction, not a 500 on the first issue()",
    (_label, algorithm, privateKey) => {
      expect(() => createTokenIssuer({ issuer: "i", audience: "a", algorithm, privateKey })).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_AUTH_TOKEN_ISSUER_PRIVATE_KEY" }),
      );
    },
  );
});
