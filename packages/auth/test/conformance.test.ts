import type { IncomingMessage, ServerResponse } from "node:http";
import { requestState } from "@svc/kernel";
import { conformance, errorStatus, fallbackErrors, type Mounts, type Row } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { SignJWT } from "jose";
import * as onExpress from "../src/express.js";
import * as onFastify from "../src/fastify.js";
import * as onFetch from "../src/fetch.js";
import { type AuthenticateOptions, createPasswordHasher, type Principal } from "../src/index.js";
import * as onNode from "../src/node.js";

const secret = new TextEncoder().encode("conformance-secret-of-32-bytes!!");
const issuer = "https://issuer.example";
const audience = "api";

async function token(claims: Record<string, unknown>, expires: string | number = "5m"): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject("ada")
    .setIssuedAt()
    .setExpirationTime(expires)
    .sign(secret);
}

const reader = await token({ scope: "employees:read" });
const writer = await token({ scope: "employees:read employees:write", roles: ["admin"] });
const expired = await token({ scope: "employees:read" }, Math.floor(Date.now() / 1000) - 3600);

// Cheap scrypt parameters: the table tests the HTTP side, not the hash's cost.
const passwords = createPasswordHasher({ logN: 4, r: 1 });
const stored = new Map([["bob", await passwords.hash("s3cret")]]);
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

/** Fresh per server: each framework's authenticator has its own caches and failure budgets. */
function options(): AuthenticateOptions {
  return {
    realm: "api",
    bearer: { secret, algorithms: ["HS256"], issuer, audience },
    basic: {
      verify: async (user, password) =>
        (await passwords.verify(password, stored.get(user)))
          ? { id: user, scopes: ["employees:read"] }
          : null,
    },
  };
}

/** The routes, once: what each framework hands them of the principal. */
const isAda = (principal: Principal) => principal.id === "ada";

const mounts: Mounts = {
  express() {
    const app = express();
    app.disable("x-powered-by");
    app.use(onExpress.authenticate(options()));
    app.get("/me", (req, res) => {
      res.json(requestState(req).principal ?? null);
    });
    app.get("/write", onExpress.requireScopes("employees:write"), (req, res) => {
      res.json({ id: requestState(req).principal?.id });
    });
    app.get("/admin", onExpress.requireRoles("admin"), (_req, res) => {
      res.json({ ok: true });
    });
    app.get("/ada", onExpress.authorize(isAda), (_req, res) => {
      res.json({ ok: true });
    });
    app.use(fallbackErrors.express);
    return app;
  },
  node() {
    const authenticate = onNode.authenticate(options());
    const guards: Record<string, onNode.AuthGuard<IncomingMessage>> = {
      "/write": onNode.requireScopes("employees:write"),
      "/admin": onNode.requireRoles("admin"),
      "/ada": onNode.authorize(isAda),
    };
    const json = (res: ServerResponse, value: unknown) => {
      const body = JSON.stringify(value);
      res.setHeader("Content-Type", "application/json");
      res.setHeader("Content-Length", Buffer.byteLength(body));
      res.end(body);
    };
    return (req: IncomingMessage, res: ServerResponse) => {
      const run = async () => {
        const context = await authenticate(req);
        const path = (req.url ?? "/").split("?")[0] as string;
        if (path === "/me") return json(res, context.principal ?? null);
        const guard = guards[path];
        if (guard === undefined) return json(res, null);
        await guard(context, req);
        return json(res, path === "/write" ? { id: onNode.authOf(req)?.principal?.id } : { ok: true });
      };
      run().catch((err) => fallbackErrors.node(err, req, res));
    };
  },
  fastify() {
    const app = Fastify();
    app.register(onFastify.auth, options());
    app.get("/me", async (request) => request.auth?.principal ?? null);
    app.get("/write", { preHandler: onFastify.requireScopes("employees:write") }, async (request) => ({
      id: request.auth?.principal?.id,
    }));
    app.get("/admin", { preHandler: onFastify.requireRoles("admin") }, async () => ({ ok: true }));
    app.get("/ada", { preHandler: onFastify.authorize(isAda) }, async () => ({ ok: true }));
    app.setErrorHandler(fallbackErrors.fastify);
    return app;
  },
  fetch() {
    const app = new Hono<{ Variables: onFetch.AuthVariables }>();
    app.use(onFetch.authenticate(options()));
    app.get("/me", (c) => c.json(c.get("auth").principal ?? null));
    app.get("/write", onFetch.requireScopes("employees:write"), (c) =>
      c.json({ id: onFetch.authOf(c.req.raw)?.principal?.id }),
    );
    app.get("/admin", onFetch.requireRoles("admin"), (c) => c.json({ ok: true }));
    app.get("/ada", onFetch.authorize(isAda), (c) => c.json({ ok: true }));
    app.onError((err, c) => fallbackErrors.fetch(err, c));
    return app.fetch;
  },
};

const rows: Row[] = [
  {
    name: "no credentials → 401 with a challenge per scheme",
    request: { path: "/me" },
    status: 401,
    headers: { "www-authenticate": 'Bearer realm="api", Basic realm="api", charset="UTF-8"' },
    body: errorStatus(401),
  },
  {
    name: "a valid JWT → 200, the principal seen by the route",
    request: { path: "/me", headers: { Authorization: `Bearer ${reader}` } },
    status: 200,
    body: { id: "ada", issuer, roles: [], scopes: ["employees:read"], scheme: "bearer" },
  },
  {
    name: "an expired JWT → 401 invalid_token",
    request: { path: "/me", headers: { Authorization: `Bearer ${expired}` } },
    status: 401,
    headers: { "www-authenticate": 'Bearer realm="api", error="invalid_token"' },
    body: errorStatus(401),
  },
  {
    name: "a JWT that is no JWS → 401 invalid_token",
    request: { path: "/me", headers: { Authorization: "Bearer not.a.token" } },
    status: 401,
    headers: { "www-authenticate": 'Bearer realm="api", error="invalid_token"' },
  },
  {
    name: "a JWT without the route's scope → 403 insufficient_scope naming it",
    request: { path: "/write", headers: { Authorization: `Bearer ${reader}` } },
    status: 403,
    headers: {
      "www-authenticate": 'Bearer realm="api", error="insufficient_scope", scope="employees:write"',
    },
    body: errorStatus(403),
  },
  {
    name: "a JWT with the route's scope → 200",
    request: { path: "/write", headers: { Authorization: `Bearer ${writer}` } },
    status: 200,
    body: { id: "ada" },
  },
  {
    name: "a guarded route without credentials → 401 with the challenges",
    request: { path: "/write" },
    status: 401,
    headers: { "www-authenticate": 'Bearer realm="api", Basic realm="api", charset="UTF-8"' },
  },
  {
    name: "requireRoles: a role held → 200",
    request: { path: "/admin", headers: { Authorization: `Bearer ${writer}` } },
    status: 200,
    body: { ok: true },
  },
  {
    name: "requireRoles: no role → 403 insufficient_scope",
    request: { path: "/admin", headers: { Authorization: `Bearer ${reader}` } },
    status: 403,
    headers: { "www-authenticate": 'Bearer realm="api", error="insufficient_scope"' },
  },
  {
    name: "valid Basic credentials → 200, a basic principal",
    request: { path: "/me", headers: { Authorization: basic("bob", "s3cret") } },
    status: 200,
    body: { id: "bob", roles: [], scopes: ["employees:read"], scheme: "basic" },
  },
  {
    name: "wrong Basic password → 401 with the Basic challenge, charset UTF-8",
    request: { path: "/me", headers: { Authorization: basic("bob", "wrong") } },
    status: 401,
    headers: { "www-authenticate": 'Basic realm="api", charset="UTF-8"' },
    body: errorStatus(401),
  },
  {
    name: "authorize: a Basic principal the predicate refuses → 403 without a Bearer challenge",
    request: { path: "/ada", headers: { Authorization: basic("bob", "s3cret") } },
    status: 403,
    headers: { "www-authenticate": null },
  },
  {
    name: "an unknown scheme → 401 with the challenges",
    request: { path: "/me", headers: { Authorization: "Digest username=ada" } },
    status: 401,
    headers: { "www-authenticate": 'Bearer realm="api", Basic realm="api", charset="UTF-8"' },
  },
  {
    name: "two Authorization field lines → 400 invalid_request",
    request: {
      path: "/me",
      headers: [
        ["Authorization", basic("bob", "s3cret")],
        ["Authorization", `Bearer ${reader}`],
      ],
    },
    status: 400,
    headers: { "www-authenticate": 'Bearer realm="api", error="invalid_request"' },
    // The field lines as received: a Fetch `Headers` alone would join them into one value.
    body: { status: 400, message: "The request carries more than one Authorization header" },
  },
  {
    name: "access_token in the query → 400 invalid_request, even beside a valid header",
    request: { path: `/me?access_token=${reader}`, headers: { Authorization: `Bearer ${reader}` } },
    status: 400,
    headers: { "www-authenticate": 'Bearer realm="api", error="invalid_request"' },
  },
];

conformance("@svc/auth", mounts, rows);
