import { request as httpRequest, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAdaptorServer } from "@hono/node-server";
import { errorHandler } from "@svc/errors/express";
import { onError, withErrors } from "@svc/errors/fetch";
import { toResponse } from "@svc/kernel/fetch";
import { type Listening, listenOn } from "@svc/test-utils";
import express from "express";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { rateLimit as expressRateLimit } from "../src/express.js";
import { type FetchRateLimitOptions, rateLimit } from "../src/fetch.js";

// A Fetch server other than @hono/node-server (Deno.serve, Bun.serve, a worker) calls the handler
// with the Request alone: the limiter has no connection to read the client's address from.

const opened: Listening[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

/** Warnings the limiter logged. */
function recorder() {
  const lines: { obj: unknown; msg: string }[] = [];
  return { lines, logger: { warn: (obj: unknown, msg: string) => void lines.push({ obj, msg }) } };
}

/** `fetch` served over HTTP as a server that gives no connection: the handler gets the Request only. */
async function serveBare(fetch: (request: Request) => Response | Promise<Response>): Promise<string> {
  const server = createAdaptorServer({ fetch: (request: Request) => fetch(request) }) as Server;
  const listening = await listenOn(server);
  opened.push(listening);
  return listening.url;
}

/** A Hono app limited by `options`, served with no connection; `errors`, what its error handler logged. */
function honoApp(options: FetchRateLimitOptions, errors: unknown[] = []): Promise<string> {
  const app = new Hono();
  app.use(rateLimit(options));
  app.get("/", (c) => c.text("ok"));
  app.onError(onError({ logger: { error: (obj: { err?: unknown }) => void errors.push(obj.err) } }));
  return serveBare((request) => app.fetch(request));
}

async function statuses(url: string, count: number, headers: Record<string, string> = {}): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    seen.push(res.status);
  }
  return seen;
}

describe("ratelimit/fetch: a request with no principal and no client address is refused, never passed", () => {
  it.each(["open", "closed"] as const)(
    "Hono, no connection, no key, failMode %s: GET ×3 → 500 ×3 (code rate_limit_no_client_address), one warning naming connection and key",
    async (failMode) => {
      const { lines, logger } = recorder();
      const errors: unknown[] = [];
      const url = await honoApp({ limit: 2, windowMs: 60_000, failMode, logger }, errors);
      expect(await statuses(url, 3)).toEqual([500, 500, 500]);
      // Each 500 is logged by the error handler, its cause naming the options.
      expect(errors).toHaveLength(3);
      expect(errors[0]).toMatchObject({
        code: "rate_limit_no_client_address",
        cause: { message: expect.stringMatching(/`connection`.*clientAddressHeader/) },
      });
      expect(lines).toHaveLength(1);
      expect(lines[0]?.msg).toMatch(/neither a principal nor a client address/);
      expect(lines[0]?.msg).toMatch(/`connection`/);
      expect(lines[0]?.msg).toMatch(/`key`/);
      expect(lines[0]?.msg).not.toMatch(/store/);
    },
  );

  it("Hono, no connection, a key of its own: GET ×3 → 200, 200, 429", async () => {
    const url = await honoApp({
      limit: 2,
      windowMs: 60_000,
      key: () => "everyone",
      logger: recorder().logger,
    });
    expect(await statuses(url, 3)).toEqual([200, 200, 429]);
  });

  it("Hono, connection: () => ({ address }): GET ×3 → 200, 200, 429", async () => {
    const url = await honoApp({
      limit: 2,
      windowMs: 60_000,
      connection: () => ({ address: "203.0.113.7" }),
      logger: recorder().logger,
    });
    expect(await statuses(url, 3)).toEqual([200, 200, 429]);
  });

  it(".wrap(handler) with no info, no connection and no key → ERR_SVC_RATELIMIT_CONNECTION at once", () => {
    const limit = rateLimit({ limit: 2, windowMs: 60_000 });
    expect(() => limit.wrap(() => new Response("ok"))).toThrow(
      expect.objectContaining({
        code: "ERR_SVC_RATELIMIT_CONNECTION",
        message: expect.stringMatching(/connection/),
      }),
    );
    expect(() => rateLimit({ limit: 2, key: "client" }).wrap(() => new Response("ok"))).toThrow(
      expect.objectContaining({ code: "ERR_SVC_RATELIMIT_CONNECTION" }),
    );
  });

  it(".wrap(handler, info), or with a key, trustProxy or connection → no refusal at construction", async () => {
    const handler = () => new Response("ok");
    expect(() => rateLimit({ limit: 2 }).wrap(handler, () => ({ address: "203.0.113.7" }))).not.toThrow();
    expect(() => rateLimit({ limit: 2, key: () => "k" }).wrap(handler)).not.toThrow();
    expect(() => rateLimit({ limit: 2, trustProxy: 1 }).wrap(handler)).not.toThrow();
    expect(() => rateLimit({ limit: 2, connection: () => undefined }).wrap(handler)).not.toThrow();
  });

  it(".wrap(handler) with connection answering no address: GET → 500, never 200", async () => {
    const { logger } = recorder();
    const limited = rateLimit({ limit: 2, connection: () => undefined, logger }).wrap(
      () => new Response("ok"),
    );
    const url = await serveBare(withErrors(limited, { logger: { error() {} } }));
    expect(await statuses(url, 3)).toEqual([500, 500, 500]);
  });
});

describe("ratelimit/fetch: clientAddressHeader", () => {
  const options = { limit: 2, windowMs: 60_000, clientAddressHeader: "cf-connecting-ip" } as const;

  it("CF-Connecting-IP: 198.51.100.4 ×3, then 198.51.100.5 → 200, 200, 429, then 200", async () => {
    const url = await honoApp({ ...options, logger: recorder().logger });
    expect(await statuses(url, 3, { "CF-Connecting-IP": "198.51.100.4" })).toEqual([200, 200, 429]);
    expect(await statuses(url, 1, { "CF-Connecting-IP": "198.51.100.5" })).toEqual([200]);
  });

  it("no CF-Connecting-IP → 500 (no address), never 200", async () => {
    const url = await honoApp({ ...options, logger: recorder().logger });
    expect(await statuses(url, 2)).toEqual([500, 500]);
  });

  it(".wrap(handler) with clientAddressHeader and no info → counted by the field", async () => {
    const limited = rateLimit({ ...options, logger: recorder().logger }).wrap(() => new Response("ok"));
    const url = await serveBare(withErrors(limited, { logger: { error() {} } }));
    expect(await statuses(url, 3, { "CF-Connecting-IP": "2001:db8::1" })).toEqual([200, 200, 429]);
  });

  it.each([
    [
      "not a field name",
      { clientAddressHeader: "cf connecting ip" },
      /clientAddressHeader must be a field name/,
    ],
    ["not a string", { clientAddressHeader: 1 }, /clientAddressHeader must be a field name/],
    [
      "with connection",
      { clientAddressHeader: "x-real-ip", connection: () => undefined },
      /without connection and trustProxy/,
    ],
    [
      "with trustProxy",
      { clientAddressHeader: "x-real-ip", trustProxy: "loopback" },
      /without connection and trustProxy/,
    ],
  ])("clientAddressHeader %s → ERR_SVC_RATELIMIT_CLIENT_ADDRESS_HEADER", (_name, given, message) => {
    expect(() => rateLimit({ limit: 2, ...(given as object) })).toThrow(
      expect.objectContaining({
        code: "ERR_SVC_RATELIMIT_CLIENT_ADDRESS_HEADER",
        message: expect.stringMatching(message),
      }),
    );
  });
});

describe("ratelimit/fetch: the settling copy of a content-coded response", () => {
  it("skipFailedRequests around a Response with Content-Encoding: gzip → the copy is sent as it is (encodeBody manual)", async () => {
    const coded = toResponse(
      { status: 200, fields: { "content-encoding": "gzip" }, vary: [], body: new Uint8Array([31, 139]) },
      "GET",
    );
    const limited = rateLimit({ limit: 5, key: () => "k", skipFailedRequests: true }).wrap(() => coded);
    const response = await limited(new Request("http://localhost/"));
    expect(response).not.toBe(coded);
    expect((response as { encodeBody?: unknown }).encodeBody).toBe("manual");
    expect(response.headers.get("content-encoding")).toBe("gzip");
  });
});

describe("a Unix socket with no proxy trusted (no client address) on Express", () => {
  function get(socketPath: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ socketPath, path: "/" }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end();
    });
  }

  it.each(["open", "closed"] as const)("failMode %s: GET ×2 → 500 ×2, not passed", async (failMode) => {
    const { lines, logger } = recorder();
    const app = express();
    app.get("/", expressRateLimit({ limit: 5, windowMs: 60_000, failMode, logger }), (_req, res) => {
      res.send("ok");
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const path = join(tmpdir(), `ratelimit-${process.pid}-${Math.random().toString(36).slice(2)}.sock`);
    const server = app.listen(path);
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    try {
      expect([await get(path), await get(path)]).toEqual([500, 500]);
      expect(lines.map((l) => l.msg)).toEqual([expect.stringMatching(/trustProxy/)]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
