import type { IncomingMessage, ServerResponse } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { requestState, subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { express4, type Listening, listen, rawRequest, serviceUrl, uniquePrefix } from "@svc/test-utils";
import { FRAMEWORKS, fallbackErrors, type Mounts, serve } from "@svc/test-utils/conformance";
import { calculateThumbprint, generateKeyPair, generateProof, type KeyPair } from "dpop";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { Redis } from "ioredis";
import { exportJWK, generateKeyPair as joseKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as onExpress from "../src/express.js";
import * as onFastify from "../src/fastify.js";
import * as onFetch from "../src/fetch.js";
import {
  type AuthDiagnostic,
  type AuthenticateOptions,
  type DpopOptions,
  memoryNonceStore,
  type NonceStore,
  recordedAuthContext,
  redisNonceStore,
} from "../src/index.js";
import * as onNode from "../src/node.js";

/**
 * `authenticate({ dpop })` (RFC 9449) through a listening server of each framework, with proofs
 * made by an independent client (panva's `dpop`), access tokens bound to the client's key by
 * `cnf.jkt` (RFC 9449 §6.1).
 */
const ISSUER = "https://issuer.example/";
const AUDIENCE = "https://api.example/";
const ALGS = "ES256 Ed25519";
const issuerKey = await joseKeyPair("ES256");
const jwks = { keys: [{ ...(await exportJWK(issuerKey.publicKey)), kid: "k1", alg: "ES256" }] };

/** An access token for `sub`, bound to `keys` (its `cnf.jkt`) unless `keys` is undefined. */
async function accessToken(keys: KeyPair | undefined, sub = "alice"): Promise<string> {
  return signed(keys === undefined ? {} : { cnf: { jkt: await calculateThumbprint(keys.publicKey) } }, sub);
}

/** An access token for `sub` with `claims` besides its scope, signed by the issuer. */
async function signed(claims: Record<string, unknown>, sub: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: "read", ...claims })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setSubject(sub)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now - 10)
    .setExpirationTime(now + 600)
    .sign(issuerKey.privateKey);
}

const client = await generateKeyPair("ES256", { extractable: true });
const otherClient = await generateKeyPair("Ed25519");
const psClient = await generateKeyPair("PS256");
const boundToken = await accessToken(client);
const unboundToken = await accessToken(undefined, "bob");
/** Bound to a client certificate (RFC 8705 §3.1: the SHA-256 thumbprint of its DER). */
const certificateBoundToken = await signed(
  { cnf: { "x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2" } },
  "carol",
);

/** The server's clock offset in milliseconds, for the `iat` window rows (the server's `dpop.now`). */
let skew = 0;
const NONCE_SECRET = "a nonce secret of at least thirty-two bytes";

/**
 * `bearer`: no `dpop`; `accept`: no `dpop`, `bearer.acceptBoundTokens`; `accept-dpop`: both;
 * `full`: a replay store of 20 proofs.
 */
type Config = "main" | "nonce" | "required" | "redis" | "bearer" | "accept" | "accept-dpop" | "full";
const redisUrl = serviceUrl("REDIS_URL");
const redisPrefix = uniquePrefix("auth-dpop");
let redis: Redis | undefined;
let redisStore: NonceStore | undefined;

function dpopOptions(config: Config): DpopOptions {
  const base: DpopOptions = {
    algorithms: ["ES256", "Ed25519"],
    now: () => Date.now() + skew,
    replayStore:
      config === "redis"
        ? (redisStore as NonceStore)
        : memoryNonceStore({ max: config === "full" ? 20 : 1000 }),
  };
  if (config === "nonce") return { ...base, nonce: { secret: NONCE_SECRET } };
  if (config === "required") return { ...base, required: true };
  return base;
}

function options(config: Config): AuthenticateOptions {
  const bearer = { algorithms: ["ES256"], issuer: ISSUER, audience: AUDIENCE, jwks };
  const acceptBoundTokens = config === "accept" || config === "accept-dpop";
  return {
    realm: "api",
    bearer: acceptBoundTokens ? { ...bearer, acceptBoundTokens } : bearer,
    ...(config === "bearer" || config === "accept" ? {} : { dpop: dpopOptions(config) }),
  };
}

const json = (res: ServerResponse, value: unknown) => {
  res.setHeader("Content-Type", "application/json");
  res.end(JSON.stringify(value));
};

function mounts(config: Config): Mounts {
  return {
    express() {
      const app = express();
      app.set("trust proxy", "loopback");
      app.use(onExpress.authenticate(options(config)));
      app.all("/me", (req, res) => {
        res.json({
          id: requestState(req).principal?.id,
          scheme: recordedAuthContext(req)?.principal?.scheme,
        });
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const authenticate = onNode.authenticate(options(config));
      return (req: IncomingMessage, res: ServerResponse) => {
        authenticate(req).then(
          ({ principal }) => json(res, { id: principal?.id, scheme: principal?.scheme }),
          (err: unknown) => fallbackErrors.node(err, req, res),
        );
      };
    },
    fastify() {
      const app = Fastify({ trustProxy: "127.0.0.1" });
      app.register(onFastify.auth, options(config));
      app.all("/me", async (request) => ({
        id: request.auth?.principal?.id,
        scheme: request.auth?.principal?.scheme,
      }));
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono<{ Variables: onFetch.AuthVariables }>();
      app.use(onFetch.authenticate(options(config)));
      app.all("/me", (c) => {
        const principal = c.get("auth").principal;
        return c.json({ id: principal?.id, scheme: principal?.scheme });
      });
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return app.fetch;
    },
  };
}

const ALL = [...FRAMEWORKS, "express4"] as const;
type AnyFramework = (typeof ALL)[number];

async function start(framework: AnyFramework, config: Config): Promise<Listening> {
  if (framework !== "express4") return serve(framework, mounts(config));
  const app = express4();
  app.set("trust proxy", "loopback");
  app.use(onExpress.authenticate(options(config)));
  app.all("/me", (req, res) => {
    res.json({ id: requestState(req).principal?.id, scheme: recordedAuthContext(req)?.principal?.scheme });
  });
  app.use(errorHandler({ logger: { error() {} } }));
  return listen(app);
}

/** Whether the framework's own proxy trust (`trust proxy`, `trustProxy`) is set in the mounts. */
const trustsProxy = (framework: AnyFramework) => framework !== "node" && framework !== "fetch";

interface Sent {
  response: Response;
  messages: AuthDiagnostic[];
}

/** One request, with the `svc:auth` messages it caused. */
async function send(url: string, init: { method?: string; headers?: Record<string, string> }): Promise<Sent> {
  const messages: AuthDiagnostic[] = [];
  const listener = (message: unknown) => messages.push(message as AuthDiagnostic);
  subscribeDiagnostics("svc:auth", listener);
  try {
    const response = await fetch(url, init);
    return { response, messages };
  } finally {
    unsubscribeDiagnostics("svc:auth", listener);
  }
}

const BOUND_TO_DPOP_KEY = "The access token is bound to a DPoP key and is not accepted as a bearer token";
const BOUND_TO_CERTIFICATE =
  "The access token is bound to a client certificate and is not accepted as a bearer token";

const last = (messages: AuthDiagnostic[]) => messages.filter((m) => "request" in m).at(-1);

/** `Authorization: DPoP <token>` with `proof`. */
function dpop(token: string, proof: string | undefined): Record<string, string> {
  return proof === undefined
    ? { Authorization: `DPoP ${token}` }
    : { Authorization: `DPoP ${token}`, DPoP: proof };
}

async function accepted(sent: Sent, id = "alice", scheme = "dpop"): Promise<void> {
  expect(sent.response.status).toBe(200);
  expect(await sent.response.json()).toEqual({ id, scheme });
  expect(last(sent.messages)).toMatchObject({ decision: "authenticated", scheme, principal: id });
}

/** 401 `invalid_dpop_proof` (RFC 9449 §7.1), with the reason `svc:auth` tells. */
function refusedProof(sent: Sent, reason: string, description?: string): void {
  expect(sent.response.status).toBe(401);
  const header = sent.response.headers.get("www-authenticate") ?? "";
  expect(header).toMatch(
    /^DPoP realm="api", error="invalid_dpop_proof", error_description="[^"]+", algs="ES256 Ed25519"$/,
  );
  if (description !== undefined) expect(header).toContain(`error_description="${description}"`);
  expect(last(sent.messages)).toMatchObject({ decision: "refused", scheme: "dpop", reason });
}

if (redisUrl) {
  redis = new Redis(redisUrl);
  redisStore = redisNonceStore({ client: redis, prefix: redisPrefix });
}
afterAll(async () => {
  if (redis === undefined) return;
  const keys = await redis.keys(`${redisPrefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

for (const framework of ALL) {
  describe(`dpop on ${framework}`, () => {
    const servers = new Map<Config, Listening>();
    beforeAll(async () => {
      for (const config of ["main", "nonce", "required", "bearer", "accept", "accept-dpop", "full"] as const)
        servers.set(config, await start(framework, config));
      if (redisStore) servers.set("redis", await start(framework, "redis"));
    });
    afterAll(async () => {
      for (const server of servers.values()) await server.close();
    });
    const url = (config: Config = "main") => `${(servers.get(config) as Listening).url}/me`;

    it("a valid proof with its bound token → 200, principal scheme dpop", async () => {
      const proof = await generateProof(client, url(), "GET", undefined, boundToken);
      await accepted(await send(url(), { headers: dpop(boundToken, proof) }));
    });

    it("no credentials → 401 with Bearer and DPoP challenges, algs named", async () => {
      const sent = await send(url(), {});
      expect(sent.response.status).toBe(401);
      expect(sent.response.headers.get("www-authenticate")).toBe(
        `Bearer realm="api", DPoP realm="api", algs="${ALGS}"`,
      );
    });

    it("an unbound token as Bearer beside DPoP → 200, scheme bearer", async () => {
      await accepted(
        await send(url(), { headers: { Authorization: `Bearer ${unboundToken}` } }),
        "bob",
        "bearer",
      );
    });

    it("htm POST on a GET → 401 invalid_dpop_proof (claims)", async () => {
      const proof = await generateProof(client, url(), "POST", undefined, boundToken);
      refusedProof(
        await send(url(), { headers: dpop(boundToken, proof) }),
        "claims",
        "DPoP proof htm does not match the request method",
      );
    });

    it("htu of another path → 401 invalid_dpop_proof (claims)", async () => {
      const proof = await generateProof(client, `${url()}/other`, "GET", undefined, boundToken);
      refusedProof(
        await send(url(), { headers: dpop(boundToken, proof) }),
        "claims",
        "DPoP proof htu does not match the request URI",
      );
    });

    it("query and fragment ignored on both sides (RFC 9449 §4.3) → 200", async () => {
      const proof = await generateProof(client, `${url()}?proof=1#f`, "GET", undefined, boundToken);
      await accepted(await send(`${url()}?request=2`, { headers: dpop(boundToken, proof) }));
    });

    it("htu differing only in scheme/host case and an escaped unreserved character → 200", async () => {
      const upper = url().replace("http://", "HTTP://").replace("/me", "/%6De");
      const proof = await generateProof(client, upper, "GET", undefined, boundToken);
      await accepted(await send(url(), { headers: dpop(boundToken, proof) }));
    });

    it(`htu of the forwarded origin behind a trusted proxy → ${trustsProxy(framework) ? 200 : 401}`, async () => {
      const proof = await generateProof(client, "https://api.example/me", "GET", undefined, boundToken);
      const headers = {
        ...dpop(boundToken, proof),
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "api.example",
      };
      const sent = await send(url(), { headers });
      if (trustsProxy(framework)) await accepted(sent);
      else refusedProof(sent, "claims");
    });

    it("iat older than maxAge + clockTolerance → 401 invalid_dpop_proof (expired)", async () => {
      const proof = await generateProof(client, url(), "GET", undefined, boundToken);
      skew = 120_000;
      try {
        refusedProof(
          await send(url(), { headers: dpop(boundToken, proof) }),
          "expired",
          "DPoP proof iat is too old",
        );
      } finally {
        skew = 0;
      }
    });

    it("iat ahead of the clock beyond clockTolerance → 401 invalid_dpop_proof (not-yet-valid)", async () => {
      const proof = await generateProof(client, url(), "GET", undefined, boundToken);
      skew = -60_000;
      try {
        refusedProof(await send(url(), { headers: dpop(boundToken, proof) }), "not-yet-valid");
      } finally {
        skew = 0;
      }
    });

    it("the same proof twice (memory store) → 200 then 401 invalid_dpop_proof (replayed)", async () => {
      const proof = await generateProof(client, url(), "GET", undefined, boundToken);
      await accepted(await send(url(), { headers: dpop(boundToken, proof) }));
      refusedProof(await send(url(), { headers: dpop(boundToken, proof) }), "replayed");
    });

    it.skipIf(!redisUrl)(
      "the same proof twice (Redis store) → 200 then 401 replayed, jti kept under the prefix",
      async () => {
        const proof = await generateProof(client, url("redis"), "GET", undefined, boundToken);
        await accepted(await send(url("redis"), { headers: dpop(boundToken, proof) }));
        refusedProof(await send(url("redis"), { headers: dpop(boundToken, proof) }), "replayed");
        expect((await (redis as Redis).keys(`${redisPrefix}dpop:*`)).length).toBeGreaterThan(0);
      },
    );

    it("ath of another token → 401 invalid_dpop_proof (claims)", async () => {
      const proof = await generateProof(client, url(), "GET", undefined, unboundToken);
      refusedProof(
        await send(url(), { headers: dpop(boundToken, proof) }),
        "claims",
        "DPoP proof ath does not match the access token",
      );
    });

    it("no ath at all → 401 invalid_dpop_proof (claims)", async () => {
      const proof = await generateProof(client, url(), "GET");
      refusedProof(await send(url(), { headers: dpop(boundToken, proof) }), "claims");
    });

    it("proof signed by a key the token is not bound to → 401 invalid_token (binding)", async () => {
      const proof = await generateProof(otherClient, url(), "GET", undefined, boundToken);
      const sent = await send(url(), { headers: dpop(boundToken, proof) });
      expect(sent.response.status).toBe(401);
      expect(sent.response.headers.get("www-authenticate")).toBe(
        `DPoP realm="api", error="invalid_token", algs="${ALGS}"`,
      );
      expect(last(sent.messages)).toMatchObject({ decision: "refused", scheme: "dpop", reason: "binding" });
    });

    it("an unbound token with the DPoP scheme → 401 invalid_token (binding)", async () => {
      const proof = await generateProof(client, url(), "GET", undefined, unboundToken);
      const sent = await send(url(), { headers: dpop(unboundToken, proof) });
      expect(sent.response.status).toBe(401);
      expect(sent.response.headers.get("www-authenticate")).toBe(
        `DPoP realm="api", error="invalid_token", algs="${ALGS}"`,
      );
      expect(last(sent.messages)).toMatchObject({ reason: "binding" });
    });

    it("a jwk holding the private key → 401 invalid_dpop_proof (malformed)", async () => {
      const jwk = await exportJWK(client.privateKey);
      const proof = await new SignJWT({
        htm: "GET",
        htu: url(),
        jti: crypto.randomUUID(),
        ath: (await generateProofClaims(boundToken)).ath,
      })
        .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk })
        .setIssuedAt()
        .sign(client.privateKey);
      refusedProof(
        await send(url(), { headers: dpop(boundToken, proof) }),
        "malformed",
        "DPoP proof jwk holds a private key",
      );
    });

    it("a proof whose signature is not by its jwk's key → 401 invalid_dpop_proof (signature)", async () => {
      const jwk = await exportJWK(client.publicKey);
      const proof = await new SignJWT({
        htm: "GET",
        htu: url(),
        jti: crypto.randomUUID(),
        ath: (await generateProofClaims(boundToken)).ath,
      })
        .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk })
        .setIssuedAt()
        .sign((await joseKeyPair("ES256")).privateKey);
      refusedProof(await send(url(), { headers: dpop(boundToken, proof) }), "signature");
    });

    it("alg PS256 not in dpop.algorithms → 401 invalid_dpop_proof (algorithm)", async () => {
      const token = await accessToken(psClient);
      const proof = await generateProof(psClient, url(), "GET", undefined, token);
      refusedProof(await send(url(), { headers: dpop(token, proof) }), "algorithm");
    });

    it("a DPoP-scheme token without a proof → 401 invalid_dpop_proof (missing)", async () => {
      refusedProof(
        await send(url(), { headers: dpop(boundToken, undefined) }),
        "missing",
        "DPoP proof is missing",
      );
    });

    it("two DPoP field lines → 401 invalid_dpop_proof", async () => {
      const one = await generateProof(client, url(), "GET", undefined, boundToken);
      const two = await generateProof(client, url(), "GET", undefined, boundToken);
      const response = await rawRequest(url(), "GET", {
        Authorization: `DPoP ${boundToken}`,
        DPoP: [one, two],
      });
      expect(response.status).toBe(401);
      expect(response.headers["www-authenticate"]).toContain('error="invalid_dpop_proof"');
    });

    it("a proof over maxProofLength → 401 invalid_dpop_proof, before it is decoded", async () => {
      const proof = `${"a".repeat(5000)}.b.c`;
      refusedProof(
        await send(url(), { headers: dpop(boundToken, proof) }),
        "malformed",
        "DPoP proof is too large",
      );
    });

    it("a DPoP-bound token as Bearer → 401 invalid_token (binding), DPoP challenge beside", async () => {
      const sent = await send(url(), { headers: { Authorization: `Bearer ${boundToken}` } });
      expect(sent.response.status).toBe(401);
      expect(sent.response.headers.get("www-authenticate")).toBe(
        `Bearer realm="api", error="invalid_token", error_description="${BOUND_TO_DPOP_KEY}", DPoP realm="api", algs="${ALGS}"`,
      );
      expect(last(sent.messages)).toMatchObject({ decision: "refused", scheme: "bearer", reason: "binding" });
      // Once more, now that the token's signature was verified (the verified-token cache path).
      const again = await send(url(), { headers: { Authorization: `Bearer ${boundToken}` } });
      expect(again.response.status).toBe(401);
    });

    it("a cnf x5t#S256 token as Bearer beside DPoP → 401 invalid_token (binding), DPoP challenge beside", async () => {
      const sent = await send(url(), { headers: { Authorization: `Bearer ${certificateBoundToken}` } });
      expect(sent.response.status).toBe(401);
      expect(sent.response.headers.get("www-authenticate")).toBe(
        `Bearer realm="api", error="invalid_token", error_description="${BOUND_TO_CERTIFICATE}", DPoP realm="api", algs="${ALGS}"`,
      );
      expect(last(sent.messages)).toMatchObject({ decision: "refused", scheme: "bearer", reason: "binding" });
    });

    it("no dpop: a cnf.jkt token as Bearer → 401 invalid_token (binding), the Bearer challenge saying why", async () => {
      const sent = await send(url("bearer"), { headers: { Authorization: `Bearer ${boundToken}` } });
      expect(sent.response.status).toBe(401);
      expect(sent.response.headers.get("www-authenticate")).toBe(
        `Bearer realm="api", error="invalid_token", error_description="${BOUND_TO_DPOP_KEY}"`,
      );
      expect(last(sent.messages)).toMatchObject({ decision: "refused", scheme: "bearer", reason: "binding" });
    });

    it("no dpop: a cnf x5t#S256 token as Bearer → 401 invalid_token (binding)", async () => {
      const sent = await send(url("bearer"), {
        headers: { Authorization: `Bearer ${certificateBoundToken}` },
      });
      expect(sent.response.status).toBe(401);
      expect(sent.response.headers.get("www-authenticate")).toBe(
        `Bearer realm="api", error="invalid_token", error_description="${BOUND_TO_CERTIFICATE}"`,
      );
      expect(last(sent.messages)).toMatchObject({ decision: "refused", scheme: "bearer", reason: "binding" });
    });

    it("no dpop: an unbound token as Bearer → 200", async () => {
      await accepted(
        await send(url("bearer"), { headers: { Authorization: `Bearer ${unboundToken}` } }),
        "bob",
        "bearer",
      );
    });

    it("bearer.acceptBoundTokens, no dpop: cnf.jkt and cnf x5t#S256 tokens as Bearer → 200", async () => {
      const bound = await send(url("accept"), { headers: { Authorization: `Bearer ${boundToken}` } });
      await accepted(bound, "alice", "bearer");
      const cert = await send(url("accept"), {
        headers: { Authorization: `Bearer ${certificateBoundToken}` },
      });
      await accepted(cert, "carol", "bearer");
    });

    it("bearer.acceptBoundTokens beside dpop: cnf.jkt as Bearer → 401 still, x5t#S256 → 200, DPoP → 200", async () => {
      const sent = await send(url("accept-dpop"), { headers: { Authorization: `Bearer ${boundToken}` } });
      expect(sent.response.status).toBe(401);
      expect(last(sent.messages)).toMatchObject({ decision: "refused", scheme: "bearer", reason: "binding" });
      const cert = await send(url("accept-dpop"), {
        headers: { Authorization: `Bearer ${certificateBoundToken}` },
      });
      await accepted(cert, "carol", "bearer");
      const proof = await generateProof(client, url("accept-dpop"), "GET", undefined, boundToken);
      await accepted(await send(url("accept-dpop"), { headers: dpop(boundToken, proof) }));
    });

    it("replayStore memoryNonceStore({ max: 20 }): P, then 25 other proofs → 19 × 200, 6 × 503; P again → 401 replayed", async () => {
      const first = await generateProof(client, url("full"), "GET", undefined, boundToken);
      await accepted(await send(url("full"), { headers: dpop(boundToken, first) }));
      const answers: number[] = [];
      for (let i = 0; i < 25; i++) {
        const proof = await generateProof(client, url("full"), "GET", undefined, boundToken);
        const { response, messages } = await send(url("full"), { headers: dpop(boundToken, proof) });
        await response.arrayBuffer();
        answers.push(response.status);
        if (response.status !== 503) continue;
        expect(last(messages)).toMatchObject({
          decision: "refused",
          scheme: "dpop",
          error: { name: "DpopReplayStoreError", cause: { name: "NonceStoreFullError" } },
        });
        // @svc/errors' handler sends the 503's fields (the other mounts' fallback drops a 5xx's):
        // Retry-After is when the first proof leaves its window of maxAge + clockTolerance.
        if (framework === "express4") {
          const retryAfter = Number(response.headers.get("retry-after"));
          expect(retryAfter).toBeGreaterThanOrEqual(1);
          expect(retryAfter).toBeLessThanOrEqual(65);
        }
      }
      // Still in its window, still in the store: a replay, however many proofs came since.
      refusedProof(await send(url("full"), { headers: dpop(boundToken, first) }), "replayed");
      expect(answers).toEqual([...Array(19).fill(200), ...Array(6).fill(503)]);
    });

    it("dpop.required: a Bearer token → 401 with the DPoP challenge alone", async () => {
      const sent = await send(url("required"), { headers: { Authorization: `Bearer ${unboundToken}` } });
      expect(sent.response.status).toBe(401);
      expect(sent.response.headers.get("www-authenticate")).toBe(`DPoP realm="api", algs="${ALGS}"`);
      const proof = await generateProof(client, url("required"), "GET", undefined, boundToken);
      await accepted(await send(url("required"), { headers: dpop(boundToken, proof) }));
    });

    it("dpop.nonce: no nonce → 401 use_dpop_nonce with DPoP-Nonce; the retry with it → 200", async () => {
      const first = await generateProof(client, url("nonce"), "GET", undefined, boundToken);
      const challenged = await send(url("nonce"), { headers: dpop(boundToken, first) });
      expect(challenged.response.status).toBe(401);
      expect(challenged.response.headers.get("www-authenticate")).toBe(
        `DPoP realm="api", error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof", algs="${ALGS}"`,
      );
      expect(last(challenged.messages)).toMatchObject({
        decision: "refused",
        scheme: "dpop",
        reason: "nonce",
      });
      const nonce = challenged.response.headers.get("dpop-nonce");
      expect(nonce).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
      const forged = await generateProof(
        client,
        url("nonce"),
        "GET",
        `${nonce?.split(".")[0]}.${"A".repeat(43)}`,
        boundToken,
      );
      expect((await send(url("nonce"), { headers: dpop(boundToken, forged) })).response.status).toBe(401);
      const retry = await generateProof(client, url("nonce"), "GET", nonce as string, boundToken);
      await accepted(await send(url("nonce"), { headers: dpop(boundToken, retry) }));
    });
  });
}

/** The `ath` of `token` as the independent client computes it (read back from one of its proofs). */
async function generateProofClaims(token: string): Promise<{ ath: string }> {
  const proof = await generateProof(client, "https://x.example/", "GET", undefined, token);
  const payload = JSON.parse(Buffer.from(proof.split(".")[1] as string, "base64url").toString()) as {
    ath: string;
  };
  return payload;
}

describe("dpop options", () => {
  const bearer = { algorithms: ["ES256"] as const, issuer: ISSUER, audience: AUDIENCE, jwks };
  const build =
    (dpop: unknown, withBearer = true) =>
    () =>
      onNode.authenticate({
        realm: "api",
        ...(withBearer ? { bearer: { ...bearer, algorithms: ["ES256"] } } : {}),
        dpop: dpop as DpopOptions,
      } as AuthenticateOptions);
  it.each([
    ["a misspelt name (maxage)", { maxage: 60 }, "ERR_SVC_AUTH_UNKNOWN_OPTION"],
    ["HS256 among the algorithms", { algorithms: ["ES256", "HS256"] }, "ERR_SVC_AUTH_DPOP_ALGORITHMS"],
    ["alg none", { algorithms: ["none"] }, "ERR_SVC_AUTH_DPOP_ALGORITHMS"],
    ["an empty algorithm list", { algorithms: [] }, "ERR_SVC_AUTH_DPOP_ALGORITHMS"],
    ["a negative maxAge", { maxAge: -1 }, "ERR_SVC_AUTH_DPOP_MAX_AGE"],
    ["required: 'yes'", { required: "yes" }, "ERR_SVC_AUTH_DPOP_REQUIRED"],
    ["a replay store without claim", { replayStore: {} }, "ERR_SVC_AUTH_DPOP_REPLAY_STORE"],
    ["a nonce secret of 8 bytes", { nonce: { secret: "12345678" } }, "ERR_SVC_AUTH_DPOP_NONCE_SECRET"],
    ["a tiny maxProofLength", { maxProofLength: 10 }, "ERR_SVC_AUTH_DPOP_MAX_PROOF_LENGTH"],
  ])("%s → TypeError %s", (_name, dpop, code) => {
    expect(build(dpop)).toThrow(expect.objectContaining({ name: "TypeError", code }));
  });
  it("dpop without bearer → TypeError ERR_SVC_AUTH_DPOP", () => {
    expect(build({}, false)).toThrow(expect.objectContaining({ code: "ERR_SVC_AUTH_DPOP" }));
  });
});
