import { createPrivateKey, createPublicKey } from "node:crypto";
import type { Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { onError } from "@svc/errors/fetch";
import { type Listening, listenOn } from "@svc/test-utils";
import { Hono } from "hono";
import { type CryptoKey, errors, exportJWK, exportPKCS8, exportSPKI, generateKeyPair, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type AuthVariables, authenticate } from "../src/fetch.js";
import { type BearerOptions, createTokenIssuer } from "../src/index.js";
import { verificationKey } from "../src/key-input.js";

// Cloudflare Workers have node:crypto's KeyObject but not its toCryptoKey, which jose calls to
// verify or sign with a KeyObject: "The toCryptoKey method is not implemented". So is it here, for
// the public and private KeyObjects of this file (Node before 22.10 has no toCryptoKey at all).

const pair = await generateKeyPair("ES256", { extractable: true });
const other = await generateKeyPair("ES256", { extractable: true });
const pem = await exportSPKI(pair.publicKey);
const jwk = await exportJWK(pair.publicKey);
const privatePem = await exportPKCS8(pair.privateKey);
const ISS = "https://api.test/";

const prototypes = [createPublicKey(pem), createPrivateKey(privatePem)].map(
  (key) => Object.getPrototypeOf(key) as object,
);
const own = prototypes.map((prototype) => Object.getOwnPropertyDescriptor(prototype, "toCryptoKey"));
beforeAll(() => {
  for (const prototype of prototypes)
    Object.defineProperty(prototype, "toCryptoKey", {
      configurable: true,
      writable: true,
      value() {
        throw Object.assign(new Error("The toCryptoKey method is not implemented"), {
          code: "ERR_METHOD_NOT_IMPLEMENTED",
        });
      },
    });
});
afterAll(() => {
  prototypes.forEach((prototype, i) => {
    const descriptor = own[i];
    if (descriptor === undefined) Reflect.deleteProperty(prototype, "toCryptoKey");
    else Object.defineProperty(prototype, "toCryptoKey", descriptor);
  });
});

const opened: Listening[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

/** A Hono app on @hono/node-server whose `/me` takes a Bearer token verified with `bearer`. */
async function serve(bearer: BearerOptions): Promise<string> {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.use(authenticate({ realm: "api", bearer }));
  app.get("/me", (c) => c.json(c.get("auth").principal ?? null));
  app.onError(onError({ logger: { error() {} } }));
  const listening = await listenOn(createAdaptorServer({ fetch: app.fetch }) as Server);
  opened.push(listening);
  return listening.url;
}

function sign(key: CryptoKey): Promise<string> {
  return new SignJWT({ sub: "alice" }).setProtectedHeader({ alg: "ES256" }).setExpirationTime("5m").sign(key);
}

async function status(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/me`, { headers: { Authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

describe("Bearer bearer.key where KeyObject.toCryptoKey is not implemented (Cloudflare Workers)", () => {
  it.each([
    ["an SPKI PEM", () => pem],
    ["a public JWK", () => jwk],
    ["a public KeyObject", () => createPublicKey(pem)],
    ["a private KeyObject (its public half)", () => createPrivateKey(privatePem)],
    ["a private CryptoKey (its public half)", () => pair.privateKey],
    ["a public CryptoKey", () => pair.publicKey],
  ])("bearer.key %s, ES256 → a token of its private key → 200, another key's → 401", async (_name, key) => {
    const url = await serve({ key: key() as NonNullable<BearerOptions["key"]>, algorithms: ["ES256"] });
    expect(await status(url, await sign(pair.privateKey))).toBe(200);
    expect(await status(url, await sign(other.privateKey))).toBe(401);
  });

  it("the key jose verifies with: a CryptoKey, imported once per algorithm", async () => {
    const key = verificationKey(createPublicKey(pem), pem, (alg) => alg === "ES256");
    expect(typeof key).toBe("function");
    const get = key as (header: { alg?: string }) => Promise<CryptoKey>;
    const first = await get({ alg: "ES256" });
    expect(first).toBeInstanceOf(
      (globalThis as unknown as { CryptoKey: abstract new () => object }).CryptoKey,
    );
    expect(first.type).toBe("public");
    expect(await get({ alg: "ES256" })).toBe(first);
    // An algorithm the key does not fit (jose asks only for one of `algorithms`): no key verifies it.
    expect(() => get({ alg: "ES384" })).toThrow(errors.JWSSignatureVerificationFailed);
  });
});

describe("createTokenIssuer where KeyObject.toCryptoKey is not implemented (Cloudflare Workers)", () => {
  it.each([
    ["a PKCS#8 PEM", () => privatePem],
    ["a private JWK", async () => exportJWK(pair.privateKey)],
    ["a private KeyObject", () => createPrivateKey(privatePem)],
    ["a private CryptoKey", () => pair.privateKey],
  ])(
    "tokenIssuer.privateKey %s, ES256 → issue() signs a token bearer.key verifies → 200",
    async (_name, key) => {
      const issuer = createTokenIssuer({
        issuer: ISS,
        audience: ISS,
        algorithm: "ES256",
        privateKey: await key(),
      });
      const url = await serve({ key: pem, algorithms: ["ES256"], audience: ISS, issuer: ISS });
      expect(await status(url, (await issuer.issue({ id: "alice" })).access_token)).toBe(200);
    },
  );

  it("no privateKey (a key of its own), ES256 → issue() signs a token its JWKS verifies → 200", async () => {
    const issuer = createTokenIssuer({ issuer: ISS, audience: ISS, algorithm: "ES256" });
    const url = await serve({ jwks: await issuer.jwks(), algorithms: ["ES256"], audience: ISS, issuer: ISS });
    expect(await status(url, (await issuer.issue({ id: "alice" })).access_token)).toBe(200);
  });
});

describe("Bearer: a token that cannot be verified for a reason other than the token", () => {
  it("crypto.subtle.importKey rejecting → 401 invalid_token, and onWarning SVC_AUTH_TOKEN_UNVERIFIABLE once a minute with the reason", async () => {
    const warnings: [string, string][] = [];
    const url = await serve({
      key: pem,
      algorithms: ["ES256"],
      onWarning: (message, code) => void warnings.push([message, code]),
    });
    const token = await sign(pair.privateKey);
    const second = await new SignJWT({ sub: "bob" })
      .setProtectedHeader({ alg: "ES256" })
      .setExpirationTime("5m")
      .sign(pair.privateKey);
    vi.spyOn(globalThis.crypto.subtle, "importKey").mockRejectedValue(
      new Error("importKey is not implemented"),
    );
    expect(await status(url, token)).toBe(401);
    expect(await status(url, second)).toBe(401);
    expect(warnings).toEqual([
      [
        expect.stringMatching(/could not be verified .*importKey is not implemented/),
        "SVC_AUTH_TOKEN_UNVERIFIABLE",
      ],
    ]);
  });

  it("a token of another key (jose's own refusal) → 401 and no warning", async () => {
    const warnings: string[] = [];
    const url = await serve({
      key: pem,
      algorithms: ["ES256"],
      onWarning: (_message, code) => void warnings.push(code),
    });
    expect(await status(url, await sign(other.privateKey))).toBe(401);
    expect(warnings).toEqual([]);
  });
});
