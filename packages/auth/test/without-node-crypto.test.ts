import { generateKeyPairSync, scryptSync } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { onError } from "@svc/errors/fetch";
import { type Listening, listenOn } from "@svc/test-utils";
import { Hono } from "hono";
import {
  type CryptoKey,
  exportJWK,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importPKCS8,
  SignJWT,
} from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type AuthVariables, authenticate } from "../src/fetch.js";
import {
  type AuthenticateOptions,
  createBearerVerifier,
  createTokenIssuer,
  hashPassword,
  verifyPassword,
} from "../src/index.js";
import { VerifiedTokenCache } from "../src/token-cache.js";

// A runtime without node:crypto (workerd without nodejs_compat, a browser): the package finds
// none, and takes its Web Crypto and portable paths.
vi.mock("../src/node-crypto.js", async (importOriginal) => ({
  ...(await importOriginal<typeof import("../src/node-crypto.js")>()),
  nodeCrypto: undefined,
}));

const ISS = "https://api.test/";
const opened: Listening[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

/** A Hono app on @hono/node-server whose `/me` answers the principal `options` authenticate. */
async function serve(options: AuthenticateOptions): Promise<string> {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.use(authenticate(options));
  app.get("/me", (c) => c.json(c.get("auth").principal ?? null));
  app.onError(onError({ logger: { error() {} } }));
  const listening = await listenOn(createAdaptorServer({ fetch: app.fetch }) as Server);
  opened.push(listening);
  return `${listening.url}/me`;
}

const get = (url: string, authorization: string) => fetch(url, { headers: { authorization } });

async function signed(key: CryptoKey | Uint8Array, alg: string, sub = "alice"): Promise<string> {
  return new SignJWT({ sub })
    .setProtectedHeader({ alg })
    .setIssuer(ISS)
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(key);
}

const pair = await generateKeyPair("ES256", { extractable: true });
const other = await generateKeyPair("ES256", { extractable: true });
const privatePem = await exportPKCS8(pair.privateKey);

describe("Bearer without node:crypto, on @hono/node-server", () => {
  const keys: Array<[string, () => Promise<unknown>]> = [
    ["an SPKI PEM", () => exportSPKI(pair.publicKey)],
    ["a PKCS #8 PEM (its public half)", async () => privatePem],
    ["a public JWK", () => exportJWK(pair.publicKey)],
    ["a private JWK (its public members)", () => exportJWK(pair.privateKey)],
    ["a public CryptoKey", async () => pair.publicKey],
    ["an extractable private CryptoKey", async () => pair.privateKey],
  ];
  for (const [name, key] of keys) {
    it(`bearer.key ${name}, ES256 → its pair's token 200, another key's 401`, async () => {
      const url = await serve({
        realm: "api",
        bearer: { key: (await key()) as string, algorithms: ["ES256"], issuer: ISS },
      });
      const ok = await get(url, `Bearer ${await signed(pair.privateKey, "ES256")}`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ id: "alice" });
      expect((await get(url, `Bearer ${await signed(other.privateKey, "ES256")}`)).status).toBe(401);
    });
  }

  it("bearer.key an X.509 certificate PEM (P-256), ES256 → a token its private key signed → 200", async () => {
    const cert = readFileSync(new URL("fixtures/localhost-cert.pem", import.meta.url), "utf8");
    const signing = await importPKCS8(
      readFileSync(new URL("fixtures/localhost-key.pem", import.meta.url), "utf8"),
      "ES256",
    );
    const url = await serve({ realm: "api", bearer: { key: cert, algorithms: ["ES256"], issuer: ISS } });
    expect((await get(url, `Bearer ${await signed(signing, "ES256")}`)).status).toBe(200);
  });

  it("bearer.secret a 32-byte string, HS256 → its token 200, another secret's 401", async () => {
    const secret = "s".repeat(32);
    const url = await serve({ realm: "api", bearer: { secret, algorithms: ["HS256"], issuer: ISS } });
    const bytes = new TextEncoder().encode(secret);
    expect((await get(url, `Bearer ${await signed(bytes, "HS256")}`)).status).toBe(200);
    const wrong = new TextEncoder().encode("t".repeat(32));
    expect((await get(url, `Bearer ${await signed(wrong, "HS256")}`)).status).toBe(401);
  });

  it("bearer.key a JWK whose point is not on P-256 → constructed; every token a 500 with ERR_SVC_AUTH_BEARER_KEY, never a 401", async () => {
    const jwk = await exportJWK(pair.publicKey);
    const errors: unknown[] = [];
    const app = new Hono<{ Variables: AuthVariables }>();
    app.use(
      authenticate({ realm: "api", bearer: { key: { ...jwk, y: jwk.x as string }, algorithms: ["ES256"] } }),
    );
    app.get("/me", (c) => c.json(null));
    app.onError(onError({ logger: { error: (record: unknown) => errors.push(record) } }));
    const listening = await listenOn(createAdaptorServer({ fetch: app.fetch }) as Server);
    opened.push(listening);
    const res = await get(`${listening.url}/me`, `Bearer ${await signed(pair.privateKey, "ES256")}`);
    expect(res.status).toBe(500);
    const cause = (errors[0] as { err?: { cause?: unknown } } | undefined)?.err?.cause;
    expect(cause).toBeInstanceOf(TypeError);
    expect(cause).toMatchObject({
      code: "ERR_SVC_AUTH_BEARER_KEY",
      message: expect.stringContaining("ES256"),
    });
  });
});

describe("Bearer key checks at construction without node:crypto", () => {
  const p384 = generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey.export({
    type: "spki",
    format: "pem",
  });
  const ed = generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" });
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({
    type: "spki",
    format: "pem",
  });
  const refusals: Array<[string, unknown, string[], RegExp]> = [
    ["a P-384 SPKI PEM with ES256", p384, ["ES256"], /secp384r1 ec key, which verifies none/],
    ["an Ed25519 SPKI PEM with RS256", ed, ["RS256"], /ed25519 key, which verifies none/],
    ["an RSA SPKI PEM with ES256", rsa, ["ES256"], /rsa key, which verifies none/],
    [
      "a PEM that is no key",
      "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
      ["ES256"],
      /must be a public key/,
    ],
    ["a string that is no PEM", "not a key", ["ES256"], /must be a public key/],
    ["an oct JWK", { kty: "oct", k: "c2VjcmV0" }, ["ES256"], /must be a public key/],
    ["a non-extractable private CryptoKey", null, ["ES256"], /must be a public key/],
  ];
  for (const [name, key, algorithms, message] of refusals) {
    it(`bearer.key ${name} → TypeError ERR_SVC_AUTH_BEARER_KEY`, async () => {
      const given = key ?? (await generateKeyPair("ES256")).privateKey;
      let thrown: unknown;
      try {
        createBearerVerifier({ key: given as string, algorithms });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect(thrown).toMatchObject({
        code: "ERR_SVC_AUTH_BEARER_KEY",
        message: expect.stringMatching(message),
      });
    });
  }

  it("bearer.key an SPKI PEM of RSA with RS256 and PS256 → constructed", () => {
    expect(() => createBearerVerifier({ key: rsa as string, algorithms: ["RS256", "PS256"] })).not.toThrow();
  });

  it("bearer.secret 31 bytes with HS256 → TypeError ERR_SVC_AUTH_BEARER_SECRET", () => {
    expect(() => createBearerVerifier({ secret: "s".repeat(31), algorithms: ["HS256"] })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_AUTH_BEARER_SECRET" }),
    );
  });

  it("createTokenIssuer → TypeError ERR_SVC_AUTH_TOKEN_ISSUER (its keys need node:crypto)", () => {
    expect(() => createTokenIssuer({ issuer: ISS, audience: ISS })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_AUTH_TOKEN_ISSUER" }),
    );
  });
});

describe("Basic and digests without node:crypto: the bytes Node.js makes", () => {
  // Made with Node's scrypt (ln=10, r=8, p=1, salt "0123456789abcdef"): a stored hash keeps verifying.
  const stored = "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$7AnzIswxwEinpwz+ntydndYfVHPvOACmX9Vvo8hO1qM";

  it("a hash Node's scrypt made → verifies with the right password only", async () => {
    expect(await verifyPassword("correct horse battery staple", stored, { logN: 10 })).toBe(true);
    expect(await verifyPassword("correct horse battery stapler", stored, { logN: 10 })).toBe(false);
  });

  it("hashPassword → the hash Node's scryptSync computes for its salt (NFC password)", async () => {
    const password = "pa\u0301ssword"; // NFD "á": hashed as NFC
    const made = await hashPassword(password, { logN: 10 });
    const [, , , salt, hash] = made.split("$");
    const expected = scryptSync(password.normalize("NFC"), Buffer.from(salt ?? "", "base64"), 32, {
      N: 1024,
      r: 8,
      p: 1,
    });
    expect(hash).toBe(expected.toString("base64").replace(/=+$/, ""));
  });

  it("Authorization: Basic with the stored hash's password → 200, a wrong one → 401", async () => {
    const url = await serve({
      realm: "api",
      basic: {
        verify: async (u, p) =>
          u === "alice" && (await verifyPassword(p, stored, { logN: 10 })) ? { id: u } : null,
      },
    });
    const basic = (text: string) => `Basic ${Buffer.from(text).toString("base64")}`;
    expect((await get(url, basic("alice:correct horse battery staple"))).status).toBe(200);
    expect((await get(url, basic("alice:wrong"))).status).toBe(401);
  });

  it("the verified-token cache key → SHA-256 base64url, as node:crypto's hash writes it", () => {
    expect(VerifiedTokenCache.keyOf("a.b.c")).toBe("hF4wRIgJ4ryJWOsCW_x5UjXROwd6U9DDq70jhRcNybg");
  });
});
