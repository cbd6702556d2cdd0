import type { IncomingMessage, ServerResponse } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { requestState, subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { express4, type Listening, listen } from "@svc/test-utils";
import { FRAMEWORKS, type Framework, fallbackErrors, type Mounts, serve } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { type CryptoKey, exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as onExpress from "../src/express.js";
import * as onFastify from "../src/fastify.js";
import * as onFetch from "../src/fetch.js";
import type { AuthDiagnostic, AuthenticateOptions } from "../src/index.js";
import * as onNode from "../src/node.js";

/**
 * `bearer.issuers` through a listening server of each framework: two tenants with their own JWKS
 * servers (the same `kid` in both, so only the `iss` can choose the key set) and audiences, and a
 * third with a local key set.
 */
const A = "https://tenant-a.example/";
const B = "https://tenant-b.example/";
const C = "https://tenant-c.example/";
const now = Math.floor(Date.now() / 1000);
const keyA = await generateKeyPair("ES256");
const keyB = await generateKeyPair("ES256");
const keyC = await generateKeyPair("ES256");
const jwk = async (key: CryptoKey) => ({ ...(await exportJWK(key)), kid: "k1", alg: "ES256" });

/** A JWKS server counting its downloads. */
async function jwksServer(key: CryptoKey): Promise<Listening & { fetches: number }> {
  const body = JSON.stringify({ keys: [await jwk(key)] });
  const counted = { fetches: 0 };
  const server = await listen((_req, res) => {
    counted.fetches++;
    res.setHeader("Content-Type", "application/json");
    res.end(body);
  });
  return Object.defineProperty(server as Listening & { fetches: number }, "fetches", {
    get: () => counted.fetches,
  });
}

let jwksA: Awaited<ReturnType<typeof jwksServer>>;
let jwksB: Awaited<ReturnType<typeof jwksServer>>;
const localC = { keys: [await jwk(keyC.publicKey)] };

beforeAll(async () => {
  jwksA = await jwksServer(keyA.publicKey);
  jwksB = await jwksServer(keyB.publicKey);
});
afterAll(async () => {
  await jwksA.close();
  await jwksB.close();
});

function options(): AuthenticateOptions {
  return {
    realm: "api",
    bearer: {
      algorithms: ["ES256"],
      audience: "https://api.example/",
      allowHttp: true,
      onWarning() {},
      issuers: [
        { issuer: A, jwksUri: jwksA.url },
        { issuer: B, jwksUri: jwksB.url, audience: "https://b-api.example/" },
        { issuer: C, jwks: localC },
      ],
    },
  };
}

async function sign(iss: string, signer: CryptoKey, aud = "https://api.example/"): Promise<string> {
  return new SignJWT({ scope: "read" })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setSubject(`user-of-${new URL(iss).hostname}`)
    .setIssuer(iss)
    .setAudience(aud)
    .setIssuedAt(now - 10)
    .setExpirationTime(now + 600)
    .sign(signer);
}

const json = (res: ServerResponse, value: unknown) => {
  res.setHeader("Content-Type", "application/json");
  res.end(JSON.stringify(value));
};

const mounts: Mounts = {
  express() {
    const app = express();
    app.use(onExpress.authenticate(options()));
    app.get("/me", (req, res) => {
      res.json({ id: requestState(req).principal?.id });
    });
    app.use(fallbackErrors.express);
    return app;
  },
  node() {
    const authenticate = onNode.authenticate(options());
    return (req: IncomingMessage, res: ServerResponse) => {
      authenticate(req).then(
        (context) => json(res, { id: context.principal?.id }),
        (err: unknown) => fallbackErrors.node(err, req, res),
      );
    };
  },
  fastify() {
    const app = Fastify();
    app.register(onFastify.auth, options());
    app.get("/me", async (request) => ({ id: request.auth?.principal?.id }));
    app.setErrorHandler(fallbackErrors.fastify);
    return app;
  },
  fetch() {
    const app = new Hono<{ Variables: onFetch.AuthVariables }>();
    app.use(onFetch.authenticate(options()));
    app.get("/me", (c) => c.json({ id: c.get("auth").principal?.id }));
    app.onError((err, c) => fallbackErrors.fetch(err, c));
    return app.fetch;
  },
};

interface Row {
  name: string;
  token: () => Promise<string>;
  status: number;
  id?: string;
  reason?: string;
  /** Downloads the row may cost each JWKS server: [A, B]. */
  fetches?: [number, number];
}

const rows: Row[] = [
  {
    name: "tenant A's token → 200, A's keys downloaded, B's not",
    token: () => sign(A, keyA.privateKey),
    status: 200,
    id: "user-of-tenant-a.example",
    fetches: [1, 0],
  },
  {
    name: "tenant B's token with B's own audience → 200",
    token: () => sign(B, keyB.privateKey, "https://b-api.example/"),
    status: 200,
    id: "user-of-tenant-b.example",
    fetches: [0, 1],
  },
  {
    name: "tenant C's token (local key set) → 200, no download",
    token: () => sign(C, keyC.privateKey),
    status: 200,
    id: "user-of-tenant-c.example",
    fetches: [0, 0],
  },
  {
    name: "signed by A's key, iss B → 401 signature: only B's keys are tried",
    token: () => sign(B, keyA.privateKey, "https://b-api.example/"),
    status: 401,
    reason: "signature",
  },
  {
    name: "signed by B's key, iss A → 401 signature: only A's keys are tried",
    token: () => sign(A, keyB.privateKey),
    status: 401,
    reason: "signature",
  },
  {
    name: "signed by C's key, iss A → 401 signature",
    token: () => sign(A, keyC.privateKey),
    status: 401,
    reason: "signature",
  },
  {
    name: "an unknown iss → 401 issuer, before any JWKS download",
    token: () => sign("https://evil.example/", keyA.privateKey),
    status: 401,
    reason: "issuer",
    fetches: [0, 0],
  },
  {
    name: "an iss differing only in case → 401 issuer (compared as written)",
    token: () => sign(A.toUpperCase(), keyA.privateKey),
    status: 401,
    reason: "issuer",
    fetches: [0, 0],
  },
  {
    name: "tenant B's token with the shared audience → 401 audience (B has its own)",
    token: () => sign(B, keyB.privateKey),
    status: 401,
    reason: "audience",
  },
  {
    name: "tenant A's token with B's audience → 401 audience",
    token: () => sign(A, keyA.privateKey, "https://b-api.example/"),
    status: 401,
    reason: "audience",
  },
];

for (const framework of FRAMEWORKS) {
  describe(`bearer.issuers on ${framework}`, () => {
    let server: Listening;
    beforeAll(async () => {
      server = await serve(framework as Framework, mounts);
    });
    afterAll(async () => {
      await server.close();
    });
    for (const row of rows) {
      it(row.name, async () => {
        const before: [number, number] = [jwksA.fetches, jwksB.fetches];
        const messages: AuthDiagnostic[] = [];
        const listener = (message: unknown) => messages.push(message as AuthDiagnostic);
        subscribeDiagnostics("svc:auth", listener);
        let response: Response;
        try {
          response = await fetch(`${server.url}/me`, {
            headers: { Authorization: `Bearer ${await row.token()}` },
          });
        } finally {
          unsubscribeDiagnostics("svc:auth", listener);
        }
        expect(response.status).toBe(row.status);
        const last = messages.filter((m) => "request" in m).at(-1);
        if (row.status === 200) {
          expect(await response.json()).toEqual({ id: row.id });
          expect(last).toMatchObject({ decision: "authenticated", principal: row.id });
        } else {
          expect(response.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_token"');
          expect(last).toMatchObject({ decision: "refused", scheme: "bearer", reason: row.reason });
        }
        if (row.fetches !== undefined)
          expect([jwksA.fetches - before[0], jwksB.fetches - before[1]]).toEqual(row.fetches);
      });
    }
  });
}

describe("bearer.issuers on Express 4", () => {
  it("each tenant's token passes; one signed by the other tenant's key does not", async () => {
    const app = express4();
    app.use(onExpress.authenticate(options()));
    app.get("/me", (req, res) => {
      res.json({ id: requestState(req).principal?.id });
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const server = await listen(app);
    try {
      const get = async (token: string) =>
        fetch(`${server.url}/me`, { headers: { Authorization: `Bearer ${token}` } });
      expect((await get(await sign(A, keyA.privateKey))).status).toBe(200);
      expect((await get(await sign(B, keyB.privateKey, "https://b-api.example/"))).status).toBe(200);
      expect((await get(await sign(B, keyA.privateKey, "https://b-api.example/"))).status).toBe(401);
      expect((await get(await sign(A, keyB.privateKey))).status).toBe(401);
    } finally {
      await server.close();
    }
  });
});
