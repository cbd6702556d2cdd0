import { createHash } from "node:crypto";
import { connect } from "node:net";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildApp, gate, PROBLEM_BASE, post, retriesDuringSlowHandler, sleep } from "../test/helpers.js";
import { gzipCoding } from "../test/pipeline-app.js";
import { IDEMPOTENCY_ERROR_CODES } from "./core.js";
import { idempotency } from "./express.js";
import { requestFingerprint } from "./fingerprint.js";
import { MemoryStore, StoreFullError } from "./memory-store.js";
import type { IdempotencyOptions } from "./step.js";
import type { IdempotencyStore } from "./store.js";

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: IdempotencyOptions = {}, hooks: Parameters<typeof buildApp>[1] = {}) {
  const built = buildApp(options, hooks);
  server = await listen(built.app);
  return { url: server.url, calls: built.calls };
}

const problem = { accept: "application/problem+json" };

describe("idempotency (memory store)", () => {
  it("same key and payload twice → one execution, faithful replay with Idempotent-Replayed: true", async () => {
    const { url, calls } = await start();
    const first = await post(`${url}/orders`, '"k-1"', { item: "book", qty: 1 });
    const firstBody = await first.text();
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(first.headers.get("set-cookie")).toContain("session=s1");

    const again = await post(`${url}/orders`, '"k-1"', { item: "book", qty: 1 });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe("/orders/1");
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(await again.text()).toBe(firstBody);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(again.headers.get("x-ratelimit-remaining")).toBeNull();
    expect(calls.orders).toBe(1);
  });

  it("bare key (Stripe style) and the quoted form are the same key", async () => {
    const { url, calls } = await start();
    await post(`${url}/orders`, "8e03978e-40d5-43e8-bc93-6894a57f9324", { a: 1 });
    const again = await post(`${url}/orders`, '"8e03978e-40d5-43e8-bc93-6894a57f9324"', { a: 1 });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.orders).toBe(1);
  });

  it("JSON key order and whitespace → still a replay, not a 422", async () => {
    const { url, calls } = await start();
    await post(`${url}/orders`, "k", '{"a":1,"b":{"c":[1,2],"d":"x"}}');
    const again = await post(`${url}/orders`, "k", '{ "b" : { "d" : "x", "c" : [ 1, 2 ] },\n "a" : 1 }');
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.orders).toBe(1);
  });

  it("same key, different payload → 422 idempotency_key_reused, nothing stored", async () => {
    const { url, calls } = await start();
    await post(`${url}/orders`, "k", { qty: 1 });
    const res = await post(`${url}/orders`, "k", { qty: 2 }, problem);
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const body = (await res.json()) as { type: string };
    expect(body.type).toBe(`${PROBLEM_BASE}${IDEMPOTENCY_ERROR_CODES.mismatch}`);
    const original = await post(`${url}/orders`, "k", { qty: 1 });
    expect(original.status).toBe(201);
    expect(original.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.orders).toBe(1);
  });

  it("no Idempotency-Key on an optional route → runs every time", async () => {
    const { url, calls } = await start();
    await post(`${url}/orders`, undefined, { a: 1 });
    const second = await post(`${url}/orders`, undefined, { a: 1 });
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(calls.orders).toBe(2);
  });

  it("no Idempotency-Key on a required route → 400 with Link rel=describedby", async () => {
    const { url, calls } = await start({
      required: true,
      documentationUrl: "https://docs.example/idempotency",
    });
    const res = await post(`${url}/orders`, undefined, { a: 1 }, problem);
    expect(res.status).toBe(400);
    expect(res.headers.get("link")).toBe(
      '<https://docs.example/idempotency>; rel="describedby"; type="text/html"',
    );
    expect(((await res.json()) as { type: string }).type).toBe(
      `${PROBLEM_BASE}${IDEMPOTENCY_ERROR_CODES.missing}`,
    );
    expect(calls.orders).toBeUndefined();
  });

  it('required: async (path) => path === "/orders" (a promise), no Idempotency-Key → 400, the handler does not run', async () => {
    // An async predicate does not fit the option's type, but plain JavaScript (or a cast) passes
    // one (say, a lookup of the route's settings), and a promise is never `true`.
    const required = (async (path: string) =>
      path === "/orders") as unknown as IdempotencyOptions["required"];
    const { url, calls } = await start({ ...(required ? { required } : {}) });
    const res = await post(`${url}/orders`, undefined, { a: 1 }, problem);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { type: string }).type).toBe(
      `${PROBLEM_BASE}${IDEMPOTENCY_ERROR_CODES.missing}`,
    );
    expect(calls.orders).toBeUndefined();
  });

  it.each([
    ['""', "empty string"],
    ["two words", "space"],
    ['"a", "b"', "list"],
    ["x".repeat(256), "256 characters"],
    ['"unterminated', "broken quoting"],
  ])("Idempotency-Key: %s (%s) → 400 idempotency_key_invalid, handler not run", async (key) => {
    const { url, calls } = await start();
    const res = await post(`${url}/orders`, key, { a: 1 }, problem);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { type: string }).type).toBe(
      `${PROBLEM_BASE}${IDEMPOTENCY_ERROR_CODES.invalid}`,
    );
    expect(calls.orders).toBeUndefined();
  });

  it("duplicate while the first is in flight → 409 with Retry-After; the 409 is never stored", async () => {
    const hold = gate();
    const entered = gate();
    const { url, calls } = await start(
      {},
      {
        before: async () => {
          entered.open();
          await hold.promise;
        },
      },
    );
    const first = post(`${url}/orders`, "k", { a: 1 });
    await entered.promise;
    const dup = await post(`${url}/orders`, "k", { a: 1 }, problem);
    expect(dup.status).toBe(409);
    expect(dup.headers.get("retry-after")).toBe("1");
    expect(((await dup.json()) as { type: string }).type).toBe(
      `${PROBLEM_BASE}${IDEMPOTENCY_ERROR_CODES.inFlight}`,
    );
    hold.open();
    expect((await first).status).toBe(201);
    const after = await post(`${url}/orders`, "k", { a: 1 });
    expect(after.status).toBe(201);
    expect(after.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.orders).toBe(1);
  });

  it("in flight with a different payload → 422, not 409", async () => {
    const hold = gate();
    const entered = gate();
    const { url } = await start(
      {},
      {
        before: async () => {
          entered.open();
          await hold.promise;
        },
      },
    );
    const first = post(`${url}/orders`, "k", { a: 1 });
    await entered.promise;
    expect((await post(`${url}/orders`, "k", { a: 2 })).status).toBe(422);
    hold.open();
    await first;
  });

  it("documentationUrl → Link rel=describedby on the 409 and the 422 too", async () => {
    const hold = gate();
    const entered = gate();
    const docs = "https://docs.example/idempotency";
    const { url } = await start(
      { documentationUrl: docs },
      {
        before: async () => {
          entered.open();
          await hold.promise;
        },
      },
    );
    const first = post(`${url}/orders`, "k", { a: 1 });
    await entered.promise;
    const conflict = await post(`${url}/orders`, "k", { a: 1 });
    const mismatch = await post(`${url}/orders`, "k", { a: 2 });
    hold.open();
    await first;
    expect(conflict.status).toBe(409);
    expect(mismatch.status).toBe(422);
    for (const r of [conflict, mismatch])
      expect(r.headers.get("link")).toContain(`<${docs}>; rel="describedby"`);
  });

  it("waitMs: a duplicate waits for the first result and replays it", async () => {
    const { url, calls } = await start({ waitMs: 5000 }, { before: () => sleep(100) });
    const [a, b] = await Promise.all([
      post(`${url}/orders`, "k", { a: 1 }),
      post(`${url}/orders`, "k", { a: 1 }),
    ]);
    expect([a.status, b.status]).toEqual([201, 201]);
    const replayed = [a, b].filter((r) => r.headers.get("idempotent-replayed") === "true");
    expect(replayed).toHaveLength(1);
    expect(await a.text()).toBe(await b.text());
    expect(calls.orders).toBe(1);
  });

  it("waitMs: a waiting duplicate whose client hangs up → the store is no longer polled for it", async () => {
    const memory = new MemoryStore();
    let claims = 0;
    const store: IdempotencyStore = {
      claim: (...args) => {
        claims += 1;
        return memory.claim(...args);
      },
      complete: (...args) => memory.complete(...args),
      release: (...args) => memory.release(...args),
      renew: (...args) => memory.renew(...args),
    };
    const hold = gate();
    const gaveUp: number[] = [];
    const { url, calls } = await start(
      { store, waitMs: 10_000 },
      {
        before: () => hold.promise,
        onError: (err) => gaveUp.push((err as { status?: number }).status ?? 0),
      },
    );
    const first = post(`${url}/orders`, "k", { a: 1 });
    await vi.waitFor(() => expect(calls.orders).toBe(1));
    const hangUp = new AbortController();
    const waiting = fetch(`${url}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": '"k"' },
      body: JSON.stringify({ a: 1 }),
      signal: hangUp.signal,
    }).catch(() => "aborted");
    await vi.waitFor(() => expect(claims).toBeGreaterThanOrEqual(3));
    hangUp.abort();
    expect(await waiting).toBe("aborted");
    // The wait ends with the hang-up (its 409 goes to the error handler, to a closed response),
    // long before waitMs: polled every 25 ms, a duplicate still waiting would answer after 10 s.
    await vi.waitFor(() => expect(gaveUp).toEqual([409]), { timeout: 5000, interval: 5 });
    const afterHangUp = claims;
    await sleep(100);
    expect(claims).toBe(afterHangUp);
    hold.open();
    expect((await first).status).toBe(201);
    expect(calls.orders).toBe(1);
  });

  it("two principals sending the same key → two executions, each replays its own", async () => {
    const { url, calls } = await start();
    const alice = await post(`${url}/orders`, "k", { a: 1 }, { "x-user": "alice" });
    const bob = await post(`${url}/orders`, "k", { a: 1 }, { "x-user": "bob" });
    const anon = await post(`${url}/orders`, "k", { a: 1 });
    expect([
      alice.headers.get("location"),
      bob.headers.get("location"),
      anon.headers.get("location"),
    ]).toEqual(["/orders/1", "/orders/2", "/orders/3"]);
    const aliceAgain = await post(`${url}/orders`, "k", { a: 1 }, { "x-user": "alice" });
    expect(aliceAgain.headers.get("location")).toBe("/orders/1");
    expect(aliceAgain.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.orders).toBe(3);
  });

  it("same key on another path → a separate record", async () => {
    const { url, calls } = await start();
    await post(`${url}/orders`, "k", {});
    const other = await post(`${url}/write`, "k", {});
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(calls).toMatchObject({ orders: 1, write: 1 });
  });

  it("lease expired (crashed worker) → the retry re-executes; the stale worker cannot overwrite", async () => {
    let clock = 1_000_000;
    const store = new MemoryStore({ now: () => clock });
    const hold = gate();
    const entered = gate();
    const warnings: string[] = [];
    const logger = { warn: (_o: object, m?: string) => warnings.push(m ?? "") };
    const { url, calls } = await start(
      { store, leaseMs: 60_000, logger },
      {
        before: async (n) => {
          if (n !== 1) return;
          entered.open();
          await hold.promise;
        },
      },
    );
    const stale = post(`${url}/orders`, "k", { a: 1 });
    await entered.promise;
    clock += 60_001;
    const fresh = await post(`${url}/orders`, "k", { a: 1 });
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get("location")).toBe("/orders/2");
    hold.open();
    expect((await stale).headers.get("location")).toBe("/orders/1");
    const replay = await post(`${url}/orders`, "k", { a: 1 });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("location")).toBe("/orders/2");
    expect(calls.orders).toBe(2);
    expect(warnings.some((w) => w.includes("lease lost"))).toBe(true);
  });

  it("retention over → the key is free again", async () => {
    let clock = 0;
    const { url, calls } = await start({ store: new MemoryStore({ now: () => clock }), retentionMs: 1000 });
    await post(`${url}/orders`, "k", { a: 1 });
    clock += 999;
    expect((await post(`${url}/orders`, "k", { a: 1 })).headers.get("idempotent-replayed")).toBe("true");
    clock += 2;
    expect((await post(`${url}/orders`, "k", { a: 1 })).headers.get("idempotent-replayed")).toBeNull();
    expect(calls.orders).toBe(2);
  });

  it("writeHead(headers) + write + end → replayed byte for byte with Location", async () => {
    const { url, calls } = await start();
    const first = await post(`${url}/write`, "k", {});
    expect(await first.text()).toBe("alpha-beta-gamma-1");
    const again = await post(`${url}/write`, "k", {});
    expect(again.status).toBe(201);
    expect(again.headers.get("location")).toBe("/w/1");
    expect(again.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await again.text()).toBe("alpha-beta-gamma-1");
    expect(calls.write).toBe(1);
  });

  it("a pipeline with a gzip coding step → recorded as identity, the replay coded again: the same bytes decoded", async () => {
    const { url, calls } = await start({}, { pipeline: { coding: gzipCoding } });
    for (const path of ["/orders", "/write"]) {
      const first = await post(`${url}${path}`, "gz", {}, { "accept-encoding": "gzip" });
      expect(first.headers.get("content-encoding")).toBe("gzip");
      const body = await first.text(); // fetch decodes the gzip coding
      const again = await post(`${url}${path}`, "gz", {}, { "accept-encoding": "gzip" });
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("content-encoding"), path).toBe("gzip");
      expect(await again.text(), path).toBe(body);
    }
    expect([calls.orders, calls.write]).toEqual([1, 1]);
  });

  it("piped stream of 256 KiB → live response intact, replay identical", async () => {
    const { url, calls } = await start({ maxStoredBytes: 1_048_576 });
    const digest = async (r: Response) =>
      createHash("sha256")
        .update(Buffer.from(await r.arrayBuffer()))
        .digest("hex");
    const first = await post(`${url}/stream`, "k", {});
    const firstDigest = await digest(first);
    const again = await post(`${url}/stream`, "k", {});
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-length")).toBe(String(64 * 4096));
    expect(await digest(again)).toBe(firstDigest);
    expect(calls.stream).toBe(1);
  });

  it("response larger than maxStoredBytes → sent whole; the retry gets the status without the body and Idempotent-Body-Omitted: true, the handler ran once", async () => {
    const warnings: string[] = [];
    const { url, calls } = await start({
      maxStoredBytes: 1000,
      logger: { warn: (_obj, msg) => warnings.push(msg ?? "") },
    });
    const first = await post(`${url}/big`, "k", { size: 1001 });
    expect((await first.text()).length).toBe(1001);
    expect(first.headers.get("idempotent-body-omitted")).toBeNull();
    const again = await post(`${url}/big`, "k", { size: 1001 });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("idempotent-body-omitted")).toBe("true");
    expect(again.headers.get("content-type")).toBeNull();
    expect(again.headers.get("content-length")).toBe("0");
    expect(await again.text()).toBe("");
    expect(calls.big).toBe(1);
    expect(warnings.some((w) => w.includes("maxStoredBytes"))).toBe(true);
  });

  it("maxStoredBytes by default is 64 KiB: a 64 KiB + 1 response is replayed without its body", async () => {
    const { url, calls } = await start({ logger: { warn() {} } });
    await (await post(`${url}/big`, "k", { size: 65_537 })).arrayBuffer();
    const again = await post(`${url}/big`, "k", { size: 65_537 });
    expect(again.headers.get("idempotent-body-omitted")).toBe("true");
    await (await post(`${url}/big`, "k2", { size: 65_536 })).arrayBuffer();
    const whole = await post(`${url}/big`, "k2", { size: 65_536 });
    expect(whole.headers.get("idempotent-body-omitted")).toBeNull();
    expect((await whole.text()).length).toBe(65_536);
    expect(calls.big).toBe(2);
  });

  it("response of exactly maxStoredBytes → stored", async () => {
    const { url, calls } = await start({ maxStoredBytes: 1000 });
    await post(`${url}/big`, "k", { size: 1000 });
    const again = await post(`${url}/big`, "k", { size: 1000 });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await again.text()).length).toBe(1000);
    expect(calls.big).toBe(1);
  });

  it("handler 500 → not stored, the retry runs and succeeds", async () => {
    const { url, calls } = await start();
    expect((await post(`${url}/flaky`, "k", {})).status).toBe(500);
    const retry = await post(`${url}/flaky`, "k", {});
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(calls.flaky).toBe(2);
  });

  it("storeStatus: () => true → a 500 the handler answers is stored and replayed", async () => {
    const { url, calls } = await start({ storeStatus: () => true });
    await post(`${url}/broken`, "k", {});
    const retry = await post(`${url}/broken`, "k", {});
    expect(retry.status).toBe(500);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.broken).toBe(1);
  });

  it("storeStatus: () => true, the handler throws → released all the same (a thrown error is no response): the retry runs", async () => {
    const { url, calls } = await start({ storeStatus: () => true });
    expect((await post(`${url}/flaky`, "k", {})).status).toBe(500);
    const retry = await post(`${url}/flaky`, "k", {});
    expect(retry.status).toBe(201);
    expect(calls.flaky).toBe(2);
  });

  it("storeStatus: async (status) => status < 500 (a promise) → the 201 is stored: the retry is replayed, the handler ran once", async () => {
    // An async storeStatus does not fit the option's type, but plain JavaScript (or a cast) passes
    // one, and a promise is never `true`: every response would be released, never stored.
    const storeStatus = (async (status: number) =>
      status < 500) as unknown as IdempotencyOptions["storeStatus"];
    const { url, calls } = await start({ ...(storeStatus ? { storeStatus } : {}) });
    expect((await post(`${url}/orders`, "k", { qty: 1 })).status).toBe(201);
    const retry = await post(`${url}/orders`, "k", { qty: 1 });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.orders).toBe(1);
  });

  it("handler 400 after claim.markStarted() → stored and replayed", async () => {
    const { url, calls } = await start();
    await post(`${url}/reject`, "k", {});
    const again = await post(`${url}/reject`, "k", {});
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.reject).toBe(1);
  });

  it("400 from validation before claim.markStarted() → not stored: a retry with the same key and a valid body runs", async () => {
    const { url, calls } = await start();
    const bad = await post(`${url}/validate`, "k", { qty: -1 });
    expect(bad.status).toBe(400);
    const again = await post(`${url}/validate`, "k", { qty: -1 });
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    const good = await post(`${url}/validate`, "k", { qty: 2 });
    expect(good.status).toBe(201);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
    const replay = await post(`${url}/validate`, "k", { qty: 2 });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.validate).toBe(1);
  });

  it("a 400 from a validating middleware after the idempotency one (next(HttpError)) → not stored, the key stays free", async () => {
    const { url, calls } = await start();
    expect((await post(`${url}/checked`, "k", {})).status).toBe(400);
    const valid = await post(`${url}/checked`, "k", { qty: 1 });
    expect(valid.status).toBe(201);
    expect(valid.headers.get("idempotent-replayed")).toBeNull();
    expect(calls.checked).toBe(1);
  });

  it("storeStatus: (status) => status < 500 → a validation 400 is stored as before", async () => {
    const { url, calls } = await start({ storeStatus: (status) => status < 500 });
    await post(`${url}/validate`, "k", { qty: -1 });
    const retry = await post(`${url}/validate`, "k", { qty: -1 });
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.validate).toBeUndefined();
  });

  it("JSON nested 3000 deep (6 KB, accepted by express.json) → 201, then a replay; another depth → 422, never a 500", async () => {
    const { url, calls } = await start();
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    const first = await post(`${url}/write`, "deep", deep(3000), problem);
    expect(first.status).toBe(201);
    const again = await post(`${url}/write`, "deep", deep(3000), problem);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await post(`${url}/write`, "deep", deep(2999), problem);
    expect(other.status).toBe(422);
    expect(calls.write).toBe(1);
  });

  it('a "__proto__" member is part of the payload: another value under it → 422, not a replay', async () => {
    const { url, calls } = await start();
    const first = await post(`${url}/write`, "proto", '{"__proto__":{"amount":1}}');
    expect(first.status).toBe(201);
    const other = await post(`${url}/write`, "proto", '{"__proto__":{"amount":1000}}', problem);
    expect(other.status).toBe(422);
    const empty = await post(`${url}/write`, "proto", "{}", problem);
    expect(empty.status).toBe(422);
    const same = await post(`${url}/write`, "proto", '{ "__proto__" : { "amount" : 1 } }');
    expect(same.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.write).toBe(1);
  });

  it("raw body: same bytes replay, other bytes → 422", async () => {
    const { url, calls } = await start();
    const send = (body: string) =>
      fetch(`${url}/raw`, {
        method: "POST",
        headers: { "idempotency-key": "k", "content-type": "text/csv" },
        body,
      });
    expect((await send("a,b\n1,2\n")).status).toBe(201);
    expect((await send("a,b\n1,2\n")).headers.get("idempotent-replayed")).toBe("true");
    expect((await send("a,b\n1,3\n")).status).toBe(422);
    expect(calls.raw).toBe(1);
  });

  it("no body and 204 → replayed as 204 without a body", async () => {
    const { url, calls } = await start();
    const send = () => fetch(`${url}/nobody`, { method: "POST", headers: { "idempotency-key": "k" } });
    expect((await send()).status).toBe(204);
    const again = await send();
    expect(again.status).toBe(204);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.nobody).toBe(1);
  });

  it("a body with no body parser in front → one warning, body left out of the fingerprint", async () => {
    const warnings: string[] = [];
    const { url, calls } = await start({ logger: { warn: (_o, m) => warnings.push(m ?? "") } });
    const send = (body: string) =>
      fetch(`${url}/nobody`, {
        method: "POST",
        headers: { "idempotency-key": "k", "content-type": "text/plain" },
        body,
      });
    expect((await send("one")).status).toBe(204);
    expect((await send("two")).headers.get("idempotent-replayed")).toBe("true");
    expect(warnings.filter((w) => w.includes("no body parser"))).toHaveLength(1);
    expect(calls.nobody).toBe(1);
  });

  it("PATCH is left alone by default and guarded with methods: ['POST', 'PATCH']", async () => {
    const patch = (url: string) =>
      fetch(`${url}/orders/7`, {
        method: "PATCH",
        headers: { "idempotency-key": "k", "content-type": "application/json" },
        body: "{}",
      });
    const plain = await start();
    await patch(plain.url);
    await patch(plain.url);
    expect(plain.calls.patch).toBe(2);
    await server?.close();
    const guarded = await start({ methods: ["POST", "PATCH"] });
    await patch(guarded.url);
    expect((await patch(guarded.url)).headers.get("idempotent-replayed")).toBe("true");
    expect(guarded.calls.patch).toBe(1);
  });

  it("GET with an Idempotency-Key, even a malformed one → passes through", async () => {
    const { url, calls } = await start({ required: true });
    const res = await fetch(`${url}/orders`, { headers: { "idempotency-key": "two words" } });
    expect(res.status).toBe(200);
    expect(calls.get).toBe(1);
  });

  it("store failing on claim → 503 with Retry-After; pass-through runs the handler", async () => {
    const broken: IdempotencyStore = {
      claim: () => Promise.reject(new Error("connection refused")),
      complete: () => Promise.reject(new Error("connection refused")),
      release: () => Promise.reject(new Error("connection refused")),
    };
    const failing = await start({ store: broken, retryAfterSeconds: 3 });
    const res = await post(`${failing.url}/orders`, "k", {}, problem);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(((await res.json()) as { type: string }).type).toBe(
      `${PROBLEM_BASE}${IDEMPOTENCY_ERROR_CODES.unavailable}`,
    );
    expect(failing.calls.orders).toBeUndefined();
    await server?.close();

    const warnings: string[] = [];
    const open = await start({
      store: broken,
      onStoreError: "pass-through",
      logger: { warn: (_o, m) => warnings.push(m ?? "") },
    });
    expect((await post(`${open.url}/orders`, "k", {})).status).toBe(201);
    expect(open.calls.orders).toBe(1);
    expect(warnings.length).toBeGreaterThan(0);
  });
});

/** A MemoryStore (`inner`) whose renew calls are counted, and optionally replaced. */
function countingStore(renew?: IdempotencyStore["renew"], inner = new MemoryStore()) {
  const counts = { renew: 0 };
  const store: IdempotencyStore = {
    claim: (...a) => inner.claim(...a),
    complete: (...a) => inner.complete(...a),
    release: (...a) => inner.release(...a),
    renew: (...a) => {
      counts.renew += 1;
      return renew ? renew(...a) : inner.renew(...a);
    },
  };
  return { store, counts };
}

const realSetInterval = globalThis.setInterval;
const realClearInterval = globalThis.clearInterval;

/** Every setInterval started with `everyMs` (the middleware's renewal timers), and which were cleared. */
function watchIntervals(everyMs: number) {
  const created = new Set<unknown>();
  const cleared = new Set<unknown>();
  const set = vi.spyOn(globalThis, "setInterval").mockImplementation(((fn: () => void, ms?: number) => {
    const handle = realSetInterval(fn, ms);
    if (ms === everyMs) created.add(handle);
    return handle;
  }) as typeof setInterval);
  const clear = vi.spyOn(globalThis, "clearInterval").mockImplementation(((
    handle?: Parameters<typeof clearInterval>[0],
  ) => {
    cleared.add(handle);
    realClearInterval(handle);
  }) as typeof clearInterval);
  return {
    created,
    live: () => [...created].filter((h) => !cleared.has(h)).length,
    restore: () => {
      set.mockRestore();
      clear.mockRestore();
    },
  };
}

describe("lease renewal (memory store)", () => {
  /** A MemoryStore on a clock only the test moves. */
  const clocked = () => {
    let clock = 1_000_000;
    const store = new MemoryStore({ now: () => clock });
    return {
      store,
      age: async (ms: number) => {
        clock += ms;
      },
    };
  };

  it("handler slower than leaseMs, retries during it → runs once: 409, 409, then the replay", async () => {
    const { store, age } = clocked();
    const run = await retriesDuringSlowHandler(start, store, age);
    expect(run.first).toEqual({ status: 201, location: "/orders/1" });
    expect(run.retries.map(([status]) => status)).toEqual([409, 409]);
    expect(run.after).toEqual({ status: 201, location: "/orders/1", replayed: "true" });
    expect(run.calls.orders).toBe(1);
  });

  it("renewLease: false → the lease ends under the slow handler and a retry runs it again", async () => {
    const warnings: string[] = [];
    const logger = { warn: (_o: object, m?: string) => warnings.push(m ?? "") };
    const { store, age } = clocked();
    const run = await retriesDuringSlowHandler(start, store, age, { renewLease: false, logger });
    expect(run.retries).toEqual([
      [201, "/orders/2"],
      [201, "/orders/2"],
    ]);
    expect(run.first).toEqual({ status: 201, location: "/orders/1" });
    expect(run.after).toEqual({ status: 201, location: "/orders/2", replayed: "true" });
    expect(run.calls.orders).toBe(2);
    // Warned as the first run's record was refused, before its response was let go.
    expect(warnings.some((w) => w.includes("lease lost"))).toBe(true);
  });

  it("a store without renew → still works, the claim simply lasts leaseMs", async () => {
    const inner = new MemoryStore();
    const store: IdempotencyStore = {
      claim: (...a) => inner.claim(...a),
      complete: (...a) => inner.complete(...a),
      release: (...a) => inner.release(...a),
    };
    const { url, calls } = await start({ store, leaseMs: 600 });
    expect((await post(`${url}/orders`, "k", {})).status).toBe(201);
    const again = await post(`${url}/orders`, "k", {});
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(calls.orders).toBe(1);
  });

  it("completed, released (handler error, oversized) → every renewal timer is cleared, no renew after", async () => {
    const watch = watchIntervals(20);
    try {
      const { store, counts } = countingStore();
      const { url } = await start(
        { store, leaseMs: 60, maxStoredBytes: 10, logger: { warn() {} } },
        { before: () => sleep(70) },
      );
      expect((await post(`${url}/orders`, "done", {})).status).toBe(201);
      expect((await post(`${url}/flaky`, "failed", {})).status).toBe(500);
      expect((await post(`${url}/big`, "big", { size: 100 })).status).toBe(200);
      expect(watch.created.size).toBe(3);
      expect(counts.renew).toBeGreaterThan(0);
      expect(watch.live()).toBe(0);
      const seen = counts.renew;
      await sleep(80);
      expect(counts.renew).toBe(seen);
    } finally {
      watch.restore();
    }
  });

  it("client aborts while the handler runs → renewal goes on until the handler ends; a retry gets 409, then the replay", async () => {
    const watch = watchIntervals(100);
    try {
      const hold = gate();
      const entered = gate();
      // The store's clock moves only when the test moves it: the lease runs out by the test's
      // steps below, never because a loaded machine ran the renewal timer late.
      let clock = 1_000_000;
      const { store, counts } = countingStore(undefined, new MemoryStore({ now: () => clock }));
      const { url, calls } = await start(
        { store, leaseMs: 300, logger: { warn() {} } },
        {
          before: async (n: number) => {
            if (n !== 1) return;
            entered.open();
            await hold.promise;
          },
        },
      );
      const abort = new AbortController();
      const request = fetch(`${url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "gone" },
        body: "{}",
        signal: abort.signal,
      }).catch((err: unknown) => err);
      await entered.promise;
      abort.abort();
      expect(await request).toBeInstanceOf(Error);
      // Seven thirds of a lease (past two leases) of store time after the client left, each
      // step followed by a renewal: the first run still holds the key only because the renewal
      // went on. A renewal that stopped with the client would leave the wait below unanswered,
      // and the lease (claimed at the first clock reading) over by the third step.
      const deadline = { timeout: 10_000, interval: 5 };
      for (let step = 0; step < 7; step++) {
        const seen = counts.renew;
        clock += 100;
        await vi.waitFor(() => expect(counts.renew).toBeGreaterThan(seen), deadline);
      }
      expect(watch.live()).toBe(1);
      expect((await post(`${url}/orders`, "gone", {})).status).toBe(409);
      hold.open();
      await vi.waitFor(() => expect(watch.live()).toBe(0), deadline);
      // The timer stops as the record starts to be written: the replay follows once it is.
      const after = await vi.waitFor(async () => {
        const res = await post(`${url}/orders`, "gone", {});
        await res.arrayBuffer();
        expect(res.status).not.toBe(409);
        return res;
      }, deadline);
      expect(after.status).toBe(201);
      expect(after.headers.get("idempotent-replayed")).toBe("true");
      expect(after.headers.get("location")).toBe("/orders/1");
      expect(calls.orders).toBe(1);
    } finally {
      watch.restore();
    }
  });

  it("a handler that runs past maxLeaseMs → renewal stops with a warning, the claim then ends", async () => {
    const watch = watchIntervals(20);
    try {
      const hold = gate();
      const warnings: string[] = [];
      // Every renewal succeeds: on a loaded machine a late tick would otherwise find the 60 ms lease
      // of a real-clock MemoryStore expired and stop on "lease lost", never reaching maxLeaseMs.
      const { store, counts } = countingStore(async () => true);
      const { url } = await start(
        { store, leaseMs: 60, maxLeaseMs: 100, logger: { warn: (_o, m) => warnings.push(m ?? "") } },
        { before: () => hold.promise },
      );
      const first = post(`${url}/orders`, "hung", {});
      // The handler runs until the renewal gave up (100 ms after the claim), however late that is.
      await vi.waitFor(() => expect(warnings.some((w) => w.includes("past maxLeaseMs"))).toBe(true), {
        timeout: 10_000,
        interval: 5,
      });
      expect(watch.live()).toBe(0);
      const seen = counts.renew;
      await sleep(60);
      expect(counts.renew).toBe(seen);
      hold.open();
      expect((await first).status).toBe(201);
    } finally {
      watch.restore();
    }
  });

  it("renew answers false (lease lost) → one warning, renewal stops", async () => {
    const warnings: string[] = [];
    const { store, counts } = countingStore(async () => false);
    const { url } = await start(
      { store, leaseMs: 60, logger: { warn: (_o, m) => warnings.push(m ?? "") } },
      { before: () => sleep(200) },
    );
    expect((await post(`${url}/orders`, "k", {})).status).toBe(201);
    expect(counts.renew).toBe(1);
    expect(warnings.filter((w) => w.includes("lease lost while the handler ran"))).toHaveLength(1);
  });

  it("renew throws → one warning for the outage, the others at debug; renewal keeps trying until the response ends", async () => {
    const warnings: string[] = [];
    const debugs: string[] = [];
    const { store, counts } = countingStore(() => Promise.reject(new Error("connection reset")));
    const logger = {
      warn: (_o: object, m?: string) => warnings.push(m ?? ""),
      debug: (_o: object, m?: string) => debugs.push(m ?? ""),
    };
    // The handler ends after the third renewal, not after a time a loaded machine may not tick in.
    const { url } = await start(
      { store, leaseMs: 60, logger },
      {
        before: () =>
          vi.waitFor(() => expect(counts.renew).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 5 }),
      },
    );
    expect((await post(`${url}/orders`, "k", {})).status).toBe(201);
    expect(counts.renew).toBeGreaterThanOrEqual(3);
    expect(warnings.filter((w) => w.includes("failed to renew"))).toHaveLength(1);
    expect(debugs.filter((w) => w.includes("failed to renew")).length).toBeGreaterThanOrEqual(2);
    const seen = counts.renew;
    await sleep(80);
    expect(counts.renew).toBe(seen);
  });
});

describe("scope(req) answering something other than a string", () => {
  // Every such answer turns into one string for all callers ("[object Promise]", "undefined"),
  // so one principal's key would replay another principal's stored response.
  const cases: [string, IdempotencyOptions["scope"]][] = [
    ["a promise (async scope)", (async (req: express.Request) => req.get("x-user")) as never],
    [
      "undefined (req.user?.id)",
      ((req: express.Request) => (req as { user?: { id: string } }).user?.id) as never,
    ],
    ["an object", ((req: express.Request) => ({ id: req.get("x-user") })) as never],
  ];

  it.each(cases)("%s → 500, and bob never gets alice's response", async (_name, scope) => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on("unhandledRejection", onUnhandled);
    try {
      const { url, calls } = await start({ scope: scope as NonNullable<IdempotencyOptions["scope"]> });
      const alice = await post(`${url}/orders`, "order-1", { qty: 1 }, { "x-user": "alice" });
      const bob = await post(`${url}/orders`, "order-1", { qty: 1 }, { "x-user": "bob" });
      await Promise.all([alice.arrayBuffer(), bob.arrayBuffer()]);
      expect(bob.headers.get("idempotent-replayed")).toBeNull();
      expect([alice.status, bob.status]).toEqual([500, 500]);
      expect(calls.orders).toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("a number (a numeric user id) → keys still scoped per principal", async () => {
    const ids: Record<string, number> = { alice: 1, bob: 2 };
    const { url, calls } = await start({
      scope: ((req: express.Request) => ids[req.get("x-user") ?? ""]) as never,
    });
    await (await post(`${url}/orders`, "order-1", { qty: 1 }, { "x-user": "alice" })).arrayBuffer();
    const bob = await post(`${url}/orders`, "order-1", { qty: 1 }, { "x-user": "bob" });
    expect(bob.status).toBe(201);
    expect(bob.headers.get("idempotent-replayed")).toBeNull();
    expect(calls.orders).toBe(2);
  });
});

describe("default scope: a principal whose id reads like the anonymous scope", () => {
  it.each([
    ["anonymous", undefined],
    ["~anonymous", "anonymous"],
  ])("principal %s, then a caller with %s, same key and body → not a replay", async (first, second) => {
    const { url, calls } = await start();
    const a = await post(`${url}/orders`, "order-1", { qty: 1 }, { "x-user": first });
    expect(a.status).toBe(201);
    await a.arrayBuffer();
    const b = await post(
      `${url}/orders`,
      "order-1",
      { qty: 1 },
      second === undefined ? {} : { "x-user": second },
    );
    await b.arrayBuffer();
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
    expect(calls.orders).toBe(2);
  });
});

/**
 * A store slow to write a result: `complete` and `release` wait until the next claim has been
 * answered (or 300 ms, so nothing waits for ever). A response sent before its record is written
 * lets the client's next request overtake the write.
 */
class SlowToSettle extends MemoryStore {
  readonly #held: (() => void)[] = [];

  override async claim(key: string, fingerprint: string, leaseMs: number) {
    const result = await super.claim(key, fingerprint, leaseMs);
    this.#flush();
    return result;
  }

  override async complete(...args: Parameters<MemoryStore["complete"]>) {
    await this.#hold();
    return super.complete(...args);
  }

  override async release(key: string, token: string) {
    await this.#hold();
    return super.release(key, token);
  }

  #hold(): Promise<void> {
    return new Promise((resolve) => {
      this.#held.push(resolve);
      setTimeout(() => this.#flush(), 300);
    });
  }

  #flush(): void {
    for (const resolve of this.#held.splice(0)) resolve();
  }
}

// draft-ietf-httpapi-idempotency-key-header §2.6: a retry gets "the result of the previously
// completed operation"; §2.7's 409 is for a retry "while the original request is still being
// processed", and 422 for a key reused "with a different request payload".
describe("the record is written before the client has the whole response", () => {
  it("201, then the same request as soon as it is read → the replay, not a 409", async () => {
    const { url, calls } = await start({ store: new SlowToSettle() });
    const first = await post(`${url}/orders`, "read-then-retry", { qty: 1 });
    expect(first.status).toBe(201);
    const body = await first.text();
    const retry = await post(`${url}/orders`, "read-then-retry", { qty: 1 });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.text()).toBe(body);
    expect(calls.orders).toBe(1);
  });

  it("a validation 400 (not stored), then the corrected body with the same key at once → it runs, not a 422", async () => {
    const { url, calls } = await start({ store: new SlowToSettle() });
    const invalid = await post(`${url}/validate`, "fix-and-retry", { qty: 0 });
    expect(invalid.status).toBe(400);
    await invalid.text();
    const fixed = await post(`${url}/validate`, "fix-and-retry", { qty: 2 });
    expect(fixed.status).toBe(201);
    expect(calls.validate).toBe(1);
  });

  it("the held response keeps its framing: Content-Length of the body, no chunked coding", async () => {
    const { url } = await start({ store: new SlowToSettle() });
    const res = await post(`${url}/nobody`, "framing-204", {});
    expect(res.status).toBe(204);
    expect(res.headers.get("content-length")).toBeNull();
    const json = await post(`${url}/orders`, "framing-json", { qty: 1 });
    const text = await json.text();
    expect(json.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    expect(json.headers.get("transfer-encoding")).toBeNull();
  });
});

/**
 * Node.js internals a response might lose in another release: what a test does to one response
 * to stand for a Node.js whose ServerResponse sends its bytes some other way. Every byte still
 * reaches the connection through its public `write`/`end`, as it must for any Duplex stream an
 * HTTP server is given (`server.emit("connection", duplex)`).
 */
type Internals = { _writeRaw?: unknown; _send: (...args: unknown[]) => unknown };
const nodeVariants: Array<[string, (res: express.Response) => void]> = [
  [
    "a Node.js without ServerResponse#_writeRaw",
    (res) => {
      const own = res as unknown as Internals;
      const writeRaw = own._writeRaw;
      const send = own._send;
      own._writeRaw = undefined;
      own._send = function sendWithoutWriteRaw(this: Internals, ...args: unknown[]) {
        this._writeRaw = writeRaw;
        try {
          return send.apply(this, args);
        } finally {
          this._writeRaw = undefined;
        }
      };
    },
  ],
  [
    "a Node.js whose _send writes without looking _writeRaw up on the response",
    (res) => {
      const own = res as unknown as Internals;
      const writeRaw = own._writeRaw;
      const send = own._send;
      own._send = function sendPastWriteRaw(this: Internals, ...args: unknown[]) {
        const hooked = this._writeRaw;
        this._writeRaw = writeRaw;
        try {
          return send.apply(this, args);
        } finally {
          this._writeRaw = hooked;
        }
      };
    },
  ],
  [
    "a connection whose write cannot be replaced (the end itself waits)",
    (res) => {
      const socket = res.req.socket;
      Object.defineProperty(socket, "write", { value: socket.write, writable: false, configurable: true });
      Object.defineProperty(socket, "end", { value: socket.end, writable: false, configurable: true });
    },
  ],
];

describe("the record is written before the response is sent, on any Node.js", () => {
  it.each(nodeVariants)(
    "%s: 201, then the same request as soon as it is read → the replay, not a 409",
    async (_, vary) => {
      const app = express();
      app.use((_req, res, next) => {
        vary(res);
        next();
      });
      let runs = 0;
      const svc = expressAdapter(createPipeline());
      app.post(
        "/orders",
        express.json(),
        svc.handle(
          () => {
            runs++;
            return reply({ id: runs }, { status: 201 });
          },
          { idempotency: idempotency({ store: new SlowToSettle() }) },
        ),
      );
      server = await listen(app);
      const first = await post(`${server.url}/orders`, "any-node", { qty: 1 });
      expect(first.status).toBe(201);
      expect(await first.text()).toBe('{"id":1}');
      const retry = await post(`${server.url}/orders`, "any-node", { qty: 1 });
      expect(retry.status).toBe(201);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(await retry.text()).toBe('{"id":1}');
      expect(runs).toBe(1);
    },
  );

  it("two POSTs pipelined on one connection, each with its key → both answered, in order, each run once", async () => {
    const { url, calls } = await start({ store: new SlowToSettle() });
    const body = '{"qty":1}';
    const request = (key: string) =>
      `POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: "${key}"\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(url).port), "127.0.0.1", () => {
        socket.write(request("pipe-1") + request("pipe-2"));
      });
      let text = "";
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString("latin1");
        if ((text.match(/"echo"/g) ?? []).length === 2) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on("error", reject);
    });
    expect(reply.match(/HTTP\/1\.1 \d+/g)).toEqual(["HTTP/1.1 201", "HTTP/1.1 201"]);
    expect(reply.indexOf('"id":1')).toBeLessThan(reply.indexOf('"id":2'));
    expect(calls.orders).toBe(2);
    const retry = await post(`${url}/orders`, '"pipe-2"', { qty: 1 });
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.json()).toMatchObject({ id: 2 });
  });
});

describe("framing and hop-by-hop fields are never replayed (RFC 9112 §6.1, RFC 9110 §7.6.1)", () => {
  it.each(["transfer-encoding", "Content-Length", "connection", "keep-alive", "te", "trailer", "upgrade"])(
    "replayHeaders with %s → TypeError at construction",
    (name) => {
      expect(() => idempotency({ replayHeaders: ["content-type", name] })).toThrow(
        expect.objectContaining({ code: "ERR_SVC_IDEMPOTENCY_REPLAY_HEADERS" }),
      );
    },
  );

  it("a stored record holding Transfer-Encoding: chunked → the replay is framed by Content-Length alone", async () => {
    // A record written before the option refused it (or by a store of your own).
    const store: IdempotencyStore = {
      claim: async () => ({
        outcome: "completed",
        fingerprint: requestFingerprint({ method: "POST", url: "/x", body: undefined }),
        response: {
          status: 201,
          headers: { "content-type": "text/plain", "transfer-encoding": "chunked", connection: "upgrade" },
          body: new TextEncoder().encode("hello world"),
        },
      }),
      complete: async () => true,
      release: async () => true,
    };
    const app = express();
    const svc = expressAdapter(createPipeline());
    app.post(
      "/x",
      svc.handle(() => reply.empty({ status: 500 }), { idempotency: idempotency({ store }) }),
    );
    server = await listen(app);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(server?.url ?? "").port), "127.0.0.1", () => {
        socket.end(
          "POST /x HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        );
      });
      let text = "";
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString("latin1");
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    const head = answer.slice(0, answer.indexOf("\r\n\r\n")).toLowerCase();
    expect(head).toContain("content-length: 11");
    expect(head).not.toContain("transfer-encoding");
    expect(head).not.toContain("upgrade");
    expect(answer.endsWith("\r\n\r\nhello world")).toBe(true);
  });
});

describe("idempotency options", () => {
  it.each([
    [{ leaseMs: 0 }, /leaseMs/],
    [{ retentionMs: -1 }, /retentionMs/],
    [{ maxStoredBytes: Number.NaN }, /maxStoredBytes/],
    [{ methods: [] }, /methods/],
    [{ methods: ["GET"] }, /GET/],
    [{ replayHeaders: ["Set-Cookie"] }, /set-cookie/],
    [{ replayHeaders: ["X-RateLimit-Remaining"] }, /x-ratelimit-remaining/],
    [{ documentationUrl: "not a url" }, /documentationUrl/],
    [{ onStoreError: "ignore" as "fail" }, /onStoreError/],
    [{ store: {} as IdempotencyStore }, /store/],
    [{ renewLease: "yes" as unknown as boolean }, /renewLease/],
    [{ maxLeaseMs: 0 }, /maxLeaseMs/],
  ])("%o → TypeError at construction", (options, message) => {
    expect(() => idempotency(options)).toThrow(message);
  });
});

describe("MemoryStore", () => {
  it("bounded: past maxEntries completed records are evicted before in-flight ones", async () => {
    const store = new MemoryStore({ maxEntries: 2, maxEntriesPerScope: 2 });
    const a = await store.claim("a", "fp", 60_000);
    const b = await store.claim("b", "fp", 60_000);
    if (a.outcome !== "claimed" || b.outcome !== "claimed") throw new Error("claim failed");
    await store.complete("b", b.token, { status: 201, headers: {}, body: new Uint8Array() }, 60_000);
    await store.claim("c", "fp", 60_000);
    expect(store.size).toBe(2);
    expect((await store.claim("a", "fp", 60_000)).outcome).toBe("in-flight");
    // Full of in-flight records: a new key is refused, neither a nor c is evicted.
    await expect(store.claim("b", "other", 60_000)).rejects.toBeInstanceOf(StoreFullError);
    expect((await store.claim("a", "fp", 60_000)).outcome).toBe("in-flight");
    expect((await store.claim("c", "fp", 60_000)).outcome).toBe("in-flight");
  });

  it("full: expired records are dropped before a live completed record is evicted", async () => {
    let now = 1_000;
    const store = new MemoryStore({ maxEntries: 2, maxEntriesPerScope: 2, now: () => now });
    const body = new Uint8Array([1]);
    const a = await store.claim("a", "fp", 50); // lease ends at 1050
    const b = await store.claim("b", "fp", 60_000);
    if (a.outcome !== "claimed" || b.outcome !== "claimed") throw new Error("claim failed");
    await store.complete("b", b.token, { status: 201, headers: {}, body }, 60_000);
    now = 1_049;
    // Full, nothing expired yet: the oldest completed record ("b") makes room.
    expect((await store.claim("c", "fp", 60_000)).outcome).toBe("claimed");
    expect((await store.claim("a", "fp", 60_000)).outcome).toBe("in-flight");
    now = 1_050;
    // a's lease has ended: the sweep drops it, c (in flight) stays.
    expect((await store.claim("d", "fp", 60_000)).outcome).toBe("claimed");
    expect((await store.claim("c", "fp", 60_000)).outcome).toBe("in-flight");
    expect(store.size).toBe(2);
  });

  it("full: a record written after a sweep with a shorter life is still swept when it ends", async () => {
    let now = 0;
    const store = new MemoryStore({ maxEntries: 2, maxEntriesPerScope: 2, now: () => now });
    const body = new Uint8Array([1]);
    const x = await store.claim("x", "fp", 100);
    if (x.outcome !== "claimed") throw new Error("claim failed");
    await store.complete("x", x.token, { status: 201, headers: {}, body }, 10_000); // ends at 10000
    const y = await store.claim("y", "fp", 100);
    if (y.outcome !== "claimed") throw new Error("claim failed");
    now = 200; // y's lease ended: this claim sweeps it, x stays; earliest expiry now 10000
    expect((await store.claim("z", "fp", 100)).outcome).toBe("claimed");
    expect((await store.claim("x", "fp", 100)).outcome).toBe("completed");
    const z = await store.claim("z", "fp", 100);
    expect(z.outcome).toBe("in-flight");
    // z's lease (ends at 300) is shorter than the earliest expiry the sweep saw.
    now = 300;
    expect((await store.claim("w", "fp", 100)).outcome).toBe("claimed");
    expect((await store.claim("x", "fp", 100)).outcome).toBe("completed");
    expect(store.size).toBe(2);
  });

  it("full: eviction follows completion order, and a key completed again is not evicted for its old record", async () => {
    let now = 0;
    const store = new MemoryStore({ maxEntries: 2, maxEntriesPerScope: 2, now: () => now });
    const body = new Uint8Array([1]);
    const run = async (key: string, retentionMs: number) => {
      const claim = await store.claim(key, "fp", 60_000);
      if (claim.outcome !== "claimed") throw new Error(`claim of ${key}: ${claim.outcome}`);
      expect(await store.complete(key, claim.token, { status: 201, headers: {}, body }, retentionMs)).toBe(
        true,
      );
    };
    await run("a", 100);
    await run("b", 10_000);
    now = 200; // a's record has expired: a runs again, its new record completes after b's
    await run("a", 10_000);
    await run("c", 10_000); // full: the oldest completed live record is b's
    expect((await store.claim("a", "fp", 60_000)).outcome).toBe("completed");
    expect((await store.claim("c", "fp", 60_000)).outcome).toBe("completed");
    expect((await store.claim("b", "fp", 60_000)).outcome).toBe("claimed");
  });

  it("complete stores a copy of the body", async () => {
    const store = new MemoryStore();
    const claim = await store.claim("k", "fp", 60_000);
    if (claim.outcome !== "claimed") throw new Error("claim failed");
    const body = Buffer.from("hello");
    await store.complete("k", claim.token, { status: 201, headers: {}, body }, 60_000);
    body.fill(0);
    const again = await store.claim("k", "fp", 60_000);
    if (again.outcome !== "completed") throw new Error("not completed");
    expect(Buffer.from(again.response.body).toString()).toBe("hello");
    expect(again.response.body).toBeInstanceOf(Uint8Array);
  });

  it("complete and release with a foreign token → false", async () => {
    const store = new MemoryStore();
    const claim = await store.claim("k", "fp", 60_000);
    if (claim.outcome !== "claimed") throw new Error("claim failed");
    expect(await store.complete("k", "999", { status: 200, headers: {}, body: new Uint8Array() }, 1000)).toBe(
      false,
    );
    expect(await store.release("k", "999")).toBe(false);
    expect(await store.release("k", claim.token)).toBe(true);
  });

  it("renew: the owner gets a fresh lease; a foreign token, a completed or an expired record → false", async () => {
    let now = 0;
    const store = new MemoryStore({ now: () => now });
    const a = await store.claim("a", "fp", 100);
    if (a.outcome !== "claimed") throw new Error("claim failed");
    now = 90;
    expect(await store.renew("a", "999", 100)).toBe(false);
    expect(await store.renew("a", a.token, 100)).toBe(true); // now ends at 190
    now = 150;
    expect(await store.claim("a", "fp", 100)).toEqual({
      outcome: "in-flight",
      fingerprint: "fp",
      leaseRemainingMs: 40,
    });
    now = 190;
    expect(await store.renew("a", a.token, 100)).toBe(false); // expired
    const b = await store.claim("a", "fp", 100);
    if (b.outcome !== "claimed") throw new Error("claim after expiry failed");
    expect(await store.renew("a", a.token, 100)).toBe(false); // the old owner's token
    await store.complete("a", b.token, { status: 201, headers: {}, body: new Uint8Array() }, 10_000);
    expect(await store.renew("a", b.token, 100)).toBe(false); // completed
    expect(await store.renew("missing", b.token, 100)).toBe(false);
  });

  it("full: a record renewed to a shorter lease is swept when it ends, not a live in-flight one evicted", async () => {
    let now = 0;
    const store = new MemoryStore({ maxEntries: 2, maxEntriesPerScope: 2, now: () => now });
    await store.claim("a", "fp", 1000);
    const b = await store.claim("b", "fp", 1000);
    if (b.outcome !== "claimed") throw new Error("claim failed");
    now = 100;
    expect(await store.renew("b", b.token, 50)).toBe(true); // b now ends at 150, before a
    now = 200;
    expect((await store.claim("c", "fp", 1000)).outcome).toBe("claimed");
    expect((await store.claim("a", "fp", 1000)).outcome).toBe("in-flight");
    expect(store.size).toBe(2);
  });

  it("maxEntries: 0 → TypeError", () => {
    expect(() => new MemoryStore({ maxEntries: 0 })).toThrow(TypeError);
  });
});
