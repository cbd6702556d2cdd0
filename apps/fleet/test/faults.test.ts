import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serviceUrl, type ThrowawayRedis, throwawayRedis, uniquePrefix } from "@svc/test-utils";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../src/build.js";
import { type Fleet, startFleet } from "../src/fleet.js";
import { basic, call, type Reply } from "../src/http.js";
import { createInstance, type Instance } from "../src/instance.js";
import { startLoad, waitFor } from "../src/load.js";
import { type TcpProxy, tcpProxy } from "../src/tcp-proxy.js";
import { postgresUrl } from "./setup.js";

const ADMIN = { authorization: basic("admin") };
const databaseUrl = postgresUrl();
const redisUrl = serviceUrl("REDIS_URL");

function hasRedisServer(): boolean {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    if (process.env.CI) throw new Error("redis-server is missing: the fault suites need it in CI");
    console.warn("[skip] redis-server not found: skipping the Redis outage suite");
    return false;
  }
}

/** Every response a load saw, by status; `refused` counts requests that got no response. */
class Tally {
  readonly statuses = new Map<number | "refused", number>();
  readonly withoutRetryAfter: Reply[] = [];
  add(reply: Reply | undefined): void {
    const key = reply?.status ?? "refused";
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    if (reply && (reply.status === 503 || reply.status === 429) && !reply.header("retry-after"))
      this.withoutRetryAfter.push(reply);
  }
  codes(): Array<number | "refused"> {
    return [...this.statuses.keys()].sort();
  }
}

async function tally(t: Tally, send: () => Promise<Reply>): Promise<void> {
  try {
    t.add(await send());
  } catch {
    t.add(undefined);
  }
}

/** What the error record of a 503 must look like: spec part 7, `Retry-After` per part 8 rule 2. */
function expectUnavailable(reply: Reply, path: string): void {
  expect(reply.status).toBe(503);
  expect(Number(reply.header("retry-after"))).toBeGreaterThan(0);
  expect(reply.json()).toMatchObject({ status: 503, error: "Service Unavailable", path });
}

describe.skipIf(!hasRedisServer())("Redis stops mid-load (a throw-away redis-server)", () => {
  let redis: ThrowawayRedis;
  let instance: Instance;
  /** The same service with `RATE_LIMIT_FAIL_MODE=closed`, on the same Redis. */
  let closed: Instance;
  beforeAll(async () => {
    ensureBuilt();
    redis = await throwawayRedis();
    const env = (mode: string) => ({
      DATABASE_URL: "sqlite::memory:",
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: uniquePrefix("redis-fault"),
      RATE_LIMIT_MAX: "100000",
      RATE_LIMIT_FAIL_MODE: mode,
    });
    instance = await createInstance("redis-fault-open", env("open"));
    closed = await createInstance("redis-fault-closed", env("closed"));
    await Promise.all([instance.start(), closed.start()]);
  }, 120_000);
  afterAll(async () => {
    await instance?.kill("SIGKILL");
    await closed?.kill("SIGKILL");
    await redis?.stop();
  });
  afterEach((context) => {
    if (context.task.result?.state === "fail") console.error(instance?.output().slice(-6000));
  });

  it("rate limit passes through (open) or answers 503 (closed), idempotent POSTs get 503 + Retry-After (never a duplicate), /ready 503; recovery without a restart", async () => {
    const pid = instance.pid;
    const author = `redis-${randomUUID()}`;
    const post = (key: string) =>
      call(`${instance.url}/products/1/reviews`, {
        method: "POST",
        headers: { ...ADMIN, "idempotency-key": key },
        body: { author, rating: 5, comment: "redis" },
      });
    const acknowledged = await post("before-outage");
    expect(acknowledged.status).toBe(201);

    const t = new Tally();
    const load = startLoad(4, async (w, i) => {
      if (w % 2 === 0) await tally(t, () => call(`${instance.url}/employees?size=5`, { headers: ADMIN }));
      else await tally(t, () => post(`load-${w}-${i}-${randomUUID()}`));
    });
    try {
      await new Promise((r) => setTimeout(r, 300));
      await redis.stop();
      await waitFor("/ready to report Redis down", async () => {
        const ready = await call(`${instance.url}/ready`);
        return ready.status === 503;
      });
      const ready = await call(`${instance.url}/ready`);
      expectUnavailable(ready, "/ready");
      expect(ready.json()).toMatchObject({ checks: { database: "UP", redis: "DOWN" } });

      // RATE_LIMIT_FAIL_MODE=open: requests pass, without rate-limit headers (nothing was counted).
      const read = await call(`${instance.url}/employees?size=1`, { headers: ADMIN });
      expect(read.status).toBe(200);
      expect(read.header("x-ratelimit-remaining")).toBeUndefined();

      // RATE_LIMIT_FAIL_MODE=closed: every limited request is a 503 with Retry-After instead.
      expectUnavailable(await call(`${closed.url}/employees?size=1`, { headers: ADMIN }), "/employees");

      // The idempotency store cannot tell a retry from a first attempt: 503, never a second review.
      expectUnavailable(await post("before-outage"), "/products/1/reviews");
      expectUnavailable(await post(`fresh-${randomUUID()}`), "/products/1/reviews");
      await new Promise((r) => setTimeout(r, 500));

      await redis.start();
      await waitFor("/ready to recover", async () => (await call(`${instance.url}/ready`)).status === 200);
      const after = await call(`${instance.url}/employees?size=1`, { headers: ADMIN });
      expect(after.status).toBe(200);
      expect(after.header("x-ratelimit-remaining")).toBeDefined();
      expect((await post(`after-${randomUUID()}`)).status).toBe(201);
      await waitFor(
        "the closed instance to recover",
        async () => (await call(`${closed.url}/ready`)).status === 200,
      );
      expect((await call(`${closed.url}/employees?size=1`, { headers: ADMIN })).status).toBe(200);
    } finally {
      await load.stop();
    }
    expect(instance.pid).toBe(pid);
    expect(t.codes()).toEqual(expect.arrayContaining([200, 201, 503]));
    expect(t.codes().every((c) => c === 200 || c === 201 || c === 503)).toBe(true);
    expect(t.withoutRetryAfter).toEqual([]);
    // The review acknowledged before the outage exists once: the retry during the outage added none.
    const reviews = await call(`${instance.url}/products/1/reviews?author=${author}&size=100`, {
      headers: ADMIN,
    });
    const created = reviews.json<{ page: { totalElements: number } }>().page.totalElements;
    expect(created).toBe((t.statuses.get(201) ?? 0) + 2);
    expect(instance.output()).not.toContain('"statusCode":500');
  }, 60_000);
});

describe.skipIf(!databaseUrl || !redisUrl)("PostgreSQL unreachable (a TCP proxy in front of it, cut)", () => {
  let proxy: TcpProxy;
  let fleet: Fleet;
  let url: string;
  beforeAll(async () => {
    ensureBuilt();
    const target = new URL(databaseUrl ?? "");
    proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(target);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    fleet = await startFleet({
      databaseUrl: databaseUrl ?? "",
      databaseUrlForInstances: viaProxy.toString(),
      redisUrl: redisUrl ?? "",
      instances: 1,
      proxy: false,
      label: "pgfault",
      env: { RATE_LIMIT_MAX: "100000" },
    });
    url = fleet.instances[0]?.url ?? "";
  }, 120_000);
  afterAll(async () => {
    await fleet?.close();
    await proxy?.close();
  }, 30_000);
  afterEach((context) => {
    if (context.task.result?.state === "fail") console.error(fleet?.diagnostics());
  });

  it("503 with Retry-After (never 500), /ready 503, and recovery without a restart", async () => {
    const pid = fleet.instances[0]?.pid;
    const t = new Tally();
    const load = startLoad(4, async (w, i) => {
      if (w % 2 === 0) await tally(t, () => call(`${url}/employees?size=5`, { headers: ADMIN }));
      else
        await tally(t, () =>
          call(`${url}/departments`, {
            method: "POST",
            headers: ADMIN,
            body: { name: `pg-${w}-${i}-${randomUUID()}`, city: "Oslo" },
          }),
        );
    });
    try {
      await new Promise((r) => setTimeout(r, 300));
      // Refused: every pooled connection is reset, and new ones are refused.
      await proxy.cut("refuse");
      expectUnavailable(await call(`${url}/employees?size=1`, { headers: ADMIN }), "/employees");
      expectUnavailable(
        await call(`${url}/departments`, { method: "POST", headers: ADMIN, body: { name: "x", city: "y" } }),
        "/departments",
      );
      const ready = await call(`${url}/ready`);
      expectUnavailable(ready, "/ready");
      expect(ready.json()).toMatchObject({ checks: { database: "DOWN", redis: "UP" } });
      // Partitioned: connections are accepted and never answered; the pool's connect timeout ends it.
      await proxy.cut("blackhole");
      expectUnavailable(await call(`${url}/employees?size=1`, { headers: ADMIN }), "/employees");
      await proxy.restore();
      await waitFor("/ready to recover", async () => (await call(`${url}/ready`)).status === 200);
      expect((await call(`${url}/employees?size=1`, { headers: ADMIN })).status).toBe(200);
    } finally {
      await load.stop();
    }
    expect(fleet.instances[0]?.pid).toBe(pid);
    expect(t.codes()).toEqual(expect.arrayContaining([200, 201, 503]));
    expect(t.codes().every((c) => c === 200 || c === 201 || c === 503)).toBe(true);
    expect(t.withoutRetryAfter).toEqual([]);
    expect(fleet.instances[0]?.output()).not.toContain('"statusCode":500');
  }, 60_000);
});

/**
 * A POST whose body arrives in two parts, `gapMs` apart: a request in flight for that long.
 * `Expect: 100-continue` makes the server say when it has the request (RFC 9110 §10.1.1): only
 * then is the first half sent and `started` resolved, so the request is known to be in flight and
 * not just bytes in a socket buffer. `done` resolves with the status, or the error code.
 */
function slowPost(
  base: string,
  path: string,
  body: object,
  gapMs: number,
): { done: Promise<number | string>; started: Promise<void> } {
  const payload = Buffer.from(JSON.stringify(body));
  const half = Math.floor(payload.length / 2);
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const done = new Promise<number | string>((resolve) => {
    const req = request(`${base}${path}`, {
      method: "POST",
      agent: false,
      headers: {
        ...ADMIN,
        "content-type": "application/json",
        "content-length": String(payload.length),
        expect: "100-continue",
      },
    });
    req.on("continue", () => {
      req.write(payload.subarray(0, half));
      markStarted();
      setTimeout(() => req.end(payload.subarray(half)), gapMs);
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.flushHeaders();
  });
  return { done, started };
}

describe("SIGTERM and kill -9", () => {
  const instances: Instance[] = [];
  const dirs: string[] = [];
  beforeAll(() => ensureBuilt(), 120_000);
  afterAll(async () => {
    await Promise.all(instances.map((i) => i.kill("SIGKILL")));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  async function launch(name: string, env: Record<string, string>): Promise<Instance> {
    const instance = await createInstance(name, { LOG_LEVEL: "info", RATE_LIMIT_MAX: "100000", ...env });
    instances.push(instance);
    return instance;
  }

  it("SIGTERM under load: in-flight requests complete, new connections are refused, exit 0", async () => {
    const instance = await launch("sigterm", {
      DATABASE_URL: "sqlite::memory:",
      SHUTDOWN_GRACE_SECONDS: "10",
    });
    await instance.start();
    const t = new Tally();
    const load = startLoad(4, (_w, i) =>
      tally(t, () => call(`${instance.url}/employees?size=${(i % 10) + 1}`, { headers: ADMIN })),
    );
    await new Promise((r) => setTimeout(r, 300));
    const uploads = Array.from({ length: 5 }, (_, i) =>
      slowPost(instance.url, "/departments", { name: `sigterm-${i}-${randomUUID()}`, city: "Oslo" }, 800),
    );
    await Promise.all(uploads.map((u) => u.started));
    await new Promise((r) => setTimeout(r, 100));
    const exit = instance.kill("SIGTERM");
    // The listener closes at once: a new connection is refused while the uploads still run.
    await waitFor("new connections to be refused", async () => {
      try {
        await call(`${instance.url}/health`, { timeoutMs: 1000 });
        return false;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === "ECONNREFUSED";
      }
    });
    expect(await Promise.all(uploads.map((u) => u.done))).toEqual([201, 201, 201, 201, 201]);
    const ended = await exit;
    await load.stop();
    expect(ended).toMatchObject({ code: 0, signal: null });
    expect(t.statuses.get(200) ?? 0).toBeGreaterThan(0);
    // Requests on the load's connections either completed or found the port closed; none failed.
    expect(t.codes().every((c) => c === 200 || c === "refused")).toBe(true);
    expect(instance.output()).toContain("shutting down: refusing new connections");
  }, 120_000);

  it("a request that outlasts SHUTDOWN_GRACE_SECONDS ends the process with exit code 1", async () => {
    const instance = await launch("grace", { DATABASE_URL: "sqlite::memory:", SHUTDOWN_GRACE_SECONDS: "1" });
    await instance.start();
    const stuck = slowPost(
      instance.url,
      "/departments",
      { name: `stuck-${randomUUID()}`, city: "Oslo" },
      60_000,
    );
    await stuck.started;
    await new Promise((r) => setTimeout(r, 100));
    expect(await instance.kill("SIGTERM")).toMatchObject({ code: 1 });
    expect(instance.output()).toContain("shutdown took longer than the grace period");
  }, 90_000);

  it("SHUTDOWN_GRACE_SECONDS=0 is a configuration error at start-up", async () => {
    const instance = await launch("grace-config", {
      DATABASE_URL: "sqlite::memory:",
      SHUTDOWN_GRACE_SECONDS: "0",
    });
    await expect(instance.start()).rejects.toThrow(
      /SHUTDOWN_GRACE_SECONDS must be a whole number from 1 to 3600/,
    );
    expect((await instance.exited()).code).toBe(1);
  }, 90_000);

  it("kill -9 during a stream of writes to a SQLite file: every acknowledged write is there after restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-power-loss-"));
    dirs.push(dir);
    const instance = await launch("power-loss", {
      DATABASE_URL: `sqlite:${join(dir, "service.sqlite")}`,
      LOG_LEVEL: "warn",
    });
    await instance.start();
    /** Per resource: the state last acknowledged, and the write in flight when the process died. */
    interface Tracked {
      path: string;
      acked: string | "deleted";
      pending?: string | "deleted";
    }
    const tracked: Tracked[] = [];
    let acknowledged = 0;
    const load = startLoad(6, async (w, i) => {
      const name = `power-${w}-${i}-${randomUUID()}`;
      const created = await call(`${instance.url}/departments`, {
        method: "POST",
        headers: ADMIN,
        body: { name, city: "Oslo" },
      });
      if (created.status !== 201) return;
      acknowledged++;
      const entry: Tracked = { path: new URL(created.header("location") ?? "").pathname, acked: name };
      tracked.push(entry);
      entry.pending = `${name}-renamed`;
      const put = await call(`${instance.url}${entry.path}`, {
        method: "PUT",
        headers: ADMIN,
        body: { name: entry.pending, city: "Bergen" },
      });
      if (put.status !== 200) return;
      acknowledged++;
      entry.acked = entry.pending;
      if (i % 2 === 1) return void delete entry.pending;
      entry.pending = "deleted";
      const del = await call(`${instance.url}${entry.path}`, { method: "DELETE", headers: ADMIN });
      if (del.status !== 204) return;
      acknowledged++;
      entry.acked = "deleted";
      delete entry.pending;
    });
    await waitFor("some acknowledged writes", async () => acknowledged >= 60, 20_000);
    const killed = await instance.kill("SIGKILL");
    await load.stop();
    expect(killed.signal).toBe("SIGKILL");

    await instance.start();
    const lost: string[] = [];
    for (const entry of tracked) {
      const res = await call(`${instance.url}${entry.path}`, { headers: ADMIN });
      const state = res.status === 404 ? "deleted" : res.json<{ name: string }>().name;
      if (state !== entry.acked && state !== entry.pending)
        lost.push(`${entry.path}: ${state} ≠ ${entry.acked}`);
    }
    expect(lost).toEqual([]);
    expect(tracked.length).toBeGreaterThan(10);
  }, 120_000);
});
