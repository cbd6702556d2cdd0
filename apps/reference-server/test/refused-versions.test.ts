import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, type Service, startService } from "../src/server.js";
import { frameworkEnv, watchResponses } from "./harness.js";

/** A version prefix as long as a request line may be (Node's 16 KB header limit), each different. */
const madeUp = (i: number) => `/v${String(i).padStart(8000, "9")}`;

/** The log lines the service writes, parsed, and the raw text of each. */
interface Logged {
  entries: Record<string, unknown>[];
  raw: string[];
}

/** A service with a rate limit of `max` per window, its log kept in `logged`. */
async function serviceWith(max: number, logged: Logged): Promise<Service> {
  const logger = createLogger(
    { logLevel: "info" },
    {
      write: (line: string) => {
        logged.raw.push(line);
        logged.entries.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  const config = loadConfig({
    PORT: "0",
    ...frameworkEnv(),
    DATABASE_URL: "sqlite::memory:",
    RATE_LIMIT_MAX: String(max),
    RATE_LIMIT_WINDOW_SECONDS: "600",
  });
  const service = await startService(config, { logger });
  watchResponses(service.server as Server);
  return service;
}

/**
 * The lines logged for the request whose correlation id is `id` (a request logger's lines carry
 * it as `reqId`), once its access line is in.
 */
async function linesOf(
  logged: Logged,
  id: string,
): Promise<{ entry: Record<string, unknown>; raw: string }[]> {
  for (let i = 0; i < 40; i++) {
    const found = logged.entries.flatMap((entry, n) =>
      entry.correlationId === id || entry.reqId === id ? [{ entry, raw: logged.raw[n] as string }] : [],
    );
    if (found.some(({ entry }) => entry.statusCode !== undefined)) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no access line for ${id}`);
}

describe("a version the API does not have counts against the client's rate limit", () => {
  const logged: Logged = { entries: [], raw: [] };
  let service: Service;
  beforeAll(async () => {
    service = await serviceWith(3, logged);
  });
  afterAll(() => service?.close());

  it("GET /v<8,000 digits>/employees ×3 → 404s spending the budget; the 4th and a GET /employees → 429", async () => {
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${service.url}${madeUp(i)}/employees`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ status: 404 });
      remaining.push(res.headers.get("x-ratelimit-remaining"));
    }
    expect(remaining).toEqual(["2", "1", "0"]);
    const fourth = await fetch(`${service.url}${madeUp(3)}/employees`);
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(fourth.headers.get("api-supported-versions")).toBe("1, 2");
    await fourth.arrayBuffer();
    const read = await fetch(`${service.url}/employees`);
    expect(read.status).toBe(429);
    await read.arrayBuffer();
  });
});

describe("a 4xx is one log line: the access line", () => {
  const logged: Logged = { entries: [], raw: [] };
  let service: Service;
  beforeAll(async () => {
    service = await serviceWith(1000, logged);
  });
  afterAll(() => service?.close());

  it.each([
    ["GET /v<8,000 digits>/employees → 404", `${madeUp(0)}/employees`, {}, 404],
    [
      "GET /employees/1, Bearer not.a.token → 401",
      "/employees/1",
      { authorization: "Bearer not.a.token" },
      401,
    ],
    ["GET /no-such-collection → 404", "/no-such-collection", {}, 404],
    [
      "GET /employees, User-Agent of 8,000 characters → 401",
      "/employees",
      { "user-agent": "a".repeat(8000) },
      401,
    ],
  ] as const)("%s: one line at info, under 2 KB, no error or stack", async (_, path, headers, status) => {
    const id = `refused-${status}-${Math.random().toString(36).slice(2)}`;
    const res = await fetch(`${service.url}${path}`, { headers: { ...headers, "x-correlation-id": id } });
    expect(res.status).toBe(status);
    await res.arrayBuffer();
    const lines = await linesOf(logged, id);
    expect(lines.map(({ entry }) => [entry.level, entry.msg, entry.statusCode])).toEqual([
      [30, "request completed", status],
    ]);
    const [{ entry, raw }] = lines as [{ entry: Record<string, unknown>; raw: string }];
    expect(raw.length).toBeLessThan(2048);
    expect(entry.err).toBeUndefined();
    expect(raw).not.toContain("stack");
  });

  it("GET /v<8,000 digits>/employees → its message quotes 32 of the digits", async () => {
    const res = await fetch(`${service.url}${madeUp(1)}/employees`);
    expect(res.status).toBe(404);
    const record = (await res.json()) as { message: string };
    expect(record.message).toMatch(/^API version 9{32}… \(path \/v9{30}…\) is not supported/);
  });
});
