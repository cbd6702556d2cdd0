import { errorHandler } from "@svc/errors/express";
import { listen } from "@svc/test-utils";
import express from "express";
import { rateLimit } from "../src/express.js";
import type { RateLimitOptions } from "../src/index.js";

/**
 * Sends `count` requests to `url` one after the other: their statuses, and the last response
 * (for its headers).
 *
 * @example const { statuses, last } = await inTurn(url, 3); // [200, 200, 429]
 */
export async function inTurn(
  url: string,
  count: number,
  init?: RequestInit,
): Promise<{ statuses: number[]; last: Response }> {
  const statuses: number[] = [];
  let last: Response | undefined;
  for (let i = 0; i < count; i++) {
    last = await fetch(url, init);
    statuses.push(last.status);
  }
  if (!last) throw new Error("inTurn: count must be at least 1");
  return { statuses, last };
}

/** A started `limitedRoute` server. */
export interface LimitedRoute {
  url: string;
  /** How many requests reached the route behind the limiter. */
  reached: () => number;
  /** What the error handler logged (`err` of each entry). */
  logged: unknown[];
  close: () => Promise<void>;
}

/**
 * An Express server whose `GET /` is `rateLimit(options)` then a route answering "ok", with
 * @svc/errors' error handler: the test sees how many requests got past the limiter and what was
 * logged as a failure.
 */
export async function limitedRoute(options: RateLimitOptions): Promise<LimitedRoute> {
  let reached = 0;
  const logged: unknown[] = [];
  const app = express();
  app.get("/", rateLimit(options), (_req, res) => {
    reached++;
    res.end("ok");
  });
  app.use(errorHandler({ logger: { error: (entry: { err: unknown }) => logged.push(entry.err) } }));
  const server = await listen(app);
  return { url: server.url, reached: () => reached, logged, close: server.close };
}
