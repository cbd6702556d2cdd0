import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import type { RateLimitOptions, RateLimitRequest } from "../src/index.js";

// When `trust proxy` trusts more hops than there are proxies (`true`: every hop), `req.ip` is
// whatever the client wrote first in X-Forwarded-For, address or not. Such a request must still be
// counted (RFC 6585 §4 limits what a client sends): in the bucket of the connection's peer, never
// passed uncounted (failMode "open") nor refused as a store outage (failMode "closed").

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

interface Served {
  send: (xff?: string) => Promise<{ status: number; key: string | undefined; headers: Headers }>;
  reached: () => number;
  warnings: string[];
}

/** `trust proxy` true (every hop), `rateLimit(options)` then a route answering the request's key. */
async function serve(options: RateLimitOptions): Promise<Served> {
  const warnings: string[] = [];
  let reached = 0;
  const app = express();
  app.set("trust proxy", true);
  app.get(
    "/",
    rateLimit({ logger: { warn: (_obj, msg) => warnings.push(String(msg)) }, ...options }),
    (req: RateLimitRequest, res) => {
      reached++;
      res.json({ key: requestState(req).rateLimit?.key ?? null });
    },
  );
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  closers.push(server.close);
  return {
    warnings,
    reached: () => reached,
    send: async (xff) => {
      const res = await fetch(server.url, xff === undefined ? {} : { headers: { "X-Forwarded-For": xff } });
      const body = (await res.json()) as { key?: string | null };
      return { status: res.status, key: body.key ?? undefined, headers: res.headers };
    },
  };
}

const JUNK = ["garbage", "010.0.0.1", "1.2.3", '"203.0.113.9"', "garbage, 203.0.113.9", "unknown", "_hidden"];

describe('X-Forwarded-For that is not an address, "trust proxy" true: counted in the peer\'s bucket', () => {
  it.each((["open", "closed"] as const).flatMap((failMode) => JUNK.map((junk) => [failMode, junk] as const)))(
    "failMode %s, X-Forwarded-For: %s → 200 as ip:127.0.0.1 with headers, then 429",
    async (failMode, junk) => {
      const { send, reached } = await serve({ limit: 1, windowMs: 60_000, failMode });
      const first = await send(junk);
      expect(first).toMatchObject({ status: 200, key: "ip:127.0.0.1" });
      expect(first.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(first.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
      // Other junk, then the peer itself: the same bucket, spent.
      const second = await send("more-junk");
      expect(second.status).toBe(429);
      expect(second.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
      expect((await send()).status).toBe(429);
      expect(reached()).toBe(1);
      // A client with an address still has its own bucket.
      expect(await send("203.0.113.9")).toMatchObject({ status: 200, key: "ip:203.0.113.9" });
      expect((await send("203.0.113.9")).status).toBe(429);
    },
  );

  it("X-Forwarded-For empty: Express reports the peer, counted there (200, then 429)", async () => {
    const { send } = await serve({ limit: 1, windowMs: 60_000 });
    expect(await send("")).toMatchObject({ status: 200, key: "ip:127.0.0.1" });
    expect((await send("")).status).toBe(429);
  });

  it("one warning about the address, however many requests; none for a client with an address", async () => {
    const { send, warnings } = await serve({ limit: 10, windowMs: 60_000 });
    await send("203.0.113.9");
    expect(warnings.filter((w) => /not an IP address/.test(w))).toEqual([]);
    for (const junk of JUNK) await send(junk);
    const lines = warnings.filter((w) => /not an IP address/.test(w));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/the connection's peer/);
  });

  it("the peer on the allowlist does not let junk through unlimited", async () => {
    const { send, reached } = await serve({ limit: 1, windowMs: 60_000, allowlist: ["127.0.0.1"] });
    // The peer itself (no X-Forwarded-For) is allowlisted: no headers, never limited.
    expect((await send()).headers.get("x-ratelimit-limit")).toBeNull();
    expect((await send()).status).toBe(200);
    expect((await send("garbage")).status).toBe(200);
    expect((await send("garbage")).status).toBe(429);
    expect(reached()).toBe(3);
  });

  it.each([
    ["key(req) answering undefined (the default key)", () => undefined],
    [
      "key(req) answering the principal when there is one",
      (req: RateLimitRequest) => requestState(req).principal?.id,
    ],
  ])("%s: the peer's bucket too", async (_name, key) => {
    const { send } = await serve({ limit: 1, windowMs: 60_000, key });
    expect(await send("garbage")).toMatchObject({ status: 200, key: "ip:127.0.0.1" });
    expect((await send("junk")).status).toBe(429);
  });
});

describe("a Unix socket (no peer address) with junk: one shared bucket, not passed", () => {
  function get(socketPath: string, xff: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ socketPath, path: "/", headers: { "X-Forwarded-For": xff } }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
  }

  it.each(["open", "closed"] as const)(
    "failMode %s: garbage → 200 as ip:unknown, junk → 429",
    async (failMode) => {
      const app = express();
      app.set("trust proxy", true);
      app.get("/", rateLimit({ limit: 1, windowMs: 60_000, failMode, logger: { warn() {} } }), (req, res) => {
        res.json({ key: requestState(req).rateLimit?.key ?? null });
      });
      app.use(errorHandler({ logger: { error() {} } }));
      const path = join(tmpdir(), `ratelimit-${process.pid}-${Math.random().toString(36).slice(2)}.sock`);
      const server = app.listen(path);
      await new Promise<void>((resolve) => server.once("listening", () => resolve()));
      closers.push(
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      );
      const first = await get(path, "garbage");
      expect(first).toEqual({ status: 200, body: '{"key":"ip:unknown"}' });
      expect((await get(path, "junk")).status).toBe(429);
      // An address from the proxy is its own client.
      expect(await get(path, "203.0.113.9")).toEqual({ status: 200, body: '{"key":"ip:203.0.113.9"}' });
    },
  );
});
