import { createRateLimiter, MemoryStore } from "@svc/ratelimit";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { app } from "../test/helpers.js";
import { type BasicOptions, createBasicVerifier } from "./basic-verifier.js";
import { ConcurrencyGate } from "./concurrency-gate.js";
import { authenticate } from "./express.js";
import type { FailureLimiter } from "./failure-budget.js";

const SECRET = "an HMAC secret of at least thirty-two bytes!";
const PASSWORDS = new Map([
  ["alice", "right"],
  ["bob", "builder"],
]);

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;
}

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A verify callback that records its calls; `hold` makes every call wait for `release()`. */
function counting() {
  const calls: string[] = [];
  let gate: Promise<void> | undefined;
  let open: () => void = () => {};
  return {
    calls,
    hold() {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    release() {
      gate = undefined;
      open();
    },
    async verify(username: string, password: string) {
      calls.push(username);
      if (gate) await gate;
      return PASSWORDS.get(username) === password ? { id: username } : null;
    },
  };
}

/** A server whose client address is the `x-client` header (so one test can be many clients). */
async function serve(options: Omit<BasicOptions, "verify">, verify: BasicOptions["verify"]) {
  const middleware = authenticate({
    realm: "api",
    bearer: { secret: SECRET, algorithms: ["HS256"] },
    basic: {
      verify,
      ...options,
      ...(options.failureLimit && {
        failureLimit: {
          clientAddress: (req) => String(req.headers["x-client"] ?? "192.0.2.1"),
          ...options.failureLimit,
        },
      }),
    },
  });
  server = await listen(app(middleware as express.RequestHandler));
  return server.url;
}

function get(url: string, authorization: string, client = "192.0.2.1"): Promise<Response> {
  return fetch(`${url}/me`, { headers: { authorization, "x-client": client } });
}

/** A fresh limiter of `limit` failures per window, on its own clock. */
function failures(limit: number, windowMs = 60_000) {
  const clock = { now: 1_000_000 };
  const limiter = createRateLimiter({ limit, windowMs, store: new MemoryStore(), now: () => clock.now });
  return { limiter, clock };
}

async function bearer(): Promise<string> {
  const { SignJWT } = await import("jose");
  return new SignJWT({ sub: "svc" })
    .setProtectedHeader({ alg: "HS256" })
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(SECRET));
}

describe("failure budgets (with @svc/ratelimit's createRateLimiter)", () => {
  it("5 wrong passwords with a budget of 5 → 401 × 5, then 429 with Retry-After and no verify call", async () => {
    const v = counting();
    const { limiter } = failures(5);
    const url = await serve({ failureLimit: { perClient: limiter }, cache: false }, v.verify);
    for (let i = 0; i < 5; i++) expect((await get(url, basic("alice", `wrong${i}`))).status).toBe(401);
    expect(v.calls).toHaveLength(5);
    const blocked = await get(url, basic("alice", "wrong5"));
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(blocked.headers.get("retry-after"))).toBeLessThanOrEqual(120);
    expect(blocked.headers.get("content-type")).toMatch(/json/);
    expect(await blocked.json()).toMatchObject({ status: 429 });
    expect(v.calls).toHaveLength(5);
  });

  it("the right password from a client over its budget → 429, without verifying; another client → 200", async () => {
    const v = counting();
    const { limiter } = failures(3);
    const url = await serve({ failureLimit: { perClient: limiter }, cache: false }, v.verify);
    for (let i = 0; i < 3; i++) await get(url, basic("mallory", "guess"), "198.51.100.7");
    v.calls.length = 0;
    expect((await get(url, basic("alice", "right"), "198.51.100.7")).status).toBe(429);
    expect((await get(url, basic("bob", "builder"), "198.51.100.7")).status).toBe(429);
    expect(v.calls).toEqual([]);
    expect((await get(url, basic("alice", "right"), "198.51.100.8")).status).toBe(200);
  });

  it("IPv6 clients in one /64 share a budget: 2001:db8::1 fails, 2001:db8::2 is blocked", async () => {
    const v = counting();
    const { limiter } = failures(2);
    const url = await serve({ failureLimit: { perClient: limiter }, cache: false }, v.verify);
    await get(url, basic("alice", "x"), "2001:db8::1");
    await get(url, basic("alice", "y"), "2001:db8::1");
    expect((await get(url, basic("alice", "right"), "2001:db8::2")).status).toBe(429);
    expect((await get(url, basic("alice", "right"), "2001:db8:0:1::2")).status).toBe(200);
  });

  it.each([
    ["::ffff:0:192.0.2.1", "::ffff:0:192.0.2.2"],
    ["64:ff9b::192.0.2.1", "64:ff9b::192.0.2.2"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdfe", "2001:0:4136:e378:8000:63bf:3fff:fdfd"],
  ])(
    "translated IPv4 clients (%s, %s) have a budget each, as their IPv4 addresses do",
    async (first, second) => {
      const v = counting();
      const { limiter } = failures(2);
      const url = await serve({ failureLimit: { perClient: limiter }, cache: false }, v.verify);
      await get(url, basic("alice", "x"), first);
      await get(url, basic("alice", "y"), first);
      expect((await get(url, basic("alice", "right"), first)).status).toBe(429);
      expect((await get(url, basic("alice", "right"), "192.0.2.1")).status).toBe(429);
      expect((await get(url, basic("alice", "right"), second)).status).toBe(200);
    },
  );

  it("a client key that is not an address (`tenant-7`) → its own budget, 429 once spent", async () => {
    const v = counting();
    const { limiter } = failures(1);
    const url = await serve({ failureLimit: { perClient: limiter }, cache: false }, v.verify);
    expect((await get(url, basic("alice", "x"), "tenant-7")).status).toBe(401);
    expect((await get(url, basic("alice", "right"), "tenant-7")).status).toBe(429);
    expect((await get(url, basic("alice", "right"), "tenant-8")).status).toBe(200);
  });

  it("undecodable credentials (`Basic !!!!`) count against the client's budget", async () => {
    const v = counting();
    const { limiter } = failures(2);
    const url = await serve({ failureLimit: { perClient: limiter }, cache: false }, v.verify);
    expect((await get(url, "Basic !!!!")).status).toBe(401);
    expect((await get(url, "Basic bm9jb2xvbg==")).status).toBe(401);
    expect((await get(url, basic("alice", "right"))).status).toBe(429);
    expect(v.calls).toEqual([]);
  });

  it("per user name (3): alice fails from .10, .11 and .12 → alice's right password from .13, which never failed → 200; from .10 → 429, ALICE too", async () => {
    const v = counting();
    const { limiter } = failures(3);
    const url = await serve({ failureLimit: { perUsername: limiter }, cache: false }, v.verify);
    for (const client of ["192.0.2.10", "192.0.2.11", "192.0.2.12"])
      expect((await get(url, basic("alice", "nope"), client)).status).toBe(401);
    // The name's budget is spent, but it was not .13 that spent it.
    expect((await get(url, basic("alice", "right"), "192.0.2.13")).status).toBe(200);
    const calls = v.calls.length;
    // .10 failed for alice itself: the name's budget refuses it, right password or not, and the
    // budget is case- and normalisation-blind (`ALICE` is alice).
    expect((await get(url, basic("alice", "right"), "192.0.2.10")).status).toBe(429);
    expect((await get(url, basic("ALICE", "right"), "192.0.2.10")).status).toBe(429);
    expect(v.calls.length).toBe(calls);
    expect((await get(url, basic("bob", "builder"), "192.0.2.10")).status).toBe(200);
    // One guess of its own makes .13 a client with failures too.
    expect((await get(url, basic("alice", "guess"), "192.0.2.13")).status).toBe(401);
    expect((await get(url, basic("alice", "right"), "192.0.2.13")).status).toBe(429);
  });

  it("one limiter for both budgets (2): alice fails from .20 and .21 → alice from .22 → 200, bob from .20 → 200, alice from .20 → 429", async () => {
    const v = counting();
    const { limiter } = failures(2);
    const url = await serve(
      { failureLimit: { perClient: limiter, perUsername: limiter }, cache: false },
      v.verify,
    );
    expect((await get(url, basic("alice", "a"), "192.0.2.20")).status).toBe(401);
    expect((await get(url, basic("alice", "b"), "192.0.2.21")).status).toBe(401);
    expect((await get(url, basic("alice", "right"), "192.0.2.22")).status).toBe(200);
    expect((await get(url, basic("bob", "builder"), "192.0.2.20")).status).toBe(200);
    expect((await get(url, basic("alice", "right"), "192.0.2.20")).status).toBe(429);
  });

  it("ALICE:wrong × 5 from 5 other clients (budgets of 5) → alice:right, which had just succeeded, → 200 from the cache, verify not run again", async () => {
    const v = counting();
    const { limiter } = failures(5);
    const url = await serve({ failureLimit: { perClient: limiter, perUsername: limiter } }, v.verify);
    expect((await get(url, basic("alice", "right"), "192.0.2.30")).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await get(url, basic("ALICE", "wrong"), `192.0.2.${31 + i}`)).status).toBe(401);
    expect((await get(url, basic("alice", "right"), "192.0.2.30")).status).toBe(200);
    // The same credentials from a client that never failed: the cache answers too.
    expect((await get(url, basic("alice", "right"), "192.0.2.39")).status).toBe(200);
    expect(v.calls).toEqual(["alice", "ALICE", "ALICE", "ALICE", "ALICE", "ALICE"]);
  });

  it("a client that failed for alice, alice's budget spent by others: alice's cached password → 429 too, so its guesses cannot be tested against the cache for free", async () => {
    const v = counting();
    const { limiter } = failures(3);
    const url = await serve({ failureLimit: { perClient: limiter, perUsername: limiter } }, v.verify);
    expect((await get(url, basic("alice", "right"), "192.0.2.80")).status).toBe(200); // cached
    for (const client of ["192.0.2.81", "192.0.2.82", "192.0.2.83"])
      expect((await get(url, basic("alice", "guess"), client)).status).toBe(401);
    for (let i = 0; i < 5; i++)
      expect((await get(url, basic("alice", `guess${i}`), "192.0.2.81")).status).toBe(429);
    expect((await get(url, basic("alice", "right"), "192.0.2.81")).status).toBe(429);
    expect((await get(url, basic("alice", "right"), "192.0.2.80")).status).toBe(200);
    expect(v.calls).toHaveLength(4);
  });

  it("one client sends ALICE:wrong 20 times → 401 × 5 then 429 × 15 (its own budget); alice from another client → 200 before, during and after", async () => {
    const v = counting();
    const { limiter } = failures(5);
    const url = await serve(
      { failureLimit: { perClient: limiter, perUsername: limiter }, cache: false },
      v.verify,
    );
    expect((await get(url, basic("alice", "right"), "192.0.2.38")).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      statuses.push((await get(url, basic("ALICE", `wrong${i}`), "198.51.100.66")).status);
      if (i % 5 === 4) expect((await get(url, basic("alice", "right"), "192.0.2.38")).status).toBe(200);
    }
    expect(statuses).toEqual([...Array<number>(5).fill(401), ...Array<number>(15).fill(429)]);
  });

  it("12 wrong passwords for alice sent at once from one client with a budget of 3 → verify runs 3 times, not 12", async () => {
    const v = counting();
    const { limiter } = failures(3);
    let checked = 0;
    const counted: FailureLimiter = {
      consume(key, cost) {
        if (cost === 0 && key.startsWith("p:")) checked++;
        return limiter.consume(key, cost);
      },
    };
    const url = await serve({ failureLimit: { perUsername: counted }, cache: false }, v.verify);
    v.hold();
    const attempts = Array.from({ length: 12 }, (_, i) =>
      get(url, basic("alice", `guess${i}`), "192.0.2.40"),
    );
    // All 12 have checked the budget (3 left: nothing is spent until verify answers).
    await expect.poll(() => checked).toBe(12);
    await expect.poll(() => v.calls.length).toBe(2);
    v.release();
    const statuses = (await Promise.all(attempts)).map((r) => r.status);
    expect(v.calls).toHaveLength(3);
    // The other 9 waited for those in flight, then found the budget spent.
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
    // The client's budget for alice is spent: the right password now waits out the window.
    expect((await get(url, basic("alice", "right"), "192.0.2.40")).status).toBe(429);
  });

  it("the name's budget (3) spent from .41-.43 → each new client gets one guess (401), then 429, right password or not", async () => {
    const v = counting();
    const { limiter } = failures(3);
    const url = await serve({ failureLimit: { perUsername: limiter }, cache: false }, v.verify);
    for (const client of ["192.0.2.41", "192.0.2.42", "192.0.2.43"])
      expect((await get(url, basic("alice", "nope"), client)).status).toBe(401);
    for (const client of ["192.0.2.44", "192.0.2.45", "192.0.2.46", "192.0.2.47"]) {
      expect((await get(url, basic("alice", `guess-${client}`), client)).status).toBe(401);
      expect((await get(url, basic("alice", "right"), client)).status).toBe(429);
    }
    expect(v.calls).toHaveLength(7);
  });

  it("6 right passwords sent at once with a budget of 2 → 200 × 6: the ones past the budget wait, not 503", async () => {
    const v = counting();
    const { limiter } = failures(2);
    const url = await serve({ failureLimit: { perUsername: limiter }, cache: false }, v.verify);
    v.hold();
    const attempts = Array.from({ length: 6 }, () => get(url, basic("alice", "right")));
    await expect.poll(() => v.calls.length).toBe(2);
    v.release();
    expect((await Promise.all(attempts)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(v.calls).toHaveLength(6);
  });

  it("the same right password 6 times at once with a budget of 1 → verify runs once, the rest are cache hits", async () => {
    const v = counting();
    const { limiter } = failures(1);
    const url = await serve({ failureLimit: { perUsername: limiter } }, v.verify);
    v.hold();
    const attempts = Array.from({ length: 6 }, () => get(url, basic("alice", "right")));
    await expect.poll(() => v.calls.length).toBe(1);
    v.release();
    expect((await Promise.all(attempts)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(v.calls).toHaveLength(1);
  });

  it("the window passes → the right password → 200 again", async () => {
    const v = counting();
    const { limiter, clock } = failures(2, 10_000);
    const url = await serve({ failureLimit: { perClient: limiter }, cache: false }, v.verify);
    await get(url, basic("alice", "x"));
    await get(url, basic("alice", "y"));
    const blocked = await get(url, basic("alice", "right"));
    expect(blocked.status).toBe(429);
    clock.now += Number(blocked.headers.get("retry-after")) * 1000;
    expect((await get(url, basic("alice", "right"))).status).toBe(200);
  });

  it("good credentials spend nothing: 10 right passwords with a budget of 1 → 200 × 10", async () => {
    const v = counting();
    const { limiter } = failures(1);
    const url = await serve(
      { failureLimit: { perClient: limiter, perUsername: limiter }, cache: false },
      v.verify,
    );
    for (let i = 0; i < 10; i++) expect((await get(url, basic("alice", "right"))).status).toBe(200);
  });

  it("a limiter that throws, failMode open (default) → verified as usual; closed → 503 with Retry-After", async () => {
    const broken: FailureLimiter = {
      consume() {
        throw new Error("redis down");
      },
    };
    const warnings: string[] = [];
    const v = counting();
    let url = await serve(
      { failureLimit: { perClient: broken, logger: { warn: (_o, m) => warnings.push(m ?? "") } } },
      v.verify,
    );
    expect((await get(url, basic("alice", "right"))).status).toBe(200);
    expect((await get(url, basic("alice", "wrong"))).status).toBe(401);
    expect(warnings).toHaveLength(1);
    await server?.close();
    url = await serve({ failureLimit: { perClient: broken, failMode: "closed" } }, v.verify);
    const res = await get(url, basic("alice", "right"));
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
  });
});

describe("the default failure budget (10 per 15 minutes, in memory)", () => {
  it("basic: { verify } alone (the README's app): 10 wrong passwords → 401 each; the 11th and the right one → 429; verify ran 10 times", async () => {
    const v = counting();
    const url = await serve({ cache: false }, v.verify);
    for (let i = 0; i < 10; i++) expect((await get(url, basic("alice", `wrong${i}`))).status).toBe(401);
    const blocked = await get(url, basic("alice", "wrong10"));
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await get(url, basic("alice", "right"))).status).toBe(429);
    expect(v.calls).toHaveLength(10);
  });

  it("failureLimit: false → 12 wrong passwords → 401 × 12 (no budget, as chosen)", async () => {
    const v = counting();
    const url = await serve({ cache: false, failureLimit: false }, v.verify);
    for (let i = 0; i < 12; i++) expect((await get(url, basic("alice", `wrong${i}`))).status).toBe(401);
    expect(v.calls).toHaveLength(12);
  });

  it("failureLimit: { clientAddress } alone → the default budgets, per that address: .50 spent, .51 → 200", async () => {
    const v = counting();
    const url = await serve({ cache: false, failureLimit: {} }, v.verify);
    for (let i = 0; i < 10; i++)
      expect((await get(url, basic("bob", `wrong${i}`), "192.0.2.50")).status).toBe(401);
    expect((await get(url, basic("alice", "right"), "192.0.2.50")).status).toBe(429);
    expect((await get(url, basic("alice", "right"), "192.0.2.51")).status).toBe(200);
  });
});

describe("bounded hashing", () => {
  it("concurrency 1, queue 1: a third attempt while two are in → 503 with Retry-After, without verifying", async () => {
    const v = counting();
    const url = await serve({ concurrency: 1, queue: 1, cache: false }, v.verify);
    v.hold();
    const first = get(url, basic("alice", "right"));
    const second = get(url, basic("bob", "builder"));
    await expect.poll(() => v.calls.length).toBe(1);
    // The second is queued (not yet verifying); give it time to arrive.
    await new Promise((r) => setTimeout(r, 50));
    const third = await get(url, basic("alice", "right"));
    expect(third.status).toBe(503);
    expect(third.headers.get("retry-after")).toBe("1");
    expect(await third.json()).toMatchObject({ status: 503 });
    expect(v.calls).toEqual(["alice"]);
    v.release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(v.calls).toEqual(["alice", "bob"]);
  });

  it("concurrency 1, queue 1, a guesser with a failure holds the slot and the queue → a client that never failed → 200, the guesser's queued attempt → 503", async () => {
    const v = counting();
    const verifier = createBasicVerifier({
      verify: v.verify,
      concurrency: 1,
      queue: 1,
      cache: false,
      failureLimit: { clientAddress: (req) => String(req.headers["x-client"]) },
    });
    server = await listen(app(authenticate({ realm: "api", basic: verifier }) as express.RequestHandler));
    const url = server.url;
    expect((await get(url, basic("mallory", "a"), "198.51.100.70")).status).toBe(401);
    v.hold();
    const inSlot = get(url, basic("mallory", "b"), "198.51.100.70");
    await expect.poll(() => verifier.gate.active).toBe(1);
    const queued = get(url, basic("mallory", "c"), "198.51.100.70");
    await expect.poll(() => verifier.gate.waiting).toBe(1);
    // Full: before, alice was shed with 503 behind the guesser's flood.
    const alice = get(url, basic("alice", "right"), "192.0.2.71");
    const shed = await queued;
    expect(shed.status).toBe(503);
    expect(shed.headers.get("retry-after")).toBe("1");
    v.release();
    expect((await inSlot).status).toBe(401);
    expect((await alice).status).toBe(200);
    // A client with failures of its own finding the queue full is shed, as before.
    v.hold();
    const held = get(url, basic("mallory", "d"), "198.51.100.70");
    await expect.poll(() => verifier.gate.active).toBe(1);
    const waiting = get(url, basic("bob", "builder"), "192.0.2.72");
    await expect.poll(() => verifier.gate.waiting).toBe(1);
    expect((await get(url, basic("mallory", "e"), "198.51.100.70")).status).toBe(503);
    v.release();
    expect((await held).status).toBe(401);
    expect((await waiting).status).toBe(200);
  });

  it("hashing slots all taken → a Bearer request still → 200, and a cached Basic client → 200", async () => {
    const v = counting();
    const url = await serve({ concurrency: 1, queue: 0 }, v.verify);
    expect((await get(url, basic("bob", "builder"))).status).toBe(200); // now cached
    v.hold();
    const pending = get(url, basic("alice", "right"));
    await expect.poll(() => v.calls.length).toBe(2);
    expect((await get(url, basic("alice", "wrong"))).status).toBe(503);
    expect((await get(url, `Bearer ${await bearer()}`)).status).toBe(200);
    expect((await get(url, basic("bob", "builder"))).status).toBe(200);
    v.release();
    expect((await pending).status).toBe(200);
  });

  it("a verify that throws frees its slot: → 500, then the next attempt → 200", async () => {
    let fail = true;
    const url = await serve({ concurrency: 1, queue: 0, cache: false }, async (u, p) => {
      if (fail) throw new Error("user store down");
      return PASSWORDS.get(u) === p ? { id: u } : null;
    });
    expect((await get(url, basic("alice", "right"))).status).toBe(500);
    fail = false;
    expect((await get(url, basic("alice", "right"))).status).toBe(200);
  });
});

describe("verified-credentials cache", () => {
  it("the same good credentials twice → verify runs once", async () => {
    const v = counting();
    const url = await serve({}, v.verify);
    expect((await get(url, basic("alice", "right"))).status).toBe(200);
    const again = await get(url, basic("alice", "right"));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id: "alice", roles: [], scopes: [], scheme: "basic" });
    expect(v.calls).toEqual(["alice"]);
  });

  it("a wrong password is never cached, and a cached user name with another password is verified", async () => {
    const v = counting();
    const url = await serve({}, v.verify);
    await get(url, basic("alice", "right"));
    expect((await get(url, basic("alice", "wrong"))).status).toBe(401);
    expect((await get(url, basic("alice", "wrong"))).status).toBe(401);
    expect(v.calls).toEqual(["alice", "alice", "alice"]);
  });

  it("cache: false → verify runs on every request", async () => {
    const v = counting();
    const url = await serve({ cache: false }, v.verify);
    await get(url, basic("alice", "right"));
    await get(url, basic("alice", "right"));
    expect(v.calls).toEqual(["alice", "alice"]);
  });

  it("ttl 0.05 s → verified again after 100 ms", async () => {
    const v = counting();
    const url = await serve({ cache: { ttl: 0.05 } }, v.verify);
    await get(url, basic("alice", "right"));
    await new Promise((r) => setTimeout(r, 100));
    await get(url, basic("alice", "right"));
    expect(v.calls).toEqual(["alice", "alice"]);
  });

  it("principals of 4.5 MB (verify adding 2,200 roles of 1,000 characters): the cache holds 8 MiB, so bob's evicts alice's; one of 9 MB is never cached", async () => {
    const calls: string[] = [];
    const url = await serve({}, (username, password) => {
      calls.push(username);
      if (username !== "huge" && PASSWORDS.get(username) !== password) return null;
      return { id: username, roles: Array<string>(username === "huge" ? 4400 : 2200).fill("r".repeat(1000)) };
    });
    for (const [user, password] of [
      ["alice", "right"],
      ["alice", "right"],
      ["bob", "builder"],
      ["alice", "right"],
      ["huge", "x"],
      ["huge", "x"],
    ] as const) {
      const res = await get(url, basic(user, password));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(calls).toEqual(["alice", "bob", "alice", "huge", "huge"]);
  });

  it("max 1 → a second user evicts the first", async () => {
    const v = counting();
    const url = await serve({ cache: { max: 1 } }, v.verify);
    await get(url, basic("alice", "right"));
    await get(url, basic("bob", "builder"));
    await get(url, basic("alice", "right"));
    expect(v.calls).toEqual(["alice", "bob", "alice"]);
  });

  it("clearCache while a check is running (password changed): its credentials are not cached → the old password → 401", async () => {
    let stored = "right";
    let arrived = () => {};
    let release = () => {};
    const reading = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const verifier = createBasicVerifier({
      async verify(username, password) {
        const hash = stored; // the stored password as it was when the check began
        arrived();
        await released;
        return username === "alice" && password === hash ? { id: "alice" } : null;
      },
    });
    server = await listen(app(authenticate({ realm: "api", basic: verifier }) as express.RequestHandler));
    const inFlight = get(server.url, basic("alice", "right"));
    await reading;
    // The password changes and the cache is emptied, as the README says to, mid-check.
    stored = "changed";
    verifier.clearCache();
    release();
    expect((await inFlight).status).toBe(200); // judged against the password it read
    expect((await get(server.url, basic("alice", "right"))).status).toBe(401);
  });

  it("user names with ':' do not alias: check({ 'a:b', 'c' }) is not check({ 'a', 'b:c' })", async () => {
    const verifier = createBasicVerifier({
      verify: (u, p) => (u === "a" && p === "b:c" ? { id: "a" } : null),
    });
    expect((await verifier.check({ username: "a", password: "b:c" }, undefined)).result).toBe(
      "authenticated",
    );
    expect((await verifier.check({ username: "a:b", password: "c" }, undefined)).result).toBe("invalid");
  });
});

describe("createBasicVerifier options", () => {
  const verify = () => null;
  it.each([
    ["concurrency: 0", { concurrency: 0 }, "ERR_SVC_AUTH_BASIC_CONCURRENCY"],
    ["concurrency: 1.5", { concurrency: 1.5 }, "ERR_SVC_AUTH_BASIC_CONCURRENCY"],
    ["queue: -1", { queue: -1 }, "ERR_SVC_AUTH_BASIC_QUEUE"],
    ["busyRetryAfter: NaN", { busyRetryAfter: Number.NaN }, "ERR_SVC_AUTH_BASIC_BUSY_RETRY_AFTER"],
    ["cache.max: 0", { cache: { max: 0 } }, "ERR_SVC_AUTH_BASIC_CACHE_MAX"],
    ["cache.ttl: -1", { cache: { ttl: -1 } }, "ERR_SVC_AUTH_BASIC_CACHE_TTL"],
    ["failureLimit: true", { failureLimit: true }, "ERR_SVC_AUTH_BASIC_FAILURE_LIMIT"],
    [
      "failureLimit.perClient: {}",
      { failureLimit: { perClient: {} } },
      "ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_PER_CLIENT",
    ],
    [
      'failureLimit.failMode: "maybe"',
      { failureLimit: { perClient: { consume: () => ({}) }, failMode: "maybe" } },
      "ERR_SVC_AUTH_BASIC_FAILURE_LIMIT_FAIL_MODE",
    ],
  ])("%s → TypeError with its code", (_label, options, code) => {
    expect(() => createBasicVerifier({ verify, ...(options as object) })).toThrow(
      expect.objectContaining({ name: "TypeError", code }),
    );
  });

  it("verify missing → TypeError ERR_SVC_AUTH_BASIC_VERIFY, naming what was given", () => {
    expect(() => createBasicVerifier({} as BasicOptions)).toThrow(
      expect.objectContaining({
        code: "ERR_SVC_AUTH_BASIC_VERIFY",
        message: expect.stringMatching(/undefined/),
      }),
    );
  });

  it("defaults: 2 concurrent verifications, 16 waiting", () => {
    const { gate } = createBasicVerifier({ verify });
    expect([gate.limit, gate.queue]).toEqual([2, 16]);
  });
});

describe("ConcurrencyGate", () => {
  it("limit 1, queue 1, full: enter(true) → takes the ordinary waiter's place (it gets undefined) and is served first", async () => {
    const gate = new ConcurrencyGate(1, 1);
    const first = gate.enter() as () => void;
    const ordinary = gate.enter() as Promise<(() => void) | undefined>;
    expect(gate.enter()).toBeUndefined();
    const priority = gate.enter(true) as Promise<(() => void) | undefined>;
    expect(await ordinary).toBeUndefined();
    expect(gate.enter(true)).toBeUndefined(); // no ordinary waiter left to displace
    first();
    const release = await priority;
    expect(typeof release).toBe("function");
    expect([gate.active, gate.waiting]).toEqual([1, 0]);
    release?.();
    expect(gate.active).toBe(0);
  });

  it("limit 1, queue 2: an ordinary then a priority waiter → the priority one gets the slot first", async () => {
    const gate = new ConcurrencyGate(1, 2);
    const first = gate.enter() as () => void;
    const order: string[] = [];
    const ordinary = (gate.enter() as Promise<(() => void) | undefined>).then((r) => {
      order.push("ordinary");
      return r;
    });
    const priority = (gate.enter(true) as Promise<(() => void) | undefined>).then((r) => {
      order.push("priority");
      return r;
    });
    first();
    (await priority)?.();
    (await ordinary)?.();
    expect(order).toEqual(["priority", "ordinary"]);
  });

  it("limit 1, queue 1: enter → slot, enter → waits, enter → undefined; release passes the slot on", async () => {
    const gate = new ConcurrencyGate(1, 1);
    const first = gate.enter();
    expect(typeof first).toBe("function");
    const second = gate.enter();
    expect(second).toBeInstanceOf(Promise);
    expect(gate.enter()).toBeUndefined();
    (first as () => void)();
    (first as () => void)(); // a second release is a no-op
    const release = await (second as Promise<() => void>);
    expect([gate.active, gate.waiting]).toEqual([1, 0]);
    release();
    expect(gate.active).toBe(0);
  });
});
