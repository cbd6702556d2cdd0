import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { type Listening, listen } from "@svc/test-utils";
import { calculateThumbprint, generateKeyPair, generateProof, type KeyPair } from "dpop";
import express from "express";
import { decodeProtectedHeader, exportJWK, generateKeyPair as joseKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticate } from "../src/express.js";
import { type DpopAlgorithm, memoryNonceStore, recordedAuthContext } from "../src/index.js";

/**
 * The README's DPoP example names the proof algorithms it accepts; these are its `algorithms`, as
 * the README shows them, against proofs of panva's `dpop` client. An Ed25519 key of that client
 * signs with `alg: "Ed25519"` (RFC 9864 §2.2, the fully-specified name); older clients write
 * `"EdDSA"` (RFC 8037) for the same signature.
 * @see https://www.rfc-editor.org/rfc/rfc9864#section-2.2
 * @see https://www.rfc-editor.org/rfc/rfc9449#section-4.3
 */
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("### DPoP (RFC 9449)"));
const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
const listed = JSON.parse(
  /dpop: \{[\s\S]*?\balgorithms: (\[[^\]]*\])/.exec(example)?.[1] ?? "null",
) as DpopAlgorithm[];
const noCredentials = /\| no credentials \| 401 `WWW-Authenticate: ([^`]+)` \|/.exec(section)?.[1];

const ISSUER = "https://issuer.example/";
const AUDIENCE = "https://api.example/";
const issuerKey = await joseKeyPair("ES256");
const jwks = { keys: [{ ...(await exportJWK(issuerKey.publicKey)), kid: "k1", alg: "ES256" }] };

async function boundToken(keys: KeyPair): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: "orders:read", cnf: { jkt: await calculateThumbprint(keys.publicKey) } })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setSubject("alice")
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(issuerKey.privateKey);
}

/** A proof signed with an Ed25519 key and labelled `alg: "EdDSA"`, as an RFC 8037 client writes it. */
async function eddsaProof(keys: KeyPair, url: string, token: string): Promise<string> {
  const { d: _private, ...jwk } = await exportJWK(keys.privateKey);
  return new SignJWT({
    htm: "GET",
    htu: url,
    jti: randomUUID(),
    ath: createHash("sha256").update(token).digest("base64url"),
  })
    .setProtectedHeader({ alg: "EdDSA", typ: "dpop+jwt", jwk })
    .setIssuedAt()
    .sign(keys.privateKey);
}

async function serve(algorithms: readonly DpopAlgorithm[]): Promise<Listening> {
  const app = express();
  app.disable("x-powered-by");
  app.use(
    authenticate({
      realm: "api",
      bearer: { jwks, algorithms: ["ES256"], issuer: ISSUER, audience: AUDIENCE },
      dpop: { algorithms, replayStore: memoryNonceStore() },
    }),
  );
  app.get("/orders", (req, res) => {
    res.json({ for: requestState(req).principal?.id, scheme: recordedAuthContext(req)?.principal?.scheme });
  });
  app.use(errorHandler({ logger: { error() {} } }));
  return listen(app);
}

const get = (url: string, token: string, proof: string) =>
  fetch(url, { headers: { Authorization: `DPoP ${token}`, DPoP: proof } });

describe("README: the DPoP example's algorithms", () => {
  let server: Listening;
  let url: string;
  beforeAll(async () => {
    server = await serve(listed);
    url = `${server.url}/orders`;
  });
  afterAll(() => server.close());

  it("lists Ed25519 and EdDSA", () => {
    expect(listed).toEqual(expect.arrayContaining(["Ed25519", "EdDSA"]));
  });

  it("the dpop client's Ed25519 proof (alg Ed25519) → 200, scheme dpop", async () => {
    const keys = await generateKeyPair("Ed25519", { extractable: true });
    const token = await boundToken(keys);
    const proof = await generateProof(keys, url, "GET", undefined, token);
    expect(decodeProtectedHeader(proof).alg).toBe("Ed25519");
    const res = await get(url, token, proof);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ for: "alice", scheme: "dpop" });
  });

  it("the same key's proof labelled EdDSA (RFC 8037) → 200", async () => {
    const keys = await generateKeyPair("Ed25519", { extractable: true });
    const token = await boundToken(keys);
    const res = await get(url, token, await eddsaProof(keys, url, token));
    expect(res.status).toBe(200);
  });

  it("the dpop client's ES256 proof → 200", async () => {
    const keys = await generateKeyPair("ES256");
    const token = await boundToken(keys);
    expect((await get(url, token, await generateProof(keys, url, "GET", undefined, token))).status).toBe(200);
  });

  it("no credentials → 401 with the challenge the README's table shows", async () => {
    const res = await fetch(url);
    expect(res.status).toBe(401);
    expect(noCredentials).toBeDefined();
    expect(res.headers.get("www-authenticate")).toBe(noCredentials);
  });
});

describe("README: algorithms are compared by name", () => {
  it.each([
    [["ES256", "EdDSA"], "Ed25519"],
    [["ES256", "Ed25519"], "EdDSA"],
  ] as const)("%j refuses an Ed25519 proof labelled %s (401 invalid_dpop_proof)", async (algorithms, alg) => {
    const server = await serve(algorithms);
    try {
      const url = `${server.url}/orders`;
      const keys = await generateKeyPair("Ed25519", { extractable: true });
      const token = await boundToken(keys);
      const proof =
        alg === "Ed25519"
          ? await generateProof(keys, url, "GET", undefined, token)
          : await eddsaProof(keys, url, token);
      const res = await get(url, token, proof);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^DPoP realm="api", error="invalid_dpop_proof"/);
    } finally {
      await server.close();
    }
  });
});
