import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { listen } from "@svc/test-utils";
import express from "express";
import { rateLimit as erlRateLimit } from "express-rate-limit";
import { parseRateLimit } from "ratelimit-header-parser";
import { afterEach, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import {
  createRateLimiter,
  type RateLimitDraft,
  type RateLimitOptions,
  type RateLimitRequest,
  setRateLimitHeaders,
} from "../src/index.js";

// `standardHeaders` names the revision of draft-ietf-httpapi-ratelimit-headers whose syntax the
// fields take, as express-rate-limit's option of that name does, so its clients (and its own
// header parser, ratelimit-header-parser) read them.

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** The standard fields of every draft: the ones a response does not carry must be absent. */
const FIELDS = ["ratelimit", "ratelimit-policy", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"];

/** `GET /` behind `rateLimit` for each of `limiters` in turn (the first app-wide), clock fixed at 90 s. */
async function serve(...limiters: RateLimitOptions[]): Promise<string> {
  const app = express();
  const [first, ...rest] = limiters.map((o) =>
    rateLimit({ windowMs: 60_000, algorithm: "fixed-window", now: () => 90_000, ...o }),
  );
  if (first) app.use(first);
  app.get("/", ...rest, (req: RateLimitRequest, res) => {
    res.json(requestState(req).rateLimit ?? null);
  });
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

function standardFields(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FIELDS) {
    const value = res.headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

// limit 2 per 60 s (fixed window [60 s, 120 s)), clock at 90 s: the first request leaves 1 and
// 30 s to the reset; the third is refused with Retry-After 30.
const ROWS: [RateLimitDraft | boolean, Record<string, string>, Record<string, string>][] = [
  [
    "draft-6",
    {
      "ratelimit-policy": "2;w=60",
      "ratelimit-limit": "2",
      "ratelimit-remaining": "1",
      "ratelimit-reset": "30",
    },
    {
      "ratelimit-policy": "2;w=60",
      "ratelimit-limit": "2",
      "ratelimit-remaining": "0",
      "ratelimit-reset": "30",
    },
  ],
  [
    "draft-7",
    { "ratelimit-policy": "2;w=60", ratelimit: "limit=2, remaining=1, reset=30" },
    { "ratelimit-policy": "2;w=60", ratelimit: "limit=2, remaining=0, reset=30" },
  ],
  ...(["draft-8", "draft-9", "draft-10", true] as const).map(
    (draft): [RateLimitDraft | boolean, Record<string, string>, Record<string, string>] => [
      draft,
      { "ratelimit-policy": '"default";q=2;w=60', ratelimit: '"default";r=1;t=30' },
      { "ratelimit-policy": '"default";q=2;w=60', ratelimit: '"default";r=0;t=30' },
    ],
  ),
  [false, {}, {}],
];

describe("standardHeaders: the syntax of the draft named", () => {
  it.each(ROWS)(
    "standardHeaders %j, limit 2 → 200 with %j, then the 429 with its own",
    async (draft, ok, refused) => {
      const url = await serve({ limit: 2, standardHeaders: draft });
      const first = await fetch(url);
      expect(first.status).toBe(200);
      expect(standardFields(first)).toEqual(ok);
      await fetch(url);
      const limited = await fetch(url);
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("30");
      expect(standardFields(limited)).toEqual(refused);
      // The de facto fields are not the draft's: unchanged whatever it says.
      expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    },
  );

  it.each(["draft-6", "draft-7"] as const)(
    "%s, gcra burst 5 (limit 10 per 10 s) → the quota is the burst, the window 10 s",
    async (draft) => {
      const url = await serve({
        limit: 10,
        windowMs: 10_000,
        algorithm: "gcra",
        burst: 5,
        standardHeaders: draft,
      });
      const res = await fetch(url);
      expect(res.headers.get("ratelimit-policy")).toBe("5;w=10");
      expect(res.headers.get(draft === "draft-6" ? "ratelimit-limit" : "ratelimit")).toBe(
        draft === "draft-6" ? "5" : "limit=5, remaining=4, reset=1",
      );
    },
  );
});

describe("ratelimit-header-parser (express-rate-limit's header parser) reads the fields", () => {
  it.each(["draft-6", "draft-7"] as const)(
    "%s, legacyHeaders false → limit 5, remaining 4, used 1, reset in 30 s",
    async (draft) => {
      const url = await serve({ limit: 5, standardHeaders: draft, legacyHeaders: false });
      const res = await fetch(url);
      const before = Date.now();
      const parsed = parseRateLimit(res);
      expect(parsed).toMatchObject({ limit: 5, remaining: 4, used: 1 });
      // The parser turns the reset's delta-seconds into a Date from its own clock.
      expect(Math.round(((parsed?.reset?.getTime() ?? Number.NaN) - before) / 1000)).toBe(30);
    },
  );
});

describe("the same header names and value shapes as express-rate-limit's", () => {
  /** A header value with its numbers replaced, to compare shapes whatever the clock. */
  const shape = (value: string | null) => value?.replace(/\d+/g, "N") ?? null;

  it.each(["draft-6", "draft-7"] as const)("%s", async (draft) => {
    const ours = await serve({ limit: 2, standardHeaders: draft, legacyHeaders: false });
    const app = express();
    app.get(
      "/",
      erlRateLimit({ limit: 2, windowMs: 60_000, standardHeaders: draft, legacyHeaders: false }),
      (_req, res) => {
        res.end("ok");
      },
    );
    const server = await listen(app);
    closers.push(server.close);
    const [a, b] = await Promise.all([fetch(ours), fetch(server.url)]);
    const names = (res: Response) => [...res.headers.keys()].filter((n) => n.startsWith("ratelimit")).sort();
    expect(names(a)).toEqual(names(b));
    for (const name of names(b))
      expect([name, shape(a.headers.get(name))]).toEqual([name, shape(b.headers.get(name))]);
  });
});

describe("several limiters on one request", () => {
  it("draft-7: a global limit of 10 and a route's of 2 → the route's (the tightest) alone", async () => {
    const url = await serve(
      { limit: 10, standardHeaders: "draft-7", policyName: "global" },
      { limit: 2, standardHeaders: "draft-7", policyName: "route" },
    );
    const res = await fetch(url);
    expect(standardFields(res)).toEqual({
      "ratelimit-policy": "2;w=60",
      ratelimit: "limit=2, remaining=1, reset=30",
    });
  });

  it("draft-6 first, then a limiter with true → every field in draft-6 syntax, the tightest's", async () => {
    const url = await serve({ limit: 3, standardHeaders: "draft-6" }, { limit: 10, standardHeaders: true });
    const res = await fetch(url);
    expect(standardFields(res)).toEqual({
      "ratelimit-policy": "3;w=60",
      "ratelimit-limit": "3",
      "ratelimit-remaining": "2",
      "ratelimit-reset": "30",
    });
  });

  it("true first, then draft-7 → both listed in the revision 10 syntax", async () => {
    const url = await serve(
      { limit: 10, standardHeaders: true, policyName: "global" },
      { limit: 2, standardHeaders: "draft-7", policyName: "route" },
    );
    const res = await fetch(url);
    expect(standardFields(res)).toEqual({
      "ratelimit-policy": '"global";q=10;w=60, "route";q=2;w=60',
      ratelimit: '"global";r=9;t=30, "route";r=1;t=30',
    });
  });
});

describe("req.rateLimit, under requestPropertyName", () => {
  it("limit 5, 2 requests → { limit: 5, used: 2, remaining: 3, resetTime }, and current (express-rate-limit's name) 2, not enumerable", async () => {
    let seen: RateLimitRequest["rateLimit"];
    const app = express();
    app.get(
      "/",
      rateLimit({ limit: 5, algorithm: "fixed-window", now: () => 90_000, requestPropertyName: "rateLimit" }),
      (req: RateLimitRequest, res) => {
        seen = req.rateLimit;
        res.end("ok");
      },
    );
    const server = await listen(app);
    closers.push(server.close);
    await fetch(server.url);
    await fetch(server.url);
    expect(seen).toMatchObject({ limit: 5, used: 2, remaining: 3, resetTime: new Date(120_000) });
    expect(seen?.current).toBe(2);
    expect(Object.keys(seen ?? {})).not.toContain("current");
  });
});

describe("setRateLimitHeaders (the core) with a standard it does not know", () => {
  it.each(["draft-5", "DRAFT-7", "10"])(
    "standard %j → TypeError ERR_SVC_RATELIMIT_STANDARD_HEADERS, nothing written",
    async (standard) => {
      const limiter = createRateLimiter({ limit: 2, algorithm: "fixed-window", now: () => 90_000 });
      const decision = await limiter.consume("k");
      const res = new ServerResponse(new IncomingMessage(new Socket()));
      const settings = {
        legacy: false,
        standard: standard as RateLimitDraft,
        resetFormat: "epoch-seconds",
        policyName: "p",
      } as const;
      expect(() => setRateLimitHeaders(res, decision, limiter.policy, settings)).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_RATELIMIT_STANDARD_HEADERS" }),
      );
      expect(res.getHeaderNames()).toEqual([]);
    },
  );
});
