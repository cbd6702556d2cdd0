import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type Started, sqlite } from "./harness.js";

/**
 * Credentials inside the SOAP envelope (the `Authentication` block, WS-Security UsernameToken in
 * text and digest) share the failure budgets of HTTP Basic (RATE_LIMIT_MAX failures per window,
 * per client address and per user name, checked before any hashing) and its hashing bound
 * (spec part 8: 429 and 503 with Retry-After, as SOAP faults). The client address comes from
 * X-Forwarded-For through the loopback proxy the servers trust. The request rate limit counts
 * SOAP calls per address too, so the user-name budget is spent from a fresh address each time:
 * only the failure budget can refuse those. The user name's budget refuses the clients that
 * failed for that name, never one that did not.
 */
const TNS = "http://svc.example.com/ws/customer/v1";
const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
const WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
const WSU = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
const PROFILE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0";
const BASE64 =
  "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary";

function envelope(header: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${SOAP12}" xmlns:c="${TNS}" xmlns:wsse="${WSSE}" xmlns:wsu="${WSU}">${
    header ? `<env:Header>${header}</env:Header>` : ""
  }<env:Body><c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest></env:Body></env:Envelope>`;
}

const authentication = (user: string, password: string) =>
  `<c:Authentication><c:Username>${user}</c:Username><c:Password>${password}</c:Password></c:Authentication>`;

function usernameToken(user: string, password: string, digest: boolean): string {
  const nonce = randomBytes(16);
  const created = new Date().toISOString();
  const value = digest
    ? createHash("sha1").update(nonce).update(created).update(password).digest("base64")
    : password;
  return `<wsse:Security env:mustUnderstand="true"><wsse:UsernameToken><wsse:Username>${user}</wsse:Username><wsse:Password Type="${PROFILE}#${
    digest ? "PasswordDigest" : "PasswordText"
  }">${value}</wsse:Password><wsse:Nonce EncodingType="${BASE64}">${nonce.toString("base64")}</wsse:Nonce><wsu:Created>${created}</wsu:Created></wsse:UsernameToken></wsse:Security>`;
}

const text = (user: string, password: string) => usernameToken(user, password, false);
const digest = (user: string, password: string) => usernameToken(user, password, true);

function soapFrom(base: string, client: string, header: string, authorization?: string) {
  return fetch(`${base}/ws/customer`, {
    method: "POST",
    headers: {
      "content-type": "application/soap+xml; charset=utf-8",
      "x-forwarded-for": client,
      ...(authorization ? { authorization } : {}),
    },
    body: envelope(header),
  });
}

async function expectFailedAuthentication(res: Response): Promise<void> {
  expect(res.status).toBe(400);
  expect(res.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
  const body = await res.text();
  expect(body).toContain("env:Sender");
  expect(body).toContain("FailedAuthentication");
}

async function expectTooMany(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(120);
  expect(res.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
  const body = await res.text();
  expect(body).toContain("env:Sender");
  expect(body).not.toContain("<c:customer>");
}

const LIMITED = { RATE_LIMIT_MAX: "5", RATE_LIMIT_WINDOW_SECONDS: "60", TRUST_PROXY: "loopback" };
let header: Started;
let plain: Started;
let digested: Started;
let flooded: Started;

beforeAll(async () => {
  [header, plain, digested, flooded] = await Promise.all([
    sqlite.start(LIMITED),
    sqlite.start(LIMITED),
    sqlite.start(LIMITED),
    sqlite.start({ TRUST_PROXY: "loopback" }),
  ]);
});
afterAll(async () => {
  await Promise.all([header.stop(), plain.stop(), digested.stop(), flooded.stop()]);
});

describe.each([
  { kind: "Authentication header", make: authentication, server: () => header, net: "203.0.113" },
  { kind: "UsernameToken PasswordText", make: text, server: () => plain, net: "198.51.100" },
  { kind: "UsernameToken PasswordDigest", make: digest, server: () => digested, net: "192.0.2" },
])("SOAP $kind with RATE_LIMIT_MAX=5", ({ make, server, net }) => {
  it("5 wrong reader passwords from 5 clients → Sender faults; then those clients → 429 + Retry-After, the right password too; a client that never failed → 200", async () => {
    const base = server().url;
    for (let i = 0; i < 5; i++)
      await expectFailedAuthentication(await soapFrom(base, `${net}.${i + 1}`, make("reader", `wrong${i}`)));
    // The user name's budget is spent: the clients that failed for reader are refused, whatever
    // the password.
    await expectTooMany(await soapFrom(base, `${net}.1`, make("reader", "wrong5")));
    await expectTooMany(await soapFrom(base, `${net}.2`, make("reader", "reader")));
    // Not a client that never failed for reader: strangers' guesses lock no one out.
    expect((await soapFrom(base, `${net}.7`, make("reader", "reader"))).status).toBe(200);
    // Another user from a fresh client is not affected.
    expect((await soapFrom(base, `${net}.8`, make("admin", "admin"))).status).toBe(200);
  });
});

describe("one failure budget across REST and SOAP (RATE_LIMIT_MAX=5)", () => {
  it("5 unknown-user SOAP Authentication headers from one client → its REST Basic admin → 429", async () => {
    for (let i = 0; i < 5; i++)
      await expectFailedAuthentication(
        await soapFrom(header.url, "203.0.113.50", authentication(`ghost${i}`, "x")),
      );
    const res = await fetch(`${header.url}/departments`, {
      headers: { authorization: ADMIN, "x-forwarded-for": "203.0.113.50" },
    });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeTruthy();
  });

  it("5 wrong REST Basic passwords for admin from 5 clients → a SOAP UsernameToken admin/admin from one of them → 429, from a new client → 200", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${header.url}/departments`, {
        headers: {
          authorization: `Basic ${Buffer.from(`admin:bad${i}`).toString("base64")}`,
          "x-forwarded-for": `203.0.113.${60 + i}`,
        },
      });
      expect(res.status).toBe(401);
    }
    await expectTooMany(await soapFrom(header.url, "203.0.113.60", text("admin", "admin")));
    expect((await soapFrom(header.url, "203.0.113.70", text("admin", "admin"))).status).toBe(200);
  });
});

describe("a flood of unknown-user SOAP Authentication headers", () => {
  it("64 at once → shed with 503 + Retry-After as Receiver faults; a Bearer SOAP call and a known header → 200", async () => {
    const issued = await fetch(`${flooded.url}/auth/token`, {
      method: "POST",
      headers: { authorization: ADMIN, "x-forwarded-for": "192.0.2.1" },
    });
    expect(issued.status).toBe(200);
    const { access_token } = (await issued.json()) as { access_token: string };
    // Verified once: the known client is answered from the verified-credentials cache.
    expect((await soapFrom(flooded.url, "192.0.2.3", authentication("admin", "admin"))).status).toBe(200);

    const flood = Array.from({ length: 64 }, (_, i) =>
      soapFrom(flooded.url, `192.0.2.${(i % 200) + 10}`, authentication(`nobody${i}`, "guess")),
    );
    const bearer = soapFrom(flooded.url, "192.0.2.2", "", `Bearer ${access_token}`);
    const known = soapFrom(flooded.url, "192.0.2.3", authentication("admin", "admin"));
    const responses = await Promise.all(flood);
    expect((await bearer).status).toBe(200);
    expect((await known).status).toBe(200);
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 400 || s === 503)).toBe(true);
    const shed = responses.filter((r) => r.status === 503);
    expect(shed.length).toBeGreaterThan(0);
    for (const r of shed) expect(r.headers.get("retry-after")).toBe("1");
    const body = await shed[0]?.text();
    expect(shed[0]?.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
    expect(body).toContain("env:Receiver");
  }, 60_000);
});
