import { createHmac, createSecretKey, createSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { Agent, createServer, request } from "node:http";
import { HttpError } from "@svc/errors";
import { errorHandler } from "@svc/errors/express";
import { type Listening, listen, listenOn } from "@svc/test-utils";
import express from "express";
import { type CryptoKey, exportJWK, generateKeyPair, type JSONWebKeySet, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { app, b64url, rsaPair } from "../test/helpers.js";
import { recordedAuthContext } from "./authorize.js";
import { createBearerVerifier } from "./bearer.js";
import { authenticate } from "./express.js";
import { VerifiedTokenCache } from "./token-cache.js";
import { createTokenIssuer } from "./token-issuer.js";

/** The JWKS servers here listen on plain http on loopback: allowed, and its warning kept quiet. */
const LOOPBACK = { allowHttp: true, onWarning: () => {} } as const;

const ISS = "https://issuer.test/";
const AUD = "https://api.test/";
const realm = "api";

const issuer = createTokenIssuer({ issuer: ISS, audience: AUD, ttl: 600, kid: "k1" });
const stranger = createTokenIssuer({ issuer: ISS, audience: AUD, ttl: 600, kid: "k1" });
let jwks: JSONWebKeySet;
let server: Listening;

const opened: Listening[] = [];
async function serve(...mw: Parameters<typeof app>): Promise<string> {
  const l = await listen(app(...mw));
  opened.push(l);
  return l.url;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

function get(url: string, authorization?: string): Promise<Response> {
  return fetch(`${url}/me`, { headers: authorization === undefined ? {} : { authorization } });
}

beforeAll(async () => {
  jwks = await issuer.jwks();
  server = await listen(
    app(authenticate({ realm, bearer: { jwks, algorithms: ["ES256"], issuer: ISS, audience: AUD } })),
  );
});
afterAll(async () => {
  await server.close();
});

async function token(claims: Record<string, unknown> = {}): Promise<string> {
  return (await issuer.issue({ id: "alice", scopes: ["read", "write"], roles: ["admin"] }, claims))
    .access_token;
}

describe("Bearer: good tokens", () => {
  it("a token from the issuer → 200 with the principal", async () => {
    const res = await get(server.url, `Bearer ${await token()}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      id: "alice",
      issuer: ISS,
      roles: ["admin"],
      scopes: ["read", "write"],
      scheme: "bearer",
    });
  });

  it("scheme in any case (bEARER) → 200 (RFC 9110 §11.1)", async () => {
    const t = await token();
    expect((await get(server.url, `bEARER ${t}`)).status).toBe(200);
    expect((await get(server.url, `BEARER ${t}`)).status).toBe(200);
  });
});

describe("Bearer: challenges", () => {
  it("no Authorization → 401 with a challenge per scheme", async () => {
    const url = await serve(
      authenticate({
        realm,
        bearer: { jwks, algorithms: ["ES256"], audience: AUD },
        basic: { verify: () => null },
      }),
    );
    const res = await get(url);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      'Bearer realm="api", Basic realm="api", charset="UTF-8"',
    );
  });

  it("an unsupported scheme (Digest ...) → 401 with the challenges", async () => {
    const res = await get(server.url, 'Digest username="alice"');
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api"');
  });

  it("a bad token → 401 invalid_token, and the body says nothing about why", async () => {
    const t = await token({ exp: Math.floor(Date.now() / 1000) - 3600 });
    const res = await get(server.url, `Bearer ${t}`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_token"');
    const body = await res.text();
    expect(body).not.toMatch(/exp|signature|claim|kid|alg/i);
    expect(body).not.toContain(t);
  });
});

describe("Bearer: malformed Authorization values", () => {
  it("`Bearer` with no token → 400 invalid_request", async () => {
    const res = await get(server.url, "Bearer");
    expect(res.status).toBe(400);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_request"');
  });

  it("`Bearer  x` (two spaces, not a JWT) → 401 invalid_token", async () => {
    const res = await get(server.url, "Bearer  x");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("`Bearer a b` (two tokens) → 400", async () => {
    expect((await get(server.url, "Bearer a b")).status).toBe(400);
  });

  it("`Bearer` with non-ASCII (Latin-1 é) → 400", async () => {
    expect((await get(server.url, "Bearer abc\u00e9def")).status).toBe(400);
  });

  it.each([
    ["after the token → 400 invalid_request", (t: string) => `Bearer ${t}\u00a0`, 400],
    ["before the scheme → 401, no credentials", (t: string) => `\u00a0Bearer ${t}`, 401],
  ])(
    "a good token, a no-break space (0xa0) %s: only SP and HTAB are whitespace around a field value (RFC 9110 §5.5)",
    async (_where, header, status) => {
      expect((await get(server.url, header(await token()))).status).toBe(status);
    },
  );

  it("`Bearer` with bytes that are not UTF-8 (raw 0xff) → 400, not 500", async () => {
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${server.url}/me`,
        {
          headers: {
            authorization: Buffer.from([0x42, 0x65, 0x61, 0x72, 0x65, 0x72, 0x20, 0xff, 0xfe]).toString(
              "latin1",
            ),
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(400);
  });

  it("two Authorization field lines (a good token, then another credential) → 400 invalid_request, neither used", async () => {
    const { request } = await import("node:http");
    const good = `Bearer ${await token()}`;
    for (const second of [`Bearer ${await token({ sub: "mallory" })}`, "Basic bWFsbG9yeTp4"]) {
      const answer = await new Promise<{ status: number; challenge: string | undefined }>(
        (resolve, reject) => {
          const req = request(`${server.url}/me`, (res) => {
            res.resume();
            const challenge = res.headers["www-authenticate"];
            resolve({ status: res.statusCode ?? 0, challenge });
          });
          req.setHeader("Authorization", [good, second]); // two field lines, not one list
          req.on("error", reject);
          req.end();
        },
      );
      expect(answer).toEqual({
        status: 400,
        challenge: 'Bearer realm="api", error="invalid_request"',
      });
    }
  });

  it("`Bearer x.y` (not three parts) → 401", async () => {
    expect((await get(server.url, "Bearer x.y")).status).toBe(401);
  });
});

describe("Bearer: attacks", () => {
  it('alg "none" with an empty signature → 401', async () => {
    const header = b64url({ alg: "none", typ: "JWT" });
    const payload = b64url({ sub: "admin", iss: ISS, aud: AUD, exp: Math.floor(Date.now() / 1000) + 600 });
    for (const t of [`${header}.${payload}.`, `${header}.${payload}`]) {
      const res = await get(server.url, `Bearer ${t}`);
      expect(res.status).toBe(401);
    }
  });

  it("a genuine token respelled (padding, whitespace in a segment, a fourth part) → 401, and verify() refuses it", async () => {
    const good = await token();
    // jose decodes a segment leniently (Node's base64url decoder skips what it cannot read), so
    // each of these verified as the genuine token: several strings, one signature.
    const respelled = [`${good}=`, `${good}==`, `${good}.`, `${good}.x`];
    for (const t of respelled) {
      const res = await get(server.url, `Bearer ${t}`);
      expect(res.status, t.slice(-8)).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
    // These cannot reach verify() through the header (no token68: 400), but a caller of verify()
    // itself, a WebSocket handshake say, can pass them.
    const verifier = createBearerVerifier({ jwks, algorithms: ["ES256"], issuer: ISS, audience: AUD });
    const spaced = ["=", " ", "\n"].map((c) => `${good.slice(0, -4)}${c}${good.slice(-4)}`);
    for (const t of [...respelled, ...spaced]) {
      await expect(verifier.verify(t)).rejects.toMatchObject({ name: "InvalidTokenError" });
    }
    expect((await verifier.verify(good)).id).toBe("alice");
    expect((await get(server.url, `Bearer ${good}`)).status).toBe(200);
  });

  it.each([
    ["ES256 (64-byte signature: 86 characters, 4 unused bits)", "ES256"],
    ["HS256 (32-byte signature: 43 characters, 2 unused bits)", "HS256"],
  ] as const)(
    "a genuine %s respelled in the last signature character's unused bits → 401 for every respelling, and verify() refuses them",
    async (_label, alg) => {
      // RFC 4648 §3.5: the last character of a segment whose length is not a multiple of 4
      // carries bits that encode nothing; jose's decoder ignores them, so each of these strings
      // verified (and was cached) as the genuine token: one signature, 4 or 16 strings.
      const secret = "a shared HS256 secret, 32 bytes or more";
      const hs256 = (claims: object, key: string) => {
        const input = `${b64url({ alg: "HS256", typ: "JWT" })}.${b64url(claims)}`;
        return `${input}.${createHmac("sha256", key).update(input).digest("base64url")}`;
      };
      const options =
        alg === "ES256"
          ? { jwks, algorithms: ["ES256"], issuer: ISS, audience: AUD }
          : { secret, algorithms: ["HS256"], issuer: ISS, audience: AUD };
      const good =
        alg === "ES256"
          ? await token()
          : hs256({ iss: ISS, aud: AUD, sub: "alice", exp: Math.floor(Date.now() / 1000) + 600 }, secret);
      const signature = good.slice(good.lastIndexOf(".") + 1);
      const unused = signature.length * 6 - Buffer.from(signature, "base64url").length * 8;
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      const last = alphabet.indexOf(signature.slice(-1));
      const respelled = Array.from(
        { length: (1 << unused) - 1 },
        (_, i) => `${good.slice(0, -1)}${alphabet[last | (i + 1)]}`,
      );
      expect(respelled).toHaveLength(alg === "ES256" ? 15 : 3);
      const url = await serve(authenticate({ realm, bearer: options }));
      const statuses = await Promise.all(respelled.map(async (t) => (await get(url, `Bearer ${t}`)).status));
      expect(statuses).toEqual(respelled.map(() => 401));
      const verifier = createBearerVerifier(options);
      for (const t of respelled)
        await expect(verifier.verify(t)).rejects.toMatchObject({ reason: "ERR_JWS_INVALID" });
      expect((await get(url, `Bearer ${good}`)).status).toBe(200);
    },
  );

  it('alg "none" cannot even be configured', () => {
    expect(() => createBearerVerifier({ jwks, algorithms: ["none"] })).toThrow(TypeError);
    expect(() => createBearerVerifier({ jwks, algorithms: ["None"] })).toThrow(TypeError);
  });

  it("no algorithms allow-list → TypeError at construction", () => {
    // @ts-expect-error algorithms is required
    expect(() => createBearerVerifier({ jwks })).toThrow(/algorithms must be a non-empty list/);
    expect(() => createBearerVerifier({ jwks, algorithms: [] })).toThrow(
      /algorithms must be a non-empty list/,
    );
  });

  it("HS256 signed with the server's RSA public key as the HMAC secret → 401", async () => {
    const { publicKey, privateKey } = rsaPair();
    const pem = publicKey.export({ type: "spki", format: "pem" }) as string;
    const url = await serve(authenticate({ realm, bearer: { key: pem, algorithms: ["RS256"] } }));
    const header = b64url({ alg: "HS256", typ: "JWT" });
    const payload = b64url({ sub: "admin", exp: Math.floor(Date.now() / 1000) + 600 });
    const forged = `${header}.${payload}.${createHmac("sha256", pem).update(`${header}.${payload}`).digest("base64url")}`;
    expect((await get(url, `Bearer ${forged}`)).status).toBe(401);
    // The genuine RS256 token passes, so the 401 above is the confusion being refused.
    const signer = createSign("RSA-SHA256");
    const h = b64url({ alg: "RS256" });
    signer.update(`${h}.${payload}`);
    const genuine = `${h}.${payload}.${signer.sign(privateKey).toString("base64url")}`;
    expect((await get(url, `Bearer ${genuine}`)).status).toBe(200);
  });

  it("HS* mixed with RS*, or HS* with a public key → TypeError at construction", () => {
    const { publicKey } = rsaPair();
    expect(() => createBearerVerifier({ key: publicKey, algorithms: ["RS256", "HS256"] })).toThrow(/mix/);
    expect(() => createBearerVerifier({ key: publicKey, algorithms: ["HS256"] })).toThrow(/secret/);
    expect(() => createBearerVerifier({ secret: "x".repeat(32), algorithms: ["RS256"] })).toThrow(TypeError);
    expect(() => createBearerVerifier({ secret: "short", algorithms: ["HS256"] })).toThrow(/32 bytes/);
  });

  it("a token with an algorithm outside the allow-list (ES384 when only ES256) → 401", async () => {
    const es384 = createTokenIssuer({ issuer: ISS, audience: AUD, algorithm: "ES384", kid: "k384" });
    const url = await serve(
      authenticate({
        realm,
        bearer: {
          jwks: { keys: [...jwks.keys, ...(await es384.jwks()).keys] },
          algorithms: ["ES256"],
          audience: AUD,
        },
      }),
    );
    expect((await get(url, `Bearer ${(await es384.issue({ id: "a" })).access_token}`)).status).toBe(401);
    expect((await get(url, `Bearer ${await token()}`)).status).toBe(200);
  });

  it("kid injection (path traversal, SQL, a header-embedded jwk, a jku URL) → 401, nothing fetched", async () => {
    let contacted = 0;
    const evil = createServer((_req, res) => {
      contacted++;
      res.end("{}");
    });
    await new Promise<void>((r) => evil.listen(0, "127.0.0.1", () => r()));
    const port = (evil.address() as { port: number }).port;
    try {
      const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const attackerJwk = await exportJWK(publicKey);
      const headers = [
        { alg: "ES256", kid: "../../../../../../dev/null" },
        { alg: "ES256", kid: "' OR '1'='1" },
        { alg: "ES256", kid: "k1", jwk: attackerJwk },
        { alg: "ES256", kid: "k1", jku: `http://127.0.0.1:${port}/jwks.json` },
        { alg: "ES256", kid: `http://127.0.0.1:${port}/jwks.json` },
      ];
      for (const header of headers) {
        const t = await new SignJWT({ sub: "admin" })
          .setProtectedHeader(header)
          .setIssuer(ISS)
          .setAudience(AUD)
          .setExpirationTime("10m")
          .sign(privateKey);
        const res = await get(server.url, `Bearer ${t}`);
        expect(res.status, JSON.stringify(header)).toBe(401);
      }
      expect(contacted).toBe(0);
    } finally {
      await new Promise((r) => evil.close(r));
    }
  });

  it("a token signed by another key with the same kid → 401", async () => {
    const t = (await stranger.issue({ id: "alice" })).access_token;
    expect((await get(server.url, `Bearer ${t}`)).status).toBe(401);
  });

  it("an unknown kid → 401", async () => {
    const other = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "unknown" });
    expect((await get(server.url, `Bearer ${(await other.issue({ id: "a" })).access_token}`)).status).toBe(
      401,
    );
  });

  it("a tampered payload (sub changed, signature kept) → 401", async () => {
    const [h, p, s] = (await token()).split(".");
    const payload = JSON.parse(Buffer.from(p as string, "base64url").toString());
    payload.sub = "root";
    expect((await get(server.url, `Bearer ${h}.${b64url(payload)}.${s}`)).status).toBe(401);
  });
});

describe("Bearer: claims", () => {
  const now = () => Math.floor(Date.now() / 1000);

  it("exp in the past (beyond the 5 s tolerance) → 401", async () => {
    expect((await get(server.url, `Bearer ${await token({ exp: now() - 30 })}`)).status).toBe(401);
  });

  it("exp 2 s ago, inside the clock tolerance → 200", async () => {
    expect((await get(server.url, `Bearer ${await token({ exp: now() - 2 })}`)).status).toBe(200);
  });

  it("nbf in the future → 401", async () => {
    expect((await get(server.url, `Bearer ${await token({ nbf: now() + 120 })}`)).status).toBe(401);
  });

  it("no exp at all → 401 (exp is always required)", async () => {
    const t = await new SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(ISS)
      .setAudience(AUD)
      .sign(await signingKeyOf());
    expect((await get(hand.url, `Bearer ${t}`)).status).toBe(401);
  });

  it("wrong iss → 401", async () => {
    expect((await get(server.url, `Bearer ${await token({ iss: "https://evil.test/" })}`)).status).toBe(401);
  });

  it("wrong aud → 401", async () => {
    expect((await get(server.url, `Bearer ${await token({ aud: "https://other-api.test/" })}`)).status).toBe(
      401,
    );
  });

  it("no audience configured: a token carrying aud (another API's) → 401 (RFC 7519 §4.1.3); one without aud → 200", async () => {
    const pub = { ...(await exportJWK(known.publicKey)), kid: "k1", alg: "ES256" };
    const url = await serve(
      authenticate({ realm, bearer: { jwks: { keys: [pub] }, algorithms: ["ES256"], issuer: ISS } }),
    );
    const signed = (aud?: string | string[]) => {
      const jwt = new SignJWT({ sub: "alice" })
        .setProtectedHeader({ alg: "ES256", kid: "k1" })
        .setIssuer(ISS)
        .setExpirationTime("5m");
      return (aud === undefined ? jwt : jwt.setAudience(aud)).sign(known.privateKey);
    };
    expect((await get(url, `Bearer ${await signed("https://other-api.test/")}`)).status).toBe(401);
    expect((await get(url, `Bearer ${await signed(["https://other-api.test/", AUD])}`)).status).toBe(401);
    expect((await get(url, `Bearer ${await signed()}`)).status).toBe(200);
    const verifier = createBearerVerifier({ jwks: { keys: [pub] }, algorithms: ["ES256"] });
    await expect(verifier.verify(await signed(AUD))).rejects.toMatchObject({
      name: "InvalidTokenError",
      reason: "ERR_JWT_AUDIENCE_UNEXPECTED",
    });
  });

  // RFC 7519 §4.1.6: iat is when the token was issued; one issued an hour from now was not.
  it("iat an hour in the future → 401 invalid_token; iat 3 s ahead, inside the 5 s clock tolerance → 200", async () => {
    const res = await get(server.url, `Bearer ${await token({ iat: now() + 3600, exp: now() + 7200 })}`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect((await get(server.url, `Bearer ${await token({ iat: now() + 3 })}`)).status).toBe(200);
    await expect(
      createBearerVerifier({ jwks, algorithms: ["ES256"], audience: AUD }).verify(
        await token({ iat: now() + 60 }),
      ),
    ).rejects.toMatchObject({ name: "InvalidTokenError", reason: "ERR_JWT_IAT_IN_FUTURE" });
  });

  it("clockTolerance 120: iat 100 s ahead → 200, 200 s ahead → 401", async () => {
    const url = await serve(
      authenticate({ realm, bearer: { jwks, algorithms: ["ES256"], audience: AUD, clockTolerance: 120 } }),
    );
    expect((await get(url, `Bearer ${await token({ iat: now() + 100 })}`)).status).toBe(200);
    expect((await get(url, `Bearer ${await token({ iat: now() + 200 })}`)).status).toBe(401);
  });

  it("no sub → 401", async () => {
    const t = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime("5m")
      .sign(await signingKeyOf());
    expect((await get(hand.url, `Bearer ${t}`)).status).toBe(401);
  });

  it.each(["1h ", "\t1h", "60 minutes"])(
    "maxTokenAge %j, accepted at construction, is what jose checks: a fresh token → 200, one issued 2 h ago → 401",
    async (maxTokenAge) => {
      const url = await serve(
        authenticate({ realm, bearer: { jwks, algorithms: ["ES256"], audience: AUD, maxTokenAge } }),
      );
      expect((await get(url, `Bearer ${await token()}`)).status).toBe(200);
      expect((await get(url, `Bearer ${await token({ iat: now() - 7200 })}`)).status).toBe(401);
    },
  );

  it("maxTokenAge 60 s and iat 10 minutes ago → 401", async () => {
    const url = await serve(
      authenticate({
        realm,
        bearer: { jwks, algorithms: ["ES256"], audience: AUD, maxTokenAge: 60, requiredClaims: ["iat"] },
      }),
    );
    expect((await get(url, `Bearer ${await token({ iat: now() - 600 })}`)).status).toBe(401);
    expect((await get(url, `Bearer ${await token()}`)).status).toBe(200);
  });
});

describe("Bearer: verifyPrincipal (the token's user must still exist)", () => {
  const signed = (id: string) => issuer.issue({ id, scopes: ["read"] }).then((t) => t.access_token);

  it("a removed user's token → 401 invalid_token; a present user's → 200, the hook asked once per token", async () => {
    const asked: string[] = [];
    const users = new Set(["alice"]);
    const url = await serve(
      authenticate({
        realm,
        bearer: {
          jwks,
          algorithms: ["ES256"],
          audience: AUD,
          async verifyPrincipal(principal, claims) {
            asked.push(`${principal.id}:${String(claims.jti !== undefined)}`);
            return users.has(principal.id);
          },
        },
      }),
    );
    const gone = await get(url, `Bearer ${await signed("gone")}`);
    expect(gone.status).toBe(401);
    expect(gone.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    const alice = await signed("alice");
    expect((await get(url, `Bearer ${alice}`)).status).toBe(200);
    expect((await get(url, `Bearer ${alice}`)).status).toBe(200); // from the verified-token cache
    expect(asked).toEqual(["gone:true", "alice:true"]);
    await expect(
      createBearerVerifier({
        jwks,
        algorithms: ["ES256"],
        audience: AUD,
        verifyPrincipal: () => false,
      }).verify(alice),
    ).rejects.toMatchObject({ name: "InvalidTokenError", reason: "ERR_PRINCIPAL_REFUSED" });
  });

  it.each<[string, number, () => unknown]>([
    [
      "throws",
      500,
      () => {
        throw new Error("user store down");
      },
    ],
    ["rejects", 500, () => Promise.reject(new Error("user store down"))],
    [
      "rejects with an HttpError 503",
      503,
      () => Promise.reject(HttpError.serviceUnavailable(7, "user store down")),
    ],
    ["answers undefined (no return)", 401, () => undefined],
    ['answers "yes"', 401, () => "yes"],
  ])("a hook that %s → %i, never a pass", async (_label, status, hook) => {
    const url = await serve(
      authenticate({
        realm,
        bearer: { jwks, algorithms: ["ES256"], audience: AUD, verifyPrincipal: hook as () => boolean },
      }),
    );
    const res = await get(url, `Bearer ${await signed("alice")}`);
    expect(res.status).toBe(status);
    if (status === 503) expect(res.headers.get("retry-after")).toBe("7");
  });
});

// The issuer's key is not exported; a second issuer with a known key signs claim-less tokens.
const known = generateKeyPairSync("ec", { namedCurve: "P-256" });
async function signingKeyOf() {
  return known.privateKey;
}
beforeAll(async () => {
  // A server trusting the hand-signing key, for the claim tests that need a token the issuer cannot make.
  const pub = { ...(await exportJWK(known.publicKey)), kid: "k1", alg: "ES256" };
  hand = await listen(
    app(
      authenticate({
        realm,
        bearer: { jwks: { keys: [pub] }, algorithms: ["ES256"], issuer: ISS, audience: AUD },
      }),
    ),
  );
});
let hand: Listening;
afterAll(async () => {
  await hand.close();
});

describe("Bearer: a token without kid", () => {
  // RFC 7515 §4.1.4: kid is OPTIONAL, so an issuer holding several keys of one algorithm may sign
  // without it; each key of the set that fits the token's alg is then a candidate.
  const pairs = Array.from({ length: 5 }, () => generateKeyPairSync("ec", { namedCurve: "P-256" }));
  const publicJwks = async (n: number) => ({
    keys: await Promise.all(
      pairs
        .slice(0, n)
        .map(async (p, i) => ({ ...(await exportJWK(p.publicKey)), kid: `k${i}`, alg: "ES256" })),
    ),
  });
  const kidless = (i: number, exp = "5m") =>
    new SignJWT({ sub: `user${i}` })
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime(exp)
      .sign((pairs[i] as (typeof pairs)[number]).privateKey);
  const bearer = { algorithms: ["ES256"], issuer: ISS, audience: AUD } as const;

  it.each([0, 1])("local jwks of 2 ES256 keys, no kid, signed by key %i → 200", async (i) => {
    const url = await serve(authenticate({ realm, bearer: { ...bearer, jwks: await publicJwks(2) } }));
    const res = await get(url, `Bearer ${await kidless(i)}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: `user${i}` });
  });

  it("local jwks of 4 ES256 keys, no kid, signed by the 4th (the last one tried) → 200", async () => {
    const url = await serve(authenticate({ realm, bearer: { ...bearer, jwks: await publicJwks(4) } }));
    expect((await get(url, `Bearer ${await kidless(3)}`)).status).toBe(200);
  });

  it("local jwks of 5 ES256 keys, no kid, signed by the 5th (past the 4 tried) → 401", async () => {
    const url = await serve(authenticate({ realm, bearer: { ...bearer, jwks: await publicJwks(5) } }));
    expect((await get(url, `Bearer ${await kidless(4)}`)).status).toBe(401);
    expect((await get(url, `Bearer ${await kidless(0)}`)).status).toBe(200);
  });

  it("local jwks of 2 ES256 keys, no kid, signed by a key outside the set → 401 (signature)", async () => {
    const jwks2 = await publicJwks(2);
    const url = await serve(authenticate({ realm, bearer: { ...bearer, jwks: jwks2 } }));
    const t = await kidless(2);
    expect((await get(url, `Bearer ${t}`)).status).toBe(401);
    await expect(createBearerVerifier({ ...bearer, jwks: jwks2 }).verify(t)).rejects.toMatchObject({
      reason: "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
    });
  });

  it("local jwks of 2 ES256 keys, no kid, signed by key 1 but expired → 401 ERR_JWT_EXPIRED", async () => {
    const jwks2 = await publicJwks(2);
    const url = await serve(authenticate({ realm, bearer: { ...bearer, jwks: jwks2 } }));
    const t = await kidless(1, "-1m");
    expect((await get(url, `Bearer ${t}`)).status).toBe(401);
    await expect(createBearerVerifier({ ...bearer, jwks: jwks2 }).verify(t)).rejects.toMatchObject({
      reason: "ERR_JWT_EXPIRED",
    });
  });

  it("remote jwksUri of 2 ES256 keys, no kid, signed by key 1 → 200, one download", async () => {
    const body = await publicJwks(2);
    let fetches = 0;
    const jwksServer = express();
    jwksServer.get("/jwks.json", (_req, res) => {
      fetches++;
      res.json(body);
    });
    const j = await listen(jwksServer);
    opened.push(j);
    const url = await serve(
      authenticate({ realm, bearer: { ...bearer, ...LOOPBACK, jwksUri: `${j.url}/jwks.json` } }),
    );
    expect((await get(url, `Bearer ${await kidless(1)}`)).status).toBe(200);
    expect((await get(url, `Bearer ${await kidless(0)}`)).status).toBe(200);
    expect(fetches).toBe(1);
  });
});

describe("Bearer: a remote JWKS", () => {
  it("key rotation: a token with a new kid makes the verifier fetch the JWKS again → 200", async () => {
    const a = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "a" });
    const b = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "b" });
    let keys = (await a.jwks()).keys;
    let fetches = 0;
    const jwksServer = express();
    jwksServer.get("/jwks.json", (_req, res) => {
      fetches++;
      res.json({ keys });
    });
    const j = await listen(jwksServer);
    opened.push(j);
    const url = await serve(
      authenticate({
        realm,
        bearer: {
          jwksUri: `${j.url}/jwks.json`,
          ...LOOPBACK,
          jwksOptions: { cooldownDuration: 0 },
          algorithms: ["ES256"],
          issuer: ISS,
          audience: AUD,
        },
      }),
    );
    expect((await get(url, `Bearer ${(await a.issue({ id: "u" })).access_token}`)).status).toBe(200);
    expect(fetches).toBe(1);
    // Before rotation, b's kid is unknown.
    expect((await get(url, `Bearer ${(await b.issue({ id: "u" })).access_token}`)).status).toBe(401);
    keys = [...keys, ...(await b.jwks()).keys];
    const before = fetches;
    expect((await get(url, `Bearer ${(await b.issue({ id: "u2" })).access_token}`)).status).toBe(200);
    expect(fetches).toBe(before + 1);
    // Key a is still served; its tokens still pass without another fetch.
    const again = fetches;
    expect((await get(url, `Bearer ${(await a.issue({ id: "u3" })).access_token}`)).status).toBe(200);
    expect(fetches).toBe(again);
  });

  it("unknown kids inside the cooldown do not trigger a fetch each", async () => {
    const a = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "a" });
    let fetches = 0;
    const keys = (await a.jwks()).keys;
    const jwksServer = express();
    jwksServer.get("/jwks.json", (_req, res) => {
      fetches++;
      res.json({ keys });
    });
    const j = await listen(jwksServer);
    opened.push(j);
    const url = await serve(
      authenticate({
        realm,
        bearer: { jwksUri: `${j.url}/jwks.json`, algorithms: ["ES256"], audience: AUD, ...LOOPBACK },
      }),
    );
    expect((await get(url, `Bearer ${(await a.issue({ id: "u" })).access_token}`)).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const x = createTokenIssuer({ issuer: ISS, audience: AUD, kid: `made-up-${i}` });
      expect((await get(url, `Bearer ${(await x.issue({ id: "u" })).access_token}`)).status).toBe(401);
    }
    expect(fetches).toBe(1);
  });

  it("the JWKS endpoint refusing connections → 503 with Retry-After, not 401 or 500", async () => {
    const url = await serve(
      authenticate({
        realm,
        bearer: {
          jwksUri: "http://127.0.0.1:9/jwks.json",
          algorithms: ["ES256"],
          audience: AUD,
          ...LOOPBACK,
        },
      }),
    );
    const res = await get(url, `Bearer ${await token()}`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
  });

  it("the JWKS endpoint refusing connections, no logger → the stderr line carries the cause chain down to ECONNREFUSED", async () => {
    // A port that was just free: connecting to it is refused.
    const closed = await listen(express());
    const jwksUri = `${closed.url}/jwks.json`;
    await closed.close();
    const a = express();
    a.get(
      "/me",
      authenticate({ realm, bearer: { jwksUri, algorithms: ["ES256"], audience: AUD, ...LOOPBACK } }),
      (_req, res) => {
        res.end();
      },
    );
    a.use(errorHandler());
    const l = await listen(a);
    opened.push(l);
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const spy = vi.spyOn(process.stderr, "write").mockImplementation(((
      chunk: string | Uint8Array,
      ...rest: never[]
    ) => {
      if (String(chunk).includes('"msg":"request failed"')) lines.push(String(chunk));
      else return write(chunk, ...rest);
      return true;
    }) as typeof process.stderr.write);
    try {
      expect((await get(l.url, `Bearer ${await token()}`)).status).toBe(503);
    } finally {
      spy.mockRestore();
    }
    expect(lines).toHaveLength(1);
    const line = lines[0] as string;
    expect(JSON.parse(line)).toMatchObject({
      level: 50,
      status: 503,
      err: { type: "HttpError" },
    });
    // The 503 is logged as thrown, with its cause chain below it: the key source's error first,
    // then jose's "The JSON Web Key Set could not be fetched"-style error, which alone says
    // nothing about why: the socket error at the bottom of the chain does.
    expect(line).toContain("KeySourceUnavailableError");
    // jose's "The JSON Web Key Set could not be fetched"-style error alone says nothing about why:
    // the socket error at the bottom of the chain does.
    expect(line).toContain("fetch failed");
    expect(line).toContain("ECONNREFUSED");
  });

  it.each(["500", "html"] as const)("the JWKS endpoint answering %s (not a JWKS) → 503", async (mode) => {
    const jwksServer = express();
    jwksServer.get("/jwks.json", (_req, res) => {
      if (mode === "500") res.status(500).send("oops");
      else res.type("html").send("<html></html>");
    });
    const j = await listen(jwksServer);
    opened.push(j);
    const url = await serve(
      authenticate({
        realm,
        bearer: {
          jwksUri: `${j.url}/jwks.json`,
          ...LOOPBACK,
          jwksOptions: { cooldownDuration: 0 },
          algorithms: ["ES256"],
          audience: AUD,
        },
      }),
    );
    expect((await get(url, `Bearer ${await token()}`)).status).toBe(503);
  });

  // A key set is read whole into memory before it is parsed: unbounded, a JWKS endpoint (or a
  // jwks_uri discovered from an issuer's metadata, which is bounded) answering with hundreds of
  // megabytes took the process's memory with it. Valid JSON padded with whitespace stands in for it.
  it.each([
    ["over the default 256 KiB, chunked", 503, 262_144 + 1, undefined, false],
    ["over the default 256 KiB, with Content-Length", 503, 262_144 + 1, undefined, true],
    ["of exactly 256 KiB", 200, 262_144, undefined, true],
    ["over jwksOptions.maxBytes 4096, chunked", 503, 4097, 4096, false],
  ] as const)("a JWKS %s → %i", async (_label, status, size, maxBytes, withLength) => {
    const body = JSON.stringify(jwks);
    const padded = body + " ".repeat(size - Buffer.byteLength(body));
    const jwksServer = express();
    jwksServer.get("/jwks.json", (_req, res) => {
      res.type("json");
      if (withLength) res.setHeader("Content-Length", Buffer.byteLength(padded));
      // Written in pieces without Content-Length: chunked, its size known only while it is read.
      for (let at = 0; at < padded.length; at += 1024) res.write(padded.slice(at, at + 1024));
      res.end();
    });
    const j = await listen(jwksServer);
    opened.push(j);
    const records: { err?: unknown }[] = [];
    const a = express();
    a.get(
      "/me",
      authenticate({
        realm,
        bearer: {
          jwksUri: `${j.url}/jwks.json`,
          ...LOOPBACK,
          ...(maxBytes === undefined ? {} : { jwksOptions: { maxBytes } }),
          algorithms: ["ES256"],
          audience: AUD,
        },
      }),
      (_req, res) => {
        res.end();
      },
    );
    a.use(errorHandler({ logger: { error: (obj: never) => records.push(obj) } }));
    const l = await listen(a);
    opened.push(l);
    const res = await get(l.url, `Bearer ${await token()}`);
    expect(res.status).toBe(status);
    if (status === 503) {
      expect(res.headers.get("retry-after")).toBe("5");
      const cause = (records[0]?.err as Error | undefined)?.cause as Error | undefined;
      expect(cause?.name).toBe("KeySourceUnavailableError");
      expect(cause?.cause).toMatchObject({ code: "ERR_JWKS_TOO_LARGE" });
    }
  });

  it("a token whose kid the reachable JWKS lacks is still a 401 (not a 503)", async () => {
    const jwksServer = express();
    jwksServer.get("/jwks.json", (_req, res) => {
      res.json({ keys: [] });
    });
    const j = await listen(jwksServer);
    opened.push(j);
    const url = await serve(
      authenticate({
        realm,
        bearer: { jwksUri: `${j.url}/jwks.json`, algorithms: ["ES256"], audience: AUD, ...LOOPBACK },
      }),
    );
    expect((await get(url, `Bearer ${await token()}`)).status).toBe(401);
  });
});

describe("Bearer: a remote JWKS during an outage", () => {
  type Failure = "503" | "not JSON" | "connection destroyed";
  /** A key server on node:http that counts every request and can be switched to failing. */
  async function keyServer(keys: JSONWebKeySet) {
    const state = { failing: undefined as Failure | undefined, hits: 0 };
    const l = await listenOn(
      createServer((req, res) => {
        state.hits++;
        if (state.failing === "503") res.writeHead(503).end();
        else if (state.failing === "not JSON")
          res.writeHead(200, { "content-type": "application/json" }).end("{");
        else if (state.failing === "connection destroyed") req.socket.destroy();
        else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(keys));
      }),
    );
    opened.push(l);
    return { url: `${l.url}/jwks.json`, state };
  }

  /** The seconds of a Retry-After field: a whole number from 1 to `max` (RFC 9110 §10.2.3). */
  function retryAfterSeconds(res: Response): number {
    const value = res.headers.get("retry-after") ?? "";
    expect(value).toMatch(/^[1-9][0-9]*$/);
    return Number(value);
  }

  it.each<Failure>(["503", "not JSON", "connection destroyed"])(
    "key server failing (%s) after cacheMaxAge: one download per failureCooldownDuration, every request in it 503 with Retry-After, then recovery",
    async (failure) => {
      const a = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "a" });
      const keys = await keyServer(await a.jwks());
      // The verifier's clock is moved past the window: no test waits for it, none races it.
      let shift = 0;
      const url = await serve(
        authenticate({
          realm,
          bearer: {
            jwksUri: keys.url,
            ...LOOPBACK,
            // cacheMaxAge 0: the key set is always stale, so every new token needs a download.
            jwksOptions: { cacheMaxAge: 0, failureCooldownDuration: 10_000 },
            algorithms: ["ES256"],
            issuer: ISS,
            audience: AUD,
            now: () => Date.now() + shift,
          },
        }),
      );
      let n = 0;
      const fresh = async () => `Bearer ${(await a.issue({ id: `u${n++}` })).access_token}`;
      expect((await get(url, await fresh())).status).toBe(200);
      expect(keys.state.hits).toBe(1);

      keys.state.failing = failure;
      // (a) Concurrent, then sequential requests with new tokens: one download between them all.
      const tokens = await Promise.all(Array.from({ length: 10 }, fresh));
      const concurrent = await Promise.all(tokens.map((t) => get(url, t)));
      for (let i = 0; i < 5; i++) concurrent.push(await get(url, await fresh()));
      for (const res of concurrent) {
        expect(res.status).toBe(503);
        expect(retryAfterSeconds(res)).toBeLessThanOrEqual(10);
      }
      expect(keys.state.hits).toBe(2);

      // (b) After the window: one new attempt, shared by concurrent requests, then a new window.
      shift += 10_001;
      const after = await Promise.all(
        (await Promise.all(Array.from({ length: 5 }, fresh))).map((t) => get(url, t)),
      );
      expect(after.map((r) => r.status)).toEqual([503, 503, 503, 503, 503]);
      expect(keys.state.hits).toBe(3);
      expect((await get(url, await fresh())).status).toBe(503);
      expect(keys.state.hits).toBe(3);

      // (c) The key server recovers: after the window, tokens verify again.
      keys.state.failing = undefined;
      shift += 10_001;
      expect((await get(url, await fresh())).status).toBe(200);
      expect(keys.state.hits).toBe(4);
    },
  );

  it("a failed download for an unknown kid while the key set is fresh: known kids still verify, unknown ones wait out the window", async () => {
    const a = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "a" });
    const keys = await keyServer(await a.jwks());
    const url = await serve(
      authenticate({
        realm,
        bearer: {
          jwksUri: keys.url,
          ...LOOPBACK,
          jwksOptions: { cooldownDuration: 0, failureCooldownDuration: 60_000 },
          algorithms: ["ES256"],
          audience: AUD,
          cache: false,
        },
      }),
    );
    expect((await get(url, `Bearer ${(await a.issue({ id: "u" })).access_token}`)).status).toBe(200);
    keys.state.failing = "503";
    for (let i = 0; i < 5; i++) {
      const x = createTokenIssuer({ issuer: ISS, audience: AUD, kid: `rotated-${i}` });
      expect((await get(url, `Bearer ${(await x.issue({ id: "u" })).access_token}`)).status).toBe(503);
    }
    expect(keys.state.hits).toBe(2);
    // The key set fetched before the outage is within cacheMaxAge: its tokens need no download.
    expect((await get(url, `Bearer ${(await a.issue({ id: "v" })).access_token}`)).status).toBe(200);
    expect(keys.state.hits).toBe(2);
  });

  it.each([0, -1, 1.5e10, Number.NaN, Number.POSITIVE_INFINITY, "5000"])(
    "jwksOptions.failureCooldownDuration %s → TypeError at construction",
    (value) => {
      expect(() =>
        createBearerVerifier({
          jwksUri: "https://issuer.test/jwks.json",
          algorithms: ["ES256"],
          audience: AUD,
          jwksOptions: { failureCooldownDuration: value as number },
        }),
      ).toThrow(/failureCooldownDuration/);
    },
  );
});

describe("Bearer: oversized tokens", () => {
  it("a validly signed token longer than maxTokenLength (default 8192) → 401, the short one → 200", async () => {
    const long = (await issuer.issue({ id: "alice" }, { pad: "x".repeat(9000) })).access_token;
    expect(long.length).toBeGreaterThan(8192);
    const res = await get(server.url, `Bearer ${long}`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const verifier = createBearerVerifier({
      jwks,
      algorithms: ["ES256"],
      issuer: ISS,
      audience: AUD,
      maxTokenLength: 20_000,
    });
    expect((await verifier.verify(long)).id).toBe("alice");
    await expect(
      createBearerVerifier({ jwks, algorithms: ["ES256"], audience: AUD, maxTokenLength: 100 }).verify(
        await token(),
      ),
    ).rejects.toMatchObject({ name: "InvalidTokenError", reason: "ERR_TOKEN_TOO_LONG" });
  });

  it.each([0, -1, 1.5, Number.NaN])("maxTokenLength %s → TypeError at construction", (n) => {
    expect(() => createBearerVerifier({ jwks, algorithms: ["ES256"], maxTokenLength: n })).toThrow(TypeError);
  });
});

describe("Bearer: explicit typing (typ)", () => {
  // RFC 9068 §4: "Resource servers receiving a JWT access token MUST verify that the typ header
  // value is "at+jwt" or "application/at+jwt" and reject tokens carrying any other value"; RFC
  // 8725 §3.11: explicit typing keeps an ID token or a logout token of the same issuer, signed by
  // the same key with the same iss and aud, from passing as an access token.
  let typed: Listening;
  beforeAll(async () => {
    const pub = { ...(await exportJWK(known.publicKey)), kid: "k1", alg: "ES256" };
    typed = await listen(
      app(
        authenticate({
          realm,
          bearer: { jwks: { keys: [pub] }, algorithms: ["ES256"], issuer: ISS, audience: AUD, typ: "at+jwt" },
        }),
      ),
    );
  });
  afterAll(async () => {
    await typed.close();
  });

  /** A token of the trusted key with every claim right, and the given `typ` (none: undefined). */
  function signedWithTyp(typ: string | undefined, key = known.privateKey): Promise<string> {
    return new SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "ES256", kid: "k1", ...(typ === undefined ? {} : { typ }) })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime("5m")
      .sign(key);
  }

  it.each(["JWT", "jwt", "logout+jwt", "application/jwt", "text/at+jwt", "at+jwt+x"])(
    'typ: "at+jwt", a token of the trusted key with typ %s → 401 invalid_token',
    async (typ) => {
      const res = await get(typed.url, `Bearer ${await signedWithTyp(typ)}`);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_token"');
    },
  );

  it('typ: "at+jwt", a token of the trusted key without a typ header → 401', async () => {
    expect((await get(typed.url, `Bearer ${await signedWithTyp(undefined)}`)).status).toBe(401);
  });

  it.each(["at+jwt", "application/at+jwt", "AT+JWT", "Application/AT+JWT"])(
    'typ: "at+jwt", a token with typ %s → 200 (RFC 7515 §4.1.9: "application/" implied, case-insensitive)',
    async (typ) => {
      expect((await get(typed.url, `Bearer ${await signedWithTyp(typ)}`)).status).toBe(200);
    },
  );

  it('typ: "application/at+jwt" configured, a token with typ at+jwt → 200, typ JWT → 401', async () => {
    const pub = { ...(await exportJWK(known.publicKey)), kid: "k1", alg: "ES256" };
    const url = await serve(
      authenticate({
        realm,
        bearer: { jwks: { keys: [pub] }, algorithms: ["ES256"], audience: AUD, typ: "application/at+jwt" },
      }),
    );
    expect((await get(url, `Bearer ${await signedWithTyp("at+jwt")}`)).status).toBe(200);
    expect((await get(url, `Bearer ${await signedWithTyp("JWT")}`)).status).toBe(401);
  });

  it('typ: "at+jwt", the package\'s own issuer (typ at+jwt) → 200', async () => {
    const url = await serve(
      authenticate({ realm, bearer: { jwks, algorithms: ["ES256"], audience: AUD, typ: "at+jwt" } }),
    );
    expect((await get(url, `Bearer ${await token()}`)).status).toBe(200);
  });

  it("without typ, a token with typ JWT or none → 200 (not checked, as before)", async () => {
    expect((await get(hand.url, `Bearer ${await signedWithTyp("JWT")}`)).status).toBe(200);
    expect((await get(hand.url, `Bearer ${await signedWithTyp(undefined)}`)).status).toBe(200);
  });

  it('typ: "at+jwt", a typ JWT token sent twice → 401 both times, never cached; verify() gives the reason', async () => {
    const pub = { ...(await exportJWK(known.publicKey)), kid: "k1", alg: "ES256" };
    let mapped = 0;
    const verifier = createBearerVerifier({
      jwks: { keys: [pub] },
      algorithms: ["ES256"],
      audience: AUD,
      typ: "at+jwt",
      principal: (p) => {
        mapped++;
        return { id: String(p.sub) };
      },
    });
    const url = await serve(authenticate({ realm, bearer: verifier }));
    const t = await signedWithTyp("JWT");
    expect((await get(url, `Bearer ${t}`)).status).toBe(401);
    expect((await get(url, `Bearer ${t}`)).status).toBe(401);
    expect(mapped).toBe(0);
    await expect(verifier.verify(t)).rejects.toMatchObject({
      name: "InvalidTokenError",
      reason: "ERR_JWT_CLAIM_VALIDATION_FAILED",
    });
    // The right type through the same verifier is cached as usual: mapped once for two requests.
    const good = await signedWithTyp("at+jwt");
    expect((await get(url, `Bearer ${good}`)).status).toBe(200);
    expect((await get(url, `Bearer ${good}`)).status).toBe(200);
    expect(mapped).toBe(1);
  });

  it('typ: "at+jwt", a local jwks of 2 keys, a kid-less typ JWT token by the second key → 401 (each candidate checks typ)', async () => {
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const keys = [
      { ...(await exportJWK(other.publicKey)), alg: "ES256" },
      { ...(await exportJWK(known.publicKey)), alg: "ES256" },
    ];
    const url = await serve(
      authenticate({
        realm,
        bearer: { jwks: { keys }, algorithms: ["ES256"], audience: AUD, typ: "at+jwt" },
      }),
    );
    const sign = (typ: string) =>
      new SignJWT({ sub: "alice" })
        .setProtectedHeader({ alg: "ES256", typ })
        .setAudience(AUD)
        .setExpirationTime("5m")
        .sign(known.privateKey);
    expect((await get(url, `Bearer ${await sign("JWT")}`)).status).toBe(401);
    expect((await get(url, `Bearer ${await sign("at+jwt")}`)).status).toBe(200);
  });
});

describe("Bearer: tokens outside the Authorization header", () => {
  it("?access_token=... → 400, even with a valid header", async () => {
    const t = await token();
    const res = await fetch(`${server.url}/me?access_token=${t}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_request"');
    expect(await res.text()).not.toContain(t);
    const both = await fetch(`${server.url}/me?a=1&access_token=${t}`, {
      headers: { authorization: `Bearer ${t}` },
    });
    expect(both.status).toBe(400);
  });

  it.each(["access%5Ftoken", "ACCESS_TOKEN", "Access_Token", "access_token[]", "access%5ftoken%3D"])(
    "?%s... next to a valid header → 400 (the name as a query parser decodes it)",
    async (name) => {
      const t = await token();
      const res = await fetch(`${server.url}/me?${name}${name.endsWith("%3D") ? "" : "="}${t}`, {
        headers: { authorization: `Bearer ${t}` },
      });
      expect(res.status).toBe(400);
    },
  );

  it("access_token in a form body → 400", async () => {
    const t = await token();
    const res = await fetch(`${server.url}/me`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `access_token=${t}`,
    });
    expect(res.status).toBe(400);
  });

  it("a JSON body with an access_token field next to a valid header (the resource's own data) → 200; a form body (RFC 6750 §2.2) or no header → 400", async () => {
    const a = express();
    a.use(express.json(), express.urlencoded({ extended: false }));
    a.put(
      "/integrations/github",
      authenticate({ realm, bearer: { jwks, algorithms: ["ES256"], audience: AUD } }),
      (req, res) => {
        res.json({ stored: (req.body as { access_token?: string }).access_token ?? null });
      },
    );
    a.use(errorHandler({ logger: { error() {} } }));
    const l = await listen(a);
    opened.push(l);
    const authorization = `Bearer ${await token()}`;
    const json = await fetch(`${l.url}/integrations/github`, {
      method: "PUT",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ access_token: "gho_third_party" }),
    });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ stored: "gho_third_party" });
    const form = await fetch(`${l.url}/integrations/github`, {
      method: "PUT",
      headers: { authorization, "content-type": "application/x-www-form-urlencoded; charset=UTF-8" },
      body: "access_token=abc",
    });
    expect(form.status).toBe(400);
    const alone = await fetch(`${l.url}/integrations/github`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ access_token: await token() }),
    });
    expect(alone.status).toBe(400);
  });

  it("?not_access_token=1 is not mistaken for a token → 200", async () => {
    const res = await fetch(`${server.url}/me?x_access_token_y=1`, {
      headers: { authorization: `Bearer ${await token()}` },
    });
    expect(res.status).toBe(200);
  });
});

/** A verifier that counts how often a token was really verified (its `principal` mapping runs). */
function countingVerifier(options: { cache?: false } = {}) {
  let count = 0;
  const verifier = createBearerVerifier({
    jwks,
    algorithms: ["ES256"],
    audience: AUD,
    ...options,
    principal: (p) => {
      count++;
      return { id: String(p.sub) };
    },
  });
  return { verifier, verifications: () => count };
}

describe("Bearer: verified-token cache", () => {
  it("a hot token is verified once, then served from the cache", async () => {
    const { verifier, verifications } = countingVerifier();
    const url = await serve(authenticate({ realm, bearer: verifier }));
    const t = await token();
    for (let i = 0; i < 3; i++) expect((await get(url, `Bearer ${t}`)).status).toBe(200);
    expect(verifications()).toBe(1);
  });

  it("principals of 4.5 MB (a principal mapping adding 2,200 roles of 1,000 characters): the cache holds 8 MiB, so b's evicts a's; one of 9 MB is never cached", async () => {
    let mapped = 0;
    const verifier = createBearerVerifier({
      jwks,
      algorithms: ["ES256"],
      issuer: ISS,
      audience: AUD,
      principal: (claims) => {
        mapped++;
        const roles = Array<string>(claims.sub === "huge" ? 4400 : 2200).fill("r".repeat(1000));
        return { id: String(claims.sub), roles };
      },
    });
    const url = await serve(authenticate({ realm, bearer: verifier }));
    const [a, b, huge] = await Promise.all(["a", "b", "huge"].map((sub) => token({ sub })));
    for (const t of [a, a, b, a, huge, huge] as string[]) {
      const res = await get(url, `Bearer ${t}`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // a; a from the cache; b, which evicts a; a again; huge twice, never cached.
    expect(mapped).toBe(5);
  });

  it("cache: false verifies every request", async () => {
    const { verifier, verifications } = countingVerifier({ cache: false });
    const url = await serve(authenticate({ realm, bearer: verifier }));
    const t = await token();
    for (let i = 0; i < 3; i++) expect((await get(url, `Bearer ${t}`)).status).toBe(200);
    expect(verifications()).toBe(3);
  });

  it("a cached token stops working at its exp → 401", async () => {
    let clock = Date.now();
    const verifier = createBearerVerifier({ jwks, algorithms: ["ES256"], audience: AUD, now: () => clock });
    const url = await serve(authenticate({ realm, bearer: verifier }));
    const t = await token({ exp: Math.floor(clock / 1000) + 60 });
    expect((await get(url, `Bearer ${t}`)).status).toBe(200);
    clock += 120_000;
    expect((await get(url, `Bearer ${t}`)).status).toBe(401);
  });

  /**
   * A listening app whose `/me` answers the request's principal, then changes it, as a careless
   * handler would: neither the cache nor the next request's principal may change with it.
   */
  async function mutatingMe() {
    const verifier = createBearerVerifier({ jwks, algorithms: ["ES256"], audience: AUD });
    const a = express();
    a.get("/me", authenticate({ realm, bearer: verifier }), (req, res) => {
      const principal = recordedAuthContext(req)?.principal;
      res.json(principal ?? null);
      principal?.roles.push("superuser");
      principal?.scopes.splice(0);
    });
    const l = await listen(a);
    opened.push(l);
    return l;
  }

  it("through authenticate: a handler mutating a cached principal does not change the next request's", async () => {
    const l = await mutatingMe();
    const t = await token();
    for (let i = 0; i < 3; i++) {
      const res = await get(l.url, `Bearer ${t}`);
      expect(((await res.json()) as { roles: string[] }).roles).toEqual(["admin"]);
    }
  });

  it("one keep-alive connection: every cached token is digested, and each token gets its own principal", async () => {
    const l = await mutatingMe();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ids: string[] = [];
    const ports = new Set<number>();
    const me = (t: string) =>
      new Promise<{ id: string; roles: string[]; scopes: string[] }>((resolve, reject) => {
        const req = request(`${l.url}/me`, { agent, headers: { authorization: `Bearer ${t}` } }, (res) => {
          ports.add(res.socket.localPort ?? 0);
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => {
            body += chunk;
          });
          res.on("end", () => resolve(JSON.parse(body)));
        });
        req.on("error", reject);
        req.end();
      });
    const alice = await token();
    const bob = (await issuer.issue({ id: "bob", scopes: ["read"], roles: [] })).access_token;
    const digests = vi.spyOn(VerifiedTokenCache, "keyOf");
    try {
      for (const t of [alice, alice, alice, bob, bob, alice]) {
        const principal = await me(t);
        ids.push(principal.id);
        expect(principal).toEqual(
          t === alice
            ? { id: "alice", issuer: ISS, roles: ["admin"], scopes: ["read", "write"], scheme: "bearer" }
            : { id: "bob", issuer: ISS, roles: [], scopes: ["read"], scheme: "bearer" },
        );
      }
      expect(ids).toEqual(["alice", "alice", "alice", "bob", "bob", "alice"]);
      // A miss digests twice (the lookup and verify), a hit once: nothing is remembered for the
      // connection, so a token that follows another's on it is never answered with the other's.
      expect(digests).toHaveBeenCalledTimes(2 + 1 + 1 + 2 + 1 + 1);
      expect(ports.size).toBe(1);
    } finally {
      digests.mockRestore();
      agent.destroy();
    }
  });

  it("clearCache: the next request with a cached token is verified again", async () => {
    const { verifier, verifications } = countingVerifier();
    const url = await serve(authenticate({ realm, bearer: verifier }));
    const t = await token();
    expect((await get(url, `Bearer ${t}`)).status).toBe(200);
    expect((await get(url, `Bearer ${t}`)).status).toBe(200);
    verifier.clearCache();
    expect((await get(url, `Bearer ${t}`)).status).toBe(200);
    expect(verifications()).toBe(2);
  });

  it("clearCache while a token is being verified: that token is not cached, so a revoked key is noticed at once → 401", async () => {
    const a = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "a" });
    let keys = (await a.jwks()).keys;
    let hold = false;
    let arrived = () => {};
    let release = () => {};
    const fetched = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const jwksServer = express();
    jwksServer.get("/jwks.json", async (_req, res) => {
      const served = keys; // the key set as it was when the fetch arrived
      if (hold) {
        arrived();
        await released;
      }
      res.json({ keys: served });
    });
    const j = await listen(jwksServer);
    opened.push(j);
    const verifier = createBearerVerifier({
      jwksUri: `${j.url}/jwks.json`,
      ...LOOPBACK,
      jwksOptions: { cacheMaxAge: 0, cooldownDuration: 0 }, // every verification reads the key set
      algorithms: ["ES256"],
      audience: AUD,
    });
    const url = await serve(authenticate({ realm, bearer: verifier }));
    const t = (await a.issue({ id: "u" })).access_token;
    hold = true;
    const inFlight = get(url, `Bearer ${t}`);
    await fetched;
    // The key is revoked and the cache emptied while that verification is still running.
    hold = false;
    keys = [];
    verifier.clearCache();
    release();
    expect((await inFlight).status).toBe(200); // verified against the key set it fetched
    // RFC 6750 §3.1 invalid_token: the next request is checked against the new key set.
    expect((await get(url, `Bearer ${t}`)).status).toBe(401);
  });

  it("clearCache after a key is removed from a remote JWKS: the key set is downloaded again, so the revoked key's token → 401", async () => {
    const a = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "a" });
    const b = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "b" });
    let keys = [...(await a.jwks()).keys, ...(await b.jwks()).keys];
    let downloads = 0;
    const jwksServer = express();
    jwksServer.get("/jwks.json", (_req, res) => {
      downloads++;
      res.json({ keys });
    });
    const j = await listen(jwksServer);
    opened.push(j);
    // The default cacheMaxAge (10 minutes) and cooldownDuration: no download of jose's own.
    const verifier = createBearerVerifier({
      jwksUri: `${j.url}/jwks.json`,
      ...LOOPBACK,
      algorithms: ["ES256"],
      audience: AUD,
    });
    const url = await serve(authenticate({ realm, bearer: verifier }));
    const revoked = (await a.issue({ id: "u" })).access_token;
    const kept = (await b.issue({ id: "v" })).access_token;
    expect((await get(url, `Bearer ${revoked}`)).status).toBe(200);
    expect(downloads).toBe(1);
    keys = (await b.jwks()).keys; // key "a" is revoked
    verifier.clearCache();
    // RFC 6750 §3.1 invalid_token: signed with a key the issuer no longer publishes.
    const [first, second] = await Promise.all([get(url, `Bearer ${revoked}`), get(url, `Bearer ${revoked}`)]);
    expect([first.status, second.status]).toEqual([401, 401]);
    expect((await get(url, `Bearer ${kept}`)).status).toBe(200);
    expect(downloads).toBe(2); // one download shared, then the key set is fresh again
  });

  it("clearCache while the key server is down: the old key set is not used → 503, never the revoked key's 200", async () => {
    const a = createTokenIssuer({ issuer: ISS, audience: AUD, kid: "a" });
    let up = true;
    const jwksServer = express();
    jwksServer.get("/jwks.json", async (_req, res) => {
      if (up) res.json(await a.jwks());
      else res.status(500).end();
    });
    const j = await listen(jwksServer);
    opened.push(j);
    const verifier = createBearerVerifier({
      jwksUri: `${j.url}/jwks.json`,
      ...LOOPBACK,
      algorithms: ["ES256"],
      audience: AUD,
    });
    const url = await serve(authenticate({ realm, bearer: verifier }));
    const t = (await a.issue({ id: "u" })).access_token;
    expect((await get(url, `Bearer ${t}`)).status).toBe(200);
    up = false;
    verifier.clearCache();
    expect((await get(url, `Bearer ${t}`)).status).toBe(503);
    expect((await get(url, `Bearer ${t}`)).status).toBe(503); // within the failure cool-down
  });

  it("a verifier of one's own (no cache of ours) is awaited on every request", async () => {
    let calls = 0;
    const url = await serve(
      authenticate({
        realm,
        bearer: {
          verify: async (t: string) => {
            calls++;
            if (t !== "good") throw Object.assign(new Error("bad"), { name: "InvalidTokenError" });
            return { id: "own", roles: [], scopes: [], scheme: "bearer" };
          },
          clearCache() {},
        },
      }),
    );
    expect((await get(url, "Bearer good")).status).toBe(200);
    expect((await get(url, "Bearer good")).status).toBe(200);
    expect((await get(url, "Bearer bad")).status).toBe(401);
    expect(calls).toBe(3);
  });

  // A verifier of one's own that answers a bad token with null (as a Basic verify callback may)
  // let the request through with no principal: every route without a guard served it. Fail closed.
  it.each([null, undefined, false])(
    "a verifier of one's own resolving %s → 401 invalid_token, the handler never runs",
    async (result) => {
      let handled = 0;
      const a = express();
      a.get(
        "/secret",
        authenticate({
          realm,
          bearer: { verify: async () => result as never, clearCache() {} },
        }),
        (_req, res) => {
          handled++;
          res.json("secret");
        },
      );
      a.use(errorHandler({ logger: { error() {} } }));
      const l = await listen(a);
      opened.push(l);
      const res = await fetch(`${l.url}/secret`, { headers: { authorization: "Bearer whatever" } });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_token"');
      expect(handled).toBe(0);
    },
  );

  it("a verifier of one's own resolving something that is no principal ({ id: 7 }) → 500, the handler never runs", async () => {
    let handled = 0;
    const a = express();
    a.get(
      "/secret",
      authenticate({ realm, bearer: { verify: async () => ({ id: 7 }) as never, clearCache() {} } }),
      (_req, res) => {
        handled++;
        res.json("secret");
      },
    );
    a.use(errorHandler({ logger: { error() {} } }));
    const l = await listen(a);
    opened.push(l);
    const res = await fetch(`${l.url}/secret`, { headers: { authorization: "Bearer whatever" } });
    expect(res.status).toBe(500);
    expect(handled).toBe(0);
  });

  it("a principal taken from the cache is a copy: mutating it does not leak to the next request", async () => {
    const verifier = createBearerVerifier({ jwks, algorithms: ["ES256"], audience: AUD });
    const t = await token();
    const first = await verifier.verify(t);
    first.roles.push("superuser");
    expect((await verifier.verify(t)).roles).toEqual(["admin"]);
  });
});

describe("Bearer: keys", () => {
  it("a symmetric secret with HS256 → 200, and a wrong secret → 401", async () => {
    const secret = "a-very-long-shared-secret-of-32-bytes!";
    const url = await serve(authenticate({ realm, bearer: { secret, algorithms: ["HS256"] } }));
    const sign = (s: string) =>
      new SignJWT({ sub: "svc" })
        .setProtectedHeader({ alg: "HS256" })
        .setExpirationTime("5m")
        .sign(Buffer.from(s));
    expect((await get(url, `Bearer ${await sign(secret)}`)).status).toBe(200);
    expect((await get(url, `Bearer ${await sign(`${secret}x`)}`)).status).toBe(401);
  });

  it("HS512 with a 64-byte secret (RFC 7518 §3.2: the hash output's size) → 200", async () => {
    const secret = "s".repeat(64);
    const url = await serve(authenticate({ realm, bearer: { secret, algorithms: ["HS512"] } }));
    const jwt = await new SignJWT({ sub: "svc" })
      .setProtectedHeader({ alg: "HS512" })
      .setExpirationTime("5m")
      .sign(Buffer.from(secret));
    expect((await get(url, `Bearer ${jwt}`)).status).toBe(200);
  });

  it("a single public JWK → 200", async () => {
    const url = await serve(
      authenticate({ realm, bearer: { key: jwks.keys[0] as never, algorithms: ["ES256"], audience: AUD } }),
    );
    expect((await get(url, `Bearer ${await token()}`)).status).toBe(200);
  });

  it("bearer.key a CryptoKey from jose's generateKeyPair(\"ES256\") → a token it signed → 200, another key's → 401", async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const url = await serve(authenticate({ realm, bearer: { key: publicKey, algorithms: ["ES256"] } }));
    const sign = (key: CryptoKey | KeyObject) =>
      new SignJWT({ sub: "svc" }).setProtectedHeader({ alg: "ES256" }).setExpirationTime("5m").sign(key);
    expect((await get(url, `Bearer ${await sign(privateKey)}`)).status).toBe(200);
    expect((await get(url, `Bearer ${await sign(known.privateKey)}`)).status).toBe(401);
    // The private CryptoKey given by mistake verifies with its public half, like a private KeyObject.
    const fromPrivate = await serve(
      authenticate({ realm, bearer: { key: privateKey, algorithms: ["ES256"] } }),
    );
    expect((await get(fromPrivate, `Bearer ${await sign(privateKey)}`)).status).toBe(200);
  });

  it("bearer.secret an HMAC CryptoKey or a secret KeyObject (HS256) → 200; one of 16 bytes → ERR_SVC_AUTH_BEARER_SECRET", async () => {
    const bytes = Buffer.from("a-very-long-shared-secret-of-32-bytes!");
    const hmac = await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [
      "verify",
    ]);
    const jwt = await new SignJWT({ sub: "svc" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("5m")
      .sign(bytes);
    for (const secret of [hmac, createSecretKey(bytes)]) {
      const url = await serve(authenticate({ realm, bearer: { secret, algorithms: ["HS256"] } }));
      expect((await get(url, `Bearer ${jwt}`)).status).toBe(200);
    }
    expect(() =>
      createBearerVerifier({ secret: createSecretKey(bytes.subarray(0, 16)), algorithms: ["HS256"] }),
    ).toThrow(expect.objectContaining({ code: "ERR_SVC_AUTH_BEARER_SECRET" }));
  });

  it('tokenIssuer.privateKey a CryptoKey from generateKeyPair("ES256") → its tokens verify with the public CryptoKey → 200', async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const own = createTokenIssuer({ issuer: ISS, audience: AUD, privateKey });
    const url = await serve(
      authenticate({ realm, bearer: { key: publicKey, algorithms: ["ES256"], audience: AUD } }),
    );
    const { access_token } = await own.issue({ id: "alice" });
    expect((await get(url, `Bearer ${access_token}`)).status).toBe(200);
    expect((await own.jwks()).keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256" });
  });

  it("two key sources at once → TypeError", () => {
    expect(() => createBearerVerifier({ jwks, key: "x", algorithms: ["ES256"] })).toThrow(/exactly one/);
    expect(() => createBearerVerifier({ jwksUri: "not a url", algorithms: ["ES256"] })).toThrow(
      /absolute https: URL/,
    );
  });
});

describe("Bearer: hand-signed tokens", () => {
  it.each(["JWT", "jwt", "application/jwt", "Application/JWT"])(
    "a token of the trusted key whose header says cty %s (a nested JWT), its payload a claims set → 401 invalid_token, and verify() gives the reason",
    async (cty) => {
      // RFC 7519 §7.2 step 8: with cty "JWT" the payload is a JWT to validate in turn, not the
      // claims; this verifier takes no nested tokens, so such a token is refused, never read as one.
      const t = await new SignJWT({ sub: "alice", scope: "read" })
        .setProtectedHeader({ alg: "ES256", kid: "k1", cty })
        .setIssuer(ISS)
        .setAudience(AUD)
        .setExpirationTime("5m")
        .sign(known.privateKey);
      const res = await get(hand.url, `Bearer ${t}`);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_token"');
      const pub = { ...(await exportJWK(known.publicKey)), kid: "k1", alg: "ES256" };
      const verifier = createBearerVerifier({
        jwks: { keys: [pub] },
        algorithms: ["ES256"],
        issuer: ISS,
        audience: AUD,
      });
      await expect(verifier.verify(t)).rejects.toMatchObject({ reason: "ERR_JWT_NESTED" });
    },
  );

  it("a token whose cty names another media type (cty: json) is not a nested JWT → 200", async () => {
    const t = await new SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "ES256", kid: "k1", cty: "json" })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime("5m")
      .sign(known.privateKey);
    expect((await get(hand.url, `Bearer ${t}`)).status).toBe(200);
  });

  it("the hand-signing key works (so the claim tests above fail for the claim, not the key)", async () => {
    const t = await new SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime("5m")
      .sign(known.privateKey);
    expect((await get(hand.url, `Bearer ${t}`)).status).toBe(200);
  });
});
