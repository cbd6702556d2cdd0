import type { IncomingMessage, ServerResponse } from "node:http";
import { requestState, subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import type { Listening } from "@svc/test-utils";
import { FRAMEWORKS, fallbackErrors, type Mounts, serve } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { type CryptoKey, errors, exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as onExpress from "../src/express.js";
import * as onFastify from "../src/fastify.js";
import * as onFetch from "../src/fetch.js";
import type { AuthDiagnostic, AuthenticateOptions } from "../src/index.js";
import * as onNode from "../src/node.js";

const ISS = "https://issuer.example/";
const AUD = "https://api.example/";
const now = Math.floor(Date.now() / 1000);
const key = await generateKeyPair("ES256");
const other = await generateKeyPair("ES256");
const es384 = await generateKeyPair("ES384");
const jwks = { keys: [{ ...(await exportJWK(key.publicKey)), kid: "k1", alg: "ES256" }] };

async function sign(
  claims: { kid?: string; alg?: string; signer?: CryptoKey; iss?: string; aud?: string; exp?: number } = {},
): Promise<string> {
  return new SignJWT({ scope: "read" })
    .setProtectedHeader({ alg: claims.alg ?? "ES256", kid: claims.kid ?? "k1" })
    .setSubject("ada")
    .setIssuer(claims.iss ?? ISS)
    .setAudience(claims.aud ?? AUD)
    .setIssuedAt(now - 10)
    .setExpirationTime(claims.exp ?? now + 600)
    .sign(claims.signer ?? key.privateKey);
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

function options(): AuthenticateOptions {
  return {
    realm: "api",
    bearer: { jwks, algorithms: ["ES256"], issuer: ISS, audience: AUD },
    basic: {
      verify: async (user, password) => (user === "bob" && password === "s3cret" ? { id: "bob" } : null),
      failureLimit: false,
    },
  };
}

/** What each server saw: the framework's request object, and the error its error handler got. */
interface Seen {
  request?: object;
  error?: unknown;
}

function mounts(seen: Seen): Mounts {
  return {
    express() {
      const app = express();
      app.use(onExpress.authenticate(options()));
      app.get("/me", (req, res) => {
        seen.request = req;
        res.json({ id: requestState(req).principal?.id });
      });
      app.get("/write", onExpress.requireScopes("write"), (_req, res) => {
        res.json({});
      });
      app.use((err: unknown, req: IncomingMessage, res: ServerResponse, next: unknown) => {
        Object.assign(seen, { request: req, error: err });
        fallbackErrors.express(err, req, res, next);
      });
      return app;
    },
    node() {
      const authenticate = onNode.authenticate(options());
      const write = onNode.requireScopes("write");
      return (req: IncomingMessage, res: ServerResponse) => {
        seen.request = req;
        const run = async () => {
          const context = await authenticate(req);
          if (req.url === "/write") await write(context, req);
          const body = JSON.stringify({ id: context.principal?.id });
          res.setHeader("Content-Type", "application/json");
          res.end(body);
        };
        run().catch((err: unknown) => {
          seen.error = err;
          fallbackErrors.node(err, req, res);
        });
      };
    },
    fastify() {
      const app = Fastify();
      app.register(onFastify.auth, options());
      app.get("/me", async (request) => {
        seen.request = request;
        return { id: request.auth?.principal?.id };
      });
      app.get("/write", { preHandler: onFastify.requireScopes("write") }, async () => ({}));
      app.setErrorHandler((err, request, reply) => {
        Object.assign(seen, { request, error: err });
        return fallbackErrors.fastify(err, request, reply);
      });
      return app;
    },
    fetch() {
      const app = new Hono<{ Variables: onFetch.AuthVariables }>();
      app.use(onFetch.authenticate(options()));
      app.get("/me", (c) => {
        seen.request = c.req.raw;
        return c.json({ id: c.get("auth").principal?.id });
      });
      app.get("/write", onFetch.requireScopes("write"), (c) => c.json({}));
      app.onError((err, c) => {
        Object.assign(seen, { request: c.req.raw, error: err });
        return fallbackErrors.fetch(err, c);
      });
      return app.fetch;
    },
  };
}

interface Row {
  name: string;
  path?: string;
  authorization: () => Promise<string | undefined>;
  status: number;
  message: Record<string, unknown>;
  /** jose's error class: the message's `error` and the HttpError's `cause`. */
  cause?: new (
    ...args: never[]
  ) => Error;
}

const rows: Row[] = [
  {
    name: "a valid token → 200, authenticated bearer ada",
    authorization: async () => `Bearer ${await sign()}`,
    status: 200,
    message: { decision: "authenticated", scheme: "bearer", principal: "ada" },
  },
  {
    name: "no Authorization → 401, refused missing",
    authorization: async () => undefined,
    status: 401,
    message: { decision: "refused", scheme: undefined, reason: "missing" },
  },
  {
    name: "an expired token → 401, refused expired, cause JWTExpired",
    authorization: async () => `Bearer ${await sign({ exp: now - 3600 })}`,
    status: 401,
    message: { decision: "refused", scheme: "bearer", reason: "expired" },
    cause: errors.JWTExpired,
  },
  {
    name: "another audience → 401, refused audience",
    authorization: async () => `Bearer ${await sign({ aud: "https://other.example/" })}`,
    status: 401,
    message: { decision: "refused", scheme: "bearer", reason: "audience" },
    cause: errors.JWTClaimValidationFailed,
  },
  {
    name: "another issuer → 401, refused issuer",
    authorization: async () => `Bearer ${await sign({ iss: "https://evil.example/" })}`,
    status: 401,
    message: { decision: "refused", scheme: "bearer", reason: "issuer" },
    cause: errors.JWTClaimValidationFailed,
  },
  {
    name: "signed by another key → 401, refused signature",
    authorization: async () => `Bearer ${await sign({ signer: other.privateKey })}`,
    status: 401,
    message: { decision: "refused", scheme: "bearer", reason: "signature" },
    cause: errors.JWSSignatureVerificationFailed,
  },
  {
    name: "an unknown kid → 401, refused unknown-key",
    authorization: async () => `Bearer ${await sign({ kid: "k9" })}`,
    status: 401,
    message: { decision: "refused", scheme: "bearer", reason: "unknown-key" },
    cause: errors.JWKSNoMatchingKey,
  },
  {
    name: "alg ES384 → 401, refused algorithm",
    authorization: async () => `Bearer ${await sign({ alg: "ES384", signer: es384.privateKey })}`,
    status: 401,
    message: { decision: "refused", scheme: "bearer", reason: "algorithm" },
    cause: errors.JOSEAlgNotAllowed,
  },
  {
    name: "Bearer not.a.token → 401, refused malformed",
    authorization: async () => "Bearer not.a.token",
    status: 401,
    message: { decision: "refused", scheme: "bearer", reason: "malformed" },
  },
  {
    name: "Basic bob:wrong → 401, refused bad-credentials",
    authorization: async () => basic("bob", "wrong"),
    status: 401,
    message: { decision: "refused", scheme: "basic", reason: "bad-credentials" },
  },
  {
    name: "GET /write without the scope → 403, authenticated then refused insufficient-scope",
    path: "/write",
    authorization: async () => `Bearer ${await sign()}`,
    status: 403,
    message: { decision: "refused", scheme: "bearer", reason: "insufficient-scope" },
  },
];

for (const framework of FRAMEWORKS) {
  describe(`svc:auth on ${framework}`, () => {
    const seen: Seen = {};
    let server: Listening;
    beforeAll(async () => {
      server = await serve(framework, mounts(seen));
    });
    afterAll(async () => {
      await server.close();
    });

    for (const row of rows) {
      it(row.name, async () => {
        delete seen.request;
        delete seen.error;
        const authorization = await row.authorization();
        const messages: AuthDiagnostic[] = [];
        const listener = (message: unknown) => messages.push(message as AuthDiagnostic);
        subscribeDiagnostics("svc:auth", listener);
        let status: number;
        let body: string;
        try {
          const response = await fetch(`${server.url}${row.path ?? "/me"}`, {
            headers: authorization === undefined ? {} : { authorization },
          });
          status = response.status;
          body = await response.text();
        } finally {
          unsubscribeDiagnostics("svc:auth", listener);
        }
        expect(status).toBe(row.status);
        // What the client reads never says why.
        if (status === 401) expect(body).not.toMatch(/exp|aud|iss|signature|kid|alg/i);
        const last = messages.at(-1) as AuthDiagnostic & { request: object; error?: unknown };
        expect(messages).toHaveLength(row.path === "/write" ? 2 : 1);
        expect(last).toMatchObject(row.message);
        expect(last.request).toBe(seen.request);
        if (row.cause !== undefined) {
          expect(last.error).toBeInstanceOf(row.cause);
          expect((seen.error as Error).cause).toBe(last.error);
        }
      });
    }
  });
}
