import type { IncomingMessage, ServerResponse } from "node:http";
import { MemoryStore } from "@svc/idempotency";
import * as keysOnExpress from "@svc/idempotency/express";
import * as keysOnFastify from "@svc/idempotency/fastify";
import * as keysOnFetch from "@svc/idempotency/fetch";
import * as keysOnNode from "@svc/idempotency/node";
import { createPipeline, type HandlerContext, HttpError, reply, requestState } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { fetchAdapter } from "@svc/kernel/fetch";
import { nodeAdapter } from "@svc/kernel/node";
import * as limitOnExpress from "@svc/ratelimit/express";
import * as limitOnFastify from "@svc/ratelimit/fastify";
import * as limitOnFetch from "@svc/ratelimit/fetch";
import * as limitOnNode from "@svc/ratelimit/node";
import {
  conformance,
  errorStatus,
  fallbackErrors,
  fastifyPipelineApp,
  honoPipelineApp,
  type Mounts,
  type Row,
  type RowRequest,
} from "@svc/test-utils/conformance";
import express from "express";
import { SignJWT } from "jose";
import * as onExpress from "../src/express.js";
import * as onFastify from "../src/fastify.js";
import * as onFetch from "../src/fetch.js";
import { type AuthenticateOptions, createPasswordHasher } from "../src/index.js";
import * as onNode from "../src/node.js";

// The composition the READMEs teach, on each framework: a limiter by client address in front of
// authentication, authentication, a limiter per principal, and a route whose POSTs take an
// Idempotency-Key. What authentication establishes reaches the limiter and the key's scope on
// every framework, with none of them given a `key` or a `scope` of the application's.

const secret = new TextEncoder().encode("composition-secret-of-32-bytes!!");
const passwords = createPasswordHasher({ logN: 4, r: 1 });
const stored = new Map([
  ["alice", await passwords.hash("alice-pw")],
  ["bob", await passwords.hash("bob-pw")],
]);
const bearer = `Bearer ${await new SignJWT({})
  .setProtectedHeader({ alg: "HS256" })
  .setSubject("carol")
  .setExpirationTime("10m")
  .sign(secret)}`;
const basic = (user: string) => `Basic ${Buffer.from(`${user}:${user}-pw`).toString("base64")}`;

/** Requests in front of authentication per client; requests per principal behind it. */
const CLIENT_LIMIT = 8;
const PRINCIPAL_LIMIT = 3;

function authOptions(): AuthenticateOptions {
  return {
    realm: "api",
    bearer: { secret, algorithms: ["HS256"] },
    basic: {
      verify: async (user, password) =>
        (await passwords.verify(password, stored.get(user))) ? { id: user } : null,
    },
  };
}

const front = { key: "client", limit: CLIENT_LIMIT, windowMs: 60_000, policyName: "client" } as const;
const perPrincipal = { limit: PRINCIPAL_LIMIT, windowMs: 60_000 } as const;
const keyOptions = () => ({ store: new MemoryStore(), required: true, waitMs: 0 });

/** The route, once: who it ran for and how many times it ran for that item. */
function transfers() {
  const runs = new Map<string, number>();
  return (principal: string | undefined, body: unknown, _ctx: HandlerContext) => {
    const { item } = body as { item: string };
    const execution = (runs.get(item) ?? 0) + 1;
    runs.set(item, execution);
    return reply({ by: principal ?? null, item, execution }, { status: 201 });
  };
}

function mounts(): Mounts {
  return {
    express() {
      const svc = expressAdapter(createPipeline());
      const keys = keysOnExpress.idempotency(keyOptions());
      const run = transfers();
      const app = express();
      app.use(limitOnExpress.rateLimit(front));
      app.use(onExpress.authenticate(authOptions()));
      app.use(limitOnExpress.rateLimit(perPrincipal));
      app.use(express.json());
      app.use(svc.prepare);
      app.get("/me", (req, res) => {
        res.json({ by: requestState(req).principal?.id ?? null });
      });
      app.post(
        "/transfers",
        svc.handle((req: express.Request, ctx) => run(requestState(req).principal?.id, req.body, ctx), {
          idempotency: keys,
        }),
      );
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const svc = nodeAdapter(createPipeline());
      const keys = keysOnNode.idempotency(keyOptions());
      const run = transfers();
      const limitClient = limitOnNode.rateLimit(front);
      const authenticate = onNode.authenticate(authOptions());
      const limitPrincipal = limitOnNode.rateLimit(perPrincipal);
      return (req: IncomingMessage, res: ServerResponse) => {
        const serve = async () => {
          await limitClient(req, res);
          const { principal } = await authenticate(req);
          await limitPrincipal(req, res);
          const { path } = await svc.prepare(req, res);
          if (req.method === "GET" && path === "/me") {
            return svc.respond(req, res, () => ({ by: principal?.id ?? null }));
          }
          if (req.method !== "POST" || path !== "/transfers") throw HttpError.notFound();
          const chunks: Buffer[] = [];
          for await (const chunk of req) chunks.push(chunk as Buffer);
          const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          Object.assign(req, { body });
          return svc.respond(req, res, (ctx) => run(principal?.id, body, ctx), { idempotency: keys });
        };
        serve().catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    fastify() {
      const svc = fastifyAdapter(createPipeline());
      const keys = keysOnFastify.idempotency(keyOptions());
      const run = transfers();
      const app = fastifyPipelineApp(svc);
      app.register(limitOnFastify.rateLimit, front);
      app.register(onFastify.auth, authOptions());
      app.register(limitOnFastify.rateLimit, { ...perPrincipal, keyPrefix: "principal:" });
      app.register(async (routes) => {
        routes.get("/me", async (request) => ({ by: request.auth?.principal?.id ?? null }));
        routes.post(
          "/transfers",
          svc.handle((request, ctx) => run(request.auth?.principal?.id, request.body, ctx), {
            idempotency: keys,
          }),
        );
      });
      return app;
    },
    fetch() {
      const svc = fetchAdapter(createPipeline());
      const keys = keysOnFetch.idempotency(keyOptions());
      const run = transfers();
      const app = honoPipelineApp(svc);
      app.use(limitOnFetch.rateLimit(front));
      app.use(onFetch.authenticate(authOptions()));
      app.use(limitOnFetch.rateLimit(perPrincipal));
      app.get("/me", (c) => c.json({ by: onFetch.authOf(c.req.raw)?.principal?.id ?? null }));
      app.post("/transfers", async (c) => {
        const body: unknown = await c.req.json();
        const principal = onFetch.authOf(c.req.raw)?.principal?.id;
        return svc.respond(c.req.raw, (ctx) => run(principal, body, ctx), {
          route: { idempotency: keys },
          body,
        });
      });
      return app.fetch;
    },
  };
}

const transfer = (authorization: string, key: string, item: string): RowRequest => ({
  method: "POST",
  path: "/transfers",
  headers: {
    Authorization: authorization,
    "Content-Type": "application/json",
    "Idempotency-Key": `"${key}"`,
  },
  body: JSON.stringify({ item }),
});
const me = (authorization?: string): RowRequest => ({
  path: "/me",
  headers: authorization === undefined ? {} : { Authorization: authorization },
});
const times = (n: number, request: RowRequest): RowRequest[] => Array.from({ length: n }, () => request);

const rows: Row[] = [
  {
    name: "alice's key K, then bob with the same key and body → bob's own 201, not alice's replayed",
    fresh: true,
    before: [transfer(basic("alice"), "K", "gold")],
    request: transfer(basic("bob"), "K", "gold"),
    status: 201,
    headers: { "idempotent-replayed": null },
    body: { by: "bob", item: "gold", execution: 2 },
  },
  {
    name: "alice's key K, then a Bearer caller with the same key and body → its own 201",
    fresh: true,
    before: [transfer(basic("alice"), "K", "gold")],
    request: transfer(bearer, "K", "gold"),
    status: 201,
    headers: { "idempotent-replayed": null },
    body: { by: "carol", item: "gold", execution: 2 },
  },
  {
    name: "alice's key K, then bob with the same key and another body → his own 201, not a 422",
    fresh: true,
    before: [transfer(basic("alice"), "K", "gold")],
    request: transfer(basic("bob"), "K", "silver"),
    status: 201,
    body: { by: "bob", item: "silver", execution: 1 },
  },
  {
    name: "alice's key K, then alice again → her 201 replayed",
    fresh: true,
    before: [transfer(basic("alice"), "K", "gold")],
    request: transfer(basic("alice"), "K", "gold"),
    status: 201,
    headers: { "idempotent-replayed": "true" },
    body: { by: "alice", item: "gold", execution: 1 },
  },
  {
    name: `alice spends her ${PRINCIPAL_LIMIT}, then bob's first → 200 (a bucket per principal)`,
    fresh: true,
    before: times(PRINCIPAL_LIMIT + 1, me(basic("alice"))),
    request: me(basic("bob")),
    status: 200,
    body: { by: "bob" },
  },
  {
    name: `alice spends her ${PRINCIPAL_LIMIT}, then a Bearer caller's first → 200`,
    fresh: true,
    before: times(PRINCIPAL_LIMIT + 1, me(basic("alice"))),
    request: me(bearer),
    status: 200,
    body: { by: "carol" },
  },
  {
    name: `alice's ${PRINCIPAL_LIMIT + 1}th request → 429 with Retry-After`,
    fresh: true,
    before: times(PRINCIPAL_LIMIT, me(basic("alice"))),
    request: me(basic("alice")),
    status: 429,
    headers: { "retry-after": /^\d+$/ },
    body: errorStatus(429),
  },
  {
    name: `${CLIENT_LIMIT} junk Bearer tokens → 401 each, the next → 429 from the client's limiter`,
    fresh: true,
    before: times(CLIENT_LIMIT, me("Bearer junk.junk.junk")),
    request: me("Bearer junk.junk.junk"),
    status: 429,
    headers: { "retry-after": /^\d+$/ },
    body: errorStatus(429),
  },
  {
    name: `${CLIENT_LIMIT} requests without credentials → 401 each, the next → 429`,
    fresh: true,
    before: times(CLIENT_LIMIT, me()),
    request: me(),
    status: 429,
    body: errorStatus(429),
  },
  {
    name: "a junk Bearer token under the client's limit → 401, counted in its fields",
    fresh: true,
    request: me("Bearer junk.junk.junk"),
    status: 401,
    headers: { "x-ratelimit-remaining": String(CLIENT_LIMIT - 1) },
    body: errorStatus(401),
  },
];

conformance("the README composition (auth, rate limits, Idempotency-Key)", mounts, rows);
