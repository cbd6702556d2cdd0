import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPipeline, exchangeOf, type HandlerContext, HttpError, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { fetchAdapter } from "@svc/kernel/fetch";
import { nodeAdapter } from "@svc/kernel/node";
import { parseBody as expressBody } from "@svc/negotiate/express";
import { parseBody as fastifyBody } from "@svc/negotiate/fastify";
import { parseBody as fetchBody } from "@svc/negotiate/fetch";
import { parseBody as nodeBody } from "@svc/negotiate/node";
import { serviceUrl, uniquePrefix } from "@svc/test-utils";
import {
  conformance,
  errorStatus,
  fallbackErrors,
  fastifyPipelineApp,
  honoPipelineApp,
  type Mounts,
  type Row,
  send,
} from "@svc/test-utils/conformance";
import type Database from "better-sqlite3";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { idempotency as expressIdempotency } from "../src/express.js";
import { idempotency as fastifyIdempotency } from "../src/fastify.js";
import { idempotency as fetchIdempotency } from "../src/fetch.js";
import { type IdempotencyStore, MemoryStore, PostgresStore, RedisStore } from "../src/index.js";
import { idempotency as nodeIdempotency } from "../src/node.js";
import { dropPrefix } from "./helpers.js";
import { postgresUrl, throwawaySchema } from "./postgres.js";
import { SqliteStore } from "./sqlite-store.js";

// idempotency() as a route's step through the kernel's pipeline adapter of each framework, with
// the body each framework parsed as the fingerprint's input, on each store (Redis and PostgreSQL as
// configured, SQLite on a database file).

interface Order {
  item: string;
}

/**
 * The route, once: counts executions per item (a replay shows the first's count). An item
 * `probe` sends its own duplicate while it runs, and answers with what that duplicate got.
 */
function orders() {
  const runs = new Map<string, number>();
  return async (body: unknown, headers: IncomingMessage["headers"], _ctx: HandlerContext) => {
    const { item } = body as Order;
    const execution = (runs.get(item) ?? 0) + 1;
    runs.set(item, execution);
    if (item === "probe") {
      const duplicate = await send(`http://${headers.host}`, {
        method: "POST",
        path: "/orders",
        headers: {
          "Content-Type": "application/json",
          "Idempotency-Key": headers["idempotency-key"] as string,
        },
        body: JSON.stringify(body),
      });
      return reply(
        {
          item,
          execution,
          duplicate: duplicate.status,
          retryAfter: duplicate.headers["retry-after"] ?? null,
        },
        { status: 201 },
      );
    }
    return reply({ item, execution }, { status: 201, headers: { Location: `/orders/${item}` } });
  };
}

/**
 * A route whose body `parseBody` of `@svc/negotiate` read, handed to the pipeline by nobody: the
 * fingerprint reads it from the request's exchange. Counts its executions.
 */
function parsedRoute() {
  let runs = 0;
  return (request: object) =>
    reply({ execution: ++runs, scope: exchangeOf(request).idempotencyScope ?? null }, { status: 201 });
}

/**
 * The routes on each framework, every step's records in a store of its own from `storeOf`: the
 * table runs on each store, the `fingerprint` option's rows included.
 */
function mountsOn(storeOf: () => IdempotencyStore): Mounts {
  /** `required: true`, and no wait for a duplicate: it is answered 409 at once. */
  const options = () => ({ store: storeOf(), required: true, waitMs: 0 });
  /** The `fingerprint` option: a retry may change the client's `sentAt`, not the `item`. */
  const stamped = () => ({ ...options(), fingerprint: ["/item"] });
  return {
    express() {
      const svc = expressAdapter(createPipeline());
      const keys = expressIdempotency(options());
      const create = orders();
      const app = express();
      app.use(express.json());
      app.use(svc.prepare);
      app.post(
        "/orders",
        svc.handle((req: express.Request, ctx) => create(req.body, req.headers, ctx), { idempotency: keys }),
      );
      const parsedKeys = expressIdempotency(options());
      const parsed = parsedRoute();
      app.post(
        "/parsed",
        expressBody(),
        svc.handle((request) => parsed(request), { idempotency: parsedKeys }),
      );
      const stampedKeys = expressIdempotency(stamped());
      const stampedRoute = orders();
      app.post(
        "/stamped",
        svc.handle((req: express.Request, ctx) => stampedRoute(req.body, req.headers, ctx), {
          idempotency: stampedKeys,
        }),
      );
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const svc = nodeAdapter(createPipeline());
      const keys = nodeIdempotency(options());
      const create = orders();
      const parsedKeys = nodeIdempotency(options());
      const parsed = parsedRoute();
      const readParsed = nodeBody();
      const stampedKeys = nodeIdempotency(stamped());
      const stampedRoute = orders();
      return (req: IncomingMessage, res: ServerResponse) => {
        const run = async () => {
          const { path } = await svc.prepare(req, res);
          if (req.method === "POST" && path === "/parsed") {
            await readParsed(req, res);
            return svc.respond(req, res, () => parsed(req), { idempotency: parsedKeys });
          }
          if (req.method !== "POST" || (path !== "/orders" && path !== "/stamped"))
            throw HttpError.notFound();
          const chunks: Buffer[] = [];
          for await (const chunk of req) chunks.push(chunk as Buffer);
          const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          Object.assign(req, { body });
          if (path === "/stamped")
            return svc.respond(req, res, (ctx) => stampedRoute(body, req.headers, ctx), {
              idempotency: stampedKeys,
            });
          return svc.respond(req, res, (ctx) => create(body, req.headers, ctx), { idempotency: keys });
        };
        run().catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    fastify() {
      const svc = fastifyAdapter(createPipeline());
      const keys = fastifyIdempotency(options());
      const create = orders();
      const app = fastifyPipelineApp(svc);
      app.post(
        "/orders",
        svc.handle((request, ctx) => create(request.body, request.headers, ctx), { idempotency: keys }),
      );
      const parsedKeys = fastifyIdempotency(options());
      const parsed = parsedRoute();
      app.register(async (scope) => {
        await scope.register(fastifyBody);
        scope.post(
          "/parsed",
          svc.handle((request) => parsed(request), { idempotency: parsedKeys }),
        );
      });
      const stampedKeys = fastifyIdempotency(stamped());
      const stampedRoute = orders();
      app.post(
        "/stamped",
        svc.handle((request, ctx) => stampedRoute(request.body, request.headers, ctx), {
          idempotency: stampedKeys,
        }),
      );
      return app;
    },
    fetch() {
      const svc = fetchAdapter(createPipeline());
      const keys = fetchIdempotency(options());
      const create = orders();
      const app = honoPipelineApp(svc);
      app.post("/orders", async (c) => {
        const body: unknown = await c.req.json();
        const headers = Object.fromEntries(c.req.raw.headers);
        return svc.respond(c.req.raw, (ctx) => create(body, headers, ctx), {
          route: { idempotency: keys },
          body,
        });
      });
      const parsedKeys = fetchIdempotency(options());
      const parsed = parsedRoute();
      const readParsed = fetchBody();
      app.post("/parsed", async (c) => {
        await readParsed(c.req.raw);
        return svc.respond(c.req.raw, () => parsed(c.req.raw), { route: { idempotency: parsedKeys } });
      });
      const stampedKeys = fetchIdempotency(stamped());
      const stampedRoute = orders();
      app.post("/stamped", async (c) => {
        const body: unknown = await c.req.json();
        const headers = Object.fromEntries(c.req.raw.headers);
        return svc.respond(c.req.raw, (ctx) => stampedRoute(body, headers, ctx), {
          route: { idempotency: stampedKeys },
          body,
        });
      });
      return app.fetch;
    },
  };
}

const post = (key: string | undefined, item: string) => ({
  method: "POST",
  path: "/orders",
  headers: {
    "Content-Type": "application/json",
    ...(key === undefined ? {} : { "Idempotency-Key": `"${key}"` }),
  },
  body: JSON.stringify({ item }),
});

/** A POST to `/stamped`, whose fingerprint is the pointer `/item` alone. */
const stampedPost = (key: string, item: string, sentAt: string) => ({
  ...post(key, item),
  path: "/stamped",
  body: JSON.stringify({ item, sentAt }),
});

const rows: Row[] = [
  {
    name: 'fingerprint: ["/item"], a retry with another sentAt → the first\'s 201 replayed',
    before: [stampedPost("k-stamped", "fig", "10:00:00")],
    request: stampedPost("k-stamped", "fig", "10:00:05"),
    status: 201,
    headers: { "idempotent-replayed": "true" },
    body: { item: "fig", execution: 1 },
  },
  {
    name: 'fingerprint: ["/item"], the same key with another item → 422',
    before: [stampedPost("k-stamped-2", "fig", "10:00:00")],
    request: stampedPost("k-stamped-2", "kiwi", "10:00:00"),
    status: 422,
    body: errorStatus(422),
  },
  {
    name: "the first POST with a key → 201, the handler runs",
    request: post("k-first", "apple"),
    status: 201,
    headers: { location: "/orders/apple", "idempotent-replayed": null },
    body: { item: "apple", execution: 1 },
  },
  {
    name: "a retry with the same key and body → the first's 201 replayed, the handler not run",
    before: [post("k-retry", "pear")],
    request: post("k-retry", "pear"),
    status: 201,
    headers: {
      location: "/orders/pear",
      "idempotent-replayed": "true",
      "content-type": "application/json",
    },
    body: { item: "pear", execution: 1 },
  },
  {
    name: "another key with the same body → the handler runs again",
    before: [post("k-plum-1", "plum")],
    request: post("k-plum-2", "plum"),
    status: 201,
    headers: { "idempotent-replayed": null },
    body: { item: "plum", execution: 2 },
  },
  {
    name: "the same key with another body → 422",
    before: [post("k-reused", "fig")],
    request: post("k-reused", "kiwi"),
    status: 422,
    body: errorStatus(422),
  },
  {
    name: "a duplicate while the first is in flight → 409 with Retry-After",
    request: post("k-probe", "probe"),
    status: 201,
    body: (r) => {
      const body = JSON.parse(r.text);
      expect(body.duplicate).toBe(409);
      expect(body.retryAfter).toMatch(/^\d+$/);
      expect(body.execution).toBe(1);
    },
  },
  {
    name: "Authorization with no authentication step in front → 500, the handler not run",
    request: {
      ...post("k-credentials", "quince"),
      headers: { ...post("k-credentials", "quince").headers, Authorization: "Bearer t" },
    },
    status: 500,
    body: errorStatus(500),
  },
  {
    name: "the same key without credentials after that 500 → 201, the handler's first run",
    before: [
      {
        ...post("k-after", "quince"),
        headers: { ...post("k-after", "quince").headers, Authorization: "Bearer t" },
      },
    ],
    request: post("k-after", "quince"),
    status: 201,
    body: { item: "quince", execution: 1 },
  },
  {
    name: "a body parseBody read, the same key with another body → 422 (the fingerprint reads the exchange)",
    before: [{ ...post("k-parsed", "fig"), path: "/parsed" }],
    request: { ...post("k-parsed", "kiwi"), path: "/parsed" },
    status: 422,
    body: errorStatus(422),
  },
  {
    name: "the request's exchange holds the key's scope (anonymous: no principal)",
    request: { ...post("k-parsed-scope", "fig"), path: "/parsed" },
    status: 201,
    body: (r) => expect(JSON.parse(r.text).scope).toBe("anonymous"),
  },
  {
    name: "a body parseBody read, the same key and body → replayed",
    before: [{ ...post("k-parsed-2", "fig"), path: "/parsed" }],
    request: { ...post("k-parsed-2", "fig"), path: "/parsed" },
    status: 201,
    headers: { "idempotent-replayed": "true" },
  },
  {
    name: "no Idempotency-Key where required → 400",
    request: post(undefined, "lime"),
    status: 400,
    body: errorStatus(400),
  },
  {
    name: "two Idempotency-Key field lines → 400",
    request: {
      ...post(undefined, "lime"),
      headers: [
        ["Content-Type", "application/json"],
        ["Idempotency-Key", '"a"'],
        ["Idempotency-Key", '"b"'],
      ],
    },
    status: 400,
    body: errorStatus(400),
  },
];

conformance(
  "@svc/idempotency",
  mountsOn(() => new MemoryStore()),
  rows,
);

/** `store` with every key behind `prefix`: several steps' records in one table, kept apart. */
function keyPrefixed(store: IdempotencyStore, prefix: string): IdempotencyStore {
  return {
    claim: (key, fingerprint, leaseMs) => store.claim(prefix + key, fingerprint, leaseMs),
    complete: (key, token, response, retentionMs) =>
      store.complete(prefix + key, token, response, retentionMs),
    release: (key, token) => store.release(prefix + key, token),
  };
}

const redisUrl = serviceUrl("REDIS_URL");
describe.skipIf(!redisUrl)("on Redis (REDIS_URL)", () => {
  const prefix = uniquePrefix("idem-conformance");
  let client: Redis;
  let stores = 0;
  beforeAll(() => {
    client = new Redis(redisUrl ?? "");
  });
  afterAll(() => dropPrefix(client, prefix));
  conformance(
    "@svc/idempotency on RedisStore",
    mountsOn(() => new RedisStore({ client, prefix: `${prefix}${++stores}:` })),
    rows,
  );
});

describe.skipIf(!postgresUrl)("on PostgreSQL (DATABASE_URL)", () => {
  const database = throwawaySchema("conformance");
  let store: PostgresStore;
  let stores = 0;
  beforeAll(async () => {
    if (!postgresUrl) return;
    store = new PostgresStore({ pool: database.pool() });
    await store.migrate();
  });
  conformance(
    "@svc/idempotency on PostgresStore",
    mountsOn(() => keyPrefixed(store, `${++stores}:`)),
    rows,
  );
});

/** better-sqlite3, or undefined where its native binding does not load (the SQLite rows skip). */
const Sqlite = await import("better-sqlite3").then(
  (driver) => driver.default,
  (err: unknown) => {
    console.warn(`SQLite conformance rows skipped: better-sqlite3 does not load here (${String(err)})`);
    return undefined;
  },
);

describe.skipIf(Sqlite === undefined)("on SQLite (better-sqlite3, a database file)", () => {
  const dir = mkdtempSync(join(tmpdir(), "idem-conformance-"));
  const open: Database.Database[] = [];
  afterAll(() => {
    for (const db of open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  conformance(
    "@svc/idempotency on SqliteStore",
    mountsOn(() => {
      const db = new (Sqlite as typeof Database)(join(dir, `${open.length + 1}.db`));
      open.push(db);
      return new SqliteStore(db);
    }),
    rows,
  );
});
