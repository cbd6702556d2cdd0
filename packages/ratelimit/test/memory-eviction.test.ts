import { errorHandler } from "@svc/errors/express";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import { MemoryStore } from "../src/index.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/**
 * A server whose limit comes from the `x-limit` header (a per-tenant limit, as a lookup would
 * answer it) and whose key is the `x-client` header, on a MemoryStore of two keys.
 */
async function tenants(
  failMode: "open" | "closed",
): Promise<(client: string, limit: number) => Promise<number>> {
  const app = express();
  app.use(
    rateLimit({
      limit: (req) => Number(req.headers["x-limit"]),
      windowMs: 60_000,
      algorithm: "fixed-window",
      key: (req) => `c:${String(req.headers["x-client"])}`,
      store: new MemoryStore({ maxKeys: 2 }),
      now: () => 90_000,
      failMode,
      logger: { warn() {} },
    }),
  );
  app.get("/", (_req, res) => {
    res.json({ ok: true });
  });
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  closers.push(server.close);
  return async (client, limit) =>
    (await fetch(server.url, { headers: { "x-client": client, "x-limit": String(limit) } })).status;
}

describe("MemoryStore eviction with many per-request limits (a limited client is never reset)", () => {
  it.each([
    ["300 distinct limit(req) values", "open", 300],
    ["300 distinct limit(req) values", "closed", 300],
    ["64 distinct limit(req) values (all cached)", "open", 64],
  ] as const)(
    "%s, failMode %s: a client at limit 1 is limited, a new client arrives → the limited one stays limited",
    async (_name, failMode, distinct) => {
      const send = await tenants(failMode);
      // Another tenant's traffic with many different limits, each well under its limit.
      for (let i = 0; i < distinct; i++) expect(await send("busy", 1000 + i)).toBe(200);
      expect(await send("small", 1)).toBe(200);
      expect(await send("small", 1)).toBe(429);
      // "busy" again, with yet another limit: it is now the most recently used key.
      expect(await send("busy", 5000)).toBe(200);
      // A new client: the store is full, "small" is the coldest key but limited in its window, so
      // the one to go is "busy", which has quota left (README, MemoryStore: step 2).
      expect(await send("new", 10)).toBe(200);
      expect(await send("small", 1)).toBe(429);
    },
  );
});
