import { createHash, randomBytes } from "node:crypto";
import { type Listening, listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryNonceStore, type NonceStore, redisNonceStore } from "./nonce-store.js";
import {
  PASSWORD_DIGEST,
  PASSWORD_TEXT,
  SoapAuthError,
  type SoapCredentialsOptions,
  verifySoapCredentials,
  WSSE_NS,
  WSU_NS,
} from "./soap.js";
import { headerBlocks } from "./test-utils.js";

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

describe("SOAP Authentication/Username/Password (spec part 5)", () => {
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

  it("memoryNonceStore stays bounded by max", async () => {
    const store = memoryNonceStore({ max: 3, now: () => 0 });
    for (const n of ["a", "b", "c", "d"]) expect(await store.claim(n, 1000)).toBe(true);
    // "a" was evicted to keep 3 entries; "d" is remembered.
    expect(await store.claim("a", 1000)).toBe(true);
    expect(await store.claim("d", 1000)).toBe(false);
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
  let nodeRedis: ReturnType<typeof createClient>;

  beforeAll(async () => {
    ioredis = new Redis(redisUrl as string);
    nodeRedis = createClient({ url: redisUrl as string });
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
