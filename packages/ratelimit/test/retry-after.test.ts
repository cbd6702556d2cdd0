import { errorHandler } from "@svc/errors/express";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import type { Algorithm } from "../src/index.js";

// RFC 9110 §10.2.3: Retry-After is "how long the user agent ought to wait before making a
// follow-up request". Here it is the time until a request of the same cost is admitted, rounded
// up to whole seconds: one second earlier the request is still refused, at that second it passes.
// Each row sends `sent` requests at `at` (ms since the epoch, on the fake clock), then one more.

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

interface Row {
  algorithm: Algorithm;
  limit: number;
  burst?: number;
  /** Milliseconds into a 60 s window (windows start at multiples of 60 s). */
  into: number;
  retryAfter: number;
  why: string;
}

const WINDOW = 60_000;
const START = 1_800_000_000_000 - (1_800_000_000_000 % WINDOW);

const ROWS: Row[] = [
  { algorithm: "fixed-window", limit: 6, into: 0, retryAfter: 60, why: "the window's end" },
  { algorithm: "fixed-window", limit: 6, into: 30_000, retryAfter: 30, why: "the window's end" },
  {
    algorithm: "fixed-window",
    limit: 6,
    into: 59_500,
    retryAfter: 1,
    why: "0.5 s to the window's end, rounded up",
  },
  {
    algorithm: "sliding-window",
    limit: 6,
    into: 0,
    retryAfter: 70,
    why: "60 s to the next window, then 10 s until the 6 it inherits weigh 5",
  },
  {
    algorithm: "sliding-window",
    limit: 6,
    into: 30_000,
    retryAfter: 40,
    why: "30 s to the next window, then 10 s of decay",
  },
  {
    algorithm: "sliding-window",
    limit: 8,
    into: 0,
    retryAfter: 68,
    why: "60 s, then 7.5 s of decay, rounded up",
  },
  { algorithm: "gcra", limit: 6, into: 0, retryAfter: 10, why: "one emission interval, 60 s / 6" },
  { algorithm: "gcra", limit: 6, burst: 2, into: 0, retryAfter: 10, why: "one emission interval" },
];

describe("Retry-After is the wait until the request is admitted (fake clock, through the middleware)", () => {
  it.each(ROWS)(
    "$algorithm $limit per 60 s, all spent $into ms into a window → Retry-After $retryAfter ($why); refused 1 s earlier, admitted then",
    async ({ algorithm, limit, burst, into, retryAfter }) => {
      let now = START + into;
      const app = express();
      app.get(
        "/",
        rateLimit({ limit, windowMs: WINDOW, algorithm, ...(burst ? { burst } : {}), now: () => now }),
        (_req, res) => {
          res.end("ok");
        },
      );
      app.use(errorHandler({ logger: { error() {} } }));
      const server = await listen(app);
      closers.push(server.close);
      for (let i = 0; i < (burst ?? limit); i++) expect((await fetch(server.url)).status).toBe(200);
      const limited = await fetch(server.url);
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe(String(retryAfter));
      if (algorithm === "fixed-window") expect(retryAfter).toBeLessThanOrEqual(WINDOW / 1000);
      const sent = START + into;
      now = sent + (retryAfter - 1) * 1000;
      expect((await fetch(server.url)).status).toBe(429);
      now = sent + retryAfter * 1000;
      expect((await fetch(server.url)).status).toBe(200);
    },
  );
});
