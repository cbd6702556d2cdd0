import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, READER, type Started, sqlite } from "./harness.js";

/**
 * Failed credentials are limited before any hashing (RATE_LIMIT_MAX failures per window, per
 * client address and per user name), and hashing is bounded so a flood is shed (spec part 8:
 * 429 and 503 with Retry-After). The client address comes from X-Forwarded-For through the
 * loopback proxy the servers trust, so each test is its own client.
 */
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

let limited: Started;
let token: Started;
let flooded: Started;

beforeAll(async () => {
  [limited, token, flooded] = await Promise.all([
    sqlite.start({ RATE_LIMIT_MAX: "5", RATE_LIMIT_WINDOW_SECONDS: "60", TRUST_PROXY: "loopback" }),
    sqlite.start({ RATE_LIMIT_MAX: "5", RATE_LIMIT_WINDOW_SECONDS: "60", TRUST_PROXY: "loopback" }),
    sqlite.start({ TRUST_PROXY: "loopback" }),
  ]);
});
afterAll(async () => {
  await Promise.all([limited.stop(), token.stop(), flooded.stop()]);
});

function from(client: string, authorization: string, base = limited.url, path = "/departments") {
  return fetch(`${base}${path}`, {
    method: path === "/auth/token" ? "POST" : "GET",
    headers: { authorization, "x-forwarded-for": client },
  });
}

async function expect429(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(120);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(await res.json()).toMatchObject({ status: 429 });
}

describe("failed Basic credentials with RATE_LIMIT_MAX=5", () => {
  it("5 wrong passwords → 401 each; the 6th → 429 with Retry-After; the right password then → 429", async () => {
    for (let i = 0; i < 5; i++)
      expect((await from("203.0.113.1", basic("reader", `wrong${i}`))).status).toBe(401);
    await expect429(await from("203.0.113.1", basic("reader", "wrong5")));
    await expect429(await from("203.0.113.1", READER));
    // The client's budget: another user from the same client is refused too.
    await expect429(await from("203.0.113.1", ADMIN));
  });

  it("the user name's budget: reader (spent above) from a client that never failed for it → 200, not locked out; from .1 → 429", async () => {
    expect((await from("203.0.113.2", READER)).status).toBe(200);
    await expect429(await from("203.0.113.1", READER));
  });

  it("unknown user names count too: 5 from one client → 401 each, then its admin → 429", async () => {
    for (let i = 0; i < 5; i++) expect((await from("203.0.113.3", basic(`ghost${i}`, "x"))).status).toBe(401);
    await expect429(await from("203.0.113.3", ADMIN));
  });
});

describe("nobody can lock a named user out (RATE_LIMIT_MAX=5)", () => {
  it("admin signs in; ADMIN:wrong from 5 other clients; one client tries 10 more → admin:admin still → 200 on the API and on POST /auth/token, from its client and from a new one", async () => {
    expect((await from("203.0.113.60", ADMIN)).status).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await from(`203.0.113.${61 + i}`, basic("ADMIN", "wrong"))).status).toBe(401);
    // One address keeps trying: admin's spent budget refuses it from its first failure on, and
    // refuses only it.
    const flood: number[] = [];
    for (let i = 0; i < 10; i++) flood.push((await from("203.0.113.66", basic("ADMIN", `wrong${i}`))).status);
    expect(flood).toEqual([401, 429, 429, 429, 429, 429, 429, 429, 429, 429]);
    expect((await from("203.0.113.60", ADMIN)).status).toBe(200);
    expect((await from("203.0.113.60", ADMIN, limited.url, "/auth/token")).status).toBe(200);
    // A client that never failed for admin is verified (not from the cache: another spelling).
    expect((await from("203.0.113.67", basic("admin", "admin"))).status).toBe(200);
    // The clients that guessed are refused, the right password or not.
    await expect429(await from("203.0.113.61", ADMIN));
  });
});

describe("POST /auth/token with RATE_LIMIT_MAX=5", () => {
  it("5 wrong passwords → 401 each; the 6th → 429; the right password then → 429, no token", async () => {
    for (let i = 0; i < 5; i++)
      expect((await from("198.51.100.1", basic("admin", `bad${i}`), token.url, "/auth/token")).status).toBe(
        401,
      );
    await expect429(await from("198.51.100.1", basic("admin", "bad5"), token.url, "/auth/token"));
    await expect429(await from("198.51.100.1", ADMIN, token.url, "/auth/token"));
  });
});

describe("POST /auth/token: credentials, then the rate limit, then the body", () => {
  const post = (client: string, init: { authorization?: string; type?: string; body?: string }) =>
    fetch(`${token.url}/auth/token`, {
      method: "POST",
      headers: {
        "x-forwarded-for": client,
        ...(init.authorization ? { authorization: init.authorization } : {}),
        ...(init.type ? { "content-type": init.type } : {}),
      },
      body: init.body ?? null,
    });

  it("no credentials: `{bad` as JSON → 401 with the Basic challenge, not 400; text/plain → 401, not 415", async () => {
    for (const [type, body] of [
      ["application/json", "{bad"],
      ["text/plain", "hello"],
    ] as const) {
      const res = await post("198.51.100.20", { type, body });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Basic realm="svc", charset="UTF-8"');
    }
  });

  it("no credentials, 5 from one client → 401 each, the 6th → 429: they count against the client's rate limit", async () => {
    for (let i = 0; i < 5; i++) expect((await post("198.51.100.21", {})).status).toBe(401);
    await expect429(await post("198.51.100.21", {}));
  });

  it("a wrong password with `{bad` as JSON → 401 (not 400), counted: the 6th → 429", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await post("198.51.100.22", {
        authorization: basic("reader", `nope${i}`),
        type: "application/json",
        body: "{bad",
      });
      expect(res.status).toBe(401);
    }
    await expect429(
      await post("198.51.100.22", { authorization: READER, type: "application/json", body: "{bad" }),
    );
  });

  it("the right password with `{bad` as JSON → 400, after the credentials", async () => {
    const res = await post("198.51.100.23", { authorization: ADMIN, type: "application/json", body: "{bad" });
    expect(res.status).toBe(400);
  });
});

describe("a flood of unknown-user Basic requests", () => {
  it("64 at once → shed with 503 + Retry-After beyond the hashing bound; a Bearer and a known Basic client → 200", async () => {
    const issued = await from("192.0.2.1", ADMIN, flooded.url, "/auth/token");
    expect(issued.status).toBe(200);
    const { access_token } = (await issued.json()) as { access_token: string };
    const flood = Array.from({ length: 64 }, (_, i) =>
      from(`192.0.2.${(i % 200) + 10}`, basic(`nobody${i}`, "guess"), flooded.url),
    );
    const bearer = from("192.0.2.2", `Bearer ${access_token}`, flooded.url);
    const known = from("192.0.2.1", ADMIN, flooded.url);
    const responses = await Promise.all(flood);
    expect((await bearer).status).toBe(200);
    expect((await known).status).toBe(200);
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
    const shed = responses.filter((r) => r.status === 503);
    expect(shed.length).toBeGreaterThan(0);
    for (const r of shed) expect(r.headers.get("retry-after")).toBe("1");
    expect(await shed[0]?.json()).toMatchObject({ status: 503 });
  });
});

describe("Basic guesses behind TRUST_PROXY=1, a hop count (RATE_LIMIT_MAX=5)", () => {
  let hop: Started;
  beforeAll(async () => {
    hop = await sqlite.start({ RATE_LIMIT_MAX: "5", RATE_LIMIT_WINDOW_SECONDS: "60", TRUST_PROXY: "1" });
  });
  afterAll(() => hop.stop());

  it("6 wrong admin passwords from X-Forwarded-For: 203.0.113.66 → 401 ×5, 429; admin:admin from 198.51.100.9 → 200; POST /auth/token from 198.51.100.11 → 200", async () => {
    const guesses: number[] = [];
    for (let i = 0; i < 6; i++)
      guesses.push((await from("203.0.113.66", basic("admin", `wrong${i}`), hop.url)).status);
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429]);
    // The budgets spent are the forwarded client's, not the proxy's that every client shares.
    expect((await from("198.51.100.9", ADMIN, hop.url)).status).toBe(200);
    expect((await from("198.51.100.11", ADMIN, hop.url, "/auth/token")).status).toBe(200);
    await expect429(await from("203.0.113.66", ADMIN, hop.url));
  });
});
