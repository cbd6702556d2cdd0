import { RedisStore as IdempotencyRedisStore, PostgresStore } from "@svc/idempotency";
import { idempotency } from "@svc/idempotency/fetch";
import { createPipeline, reply } from "@svc/kernel";
import { fetchAdapter, withConnection } from "@svc/kernel/fetch";
import { RedisStore } from "@svc/ratelimit";
import { rateLimit } from "@svc/ratelimit/fetch";
import { Hono } from "hono";
import { Redis } from "ioredis";
import pg from "pg";

/**
 * The Redis and PostgreSQL stores on the runtime running this file (Node.js 22 and 24, Bun,
 * Deno): a Hono app with a rate limit in Redis, `POST /orders` behind an `Idempotency-Key` in
 * PostgreSQL and `POST /transfers` behind one in Redis, called in this process. Prints the
 * statuses and bodies as one JSON line, then removes its keys, its schema, and exits.
 * `REDIS_URL`, `DATABASE_URL` and `RUN` (the keys' and the schema's suffix) come from the test.
 */
const run = process.env.RUN ?? "0";
const schema = `svc_runtime_${run}`;
// As the ratelimit README configures it.
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", {
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  commandTimeout: 500,
});
await new Promise((ready) => redis.once("ready", ready));
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
const orders = new PostgresStore({ pool, table: `${schema}.idempotency_keys` });
const transfers = new IdempotencyRedisStore({ client: redis, prefix: `svc-runtime:${run}:idem:` });

const svc = fetchAdapter(createPipeline());
let count = 0;
const app = new Hono();
app.use(
  "/limited",
  rateLimit({
    limit: 2,
    windowMs: 60_000,
    store: new RedisStore({ client: redis, prefix: `svc-runtime:${run}:rl:` }),
  }),
);
app.get("/limited", () => new Response("ok"));
for (const [path, store] of [
  ["/orders", orders],
  ["/transfers", transfers],
] as const) {
  const route = { idempotency: idempotency({ store, required: true }) };
  app.post(path, async (c) => {
    const body: unknown = await c.req.json();
    return svc.respond(c.req.raw, () => reply({ n: ++count, body }, { status: 201 }), { route, body });
  });
}
app.onError((err) => new Response(String(err), { status: (err as { status?: number }).status ?? 500 }));
const fetch = withConnection(app.fetch, () => ({ address: "192.0.2.7" }));

async function call(method: string, path: string, key?: string, body?: unknown) {
  const response = await fetch(
    new Request(`http://api.example${path}`, {
      method,
      headers: {
        ...(key === undefined ? {} : { "idempotency-key": `"${key}"` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
  return { status: response.status, body: await response.text() };
}

const result: Record<string, unknown> = {};
try {
  await pool.query(`CREATE SCHEMA ${schema}`);
  await orders.migrate();
  result.limited = [
    await call("GET", "/limited"),
    await call("GET", "/limited"),
    await call("GET", "/limited"),
  ].map((r) => r.status);
  for (const path of ["/orders", "/transfers"]) {
    result[path] = [
      await call("POST", path, `${path}-1`, { item: "a" }),
      await call("POST", path, `${path}-1`, { item: "a" }),
      await call("POST", path, `${path}-1`, { item: "b" }),
    ];
  }
} catch (err) {
  result.error = String(err);
} finally {
  const stale = await redis.keys(`*svc-runtime:${run}:*`);
  if (stale.length > 0) await redis.del(...stale);
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool.end();
  redis.disconnect();
}
console.error(JSON.stringify(result));
process.exit(0);
