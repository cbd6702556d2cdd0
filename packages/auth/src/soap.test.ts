import { createHash, randomBytes } from "node:crypto";
import { isHttpError } from "@svc/errors";
import { type DiagnosticListener, subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { createRateLimiter, MemoryStore } from "@svc/ratelimit";
import { type Listening, listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { createClient, type RedisClientType } from "redis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { headerBlocks } from "../test/helpers.js";
import { createBasicVerifier } from "./basic-verifier.js";
import type { AuthDiagnostic } from "./diagnostics.js";
import { authenticate } from "./express.js";
import { memoryNonceStore, type NonceStore, NonceStoreFullError, redisNonceStore } from "./nonce-store.js";
import {
  createSoapCredentialsVerifier,
  PASSWORD_DIGEST,
  PASSWORD_TEXT,
  SoapAuthError,
  type SoapCredentialsOptions,
  type SoapCredentialsVerifier,
  verifySoapCredentials,
  WSSE_NS,
  WSU_NS,
} from "./soap.js";

const PASSWORDS: Record<string, string> = { alice: "pa:ss wörd", bob: "hunter2" };

const verify = (u: string, p: string) => (PASSWORDS[u] === p ? { id: u, roles: ["clerk"] } : null);
const getPassword = (u: string) =>
  u === "alice" ? { password: PASSWORDS.alice as string, roles: ["clerk"] } : PASSWORDS[u];

function envelope(header: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"
  xmlns:wsse="${WSSE_NS}" xmlns:wsu="${WSU_NS}">
  <soap:Header>${header}</soap:Header>
  <soap:Body><GetCustomer xmlns="urn:customers"><id>1</id></GetCustomer></soap:Body>
</soap:Envelope>`;
}

function digestOf(nonce: Buffer, created: string, password: string): string {
  return createHash("sha1").update(nonce).update(created).update(password).digest("base64");
}

function usernameToken(opts: {
  username?: string;
  password: string;
  digest?: boolean;
  nonce?: Buffer | null;
  created?: string | null;
  type?: string;
}): string {
  const nonce = opts.nonce === undefined ? randomBytes(16) : opts.nonce;
  const created = opts.created === undefined ? new Date().toISOString() : opts.created;
  const value = opts.digest
    ? digestOf(nonce ?? Buffer.alloc(0), created ?? "", opts.password)
    : opts.password;
  const type = opts.type ?? (opts.digest ? PASSWORD_DIGEST : PASSWORD_TEXT);
  return `<wsse:Security soap:mustUnderstand="1"><wsse:UsernameToken wsu:Id="UT-1">
    <wsse:Username>${opts.username ?? "alice"}</wsse:Username>
    <wsse:Password Type="${type}">${value}</wsse:Password>
    ${nonce ? `<wsse:Nonce EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary">${nonce.toString("base64")}</wsse:Nonce>` : ""}
    ${created ? `<wsu:Created>${created}</wsu:Created>` : ""}
  </wsse:UsernameToken></wsse:Security>`;
}

let server: Listening;
const options: SoapCredentialsOptions = { verify, getPassword, maxAge: 300, clockSkew: 60 };

beforeAll(async () => {
  const a = express();
  a.post("/soap", express.text({ type: "*/*" }), async (req, res) => {
    try {
      const principal = await verifySoapCredentials(headerBlocks(String(req.body)), options);
      res.json(principal);
    } catch (err) {
      if (err instanceof SoapAuthError) {
        res.status(500).json({ code: err.code, namespace: err.namespace, message: err.message });
      } else {
        res.status(500).json({ code: "Server" });
      }
    }
  });
  server = await listen(a);
});
afterAll(async () => {
  await server.close();
});

async function post(header: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/soap`, {
    method: "POST",
    headers: { "content-type": "text/xml; charset=utf-8" },
    body: envelope(header),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("SOAP Authentication/Username/Password", () => {
  it("right credentials in any namespace → the principal, scheme soap", async () => {
    const { status, body } = await post(
      `<auth:Authentication xmlns:auth="urn:example"><auth:Username>bob</auth:Username><auth:Password>hunter2</auth:Password></auth:Authentication>`,
    );
    expect(status).toBe(200);
    expect(body).toEqual({ id: "bob", roles: ["clerk"], scopes: [], scheme: "soap" });
  });

  it("a wrong password → FailedAuthentication with the standard, non-revealing message", async () => {
    const { body } = await post(
      "<Authentication><Username>bob</Username><Password>hunter3</Password></Authentication>",
    );
    expect(body).toEqual({
      code: "FailedAuthentication",
      namespace: WSSE_NS,
      message: "The security token could not be authenticated or authorized",
    });
  });

  it("no credentials at all → FailedAuthentication", async () => {
    expect((await post("")).body.code).toBe("FailedAuthentication");
  });

  it("Authentication without Password → InvalidSecurityToken", async () => {
    expect((await post("<Authentication><Username>bob</Username></Authentication>")).body.code).toBe(
      "InvalidSecurityToken",
    );
  });

  it("authenticationNamespace set: the block in another namespace is not credentials", async () => {
    const blocks = headerBlocks(
      envelope(
        `<a:Authentication xmlns:a="urn:other"><a:Username>bob</a:Username><a:Password>hunter2</a:Password></a:Authentication>`,
      ),
    );
    await expect(
      verifySoapCredentials(blocks, { verify, authenticationNamespace: "urn:example" }),
    ).rejects.toMatchObject({
      code: "FailedAuthentication",
    });
    await expect(
      verifySoapCredentials(blocks, { verify, authenticationNamespace: "urn:other" }),
    ).resolves.toMatchObject({
      id: "bob",
    });
  });

  it("two credential blocks → InvalidSecurity", async () => {
    const { body } = await post(
      `<Authentication><Username>bob</Username><Password>hunter2</Password></Authentication>${usernameToken({ password: PASSWORDS.alice as string })}`,
    );
    expect(body.code).toBe("InvalidSecurity");
  });
});

describe("WS-Security UsernameToken PasswordText", () => {
  it("right password → principal", async () => {
    const { status, body } = await post(usernameToken({ password: PASSWORDS.alice as string }));
    expect(status).toBe(200);
    expect(body.id).toBe("alice");
  });

  it("no Type attribute means PasswordText", async () => {
    const header = usernameToken({ password: PASSWORDS.alice as string }).replace(/ Type="[^"]+"/, "");
    expect((await post(header)).status).toBe(200);
  });

  it("wrong password → FailedAuthentication", async () => {
    expect((await post(usernameToken({ password: "nope" }))).body.code).toBe("FailedAuthentication");
  });

  it("an unknown password Type → UnsupportedSecurityToken", async () => {
    expect((await post(usernameToken({ password: "x", type: "urn:custom#Hash" }))).body.code).toBe(
      "UnsupportedSecurityToken",
    );
  });
});

describe("WS-Security UsernameToken PasswordDigest", () => {
  it("Base64(SHA-1(nonce + created + password)) right → principal with getPassword's roles", async () => {
    const { status, body } = await post(usernameToken({ password: PASSWORDS.alice as string, digest: true }));
    expect(status).toBe(200);
    expect(body).toEqual({ id: "alice", roles: ["clerk"], scopes: [], scheme: "soap" });
  });

  it("getPassword returning a plain string → principal with the user name as id", async () => {
    const { body } = await post(usernameToken({ username: "bob", password: "hunter2", digest: true }));
    expect(body).toEqual({ id: "bob", roles: [], scopes: [], scheme: "soap" });
  });

  it("a digest over the wrong password → FailedAuthentication", async () => {
    expect((await post(usernameToken({ password: "guess", digest: true }))).body.code).toBe(
      "FailedAuthentication",
    );
  });

  it("an unknown user → FailedAuthentication", async () => {
    expect((await post(usernameToken({ username: "eve", password: "", digest: true }))).body.code).toBe(
      "FailedAuthentication",
    );
  });

  it("a stale Created (10 minutes old, maxAge 5) → MessageExpired in the wsu namespace", async () => {
    const created = new Date(Date.now() - 600_000).toISOString();
    const { body } = await post(
      usernameToken({ password: PASSWORDS.alice as string, digest: true, created }),
    );
    expect(body.code).toBe("MessageExpired");
    expect(body.namespace).toBe(WSU_NS);
  });

  it("Created 10 minutes in the future → MessageExpired", async () => {
    const created = new Date(Date.now() + 600_000).toISOString();
    expect(
      (await post(usernameToken({ password: PASSWORDS.alice as string, digest: true, created }))).body.code,
    ).toBe("MessageExpired");
  });

  it("Created without a time zone → InvalidSecurityToken", async () => {
    const created = new Date().toISOString().replace("Z", "");
    expect(
      (await post(usernameToken({ password: PASSWORDS.alice as string, digest: true, created }))).body.code,
    ).toBe("InvalidSecurityToken");
  });

  it("Created on a day the month lacks (2026-02-30, 2026-04-31) or with a zone past ±14:00 → InvalidSecurityToken", async () => {
    // Date.parse rolls 2026-02-30 over to March 2nd: on that day the token was fresh.
    const now = () => Date.parse("2026-03-02T00:01:00Z");
    const soap = createSoapCredentialsVerifier({ getPassword, now, nonceStore: memoryNonceStore() });
    const pw = PASSWORDS.alice as string;
    for (const created of ["2026-02-30T00:00:30Z", "2026-02-29T00:00:30Z", "2026-03-02T23:30:30+23:30"]) {
      const blocks = headerBlocks(envelope(usernameToken({ password: pw, digest: true, created })));
      await expect(soap.verify(blocks)).rejects.toMatchObject({ code: "InvalidSecurityToken" });
    }
    const april = createSoapCredentialsVerifier({
      getPassword,
      now: () => Date.parse("2026-05-01T00:01:00Z"),
      nonceStore: memoryNonceStore(),
    });
    const blocks = headerBlocks(
      envelope(usernameToken({ password: pw, digest: true, created: "2026-04-31T00:00:30Z" })),
    );
    await expect(april.verify(blocks)).rejects.toMatchObject({ code: "InvalidSecurityToken" });
    // The same instants spelled as real dates pass; 24:00:00 is the end of the day (§3.3.7).
    for (const created of ["2026-03-02T00:00:30Z", "2026-03-01T24:00:00Z", "2026-03-02T14:00:30+14:00"]) {
      const ok = headerBlocks(envelope(usernameToken({ password: pw, digest: true, created })));
      await expect(soap.verify(ok)).resolves.toMatchObject({ id: "alice" });
    }
  });

  it("the same message sent twice (replayed nonce) → first 200, then FailedAuthentication", async () => {
    const header = usernameToken({ password: PASSWORDS.alice as string, digest: true });
    expect((await post(header)).status).toBe(200);
    expect((await post(header)).body.code).toBe("FailedAuthentication");
  });

  it("a replay is caught even when each call builds a fresh options object (shared default store)", async () => {
    const blocks = headerBlocks(
      envelope(usernameToken({ password: PASSWORDS.alice as string, digest: true })),
    );
    await expect(verifySoapCredentials(blocks, { getPassword })).resolves.toMatchObject({ id: "alice" });
    await expect(verifySoapCredentials(blocks, { getPassword })).rejects.toMatchObject({
      code: "FailedAuthentication",
    });
  });

  it("a wrong digest does not burn the nonce for the real client", async () => {
    const nonce = randomBytes(16);
    const created = new Date().toISOString();
    expect((await post(usernameToken({ password: "guess", digest: true, nonce, created }))).status).toBe(500);
    expect(
      (await post(usernameToken({ password: PASSWORDS.alice as string, digest: true, nonce, created })))
        .status,
    ).toBe(200);
  });

  it("digest without Nonce or Created → InvalidSecurityToken", async () => {
    const pw = PASSWORDS.alice as string;
    expect((await post(usernameToken({ password: pw, digest: true, nonce: null }))).body.code).toBe(
      "InvalidSecurityToken",
    );
    expect((await post(usernameToken({ password: pw, digest: true, created: null }))).body.code).toBe(
      "InvalidSecurityToken",
    );
  });

  it("digest without getPassword → UnsupportedSecurityToken (verify cannot check a digest)", async () => {
    const blocks = headerBlocks(
      envelope(usernameToken({ password: PASSWORDS.alice as string, digest: true })),
    );
    await expect(verifySoapCredentials(blocks, { verify })).rejects.toMatchObject({
      code: "UnsupportedSecurityToken",
    });
  });

  it("a throwing getPassword propagates as itself (a server fault, not bad credentials)", async () => {
    const blocks = headerBlocks(envelope(usernameToken({ password: "x", digest: true })));
    const err = new Error("db down");
    await expect(
      verifySoapCredentials(blocks, {
        getPassword: () => {
          throw err;
        },
      }),
    ).rejects.toBe(err);
  });
});

describe("nonce stores", () => {
  it("memoryNonceStore: a nonce is accepted again after its TTL", async () => {
    let clock = 0;
    const store = memoryNonceStore({ now: () => clock });
    expect(await store.claim("n", 1000)).toBe(true);
    expect(await store.claim("n", 1000)).toBe(false);
    clock = 1001;
    expect(await store.claim("n", 1000)).toBe(true);
  });

  it("memoryNonceStore({ max: 3 }) holding 3 live nonces: a 4th rejects, the first still refused as a replay", async () => {
    const store = memoryNonceStore({ max: 3, now: () => 0 });
    for (const n of ["a", "b", "c"]) expect(await store.claim(n, 1000)).toBe(true);
    await expect(store.claim("d", 1000)).rejects.toBeInstanceOf(NonceStoreFullError);
    expect(await store.claim("a", 1000)).toBe(false);
    await expect(store.claim("d", 1000)).rejects.toBeInstanceOf(NonceStoreFullError);
  });

  it("PasswordDigest messages into a full memoryNonceStore: the next rejects (a server fault), the first replayed is refused", async () => {
    const nonceStore = memoryNonceStore({ max: 2 });
    const pw = PASSWORDS.alice as string;
    const message = () => headerBlocks(envelope(usernameToken({ password: pw, digest: true })));
    const first = message();
    await expect(verifySoapCredentials(first, { getPassword, nonceStore })).resolves.toMatchObject({
      id: "alice",
    });
    await expect(verifySoapCredentials(message(), { getPassword, nonceStore })).resolves.toMatchObject({
      id: "alice",
    });
    await expect(verifySoapCredentials(message(), { getPassword, nonceStore })).rejects.toBeInstanceOf(
      NonceStoreFullError,
    );
    await expect(verifySoapCredentials(first, { getPassword, nonceStore })).rejects.toMatchObject({
      code: "FailedAuthentication",
    });
  });

  it("redisNonceStore without a client → TypeError", () => {
    // @ts-expect-error client is required
    expect(() => redisNonceStore({})).toThrow(TypeError);
  });
});

const redisUrl = serviceUrl("REDIS_URL");
describe.skipIf(!redisUrl)("redisNonceStore", () => {
  const prefix = uniquePrefix("auth-nonce");
  let ioredis: Redis;
  let nodeRedis: RedisClientType;

  beforeAll(async () => {
    ioredis = new Redis(redisUrl as string);
    nodeRedis = createClient({ url: redisUrl as string }) as unknown as RedisClientType;
    await nodeRedis.connect();
  });
  afterAll(async () => {
    const keys = await ioredis.keys(`${prefix}*`);
    if (keys.length > 0) await ioredis.del(...keys);
    await ioredis.quit();
    await nodeRedis.quit();
  });

  async function replayThroughBothClients(a: NonceStore, b: NonceStore) {
    const header = usernameToken({ password: PASSWORDS.alice as string, digest: true });
    const blocks = headerBlocks(envelope(header));
    await expect(
      verifySoapCredentials(blocks, { verify, getPassword, nonceStore: a }),
    ).resolves.toMatchObject({
      id: "alice",
    });
    // A second instance sharing the Redis sees the nonce too.
    await expect(verifySoapCredentials(blocks, { verify, getPassword, nonceStore: b })).rejects.toMatchObject(
      {
        code: "FailedAuthentication",
      },
    );
  }

  it("ioredis then node-redis: a replay on another instance → FailedAuthentication", async () => {
    await replayThroughBothClients(
      redisNonceStore({ client: ioredis, prefix }),
      redisNonceStore({ client: nodeRedis, prefix }),
    );
  });

  it("the nonce key carries a TTL of maxAge + clockSkew", async () => {
    const store = redisNonceStore({ client: ioredis, prefix });
    expect(await store.claim("ttl-check", 360_000)).toBe(true);
    const ttl = await ioredis.pttl(`${prefix}ttl-check`);
    expect(ttl).toBeGreaterThan(350_000);
    expect(ttl).toBeLessThanOrEqual(360_000);
  });
});

describe("SOAP header credentials through a shared Basic verifier", () => {
  let limited: Listening | undefined;
  afterEach(async () => {
    await limited?.close();
    limited = undefined;
  });

  /** Verifies through `soap`, the client address being the `x-client` header. */
  async function serve(soap: SoapCredentialsVerifier): Promise<string> {
    const a = express();
    a.post("/soap", express.text({ type: "*/*" }), async (req, res) => {
      try {
        const address = req.headers["x-client"] as string | undefined;
        res.json(await soap.verify(headerBlocks(String(req.body)), { address }));
      } catch (err) {
        if (err instanceof SoapAuthError) res.status(401).json({ code: err.code });
        else if (isHttpError(err)) {
          res.setHeader("Retry-After", err.headers["Retry-After"] ?? "");
          res.status(err.status).json({ status: err.status, code: err.code });
        } else res.status(500).json({ code: "Server" });
      }
    });
    limited = await listen(a);
    return `${limited.url}/soap`;
  }

  const post = (url: string, header: string, client = "192.0.2.1") =>
    fetch(url, { method: "POST", headers: { "x-client": client }, body: envelope(header) });

  function budget(limit = 3) {
    return createRateLimiter({ limit, windowMs: 60_000, store: new MemoryStore() });
  }

  function counted() {
    const calls = { verify: 0, getPassword: 0 };
    return {
      calls,
      verify: (u: string, p: string) => {
        calls.verify++;
        return verify(u, p);
      },
      getPassword: (u: string) => {
        calls.getPassword++;
        return getPassword(u);
      },
    };
  }

  const authBlock = (user: string, password: string) =>
    `<Authentication><Username>${user}</Username><Password>${password}</Password></Authentication>`;

  it("Authentication: 3 wrong passwords → 401 each; the 4th and then the right one → 429 + Retry-After, verify not run", async () => {
    const c = counted();
    const failures = budget(3);
    const verifier = createBasicVerifier({
      verify: c.verify,
      failureLimit: { perClient: failures, perUsername: failures },
    });
    const url = await serve(createSoapCredentialsVerifier({ verifier }));
    for (let i = 0; i < 3; i++) expect((await post(url, authBlock("bob", `no${i}`))).status).toBe(401);
    expect(c.calls.verify).toBe(3);
    const blocked = await post(url, authBlock("bob", "no3"));
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await blocked.json()).toEqual({ status: 429, code: "too_many_failed_attempts" });
    expect((await post(url, authBlock("bob", "hunter2"))).status).toBe(429);
    expect(c.calls.verify).toBe(3);
    // bob's budget, spent by 192.0.2.1, refuses no client that never failed for bob: the right
    // password from another client is verified (a stranger's guesses lock no one out).
    expect((await post(url, authBlock("bob", "hunter2"), "198.51.100.7")).status).toBe(200);
    expect((await post(url, authBlock("alice", "pa:ss wörd"), "198.51.100.7")).status).toBe(200);
  });

  it("PasswordDigest: 3 wrong digests → 401; the 4th and a right digest → 429 before getPassword runs", async () => {
    const c = counted();
    const failures = budget(3);
    const verifier = createBasicVerifier({ verify: c.verify, failureLimit: { perUsername: failures } });
    const url = await serve(createSoapCredentialsVerifier({ verifier, getPassword: c.getPassword }));
    for (let i = 0; i < 3; i++)
      expect((await post(url, usernameToken({ password: `no${i}`, digest: true }))).status).toBe(401);
    expect(c.calls.getPassword).toBe(3);
    expect((await post(url, usernameToken({ password: "no3", digest: true }))).status).toBe(429);
    const right = await post(url, usernameToken({ password: PASSWORDS.alice as string, digest: true }));
    expect(right.status).toBe(429);
    expect(right.headers.get("retry-after")).toBeTruthy();
    expect(c.calls.getPassword).toBe(3);
    expect(c.calls.verify).toBe(0);
  });

  it("an unknown digest user spends the client's budget too: 3 → 401, then alice's right text → 429", async () => {
    const failures = budget(3);
    const verifier = createBasicVerifier({ verify, failureLimit: { perClient: failures } });
    const url = await serve(createSoapCredentialsVerifier({ verifier, getPassword }));
    for (let i = 0; i < 3; i++)
      expect(
        (await post(url, usernameToken({ username: `nobody${i}`, password: "x", digest: true }))).status,
      ).toBe(401);
    expect((await post(url, usernameToken({ password: PASSWORDS.alice as string }))).status).toBe(429);
  });

  it("PasswordText and Basic share the budget: 3 wrong Basic checks for bob from a client → bob's right UsernameToken from it → 429", async () => {
    const failures = budget(3);
    const verifier = createBasicVerifier({ verify, failureLimit: { perUsername: failures } });
    for (let i = 0; i < 3; i++)
      expect(await verifier.check({ username: "bob", password: `no${i}` }, "203.0.113.1")).toEqual({
        result: "invalid",
      });
    const url = await serve(createSoapCredentialsVerifier({ verifier }));
    const bob = usernameToken({ username: "bob", password: "hunter2" });
    expect((await post(url, bob, "203.0.113.1")).status).toBe(429);
    expect((await post(url, bob, "203.0.113.2")).status).toBe(200);
  });

  it("the same good PasswordText twice → verify runs once (the verified-credentials cache); scheme soap", async () => {
    const c = counted();
    const url = await serve(
      createSoapCredentialsVerifier({ verifier: createBasicVerifier({ verify: c.verify }) }),
    );
    for (let i = 0; i < 2; i++) {
      const res = await post(url, usernameToken({ username: "bob", password: "hunter2" }));
      expect(await res.json()).toMatchObject({ id: "bob", scheme: "soap" });
    }
    expect(c.calls.verify).toBe(1);
  });

  it("hashing slots full (concurrency 1, queue 0) → the second Authentication at once → 503 + Retry-After 2", async () => {
    let open: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      open = resolve;
    });
    const slow = async (u: string, p: string) => {
      await held;
      return verify(u, p);
    };
    const verifier = createBasicVerifier({ verify: slow, concurrency: 1, queue: 0, busyRetryAfter: 2 });
    const url = await serve(createSoapCredentialsVerifier({ verifier }));
    const first = post(url, authBlock("bob", "hunter2"));
    await vi.waitFor(() => expect(verifier.gate.active).toBe(1));
    const second = await post(url, authBlock("alice", "x"));
    expect(second.status).toBe(503);
    expect(second.headers.get("retry-after")).toBe("2");
    expect(await second.json()).toEqual({ status: 503, code: "authentication_busy" });
    open();
    expect((await first).status).toBe(200);
  });

  it("verify alone: verifySoapCredentials per call still shares one hashing bound per callback (40 slow → some 503)", async () => {
    let open: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      open = resolve;
    });
    const slow = async (u: string, p: string) => {
      await held;
      return verify(u, p);
    };
    const results = Array.from({ length: 40 }, (_, i) =>
      verifySoapCredentials(headerBlocks(envelope(authBlock(`u${i}`, "x"))), { verify: slow }).catch(
        (err: unknown) => err,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    open();
    const errors = await Promise.all(results);
    const busy = errors.filter((e) => isHttpError(e) && e.status === 503);
    // Default bound: 2 running, 16 waiting; the other 22 are shed.
    expect(busy.length).toBe(22);
    expect(errors.filter((e) => e instanceof SoapAuthError).length).toBe(18);
  });
});

describe("verifier.authenticate: the SOAP service's hook, header credentials or the HTTP principal", () => {
  let hooked: Listening | undefined;
  const basicOf = (user: string, password: string) =>
    `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  const authBlock = (user: string, password: string) =>
    `<Authentication><Username>${user}</Username><Password>${password}</Password></Authentication>`;
  beforeAll(async () => {
    const soap = createSoapCredentialsVerifier({ verify, getPassword });
    const a = express();
    // The HTTP Authorization header is verified in front, as @svc/auth's authenticate() does it.
    a.post(
      "/soap",
      authenticate({ realm: "soap", basic: { verify }, optional: true }),
      express.text({ type: "*/*" }),
    );
    a.post("/soap", async (req, res) => {
      try {
        res.json(await soap.authenticate(headerBlocks(String(req.body)), { http: req }));
      } catch (err) {
        if (!(err instanceof SoapAuthError)) throw err;
        res.status(401).json({ code: err.code, message: err.message, expose: err.expose });
      }
    });
    hooked = await listen(a);
  });
  afterAll(() => hooked?.close());
  const post = (header: string, authorization?: string) =>
    fetch(`${hooked?.url}/soap`, {
      method: "POST",
      headers: authorization ? { authorization } : {},
      body: envelope(header),
    });

  it("header credentials → their principal, the client address from the request", async () => {
    const res = await post(authBlock("bob", "hunter2"));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: "bob", scheme: "soap" });
  });
  it("no header credentials → the principal authenticate() set from Authorization", async () => {
    const res = await post("", basicOf("bob", "hunter2"));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: "bob", scheme: "basic" });
  });
  it("the same user in both → the header's principal", async () => {
    const res = await post(authBlock("bob", "hunter2"), basicOf("bob", "hunter2"));
    expect(await res.json()).toMatchObject({ id: "bob", scheme: "soap" });
  });
  it("two different users → InvalidSecurity, with a Reason saying so", async () => {
    const res = await post(authBlock("bob", "hunter2"), basicOf("alice", PASSWORDS.alice as string));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      code: "InvalidSecurity",
      message: "The SOAP header and the Authorization header name different users",
      expose: true,
    });
  });
  it("no credentials anywhere → FailedAuthentication naming what is accepted", async () => {
    const res = await post("");
    expect(await res.json()).toEqual({
      code: "FailedAuthentication",
      message:
        "Credentials are required: a SOAP Authentication or wsse:Security header, or HTTP Authorization",
      expose: true,
    });
  });
  it("wrong header credentials → FailedAuthentication with the standard string, even with a good Authorization", async () => {
    const res = await post(authBlock("bob", "nope"), basicOf("bob", "hunter2"));
    expect(await res.json()).toEqual({
      code: "FailedAuthentication",
      message: "The security token could not be authenticated or authorized",
      expose: true,
    });
  });
  it("allowAuthenticationHeader: false → the Reason names wsse:Security only", async () => {
    const soap = createSoapCredentialsVerifier({ verify, allowAuthenticationHeader: false });
    await expect(
      soap.authenticate(headerBlocks(envelope(authBlock("bob", "hunter2")))),
    ).rejects.toMatchObject({
      code: "FailedAuthentication",
      message: "Credentials are required: a SOAP wsse:Security header, or HTTP Authorization",
    });
  });
});

describe("verifier.authenticate on svc:auth: what the header decided, beside the HTTP credentials' decision", () => {
  let hooked: Listening | undefined;
  const seen: Omit<AuthDiagnostic & { request: object }, "request" | "error">[] = [];
  const listener: DiagnosticListener = (message) => {
    const {
      request: _,
      error: __,
      ...rest
    } = message as AuthDiagnostic & { request: object; error?: unknown };
    seen.push(rest);
  };
  const authBlock = (user: string, password: string) =>
    `<Authentication><Username>${user}</Username><Password>${password}</Password></Authentication>`;
  const basicOf = (user: string, password: string) =>
    `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  const nonce = randomBytes(16);
  beforeAll(async () => {
    subscribeDiagnostics("svc:auth", listener);
    const soap = createSoapCredentialsVerifier({ verify, getPassword, maxAge: 300, clockSkew: 60 });
    const a = express();
    a.post(
      "/soap",
      authenticate({ realm: "soap", basic: { verify }, optional: true }),
      express.text({ type: "*/*" }),
      async (req, res) => {
        try {
          res.json(await soap.authenticate(headerBlocks(String(req.body)), { http: req }));
        } catch (err) {
          res.status(401).json({ code: (err as SoapAuthError).code });
        }
      },
    );
    hooked = await listen(a);
  });
  afterAll(async () => {
    unsubscribeDiagnostics("svc:auth", listener);
    await hooked?.close();
  });
  afterEach(() => {
    seen.length = 0;
  });

  it.each<[string, string, string | undefined, unknown[]]>([
    [
      "header credentials → authenticated, scheme soap",
      authBlock("bob", "hunter2"),
      undefined,
      [{ decision: "anonymous" }, { decision: "authenticated", scheme: "soap", principal: "bob" }],
    ],
    [
      "only Authorization → its decision alone, not told twice",
      "",
      basicOf("bob", "hunter2"),
      [{ decision: "authenticated", scheme: "basic", principal: "bob" }],
    ],
    [
      "no credentials anywhere → refused missing",
      "",
      undefined,
      [{ decision: "anonymous" }, { decision: "refused", scheme: "soap", reason: "missing" }],
    ],
    [
      "a wrong password in the header → refused bad-credentials",
      authBlock("bob", "nope"),
      basicOf("bob", "hunter2"),
      [
        { decision: "authenticated", scheme: "basic", principal: "bob" },
        { decision: "refused", scheme: "soap", reason: "bad-credentials" },
      ],
    ],
    [
      "header and Authorization naming different users → refused malformed",
      authBlock("bob", "hunter2"),
      basicOf("alice", PASSWORDS.alice as string),
      [
        { decision: "authenticated", scheme: "basic", principal: "alice" },
        { decision: "refused", scheme: "soap", reason: "malformed" },
      ],
    ],
    [
      "a Created older than maxAge → refused expired",
      usernameToken({
        password: PASSWORDS.alice as string,
        created: new Date(Date.now() - 600_000).toISOString(),
      }),
      undefined,
      [{ decision: "anonymous" }, { decision: "refused", scheme: "soap", reason: "expired" }],
    ],
    [
      "a digest without the password type's support → refused malformed",
      usernameToken({ password: "x", type: "urn:unknown" }),
      undefined,
      [{ decision: "anonymous" }, { decision: "refused", scheme: "soap", reason: "malformed" }],
    ],
  ])("%s", async (_name, header, authorization, expected) => {
    const res = await fetch(`${hooked?.url}/soap`, {
      method: "POST",
      headers: authorization ? { authorization } : {},
      body: envelope(header),
    });
    await res.arrayBuffer();
    expect(seen).toEqual(expected);
  });

  it("a nonce sent again → refused replayed (the first one authenticated)", async () => {
    const token = usernameToken({ password: PASSWORDS.alice as string, digest: true, nonce });
    for (let i = 0; i < 2; i++)
      await (await fetch(`${hooked?.url}/soap`, { method: "POST", body: envelope(token) })).arrayBuffer();
    expect(seen).toEqual([
      { decision: "anonymous" },
      { decision: "authenticated", scheme: "soap", principal: "alice" },
      { decision: "anonymous" },
      { decision: "refused", scheme: "soap", reason: "replayed" },
    ]);
  });
});

describe("createSoapCredentialsVerifier options", () => {
  const verifier = createBasicVerifier({ verify });
  it.each([
    ["null", null, "ERR_SVC_AUTH_SOAP"],
    ["{} (no verify, verifier or getPassword)", {}, "ERR_SVC_AUTH_SOAP"],
    ["verify: 'x'", { verify: "x" }, "ERR_SVC_AUTH_SOAP_VERIFY"],
    ["verify and verifier together", { verify, verifier }, "ERR_SVC_AUTH_SOAP_VERIFY"],
    [
      "verifier: { check() {} } (not from createBasicVerifier)",
      { verifier: { check() {} } },
      "ERR_SVC_AUTH_SOAP_VERIFIER",
    ],
    ["getPassword: 1", { verify, getPassword: 1 }, "ERR_SVC_AUTH_SOAP_GET_PASSWORD"],
    ["maxAge: -1", { verify, maxAge: -1 }, "ERR_SVC_AUTH_SOAP_MAX_AGE"],
    ["clockSkew: NaN", { verify, clockSkew: Number.NaN }, "ERR_SVC_AUTH_SOAP_CLOCK_SKEW"],
    [
      "allowAuthenticationHeader: 'no'",
      { verify, allowAuthenticationHeader: "no" },
      "ERR_SVC_AUTH_SOAP_ALLOW_AUTHENTICATION_HEADER",
    ],
    [
      "requireNonceForText: 1",
      { verify, requireNonceForText: 1 },
      "ERR_SVC_AUTH_SOAP_REQUIRE_NONCE_FOR_TEXT",
    ],
    [
      "authenticationNamespace: 3",
      { verify, authenticationNamespace: 3 },
      "ERR_SVC_AUTH_SOAP_AUTHENTICATION_NAMESPACE",
    ],
    ["nonceStore: {}", { verify, nonceStore: {} }, "ERR_SVC_AUTH_SOAP_NONCE_STORE"],
    ["now: 5", { verify, now: 5 }, "ERR_SVC_AUTH_SOAP_NOW"],
  ])("%s → TypeError %s", (_name, options, code) => {
    let thrown: unknown;
    try {
      createSoapCredentialsVerifier(options as unknown as SoapCredentialsOptions);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({ code });
  });

  it("a verifier alone serves PasswordText; digest without getPassword → UnsupportedSecurityToken", async () => {
    const soap = createSoapCredentialsVerifier({ verifier });
    expect(
      await soap.verify(headerBlocks(envelope(usernameToken({ username: "bob", password: "hunter2" })))),
    ).toMatchObject({
      id: "bob",
      scheme: "soap",
    });
    await expect(
      soap.verify(
        headerBlocks(envelope(usernameToken({ password: PASSWORDS.alice as string, digest: true }))),
      ),
    ).rejects.toMatchObject({ code: "UnsupportedSecurityToken" });
  });
});
