import { Readable } from "node:stream";
import { errorHandler, HttpError } from "@svc/errors";
import express from "express";
import { vi } from "vitest";
import { type IdempotencyOptions, idempotency, markStarted } from "../src/idempotency.js";
import type { IdempotencyStore } from "../src/store.js";

export const PROBLEM_BASE = "https://errors.example/";

export interface TestApp {
  app: express.Express;
  /** Handler executions, by route. */
  calls: Record<string, number>;
}

/**
 * An Express app with the middleware in front of routes that answer in every way a handler
 * can: res.json, writeHead + write + end, a piped stream, raw bodies, failures.
 */
export function buildApp(
  options: IdempotencyOptions,
  hooks: {
    before?: (n: number) => Promise<void>;
    /** Sees every error on its way to the error handler (the middleware's 409 for a duplicate). */
    onError?: (err: unknown) => void;
  } = {},
): TestApp {
  const calls: Record<string, number> = {};
  const count = (route: string) => {
    calls[route] = (calls[route] ?? 0) + 1;
    return calls[route];
  };
  const app = express();
  // Stands in for the auth layer: the principal it would leave on the request.
  app.use((req, _res, next) => {
    const user = req.get("x-user");
    if (user) Object.assign(req, { principal: { id: user, roles: [], scopes: [], scheme: "test" } });
    next();
  });
  const guard = idempotency(options);

  app.post("/orders", express.json(), guard, async (req, res) => {
    const n = count("orders");
    await hooks.before?.(n);
    res.cookie("session", `s${n}`);
    res.set("X-RateLimit-Remaining", String(100 - n));
    res.location(`/orders/${n}`).status(201).json({ id: n, echo: req.body });
  });
  app.patch("/orders/:id", express.json(), guard, (req, res) => {
    const n = count("patch");
    res.json({ id: req.params.id, n, echo: req.body });
  });
  app.post("/write", express.json(), guard, (_req, res) => {
    const n = count("write");
    res.writeHead(201, { "Content-Type": "text/plain; charset=utf-8", Location: `/w/${n}` });
    res.write("alpha-");
    res.write(Buffer.from("beta-"));
    res.end(`gamma-${n}`);
  });
  app.post("/stream", express.json(), guard, (_req, res) => {
    const n = count("stream");
    res.status(201).type("application/octet-stream");
    const parts = Array.from({ length: 64 }, (_, i) => Buffer.alloc(4096, (i + n) % 256));
    Readable.from(parts).pipe(res);
  });
  app.post("/big", express.json(), guard, (req, res) => {
    count("big");
    res.type("text/plain").send("x".repeat(Number((req.body as { size?: number }).size ?? 0)));
  });
  app.post("/raw", express.raw({ type: "*/*" }), guard, (req, res) => {
    count("raw");
    res.status(201).json({ bytes: (req.body as Buffer).length });
  });
  app.post("/flaky", express.json(), guard, (_req, res, next) => {
    const n = count("flaky");
    if (n === 1) return next(new Error("database timeout"));
    res.status(201).json({ n });
  });
  app.post("/reject", express.json(), guard, (_req, res) => {
    const n = count("reject");
    markStarted(res);
    res.status(400).json({ n, problem: "quantity must be positive" });
  });
  // A validating middleware after the idempotency one: its 400 goes through next(err).
  app.post(
    "/checked",
    express.json(),
    guard,
    (req, _res, next) => {
      const qty = (req.body as { qty?: unknown }).qty;
      next(
        typeof qty === "number" ? undefined : new HttpError(400, "qty is required", { code: "invalid_body" }),
      );
    },
    (_req, res) => {
      const n = count("checked");
      res.status(201).json({ n });
    },
  );
  // Validates its input before it starts: a 400 here never reached the work.
  app.post("/validate", express.json(), guard, (req, res) => {
    const qty = (req.body as { qty?: unknown }).qty;
    if (typeof qty !== "number" || qty <= 0) {
      res.status(400).json({ problem: "qty must be a positive number", padding: "x".repeat(4096) });
      return;
    }
    res.locals.idempotency?.markStarted();
    const n = count("validate");
    res.status(201).json({ n, qty });
  });
  app.post("/nobody", guard, (_req, res) => {
    count("nobody");
    res.status(204).end();
  });
  app.get("/orders", guard, (_req, res) => {
    count("get");
    res.json([]);
  });
  app.use((err: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) => {
    hooks.onError?.(err);
    next(err);
  });
  app.use(errorHandler({ problemTypeBase: PROBLEM_BASE, logger: { error() {} } }));
  return { app, calls };
}

export function post(
  url: string,
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key === undefined ? {} : { "idempotency-key": key }),
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A promise with its resolve function outside, to hold a handler at a known point. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/** What {@link retriesDuringSlowHandler} saw. */
export interface SlowRun {
  first: { status: number; location: string | null };
  /** Status and Location of each retry sent while the first still ran. */
  retries: Array<[number, string | null]>;
  after: { status: number; location: string | null; replayed: string | null };
  /** Handler executions, by route. */
  calls: Record<string, number>;
}

/**
 * The lease of {@link retriesDuringSlowHandler}: one minute, renewed every 20 s. Time passes only
 * when the test moves it, so no real lease can run out under a loaded machine.
 */
export const SLOW = { leaseMs: 60_000, renewEveryMs: 20_000 } as const;

/**
 * A handler slower than its lease, with no real time in it. The first POST's handler is held on a
 * promise until the test lets it go; meanwhile `age(ms)` makes `ms` of store time pass (a
 * `MemoryStore`'s clock, the TTLs of a `RedisStore`'s records) and the renewal timer (a fake
 * `setInterval`) fires for the same `ms`, each renewal answered before time moves on. Retries go
 * out after two leases and after three and a third, the handler ends after four, and one more
 * request follows its response. `options` go to the middleware (`leaseMs` is {@link SLOW}'s).
 */
export async function retriesDuringSlowHandler(
  start: (
    options: IdempotencyOptions,
    hooks: NonNullable<Parameters<typeof buildApp>[1]>,
  ) => Promise<{ url: string; calls: Record<string, number> }>,
  inner: IdempotencyStore & { renew: NonNullable<IdempotencyStore["renew"]> },
  age: (ms: number) => Promise<void>,
  options: IdempotencyOptions = {},
): Promise<SlowRun> {
  let renewed = 0;
  /** A renewal answered false: the lease is lost for good, and the timer stops. */
  let lost = false;
  const store: IdempotencyStore = {
    claim: (...a) => inner.claim(...a),
    complete: (...a) => inner.complete(...a),
    release: (...a) => inner.release(...a),
    renew: async (...a) => {
      try {
        const owned = await inner.renew(...a);
        if (!owned) lost = true;
        return owned;
      } finally {
        renewed += 1;
      }
    },
  };
  const renewing = options.renewLease !== false;
  const hold = gate();
  const entered = gate();
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
  try {
    const { url, calls } = await start(
      { ...options, store, leaseMs: SLOW.leaseMs },
      {
        before: async (n) => {
          if (n !== 1) return;
          entered.open();
          await hold.promise;
        },
      },
    );
    /** `periods` renewal periods of store time, one at a time, each renewal due in it answered. */
    const elapse = async (periods: number) => {
      for (let i = 0; i < periods; i++) {
        await age(SLOW.renewEveryMs);
        const seen = renewed;
        await vi.advanceTimersByTimeAsync(SLOW.renewEveryMs);
        if (renewing && !lost) {
          await vi.waitFor(
            () => {
              if (renewed === seen) throw new Error("no lease renewal answered in this period");
            },
            { timeout: 10_000, interval: 1 },
          );
        }
      }
    };
    const send = async () => {
      const res = await post(`${url}/orders`, "slow", { a: 1 });
      await res.arrayBuffer();
      return res;
    };
    const firstPromise = post(`${url}/orders`, "slow", { a: 1 });
    await entered.promise;
    const retries: Array<[number, string | null]> = [];
    // Three periods to a lease: retries after two leases and after three and a third.
    for (const periods of [6, 4]) {
      await elapse(periods);
      const retry = await send();
      retries.push([retry.status, retry.headers.get("location")]);
    }
    await elapse(2);
    hold.open();
    const firstResponse = await firstPromise;
    await firstResponse.arrayBuffer();
    const after = await send();
    return {
      first: { status: firstResponse.status, location: firstResponse.headers.get("location") },
      retries,
      after: {
        status: after.status,
        location: after.headers.get("location"),
        replayed: after.headers.get("idempotent-replayed"),
      },
      calls,
    };
  } finally {
    hold.open();
    vi.useRealTimers();
  }
}
