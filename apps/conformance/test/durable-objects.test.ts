import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missing, removeBundles, type Served, startDurableObjects, WORKER_RUNTIMES } from "./runtimes.js";

const runtimes = WORKER_RUNTIMES.filter((name) => {
  const why = missing(name);
  if (why === undefined) return true;
  if (process.env.CI) throw new Error(`the Durable Object stores cannot run on ${name}: ${why}`);
  console.warn(`[skip] the Durable Object stores on ${name}: ${why}`);
  return false;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The Durable Object stores (`@svc/ratelimit/durable-object`, `@svc/idempotency/durable-object`)
 * in workerd, run by miniflare, from the packed tarballs: `src/runtimes/durable-objects.ts`, a
 * Worker that exports the objects and composes the `./fetch` entries with Hono, sent real HTTP
 * requests. Each case counts under a client address of its own (`X-Client-IP`), once per run.
 */
describe.skipIf(runtimes.length === 0)("the Durable Object stores in workerd", () => {
  describe.each(runtimes)("on %s", (name) => {
    let served: Served;
    let client = 0;
    /** An address no other case (nor another run against the same objects) uses. */
    const fresh = () => `198.51.${100 + (client >> 8)}.${++client & 255}`;
    const get = (path: string, ip: string) =>
      fetch(`${served.url}${path}`, { headers: { "x-client-ip": ip } });
    const post = (path: string, ip: string, key: string, body: unknown) =>
      fetch(`${served.url}${path}`, {
        method: "POST",
        headers: { "x-client-ip": ip, "content-type": "application/json", "idempotency-key": `"${key}"` },
        body: JSON.stringify(body),
      });

    beforeAll(async () => {
      served = await startDurableObjects(name);
    }, 120_000);
    afterAll(async () => {
      await served?.close();
      removeBundles();
    });

    describe("RateLimitObject", () => {
      it("limit 10: ten 200s with the fields, then 429 with Retry-After", async () => {
        const ip = fresh();
        for (let i = 0; i < 10; i++) {
          const allowed = await get("/limited", ip);
          expect(allowed.status, `request ${i + 1}`).toBe(200);
          expect(allowed.headers.get("x-ratelimit-limit")).toBe("10");
          expect(allowed.headers.get("x-ratelimit-remaining")).toBe(String(9 - i));
          expect(allowed.headers.get("ratelimit")).toMatch(/;r=\d+;t=\d+$/);
          await allowed.arrayBuffer();
        }
        const denied = await get("/limited", ip);
        expect(denied.status).toBe(429);
        expect(Number(denied.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(denied.headers.get("x-ratelimit-remaining")).toBe("0");
        expect(denied.headers.get("ratelimit")).toMatch(/;r=0;t=\d+$/);
      });

      it("50 concurrent requests against limit 10 → exactly 10 allowed, 40 answered 429", async () => {
        const ip = fresh();
        const responses = await Promise.all(Array.from({ length: 50 }, () => get("/limited", ip)));
        await Promise.all(responses.map((r) => r.arrayBuffer()));
        const statuses = responses.map((r) => r.status);
        expect(statuses.filter((s) => s === 200)).toHaveLength(10);
        expect(statuses.filter((s) => s === 429)).toHaveLength(40);
      });

      it("limit 2 per 2 s window: 200, 200, 429; after Retry-After → 200 again", async () => {
        const ip = fresh();
        expect((await get("/window", ip)).status).toBe(200);
        expect((await get("/window", ip)).status).toBe(200);
        const denied = await get("/window", ip);
        expect(denied.status).toBe(429);
        const wait = Number(denied.headers.get("retry-after"));
        expect(wait).toBeGreaterThanOrEqual(1);
        // Fixed window by default: at most the window, 2 s (3 once rounded up with a second's skew).
        expect(wait).toBeLessThanOrEqual(3);
        await sleep(wait * 1000 + 100);
        expect((await get("/window", ip)).status).toBe(200);
      });

      it('an object whose calls fail → failMode "closed" 503 with Retry-After; "open" 200', async () => {
        const closed = await get("/broken-closed", fresh());
        expect(closed.status).toBe(503);
        expect(closed.headers.get("retry-after")).not.toBeNull();
        expect((await get("/broken-open", fresh())).status).toBe(200);
      });
    });

    describe("IdempotencyObject", () => {
      it("a keyed POST → 201; its retry → the same bytes replayed; another body with the key → 422", async () => {
        const ip = fresh();
        const first = await post("/orders", ip, "k1", { sku: "a" });
        expect(first.status).toBe(201);
        const bytes = await first.text();
        const retry = await post("/orders", ip, "k1", { sku: "a" });
        expect(retry.status).toBe(201);
        expect(retry.headers.get("idempotent-replayed")).toBe("true");
        expect(await retry.text()).toBe(bytes);
        const other = await post("/orders", ip, "k1", { sku: "b" });
        expect(other.status).toBe(422);
        await other.arrayBuffer();
        // Another client's same key is another record.
        const elsewhere = await post("/orders", fresh(), "k1", { sku: "a" });
        expect(elsewhere.headers.get("idempotent-replayed")).toBeNull();
        expect(await elsewhere.text()).not.toBe(bytes);
      });

      it("a duplicate while the first is in progress → 409 with Retry-After; after it → the replay", async () => {
        const ip = fresh();
        const first = post("/slow", ip, "k2", { sku: "a" });
        await sleep(500);
        const duplicate = await post("/slow", ip, "k2", { sku: "a" });
        expect(duplicate.status).toBe(409);
        expect(duplicate.headers.get("retry-after")).not.toBeNull();
        await duplicate.arrayBuffer();
        const original = await first;
        expect(original.status).toBe(201);
        const bytes = await original.text();
        const replay = await post("/slow", ip, "k2", { sku: "a" });
        expect(replay.headers.get("idempotent-replayed")).toBe("true");
        expect(await replay.text()).toBe(bytes);
      });

      it("10 concurrent duplicates → the handler runs once; the others are 409 or the replay", async () => {
        const ip = fresh();
        const responses = await Promise.all(
          Array.from({ length: 10 }, () => post("/orders", ip, "k3", { sku: "a" })),
        );
        const bodies = await Promise.all(responses.map((r) => r.text()));
        const originals = responses.filter((r) => r.status === 201 && !r.headers.get("idempotent-replayed"));
        expect(originals).toHaveLength(1);
        const original = bodies[responses.indexOf(originals[0] as Response)];
        responses.forEach((r, i) => {
          expect([201, 409]).toContain(r.status);
          if (r.status === 201) expect(bodies[i]).toBe(original);
        });
      });

      it("retention over (1 s) → the same key runs again", async () => {
        const ip = fresh();
        const first = await post("/short", ip, "k4", { sku: "a" });
        expect(first.status).toBe(201);
        const bytes = await first.text();
        expect(await (await post("/short", ip, "k4", { sku: "a" })).text()).toBe(bytes);
        await sleep(1500);
        const again = await post("/short", ip, "k4", { sku: "a" });
        expect(again.status).toBe(201);
        expect(again.headers.get("idempotent-replayed")).toBeNull();
        expect(await again.text()).not.toBe(bytes);
      });

      it("an object whose calls fail → 503 with Retry-After, the handler not run", async () => {
        const response = await post("/broken", fresh(), "k5", { sku: "a" });
        expect(response.status).toBe(503);
        expect(response.headers.get("retry-after")).not.toBeNull();
        expect(await response.text()).toMatch(/unavailable/i);
      });
    });
  });
});
