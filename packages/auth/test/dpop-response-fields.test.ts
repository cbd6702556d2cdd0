import type { IncomingMessage, ServerResponse } from "node:http";
import { requestState } from "@svc/kernel";
import * as corsOnExpress from "@svc/negotiate/express";
import * as corsOnFastify from "@svc/negotiate/fastify";
import * as corsOnFetch from "@svc/negotiate/fetch";
import * as corsOnNode from "@svc/negotiate/node";
import { express4, type Listening, listen } from "@svc/test-utils";
import { FRAMEWORKS, fallbackErrors, type Mounts, serve } from "@svc/test-utils/conformance";
import { calculateThumbprint, generateKeyPair, generateProof } from "dpop";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { exportJWK, generateKeyPair as joseKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as onExpress from "../src/express.js";
import * as onFastify from "../src/fastify.js";
import * as onFetch from "../src/fetch.js";
import type { AuthenticateOptions, DpopOptions } from "../src/index.js";
import { recordedAuthContext } from "../src/index.js";
import * as onNode from "../src/node.js";

/**
 * What `authenticate({ dpop })` adds to responses, through a listening server of each framework:
 * a fresh `DPoP-Nonce` on every response DPoP authenticated with `dpop.nonce` (RFC 9449 §9, §8.2),
 * readable by a browser script behind `crossOrigin` of `@svc/negotiate` (which always exposes it
 * and `WWW-Authenticate`), and `dpop.trustProxy`, so that a proof's `htu` names the URL the client
 * used behind a TLS-terminating proxy on servers without a trust setting of their own (node:http,
 * Fetch). Proofs by an independent client (panva's `dpop`).
 */
const ISSUER = "https://issuer.example/";
const AUDIENCE = "https://api.example/";
const APP = "https://app.example";
const issuerKey = await joseKeyPair("ES256");
const jwks = { keys: [{ ...(await exportJWK(issuerKey.publicKey)), kid: "k1", alg: "ES256" }] };
const client = await generateKeyPair("ES256");

async function accessToken(bound: boolean, sub: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = bound ? { scope: "read", cnf: { jkt: await calculateThumbprint(client.publicKey) } } : {};
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setSubject(sub)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now - 10)
    .setExpirationTime(now + 600)
    .sign(issuerKey.privateKey);
}
const boundToken = await accessToken(true, "alice");
const bearerToken = await accessToken(false, "bob");

/**
 * The servers of each framework: `nonce` (server nonces, behind CORS for APP), `trusted`
 * (`dpop.trustProxy: "loopback"`: the test's own connection is the proxy's), `untrusted`
 * (`dpop.trustProxy` naming another address), `forwarded` (loopback trusted, RFC 7239 read).
 * No framework trust is set: what is trusted is the option's alone.
 */
type Config = "nonce" | "trusted" | "untrusted" | "forwarded";
const CONFIGS: readonly Config[] = ["nonce", "trusted", "untrusted", "forwarded"];

function dpopOptions(config: Config): DpopOptions {
  const base: DpopOptions = { algorithms: ["ES256"] };
  switch (config) {
    case "nonce":
      return { ...base, nonce: { secret: "a nonce secret of at least thirty-two bytes" } };
    case "trusted":
      return { ...base, trustProxy: "loopback" };
    case "untrusted":
      return { ...base, trustProxy: "192.0.2.1" }; // TEST-NET-1 (RFC 5737): never the test's peer
    case "forwarded":
      return { ...base, trustProxy: "loopback", forwardedHeaders: "forwarded" };
  }
}

function options(config: Config): AuthenticateOptions {
  return {
    realm: "api",
    bearer: { algorithms: ["ES256"], issuer: ISSUER, audience: AUDIENCE, jwks },
    dpop: dpopOptions(config),
  };
}

const cors = { origins: [APP] };

function mounts(config: Config): Mounts {
  return {
    express() {
      const app = express();
      app.use(corsOnExpress.crossOrigin(cors));
      app.use(onExpress.authenticate(options(config)));
      app.get("/me", (req, res) => {
        res.json({
          id: requestState(req).principal?.id,
          scheme: recordedAuthContext(req)?.principal?.scheme,
        });
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const crossOrigin = corsOnNode.crossOrigin(cors);
      const authenticate = onNode.authenticate(options(config));
      return async (req: IncomingMessage, res: ServerResponse) => {
        try {
          if (await crossOrigin(req, res)) return;
          const { principal } = await authenticate(req, res);
          res.setHeader("Content-Type", "application/json");
          res.end(JSON.stringify({ id: principal?.id, scheme: principal?.scheme }));
        } catch (err) {
          fallbackErrors.node(err, req, res);
        }
      };
    },
    fastify() {
      const app = Fastify();
      app.register(corsOnFastify.crossOrigin, cors);
      app.register(onFastify.auth, options(config));
      app.get("/me", async (request) => ({
        id: request.auth?.principal?.id,
        scheme: request.auth?.principal?.scheme,
      }));
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono<{ Variables: onFetch.AuthVariables }>();
      app.use(corsOnFetch.crossOrigin(cors));
      app.use(onFetch.authenticate(options(config)));
      app.get("/me", (c) => {
        const principal = c.get("auth").principal;
        return c.json({ id: principal?.id, scheme: principal?.scheme });
      });
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return app.fetch;
    },
  };
}

const ALL = [...FRAMEWORKS, "express4"] as const;

async function start(framework: (typeof ALL)[number], config: Config): Promise<Listening> {
  if (framework !== "express4") return serve(framework, mounts(config));
  const app = express4();
  app.use(corsOnExpress.crossOrigin(cors));
  app.use(onExpress.authenticate(options(config)));
  app.get("/me", (req, res) => {
    res.json({ id: requestState(req).principal?.id, scheme: recordedAuthContext(req)?.principal?.scheme });
  });
  app.use(fallbackErrors.express);
  return listen(app);
}

const dpop = (token: string, proof: string) => ({ Authorization: `DPoP ${token}`, DPoP: proof });

/** A nonce as `@svc/auth` issues them: the second issued (base 36), a dot, an HMAC-SHA-256. */
const NONCE = /^([0-9a-z]+)\.[A-Za-z0-9_-]{43}$/;

/** The second a nonce was issued. */
function issuedAt(nonce: string | null): number {
  const match = NONCE.exec(nonce ?? "");
  if (match === null) throw new Error(`not a nonce: ${nonce}`);
  return Number.parseInt(match[1] as string, 36);
}

function exposed(response: Response): string[] {
  return (response.headers.get("access-control-expose-headers") ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase());
}

for (const framework of ALL) {
  describe(`dpop response fields on ${framework}`, () => {
    const servers = new Map<Config, Listening>();
    beforeAll(async () => {
      for (const config of CONFIGS) servers.set(config, await start(framework, config));
    });
    afterAll(async () => {
      for (const server of servers.values()) await server.close();
    });
    const url = (config: Config) => `${(servers.get(config) as Listening).url}/me`;

    it("dpop.nonce: every response DPoP authenticated carries a fresh DPoP-Nonce, which the next proof uses", async () => {
      const first = await generateProof(client, url("nonce"), "GET", undefined, boundToken);
      const challenged = await fetch(url("nonce"), { headers: dpop(boundToken, first) });
      expect(challenged.status).toBe(401);
      const given = challenged.headers.get("dpop-nonce");
      const proof = await generateProof(client, url("nonce"), "GET", given as string, boundToken);
      const ok = await fetch(url("nonce"), { headers: dpop(boundToken, proof) });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ id: "alice", scheme: "dpop" });
      const fresh = ok.headers.get("dpop-nonce");
      expect(fresh).toMatch(NONCE);
      // Issued now (this second or the one before), not older than the one presented.
      expect(issuedAt(fresh)).toBeGreaterThanOrEqual(issuedAt(given));
      expect(Math.abs(issuedAt(fresh) - Date.now() / 1000)).toBeLessThan(3);
      const next = await generateProof(client, url("nonce"), "GET", fresh as string, boundToken);
      const again = await fetch(url("nonce"), { headers: dpop(boundToken, next) });
      expect(again.status).toBe(200);
      expect(again.headers.get("dpop-nonce")).toMatch(NONCE);
    });

    it("no DPoP-Nonce on a Bearer answer, nor on a DPoP one without dpop.nonce", async () => {
      const bearer = await fetch(url("nonce"), { headers: { Authorization: `Bearer ${bearerToken}` } });
      expect(bearer.status).toBe(200);
      expect(bearer.headers.get("dpop-nonce")).toBeNull();
      const proof = await generateProof(client, url("trusted"), "GET", undefined, boundToken);
      const withoutNonces = await fetch(url("trusted"), { headers: dpop(boundToken, proof) });
      expect(withoutNonces.status).toBe(200);
      expect(withoutNonces.headers.get("dpop-nonce")).toBeNull();
    });

    it("CORS: DPoP-Nonce and WWW-Authenticate are exposed to the allowed origin, on the 401 and the 200", async () => {
      const first = await generateProof(client, url("nonce"), "GET", undefined, boundToken);
      const challenged = await fetch(url("nonce"), { headers: { ...dpop(boundToken, first), Origin: APP } });
      expect(challenged.status).toBe(401);
      expect(challenged.headers.get("access-control-allow-origin")).toBe(APP);
      expect(challenged.headers.get("www-authenticate")).toContain('error="use_dpop_nonce"');
      expect(exposed(challenged)).toEqual(expect.arrayContaining(["dpop-nonce", "www-authenticate"]));
      const nonce = challenged.headers.get("dpop-nonce") as string;
      const proof = await generateProof(client, url("nonce"), "GET", nonce, boundToken);
      const ok = await fetch(url("nonce"), { headers: { ...dpop(boundToken, proof), Origin: APP } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("access-control-allow-origin")).toBe(APP);
      expect(ok.headers.get("dpop-nonce")).toMatch(NONCE);
      expect(exposed(ok)).toEqual(expect.arrayContaining(["dpop-nonce", "www-authenticate"]));
    });

    describe("dpop.trustProxy: a TLS-terminating proxy's X-Forwarded-Proto and -Host", () => {
      const external = "https://api.example/me";
      const proxied = { "X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example" };

      it("from a trusted peer → a proof naming the external URL is accepted", async () => {
        const proof = await generateProof(client, external, "GET", undefined, boundToken);
        const res = await fetch(url("trusted"), { headers: { ...dpop(boundToken, proof), ...proxied } });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ id: "alice", scheme: "dpop" });
      });

      it("from a trusted peer → a proof naming the connection's own URL is refused (htu)", async () => {
        const proof = await generateProof(client, url("trusted"), "GET", undefined, boundToken);
        const res = await fetch(url("trusted"), { headers: { ...dpop(boundToken, proof), ...proxied } });
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toContain(
          'error_description="DPoP proof htu does not match the request URI"',
        );
      });

      it("from an untrusted peer → the forwarded fields are not read: the external URL is refused", async () => {
        const proof = await generateProof(client, external, "GET", undefined, boundToken);
        const res = await fetch(url("untrusted"), { headers: { ...dpop(boundToken, proof), ...proxied } });
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toContain('error="invalid_dpop_proof"');
        const own = await generateProof(client, url("untrusted"), "GET", undefined, boundToken);
        const direct = await fetch(url("untrusted"), { headers: { ...dpop(boundToken, own), ...proxied } });
        expect(direct.status).toBe(200);
      });

      it('forwardedHeaders: "forwarded" → RFC 7239 Forwarded is read, X-Forwarded-* not', async () => {
        const proof = await generateProof(client, external, "GET", undefined, boundToken);
        const res = await fetch(url("forwarded"), {
          headers: { ...dpop(boundToken, proof), Forwarded: "proto=https;host=api.example" },
        });
        expect(res.status).toBe(200);
        const again = await generateProof(client, external, "GET", undefined, boundToken);
        const ignored = await fetch(url("forwarded"), {
          headers: { ...dpop(boundToken, again), ...proxied },
        });
        expect(ignored.status).toBe(401);
      });
    });
  });
}

describe("dpop.trustProxy and dpop.forwardedHeaders refused at construction", () => {
  const build = (dpop: unknown) => () =>
    onNode.authenticate({
      realm: "api",
      bearer: { algorithms: ["ES256"], issuer: ISSUER, audience: AUDIENCE, jwks },
      dpop: dpop as DpopOptions,
    });
  it.each([
    ["trustProxy: a hop count of -1", { trustProxy: -1 }, "ERR_SVC_AUTH_DPOP_TRUST_PROXY"],
    ["trustProxy: not an address", { trustProxy: "proxy.example" }, "ERR_SVC_AUTH_DPOP_TRUST_PROXY"],
    [
      "forwardedHeaders: x-forwarded-for",
      { forwardedHeaders: "x-forwarded-for" },
      "ERR_SVC_AUTH_DPOP_FORWARDED_HEADERS",
    ],
  ])("%s → TypeError %s", (_name, dpop, code) => {
    expect(build(dpop)).toThrow(expect.objectContaining({ name: "TypeError", code }));
  });
});
