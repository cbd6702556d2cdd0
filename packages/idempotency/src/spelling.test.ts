import { request } from "node:http";
import { createRequire } from "node:module";
import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { idempotency } from "./express.js";
import { MemoryStore } from "./memory-store.js";
import type { IdempotencyOptions } from "./step.js";

/** Express 4 (installed as `express4`): it matches paths the same way, and is still widely run. */
const express4 = createRequire(import.meta.url)("express4") as typeof express;

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** POST with the request target exactly as given (fetch would normalise it). */
function rawPost(
  base: string,
  target: string,
  key: string | undefined,
): Promise<{ status: number; replayed: boolean }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        method: "POST",
        path: target,
        headers: {
          "content-type": "application/json",
          ...(key === undefined ? {} : { "idempotency-key": key }),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, replayed: res.headers["idempotent-replayed"] === "true" }),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ amount: 10 }));
  });
}

const SPELLINGS = ["/transfers", "/Transfers", "/transfers/", "/TRANSFERS"];

/** A route handler through a pipeline with the step of `options`, counting its runs. */
function counter(options: IdempotencyOptions) {
  const runs: string[] = [];
  const svc = expressAdapter(createPipeline());
  const route = { idempotency: idempotency(options) };
  const handler = svc.handle((req: express.Request) => {
    runs.push(req.originalUrl);
    return reply({ id: runs.length }, { status: 202 });
  }, route);
  return { runs, handler };
}

function finish(app: express.Express) {
  app.use((_req: express.Request, res: express.Response) => {
    res.status(404).json({ title: "Not Found" });
  });
  app.use(errorHandler({ logger: { error() {} } }));
}

describe.each([
  ["Express 5", express],
  ["Express 4", express4],
])("%s", (_name, framework) => {
  /** One step on every route of the app, as a service configures it once for all of them. */
  async function appLevel(options: IdempotencyOptions, configure?: (app: express.Express) => void) {
    const { runs, handler } = counter(options);
    const app = framework();
    configure?.(app);
    app.use(framework.json());
    app.post("/transfers", handler);
    app.post("/orders/:id/pay", handler);
    finish(app);
    server = await listen(app);
    return { url: server.url, runs };
  }

  describe("one step on every route: spellings of one route are one key", () => {
    it("four spellings of POST /transfers with one key → the handler ran once, three replays", async () => {
      const { url, runs } = await appLevel({ store: new MemoryStore() });
      const results = [];
      for (const target of SPELLINGS) results.push(await rawPost(url, target, "k-1"));
      expect(results.map((r) => r.status)).toEqual([202, 202, 202, 202]);
      expect(results.map((r) => r.replayed)).toEqual([false, true, true, true]);
      expect(runs).toEqual(["/transfers"]);
    });

    it("absolute-form target http://host/transfers with the same key → a replay", async () => {
      const { url, runs } = await appLevel({});
      await rawPost(url, "/transfers", "k");
      const absolute = await rawPost(url, `${url}/transfers`, "k");
      expect(absolute).toEqual({ status: 202, replayed: true });
      expect(runs).toHaveLength(1);
    });

    it("percent-encoded parameter /orders/a%62c/pay and /orders/abc/pay with one key → ran once", async () => {
      const { url, runs } = await appLevel({});
      expect((await rawPost(url, "/orders/abc/pay", "k")).replayed).toBe(false);
      expect(await rawPost(url, "/orders/a%62c/pay", "k")).toEqual({ status: 202, replayed: true });
      expect(runs).toHaveLength(1);
    });

    it("required: ['/transfers'] and no key → 400 for every spelling, the handler never runs", async () => {
      const { url, runs } = await appLevel({ required: ["/transfers"] });
      for (const target of SPELLINGS) expect((await rawPost(url, target, undefined)).status).toBe(400);
      expect((await rawPost(url, `${url}/Transfers/`, undefined)).status).toBe(400);
      expect(runs).toEqual([]);
      // Another route stays optional.
      expect((await rawPost(url, "/orders/1/pay", undefined)).status).toBe(202);
    });

    it("required: predicate over the canonical path → 400 for /PAYMENTS/ too", async () => {
      const seen: string[] = [];
      const { url } = await appLevel({
        required: (path) => {
          seen.push(path);
          return path.startsWith("/orders/");
        },
      });
      expect((await rawPost(url, "/ORDERS/1/PAY/", undefined)).status).toBe(400);
      expect(seen).toEqual(["/orders/1/pay"]);
    });

    it("case sensitive routing: /Transfers is another route (404, never run), /transfers needs its key", async () => {
      const { url, runs } = await appLevel({ required: ["/transfers"] }, (app) => {
        app.set("case sensitive routing", true);
      });
      expect((await rawPost(url, "/transfers", undefined)).status).toBe(400);
      expect((await rawPost(url, "/Transfers", undefined)).status).toBe(404);
      expect(runs).toEqual([]);
    });

    it("strict routing: /transfers/ is not /transfers (404 with the same key, not a replay)", async () => {
      const { url, runs } = await appLevel({}, (app) => {
        app.set("strict routing", true);
      });
      expect((await rawPost(url, "/transfers", "k")).status).toBe(202);
      expect(await rawPost(url, "/transfers/", "k")).toEqual({ status: 404, replayed: false });
      expect(runs).toHaveLength(1);
    });

    it("a 404 for an unknown spelling with a key → not stored; the real route with that key runs", async () => {
      const { url, runs } = await appLevel({});
      expect((await rawPost(url, "//transfers", "k")).status).toBe(404);
      expect(await rawPost(url, "/transfers", "k")).toEqual({ status: 202, replayed: false });
      expect(runs).toHaveLength(1);
    });
  });

  describe("the key is scoped to the route the router runs, a mounted router included", () => {
    async function routeLevel(options: IdempotencyOptions) {
      const { runs, handler } = counter(options);
      const app = framework();
      const router = framework.Router();
      router.post("/transfers", framework.json(), handler);
      app.use("/api", router);
      app.post("/transfers", framework.json(), handler);
      finish(app);
      server = await listen(app);
      return { url: server.url, runs };
    }

    it("four spellings with one key → the handler ran once", async () => {
      const { url, runs } = await routeLevel({ store: new MemoryStore(), required: true });
      for (const target of SPELLINGS) expect((await rawPost(url, target, "k")).status).toBe(202);
      expect(runs).toHaveLength(1);
    });

    it("mounted router: /api/transfers, /API/Transfers/ with one key → ran once", async () => {
      const store = new MemoryStore();
      const { url, runs } = await routeLevel({ store, required: true });
      expect((await rawPost(url, "/api/transfers", "k")).replayed).toBe(false);
      expect(await rawPost(url, "/API/Transfers/", "k")).toEqual({ status: 202, replayed: true });
      expect(runs).toHaveLength(1);
    });

    it("required: true and no key → 400 for every spelling", async () => {
      const { url, runs } = await routeLevel({ required: true });
      for (const target of SPELLINGS) expect((await rawPost(url, target, undefined)).status).toBe(400);
      expect(runs).toEqual([]);
    });
  });
});

describe("route parameters keep their case (Express matches the route case-insensitively, the handler gets the value as sent)", () => {
  for (const [label, framework] of [
    ["Express 5", express],
    ["Express 4", express4],
  ] as const) {
    it(`${label}: /accounts/ABC/charges then /accounts/abc/charges with one key → 422, the handler ran once`, async () => {
      const { runs, handler } = counter({ store: new MemoryStore() });
      const app = framework();
      app.post("/accounts/:id/charges", framework.json(), handler);
      app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
      expect(await rawPost(server.url, "/accounts/ABC/charges", "k")).toEqual({
        status: 202,
        replayed: false,
      });
      // Another account: not a retry of the first charge, so never its replay (draft §2.7: 422).
      expect((await rawPost(server.url, "/accounts/abc/charges", "k")).status).toBe(422);
      // Another spelling of the first request is still its replay.
      expect(await rawPost(server.url, "/Accounts/ABC/Charges/", "k")).toEqual({
        status: 202,
        replayed: true,
      });
      expect(runs).toEqual(["/accounts/ABC/charges"]);
    });
  }
});

describe("construction", () => {
  it.each([
    [{ required: [] }, "ERR_SVC_IDEMPOTENCY_REQUIRED"],
    [{ required: ["transfers"] }, "ERR_SVC_IDEMPOTENCY_REQUIRED"],
    [{ required: ["/transfers?x"] }, "ERR_SVC_IDEMPOTENCY_REQUIRED"],
    [{ required: "yes" }, "ERR_SVC_IDEMPOTENCY_REQUIRED"],
    [{ routing: { caseSensitive: "no" } }, "ERR_SVC_IDEMPOTENCY_ROUTING"],
    [{ routing: { trailingSlash: true } }, "ERR_SVC_IDEMPOTENCY_ROUTING"],
    [{ storeStatus: 400 }, "ERR_SVC_IDEMPOTENCY_STORE_STATUS"],
    [{ maxStoredBytes: -1 }, "ERR_SVC_IDEMPOTENCY_MAX_STORED_BYTES"],
    [{ scope: "user" }, "ERR_SVC_IDEMPOTENCY_SCOPE"],
  ])("%o → TypeError %s", (options, code) => {
    let caught: unknown;
    try {
      idempotency(options as unknown as IdempotencyOptions);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TypeError);
    expect((caught as { code?: string }).code).toBe(code);
  });
});
