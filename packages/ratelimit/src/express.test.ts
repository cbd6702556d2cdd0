import { connect } from "node:net";
import { errorHandler } from "@svc/errors/express";
import { recordAuthentication, requestState } from "@svc/kernel";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { type RateLimitOptions, type RateLimitRequest, rateLimit } from "./express.js";
import { createRateLimiter } from "./limiter.js";
import { MemoryStore } from "./memory-store.js";
import type { RateLimitStore } from "./types.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function serve(options: RateLimitOptions, setup?: (app: express.Express) => void): Promise<string> {
  const app = express();
  setup?.(app);
  app.use(rateLimit({ logger: { warn() {} }, ...options }));
  app.get("/", (_req, res) => {
    res.json({ ok: true });
  });
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

const silent = { error() {} };

describe("headers", () => {
  it("limit 2: X-RateLimit-* and RateLimit-Policy/RateLimit on 200s, then 429 keeps them", async () => {
    const url = await serve({ limit: 2, windowMs: 60_000, algorithm: "fixed-window", now: () => 90_000 });
    const first = await fetch(url);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
    // window [60 s, 120 s): epoch seconds of the reset
    expect(first.headers.get("x-ratelimit-reset")).toBe("120");
    expect(first.headers.get("ratelimit-policy")).toBe('"default";q=2;w=60');
    expect(first.headers.get("ratelimit")).toBe('"default";r=1;t=30');
    await fetch(url);
    const limited = await fetch(url);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("30");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(limited.headers.get("ratelimit")).toBe('"default";r=0;t=30');
    const body = (await limited.json()) as { status: number; code?: string };
    expect(body).toMatchObject({ status: 429 });
  });

  it.each([
    ["limit", { limit: Number.MAX_SAFE_INTEGER }],
    ["limit(req)", { limit: () => Number.MAX_SAFE_INTEGER }],
  ] as const)(
    "%s Number.MAX_SAFE_INTEGER (a plan without a practical limit) → q and r are sf-integers of at most 15 digits (RFC 8941 §3.3.1)",
    async (_name, options) => {
      const url = await serve({ ...options, windowMs: 60_000, algorithm: "fixed-window", now: () => 90_000 });
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-policy")).toBe('"default";q=999999999999999;w=60');
      expect(res.headers.get("ratelimit")).toBe('"default";r=999999999999999;t=30');
      // The de facto headers are not Structured Fields: they keep the exact numbers.
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(Number.MAX_SAFE_INTEGER - 1));
    },
  );

  it('resetFormat "delta-seconds" → X-RateLimit-Reset is seconds from now', async () => {
    const url = await serve({
      limit: 5,
      windowMs: 10_000,
      algorithm: "fixed-window",
      resetFormat: "delta-seconds",
      now: () => 12_500,
    });
    const res = await fetch(url);
    expect(res.headers.get("x-ratelimit-reset")).toBe("8");
  });

  it("legacyHeaders false, standardHeaders false → neither set, 429 still has Retry-After", async () => {
    const url = await serve({ limit: 1, legacyHeaders: false, standardHeaders: false, policyName: "x" });
    const ok = await fetch(url);
    expect(ok.headers.get("x-ratelimit-limit")).toBeNull();
    expect(ok.headers.get("ratelimit")).toBeNull();
    const limited = await fetch(url);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it('policyName with a quote → escaped sf-string "a\\"b"', async () => {
    const url = await serve({ limit: 3, policyName: 'a"b' });
    const res = await fetch(url);
    expect(res.headers.get("ratelimit-policy")).toMatch(/^"a\\"b";q=3;w=60$/);
  });

  it("gcra: Retry-After is rounded up (200 ms to wait → 1 s)", async () => {
    const url = await serve({ limit: 5, windowMs: 1000, algorithm: "gcra", now: () => 0 });
    for (let i = 0; i < 5; i++) expect((await fetch(url)).status).toBe(200);
    const limited = await fetch(url);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
  });

  // draft-ietf-httpapi-ratelimit-headers: "If a response contains both the Retry-After and the
  // RateLimit header fields, the reset keyword value SHOULD reference the same point in time as
  // the Retry-After field value."
  it("gcra 10 per 10 s, 11th request → 429 with Retry-After 1 and RateLimit t=1 (not t=10, the full refill)", async () => {
    const url = await serve({ limit: 10, windowMs: 10_000, algorithm: "gcra", now: () => 100_000 });
    for (let i = 0; i < 10; i++) expect((await fetch(url)).status).toBe(200);
    const limited = await fetch(url);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(limited.headers.get("ratelimit")).toBe('"default";r=0;t=1');
  });

  it("sliding-window 2 per 60 s, 3rd request → 429 with Retry-After 60 and RateLimit t=60 (not t=90)", async () => {
    const url = await serve({ limit: 2, windowMs: 60_000, algorithm: "sliding-window", now: () => 90_000 });
    for (let i = 0; i < 2; i++) expect((await fetch(url)).status).toBe(200);
    const limited = await fetch(url);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(limited.headers.get("ratelimit")).toBe('"default";r=0;t=60');
  });

  it.each(["fixed-window", "sliding-window", "gcra"] as const)(
    "%s: limit(req) lowered from 5 to 2 after 4 requests in the window → 429 with r=0 and X-RateLimit-Remaining 0, never negative",
    async (algorithm) => {
      const url = await serve({
        limit: (req) => Number(req.headers["x-plan"]),
        algorithm,
        windowMs: 60_000,
        now: () => 90_000,
      });
      for (let i = 0; i < 4; i++) await fetch(url, { headers: { "x-plan": "5" } });
      const res = await fetch(url, { headers: { "x-plan": "2" } });
      expect(res.status).toBe(429);
      expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(res.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
    },
  );
});

describe("client key", () => {
  it("spoofed X-Forwarded-For without trust proxy → every request in the socket's bucket", async () => {
    const url = await serve({ limit: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await fetch(url, { headers: { "X-Forwarded-For": `203.0.113.${i}` } })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });

  it("trust proxy loopback: X-Forwarded-For decides, different clients get their own bucket", async () => {
    const url = await serve({ limit: 1 }, (app) => app.set("trust proxy", "loopback"));
    expect((await fetch(url, { headers: { "X-Forwarded-For": "203.0.113.1" } })).status).toBe(200);
    expect((await fetch(url, { headers: { "X-Forwarded-For": "203.0.113.2" } })).status).toBe(200);
    expect((await fetch(url, { headers: { "X-Forwarded-For": "203.0.113.1" } })).status).toBe(429);
  });

  it.each([
    ["203.0.113.7:5123", "203.0.113.7:6001"],
    ["[2001:db8:1:2::1]:443", "[2001:db8:1:2::2]:8443"],
    ["[2001:db8:1:2::1]", "2001:db8:1:2::9"],
  ])(
    "a proxy that appends the client with its port (RFC 7239 §6 node form): %s then %s → one bucket, 429",
    async (first, second) => {
      const url = await serve({ limit: 1, failMode: "closed" }, (app) => app.set("trust proxy", "loopback"));
      expect((await fetch(url, { headers: { "X-Forwarded-For": first } })).status).toBe(200);
      expect((await fetch(url, { headers: { "X-Forwarded-For": second } })).status).toBe(429);
    },
  );

  it("IPv6 2001:db8:1:2::1 and 2001:db8:1:2:ffff::9 share a /64; 2001:db8:1:3::1 does not", async () => {
    const url = await serve({ limit: 1 }, (app) => app.set("trust proxy", "loopback"));
    const from = (ip: string) => fetch(url, { headers: { "X-Forwarded-For": ip } }).then((r) => r.status);
    expect(await from("2001:db8:1:2::1")).toBe(200);
    expect(await from("2001:db8:1:2:ffff::9")).toBe(429);
    expect(await from("2001:db8:1:3::1")).toBe(200);
  });

  it("ipv6Subnet 48 groups 2001:db8:1:2::1 with 2001:db8:1:3::1", async () => {
    const url = await serve({ limit: 1, ipv6Subnet: 48 }, (app) => app.set("trust proxy", "loopback"));
    const from = (ip: string) => fetch(url, { headers: { "X-Forwarded-For": ip } }).then((r) => r.status);
    expect(await from("2001:db8:1:2::1")).toBe(200);
    expect(await from("2001:db8:1:3::1")).toBe(429);
  });

  it("::ffff:198.51.100.7 and 198.51.100.7 are one client", async () => {
    const url = await serve({ limit: 1 }, (app) => app.set("trust proxy", "loopback"));
    const from = (ip: string) => fetch(url, { headers: { "X-Forwarded-For": ip } }).then((r) => r.status);
    expect(await from("::ffff:198.51.100.7")).toBe(200);
    expect(await from("198.51.100.7")).toBe(429);
  });

  it("IPv4 clients through a NAT64 / SIIT-DC translator (64:ff9b::/96, RFC 6052 §2.1) → one bucket per IPv4 client, not one /64 for all", async () => {
    const url = await serve({ limit: 1 }, (app) => app.set("trust proxy", "loopback"));
    const from = (ip: string) => fetch(url, { headers: { "X-Forwarded-For": ip } }).then((r) => r.status);
    expect(await from("64:ff9b::198.51.100.7")).toBe(200);
    expect(await from("64:ff9b::203.0.113.9")).toBe(200);
    expect(await from("64:ff9b::c633:6407")).toBe(429);
    expect(await from("198.51.100.7")).toBe(429);
  });

  it("authenticated principal: counted per principal, not per IP", async () => {
    const url = await serve({ limit: 1 }, (app) =>
      app.use((req, _res, next) => {
        const user = req.headers["x-user"];
        if (typeof user === "string") recordAuthentication(req, { id: user });
        next();
      }),
    );
    const as = (user?: string) =>
      fetch(url, user ? { headers: { "X-User": user } } : {}).then((r) => r.status);
    expect(await as("alice")).toBe(200);
    expect(await as("bob")).toBe(200);
    expect(await as("alice")).toBe(429);
    expect(await as()).toBe(200); // anonymous: the IP bucket, untouched so far
    expect(await as()).toBe(429);
  });

  it("the client address (Express's req.ip, a walk of X-Forwarded-For) is read only when the key needs it, at most once; with skip, as the request arrives", async () => {
    let reads = 0;
    const counted = (app: express.Express) =>
      app.use((req, _res, next) => {
        Object.defineProperty(req, "ip", {
          get() {
            reads++;
            return "203.0.113.9";
          },
        });
        const user = req.headers["x-user"];
        if (typeof user === "string") recordAuthentication(req, { id: user });
        next();
      });
    const url = await serve({ limit: 5 }, counted);
    expect((await fetch(url, { headers: { "X-User": "alice" } })).status).toBe(200);
    expect(reads).toBe(0);
    expect((await fetch(url)).status).toBe(200);
    expect(reads).toBe(1);
    const allowing = await serve({ limit: 5, allowlist: ["198.51.100.0/24"] }, counted);
    reads = 0;
    expect((await fetch(allowing)).status).toBe(200);
    expect(reads).toBe(1);
    let seen = -1;
    const skipping = await serve(
      {
        limit: 5,
        skip: () => {
          seen = reads;
          return false;
        },
      },
      counted,
    );
    reads = 0;
    expect((await fetch(skipping)).status).toBe(200);
    expect([seen, reads]).toEqual([1, 1]);
  });

  it("custom key(req) → the header's value is the bucket", async () => {
    const url = await serve({ limit: 1, key: (req) => String(req.headers["x-tenant"] ?? "none") });
    expect((await fetch(url, { headers: { "X-Tenant": "a" } })).status).toBe(200);
    expect((await fetch(url, { headers: { "X-Tenant": "b" } })).status).toBe(200);
    expect((await fetch(url, { headers: { "X-Tenant": "a" } })).status).toBe(429);
  });

  describe("key(req) answering what looks like a default key (u:<principal>, ip:<address>) → its own bucket", () => {
    /** key(req) is the X-Api-Key header when sent (undefined otherwise: the default key). */
    const apiKeyServer = () =>
      serve({ limit: 1, key: (req) => req.headers["x-api-key"] as string | undefined }, (app) =>
        app.use((req, _res, next) => {
          const user = req.headers["x-user"];
          if (typeof user === "string") recordAuthentication(req, { id: user });
          next();
        }),
      );
    const send = (url: string, headers: Record<string, string>) =>
      fetch(url, { headers }).then((r) => r.status);

    it.each([
      ["X-Api-Key: u:alice, then alice signed in", { "X-Api-Key": "u:alice" }, { "X-User": "alice" }],
      ["alice signed in, then X-Api-Key: u:alice", { "X-User": "alice" }, { "X-Api-Key": "u:alice" }],
      [
        "X-Api-Key: ip:127.0.0.1, then an anonymous request from 127.0.0.1",
        { "X-Api-Key": "ip:127.0.0.1" },
        {},
      ],
      [
        "an anonymous request from 127.0.0.1, then X-Api-Key: ip:127.0.0.1",
        {},
        { "X-Api-Key": "ip:127.0.0.1" },
      ],
      [
        "X-Api-Key: u:alice, then X-Api-Key: k:u:alice",
        { "X-Api-Key": "u:alice" },
        { "X-Api-Key": "k:u:alice" },
      ],
      ["X-Api-Key: k:u:alice, then alice signed in", { "X-Api-Key": "k:u:alice" }, { "X-User": "alice" }],
    ])("%s → 200, 200 (limit 1: neither spends the other's quota)", async (_name, first, second) => {
      const url = await apiKeyServer();
      expect(await send(url, first)).toBe(200);
      expect(await send(url, second)).toBe(200);
      // Each one's own bucket is spent.
      expect(await send(url, first)).toBe(429);
      expect(await send(url, second)).toBe(429);
    });

    it("requestState(req).rateLimit.key is the key as key(req) answered it", async () => {
      const app = express();
      app.use(rateLimit({ limit: 5, key: () => "u:alice", logger: { warn() {} } }));
      app.get("/", (req, res) => {
        res.json({ key: requestState(req).rateLimit?.key });
      });
      const server = await listen(app);
      closers.push(server.close);
      expect(await (await fetch(server.url)).json()).toEqual({ key: "u:alice" });
    });
  });

  describe("key(req) answering nothing (undefined, null, an empty string) → the default key", () => {
    /** trust proxy loopback; key(req) per `answer`; the route answers the request's key. */
    async function keyed(answer: (req: RateLimitRequest) => string | undefined) {
      const app = express();
      app.set("trust proxy", "loopback");
      app.get("/", rateLimit({ limit: 1, key: answer, logger: { warn() {} } }), (req, res) => {
        res.json({ key: requestState(req).rateLimit?.key });
      });
      app.use(errorHandler({ logger: silent }));
      const server = await listen(app);
      closers.push(server.close);
      return async (client: string, apiKey: string) => {
        const res = await fetch(server.url, { headers: { "X-Forwarded-For": client, "X-Api-Key": apiKey } });
        return {
          status: res.status,
          key: res.status === 200 ? ((await res.json()) as { key: string }).key : "",
        };
      };
    }

    it.each([
      [
        "an empty X-Api-Key header",
        (req: RateLimitRequest) => req.headers["x-api-key"] as string | undefined,
      ],
      ["null", () => null as unknown as undefined],
      ["undefined", () => undefined],
    ])("%s: two clients → 200, 200 in their own buckets, then 429 for the first", async (_name, answer) => {
      const send = await keyed(answer);
      expect(await send("203.0.113.1", "")).toEqual({ status: 200, key: "ip:203.0.113.1" });
      expect(await send("203.0.113.2", "")).toEqual({ status: 200, key: "ip:203.0.113.2" });
      expect((await send("203.0.113.1", "")).status).toBe(429);
    });

    it("a non-empty answer is still its own bucket, whatever the address", async () => {
      const send = await keyed((req) => req.headers["x-api-key"] as string | undefined);
      expect(await send("203.0.113.1", "team-a")).toEqual({ status: 200, key: "team-a" });
      expect((await send("203.0.113.2", "team-a")).status).toBe(429);
      expect(await send("203.0.113.2", "")).toEqual({ status: 200, key: "ip:203.0.113.2" });
    });
  });

  it("key(req) from a header with 8,000-character values → each is its own bucket, and the store holds at most 256 characters per key", async () => {
    const memory = new MemoryStore();
    const seen: string[] = [];
    const store: RateLimitStore = {
      consume: (key, cost, policy, now) => {
        seen.push(key);
        return memory.consume(key, cost, policy, now);
      },
      reset: (key) => memory.reset(key),
    };
    const url = await serve({ limit: 1, store, key: (req) => String(req.headers["x-api-key"]) });
    const a = "a".repeat(8000);
    const b = `${"a".repeat(7999)}b`;
    expect((await fetch(url, { headers: { "X-Api-Key": a } })).status).toBe(200);
    expect((await fetch(url, { headers: { "X-Api-Key": b } })).status).toBe(200);
    expect((await fetch(url, { headers: { "X-Api-Key": a } })).status).toBe(429);
    expect((await fetch(url, { headers: { "X-Api-Key": "short" } })).status).toBe(200);
    expect(seen).toHaveLength(4);
    for (const key of seen) expect(key.length).toBeLessThanOrEqual(256);
    expect(seen[3]).toBe("short");
  });
});

describe("trust proxy mistakes are reported once", () => {
  it('"trust proxy" off and X-Forwarded-For arriving → one warning about the shared bucket', async () => {
    const lines: string[] = [];
    const url = await serve({ limit: 10, logger: { warn: (_o, msg) => lines.push(String(msg)) } });
    await fetch(url);
    expect(lines).toEqual([]);
    await fetch(url, { headers: { "X-Forwarded-For": "203.0.113.9" } });
    await fetch(url, { headers: { "X-Forwarded-For": "203.0.113.9" } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/"trust proxy" is off/);
  });

  it('"trust proxy" true → one warning that clients can choose their IP', async () => {
    const lines: string[] = [];
    const url = await serve({ limit: 10, logger: { warn: (_o, msg) => lines.push(String(msg)) } }, (app) =>
      app.set("trust proxy", true),
    );
    await fetch(url);
    await fetch(url);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/any client can choose its IP/);
  });

  it('"trust proxy" loopback with X-Forwarded-For → no warning', async () => {
    const lines: string[] = [];
    const url = await serve({ limit: 10, logger: { warn: (_o, msg) => lines.push(String(msg)) } }, (app) =>
      app.set("trust proxy", "loopback"),
    );
    await fetch(url, { headers: { "X-Forwarded-For": "203.0.113.9" } });
    expect(lines).toEqual([]);
  });
});

describe("a cost larger than the quota (no wait can make it fit)", () => {
  /** One route whose cost is the X-Cost header; `rateLimit` options as given. */
  async function costly(options: RateLimitOptions): Promise<(cost: number) => Promise<Response>> {
    const app = express();
    app.get(
      "/",
      rateLimit({ logger: { warn() {} }, cost: (req) => Number(req.headers["x-cost"] ?? "1"), ...options }),
      (_q, r) => {
        r.json({ ok: true });
      },
    );
    app.use(errorHandler({ logger: silent }));
    const server = await listen(app);
    closers.push(server.close);
    return (cost) =>
      fetch(server.url, { headers: { "X-Cost": String(cost), Accept: "application/problem+json" } });
  }

  it.each([
    ["fixed-window", { limit: 10, algorithm: "fixed-window" }, 11],
    ["sliding-window", { limit: 10, algorithm: "sliding-window" }, 11],
    ["gcra (burst 5 < limit 10)", { limit: 10, algorithm: "gcra", burst: 5 }, 6],
    ["a per-request limit of 3", { limit: () => 3 }, 4],
  ] as const)(
    "%s, cost over the quota → 429 without Retry-After or RateLimit, nothing spent",
    async (_name, options, cost) => {
      const send = await costly({ windowMs: 60_000, now: () => 30_000, ...(options as RateLimitOptions) });
      const refused = await send(cost);
      expect(refused.status).toBe(429);
      // RFC 9110 §10.2.3: Retry-After says how long to wait before a follow-up request; none helps.
      expect(refused.headers.get("retry-after")).toBeNull();
      expect(refused.headers.get("ratelimit")).toBeNull();
      expect(refused.headers.get("x-ratelimit-reset")).toBeNull();
      const body = (await refused.json()) as { code?: string; detail?: string };
      expect(body.code).toBe("rate_limit_cost_exceeds_quota");
      expect(body.detail).toMatch(new RegExp(`costs ${cost} units`));
      // Nothing was spent: a request of cost 1 still sees the full quota less itself.
      const next = await send(1);
      expect(next.status).toBe(200);
      const quota = (options as { burst?: number; limit: number | (() => number) }).burst ?? options.limit;
      expect(next.headers.get("x-ratelimit-remaining")).toBe(
        String((typeof quota === "number" ? quota : 3) - 1),
      );
    },
  );

  it("cost exactly the quota → allowed once, then 429 with a Retry-After", async () => {
    const send = await costly({ limit: 10, windowMs: 60_000, algorithm: "fixed-window", now: () => 30_000 });
    expect((await send(10)).status).toBe(200);
    const limited = await send(10);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("30");
  });

  it("a custom handler is not called for it: the 429 goes to the error handler", async () => {
    let called = 0;
    const send = await costly({
      limit: 2,
      handler: (_req, res) => {
        called++;
        res.statusCode = 429;
        res.end();
      },
    });
    expect((await send(3)).status).toBe(429);
    expect(called).toBe(0);
  });

  it.each([
    [{ limit: 10, cost: 11 }],
    [{ limit: 10, algorithm: "gcra", burst: 4, cost: 5 }],
    [{ limiter: createRateLimiter({ limit: 3 }), cost: 4 }],
  ] as const)("static %o → TypeError ERR_SVC_RATELIMIT_COST at construction", (options) => {
    expect(() => rateLimit(options as RateLimitOptions)).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_COST",
        message: expect.stringMatching(/can never be allowed/),
      }),
    );
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, -1, 2.5])(
    "cost(req) answering %s → 500, nothing counted",
    async (bad) => {
      const app = express();
      app.get("/", rateLimit({ limit: 1, cost: (req) => (req.headers["x-bad"] ? bad : 1) }), (_q, r) => {
        r.end("ok");
      });
      app.use(errorHandler({ logger: silent }));
      const server = await listen(app);
      closers.push(server.close);
      expect((await fetch(server.url, { headers: { "X-Bad": "1" } })).status).toBe(500);
      expect((await fetch(server.url)).status).toBe(200);
    },
  );
});

describe("skip, allowlist, cost", () => {
  it("allowlist 127.0.0.0/8 → never limited, no headers", async () => {
    const url = await serve({ limit: 1, allowlist: ["127.0.0.0/8"] });
    for (let i = 0; i < 3; i++) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });

  it.each(["::ffff:10.1.2.3", "10.1.2.3"])(
    "allowlist ::ffff:10.0.0.0/104 (IPv4-mapped range), client %s → never limited, no headers",
    async (client) => {
      const url = await serve({ limit: 1, allowlist: ["::ffff:10.0.0.0/104"] }, (app) =>
        app.set("trust proxy", "loopback"),
      );
      for (let i = 0; i < 3; i++) {
        const res = await fetch(url, { headers: { "X-Forwarded-For": client } });
        expect(res.status).toBe(200);
        expect(res.headers.get("x-ratelimit-limit")).toBeNull();
      }
    },
  );

  it("skip(req) true for /health-like requests → not counted", async () => {
    const url = await serve({ limit: 1, skip: (req) => req.headers["x-probe"] === "1" });
    for (let i = 0; i < 3; i++) expect((await fetch(url, { headers: { "X-Probe": "1" } })).status).toBe(200);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
  });

  it("per-route cost: limit 10, cost 4 → 2 pass, the 3rd is 429", async () => {
    const app = express();
    app.get("/search", rateLimit({ limit: 10, cost: (req) => (req.headers["x-heavy"] ? 4 : 1) }), (_q, r) => {
      r.end("ok");
    });
    app.use(errorHandler({ logger: silent }));
    const server = await listen(app);
    closers.push(server.close);
    const heavy = () => fetch(`${server.url}/search`, { headers: { "X-Heavy": "1" } });
    expect((await heavy()).headers.get("x-ratelimit-remaining")).toBe("6");
    expect((await heavy()).status).toBe(200);
    expect((await heavy()).status).toBe(429);
    expect((await fetch(`${server.url}/search`)).status).toBe(200);
  });

  it.each([
    [{ limit: 1, ipv6Subnet: 0 }, /ipv6Subnet/],
    [{ limit: 1, ipv6Subnet: 129 }, /ipv6Subnet/],
    [{ limit: 1, cost: -1 }, /cost/],
    [{ limit: 1, failMode: "maybe" as "open" }, /failMode/],
    [{ limit: 1, resetFormat: "http-date" as "delta-seconds" }, /resetFormat/],
    [{ limit: 1, failRetryAfterSeconds: -1 }, /failRetryAfterSeconds/],
  ] as const)("%o → TypeError", (options, message) => {
    expect(() => rateLimit(options)).toThrow(message);
  });

  it.each([
    [{ limit: 1, ipv6Subnet: 0 }, "ERR_SVC_RATELIMIT_IPV6_SUBNET"],
    [{ limit: 1, cost: -1 }, "ERR_SVC_RATELIMIT_COST"],
    [{ limit: 1, failMode: "maybe" as "open" }, "ERR_SVC_RATELIMIT_FAIL_MODE"],
    [{ limit: 1, resetFormat: "http-date" as "delta-seconds" }, "ERR_SVC_RATELIMIT_RESET_FORMAT"],
    [{ limit: 1, failRetryAfterSeconds: -1 }, "ERR_SVC_RATELIMIT_FAIL_RETRY_AFTER_SECONDS"],
    [{ limit: 1, allowlist: ["not-an-ip"] }, "ERR_SVC_RATELIMIT_ALLOWLIST"],
    [{ limit: 0 }, "ERR_SVC_RATELIMIT_LIMIT"],
    [{ limit: 1, windowMs: 0 }, "ERR_SVC_RATELIMIT_WINDOW_MS"],
    [{}, "ERR_SVC_RATELIMIT_LIMIT"],
    [{ limiter: createRateLimiter({ limit: 1 }), limit: 5 }, "ERR_SVC_RATELIMIT_LIMITER"],
  ] as const)("%o → TypeError with code %s", (options, code) => {
    expect(() => rateLimit(options as RateLimitOptions)).toThrow(
      expect.objectContaining({ name: "TypeError", code }),
    );
  });

  it("cost(req) returning 2.5 → 500 through the error handler, nothing counted", async () => {
    const url = await serve({ limit: 1, cost: (req) => (req.headers["x-bad"] ? 2.5 : 1) });
    expect((await fetch(url, { headers: { "X-Bad": "1" } })).status).toBe(500);
    expect((await fetch(url)).status).toBe(200);
  });

  it("allowlist entry 'not-an-ip' → TypeError at construction", () => {
    expect(() => rateLimit({ limit: 1, allowlist: ["not-an-ip"] })).toThrow(/not an IP address/);
  });

  it("limiter and limit together → TypeError; no limit → TypeError", () => {
    expect(() => rateLimit({})).toThrow(/limit is required/);
    const limiter = createRateLimiter({ limit: 1 });
    expect(() => rateLimit({ limiter, limit: 5 })).toThrow(/either limiter or limit/);
    expect(() => rateLimit({ limit: 0 })).toThrow(/positive integer/);
  });
});

describe("concurrency", () => {
  it("200 concurrent requests against limit 50 (memory) → exactly 50 × 200", async () => {
    const url = await serve({ limit: 50, windowMs: 60_000 });
    const statuses = await Promise.all(Array.from({ length: 200 }, () => fetch(url).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(150);
  });
});

describe("store failure", () => {
  function flakyStore(): RateLimitStore & { down: boolean } {
    const inner = new MemoryStore();
    return {
      down: true,
      consume(key, cost, policy, now) {
        if (this.down) throw new Error("connection refused");
        return inner.consume(key, cost, policy, now);
      },
      reset: (key) => inner.reset(key),
    };
  }

  it('failMode "closed", store down → 503 with Retry-After 5; store back → limits again', async () => {
    const store = flakyStore();
    const url = await serve({ limit: 1, store, failMode: "closed" });
    const down = await fetch(url);
    expect(down.status).toBe(503);
    expect(down.headers.get("retry-after")).toBe("5");
    expect(((await down.json()) as { status: number }).status).toBe(503);
    store.down = false;
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
  });

  it('failMode "open", store down for 5 requests → all pass, one log line; store back → limits', async () => {
    const store = flakyStore();
    const lines: object[] = [];
    const url = await serve({ limit: 1, store, logger: { warn: (obj) => lines.push(obj) } });
    for (let i = 0; i < 5; i++) expect((await fetch(url)).status).toBe(200);
    expect(lines).toHaveLength(1);
    store.down = false;
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
  });

  it('failMode "open", down twice inside logIntervalMs → each outage one warn, each recovery one info', async () => {
    const store = flakyStore();
    const warned: object[] = [];
    const informed: object[] = [];
    const url = await serve({
      limit: 5,
      store,
      logger: { warn: (obj) => warned.push(obj), info: (obj) => informed.push(obj) },
    });
    await fetch(url);
    await fetch(url);
    store.down = false;
    await fetch(url);
    await fetch(url);
    store.down = true;
    await fetch(url);
    store.down = false;
    await fetch(url);
    expect(warned).toHaveLength(2);
    expect(informed).toHaveLength(2);
    expect(informed[0]).toMatchObject({ failed: 2 });
  });

  it('failMode "closed" with a full MemoryStore of limited clients → 503 for a new client', async () => {
    const store = new MemoryStore({ maxKeys: 1 });
    const url = await serve({
      limit: 1,
      store,
      failMode: "closed",
      key: (req) => String(req.headers["x-k"]),
    });
    await fetch(url, { headers: { "X-K": "a" } });
    expect((await fetch(url, { headers: { "X-K": "b" } })).status).toBe(503);
    expect((await fetch(url, { headers: { "X-K": "a" } })).status).toBe(429);
  });
});

describe("a quota above 2^32 units (bytes per day, with cost the request's size)", () => {
  // 10 GiB a day, 3 GiB per request: the third request fits (9 GiB), the fourth (12 GiB) does not.
  const GiB = 2 ** 30;
  it.each(["fixed-window", "sliding-window"] as const)(
    "%s: 3 requests of 3 GiB pass, the 4th is 429",
    async (algorithm) => {
      const url = await serve({
        limit: 10 * GiB,
        windowMs: 86_400_000,
        algorithm,
        cost: 3 * GiB,
        now: () => 1_000,
      });
      const statuses: number[] = [];
      const remaining: (string | null)[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(url);
        statuses.push(res.status);
        remaining.push(res.headers.get("x-ratelimit-remaining"));
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(remaining).toEqual([String(7 * GiB), String(4 * GiB), String(GiB), String(GiB)]);
    },
  );
});

describe("a client that resets its connection before the limiter runs (its address is gone)", () => {
  it("limit 1, 5 such POSTs → the handler never runs (not a store failure: failMode open does not pass them)", async () => {
    let ran = 0;
    const outcomes: string[] = [];
    let settled: () => void = () => {};
    const all = new Promise<void>((resolve) => {
      settled = () => {
        if (outcomes.length === 5) resolve();
      };
    });
    let received: () => void = () => {};
    const app = express();
    // An async step before the limiter (a database-backed auth, a body parser): the client's
    // reset lands meanwhile, and the socket, with its address, is gone when the limiter runs.
    app.use((req, _res, next) => {
      req.socket.once("close", () => next());
      received();
    });
    app.use(rateLimit({ limit: 1, logger: { warn() {} } }));
    app.post("/send", (_req, res) => {
      ran++;
      outcomes.push("ran");
      settled();
      res.end();
    });
    app.use(
      (
        err: { status?: number },
        _req: express.Request,
        res: express.Response,
        _next: express.NextFunction,
      ) => {
        outcomes.push(String(err.status));
        settled();
        res.end();
      },
    );
    const server = await listen(app);
    closers.push(server.close);
    const port = Number(new URL(server.url).port);
    for (let i = 0; i < 5; i++) {
      const arrived = new Promise<void>((resolve) => {
        received = resolve;
      });
      const socket = connect(port, "127.0.0.1", () => {
        socket.write("POST /send HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
      });
      await arrived;
      socket.resetAndDestroy();
    }
    await all;
    expect(ran).toBe(0);
    expect(outcomes).toEqual(["400", "400", "400", "400", "400"]);
  });
});

describe("skipFailedRequests and a client that hangs up while the handler runs", () => {
  it("limit 2, 5 POSTs each closed once the handler started → the handler ran twice, then 429s (hanging up gives nothing back)", async () => {
    let ran = 0;
    let step: (outcome: string) => void = () => {};
    const app = express();
    app.use(rateLimit({ limit: 2, windowMs: 60_000, skipFailedRequests: true, logger: { warn() {} } }));
    app.post("/work", (_req, res) => {
      ran++;
      // The work goes on after the client left, and ends with a success.
      res.once("close", () => {
        res.status(201).end();
        step("ran, client gone");
      });
      step("started");
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const server = await listen(app);
    closers.push(server.close);
    const port = Number(new URL(server.url).port);
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const next = () => new Promise<string>((resolve) => (step = resolve));
      let started = next();
      const socket = connect(port, "127.0.0.1", () => {
        socket.write("POST /work HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
      });
      socket.once("data", (chunk) => step(chunk.toString("latin1").split("\r\n")[0] as string));
      const first = await started;
      outcomes.push(first);
      if (first !== "started") {
        socket.destroy();
        continue;
      }
      started = next();
      socket.destroy();
      outcomes.push(await started);
    }
    expect(ran).toBe(2);
    expect(outcomes).toEqual([
      "started",
      "ran, client gone",
      "started",
      "ran, client gone",
      "HTTP/1.1 429 Too Many Requests",
      "HTTP/1.1 429 Too Many Requests",
      "HTTP/1.1 429 Too Many Requests",
    ]);
  });
});

describe("two limiters on one store, one prefix extending the other ('' and 'login:')", () => {
  /**
   * GET /search: limit 1, prefix "", key the X-Api-Key header (else the default); POST /login:
   * limit 1, prefix "login:", key the X-User header (else the default). One MemoryStore.
   */
  async function twoLimiters(): Promise<string> {
    const store = new MemoryStore();
    const header = (name: string) => (req: RateLimitRequest) => req.headers[name] as string | undefined;
    const app = express();
    const quiet = { warn() {} };
    app.get("/search", rateLimit({ limit: 1, store, key: header("x-api-key"), logger: quiet }), (_q, r) => {
      r.json([]);
    });
    app.post(
      "/login",
      rateLimit({ limit: 1, store, prefix: "login:", key: header("x-user"), logger: quiet }),
      (_q, r) => {
        r.json({ ok: true });
      },
    );
    app.use(errorHandler({ logger: silent }));
    const server = await listen(app);
    closers.push(server.close);
    return server.url;
  }
  const search = (url: string, apiKey: string) =>
    fetch(`${url}/search`, { headers: { "X-Api-Key": apiKey } }).then((r) => r.status);
  const login = (url: string, user?: string) =>
    fetch(`${url}/login`, { method: "POST", headers: user ? { "X-User": user } : {} }).then((r) => r.status);
  const long = "a".repeat(300);

  it.each([
    ["X-Api-Key: login:ip:127.0.0.1 on /search, then /login from 127.0.0.1", "login:ip:127.0.0.1", undefined],
    ["X-Api-Key: login:alice on /search, then /login as alice", "login:alice", "alice"],
    [
      `X-Api-Key: login:${"a".repeat(3)}… (306 characters) on /search, then /login as a… (300)`,
      `login:${long}`,
      long,
    ],
  ])("%s → 200, 200: neither spends the other limiter's quota", async (_name, apiKey, user) => {
    const url = await twoLimiters();
    expect(await search(url, apiKey)).toBe(200);
    expect(await login(url, user)).toBe(200);
    expect(await search(url, apiKey)).toBe(429);
    expect(await login(url, user)).toBe(429);
  });

  it.each([
    ["/login as alice first, then X-Api-Key: login:alice on /search", "login:alice", "alice"],
    ["/login from 127.0.0.1 first, then X-Api-Key: login:ip:127.0.0.1", "login:ip:127.0.0.1", undefined],
  ])("%s → 200, 200", async (_name, apiKey, user) => {
    const url = await twoLimiters();
    expect(await login(url, user)).toBe(200);
    expect(await search(url, apiKey)).toBe(200);
  });
});
