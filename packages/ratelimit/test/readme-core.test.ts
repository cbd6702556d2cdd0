// #region readme-core
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "@svc/errors";
import { errorHandler } from "@svc/errors/express";
import { createRateLimiter, type HeaderSettings, ipBucket, setRateLimitHeaders } from "@svc/ratelimit";

const limiter = createRateLimiter({ limit: 2, windowMs: 60_000, algorithm: "gcra" });
const headers: HeaderSettings = {
  legacy: true,
  standard: true,
  resetFormat: "epoch-seconds",
  policyName: "default",
};
const sendError = errorHandler(); // the error record, in plain node:http too

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  // One bucket per client address (an IPv6 client per /64); behind a proxy, use its address.
  const key = `ip:${ipBucket(req.socket.remoteAddress ?? "") ?? "unknown"}`;
  try {
    const decision = await limiter.consume(key, 1);
    setRateLimitHeaders(res, decision, limiter.policy, headers);
    if (!decision.allowed) {
      // RFC 6585 §4: 429 with Retry-After, in whole seconds rounded up.
      const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      return sendError(HttpError.tooManyRequests(retryAfter), req, res, () => {});
    }
  } catch {
    // The store failed: let the request through ("fail open").
  }
  res.writeHead(200, { "content-type": "text/plain" }).end("hello\n");
}

// #endregion readme-core

// The test's own imports, below the README's code (imports are hoisted).
import { assertReadmeShows, type Listening, listen, readmeRegion } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: Listening;
beforeAll(async () => {
  server = await listen(handle);
});
afterAll(() => server.close());

describe("README: the core from plain node:http", () => {
  it("the README shows exactly the code this test runs", () => {
    expect(() =>
      assertReadmeShows(import.meta.url, readmeRegion(import.meta.url), { whole: false }),
    ).not.toThrow();
  });

  it("limit 2: two 200s with the rate limit headers, then 429 with Retry-After", async () => {
    const first = await fetch(server.url);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
    expect(first.headers.get("ratelimit-policy")).toBe('"default";q=2;w=60');
    expect(await first.text()).toBe("hello\n");
    expect((await fetch(server.url)).headers.get("x-ratelimit-remaining")).toBe("0");
    const limited = await fetch(server.url);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
    expect(((await limited.json()) as { status: number }).status).toBe(429);
  });
});
