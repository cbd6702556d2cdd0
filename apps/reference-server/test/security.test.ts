import { createHmac, createSign, generateKeyPairSync, type KeyObject, randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { exportJWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, type Service, startService } from "../src/server.js";
import { ADMIN, frameworkEnv, READER, type Started, sqlite, watchResponses } from "./harness.js";
import { expectSecurityHeaders, SOAP12, TNS } from "./hostile.js";

const ALLOWED = "https://app.example.com";
const SOAP_XML = "application/soap+xml; charset=utf-8";
const envelope = (body: string, header = "") =>
  `<env:Envelope xmlns:env="${SOAP12}">${header}<env:Body>${body}</env:Body></env:Envelope>`;
const getCustomer = `<c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>1</c:customerId></c:GetCustomerRequest>`;

/** A raw HTTP/1.1 exchange for requests `fetch` will not send. */
function raw(base: string, request: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.write(request, "latin1");
  });
}

/** The token signing key, shared with the server through JWT_PRIVATE_KEY, to forge claims with. */
const signingKey = generateKeyPairSync("ec", { namedCurve: "P-256" });
const keyFile = join(tmpdir(), `svc-security-${process.pid}-${randomBytes(4).toString("hex")}.pem`);
writeFileSync(keyFile, signingKey.privateKey.export({ type: "pkcs8", format: "pem" }));

let s: Started;
let limited: Started;
let kid: string;
let claims: Record<string, unknown>;
let readerToken: string;

const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");
const now = () => Math.floor(Date.now() / 1000);

async function sign(
  payload: Record<string, unknown>,
  header: Record<string, unknown> = {},
  key: KeyObject = signingKey.privateKey,
): Promise<string> {
  // typ at+jwt as the server's own tokens carry it, so each forgery below fails for its own reason.
  return new SignJWT(payload).setProtectedHeader({ alg: "ES256", kid, typ: "at+jwt", ...header }).sign(key);
}

/** Signs any header as given (jose refuses to sign an unknown `crit`), ES256 in JOSE or DER form. */
function signRaw(
  header: Record<string, unknown>,
  payload: unknown,
  dsaEncoding: "ieee-p1363" | "der" = "ieee-p1363",
): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const signature = createSign("SHA256").update(input).sign({ key: signingKey.privateKey, dsaEncoding });
  return `${input}.${signature.toString("base64url")}`;
}

beforeAll(async () => {
  s = await sqlite.start({ CORS_ORIGINS: `${ALLOWED},http://localhost:5173`, JWT_PRIVATE_KEY: keyFile });
  limited = await sqlite.start({ RATE_LIMIT_MAX: "1", RATE_LIMIT_WINDOW_SECONDS: "60" });
  const jwks = (await (await fetch(`${s.url}/.well-known/jwks.json`)).json()) as {
    keys: Array<{ kid: string }>;
  };
  kid = jwks.keys[0]?.kid ?? "";
  const issued = await fetch(`${s.url}/auth/token`, { method: "POST", headers: { authorization: READER } });
  readerToken = ((await issued.json()) as { access_token: string }).access_token;
  claims = JSON.parse(Buffer.from(readerToken.split(".")[1] ?? "", "base64url").toString()) as Record<
    string,
    unknown
  >;
});
afterAll(async () => {
  await s.stop();
  await limited.stop();
  rmSync(keyFile, { force: true });
});

describe("security headers on every kind of response", () => {
  it("2xx, 3xx, 4xx, SOAP and operational responses all carry helmet's headers", async () => {
    const api = (path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      if (!headers.has("authorization")) headers.set("authorization", ADMIN);
      return fetch(`${s.url}${path}`, { ...init, headers });
    };
    const json = (body: unknown) => ({
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    const created = await api("/departments", {
      method: "POST",
      ...json({ name: "Security", city: "Oslo" }),
    });
    const location = new URL(created.headers.get("location") ?? "").pathname;
    const etag = (await api("/employees/1")).headers.get("etag") ?? "";
    const cases: Array<[string, Promise<Response>, number]> = [
      ["201 created", Promise.resolve(created), 201],
      ["200 read", api("/employees/1"), 200],
      ["200 HEAD", api("/employees/1", { method: "HEAD" }), 200],
      ["304 revalidated", api("/employees/1", { headers: { "if-none-match": etag } }), 304],
      ["204 OPTIONS", api("/employees", { method: "OPTIONS" }), 204],
      ["204 deleted", api(location, { method: "DELETE" }), 204],
      ["400 bad query", api("/employees?size=0"), 400],
      ["401 no credentials", fetch(`${s.url}/employees`), 401],
      ["403 reader writes", api("/departments", { method: "POST", headers: { authorization: READER } }), 403],
      ["404 missing", api("/employees/999999"), 404],
      ["404 no route", api("/nowhere"), 404],
      ["405 method", api("/employees", { method: "PATCH" }), 405],
      ["406 Accept", api("/employees/1", { headers: { accept: "image/png" } }), 406],
      [
        "412 If-Match",
        api("/employees/1", {
          method: "PATCH",
          ...json({ salary: 2 }),
          headers: { "if-match": '"stale"', "content-type": "application/json" },
        }),
        412,
      ],
      ["413 too large", api("/departments", { method: "POST", ...json({ name: "x".repeat(200_000) }) }), 413],
      [
        "415 Content-Type",
        api("/departments", { method: "POST", body: "x", headers: { "content-type": "text/plain" } }),
        415,
      ],
      ["422 business rule", api("/employees/1", { method: "PATCH", ...json({ salary: -5 }) }), 422],
      [
        "200 SOAP",
        api("/ws/customer", {
          method: "POST",
          body: envelope(getCustomer),
          headers: { "content-type": SOAP_XML },
        }),
        200,
      ],
      [
        "400 SOAP Sender",
        api("/ws/customer", { method: "POST", body: "<nope", headers: { "content-type": SOAP_XML } }),
        400,
      ],
      [
        "500 SOAP MustUnderstand",
        api("/ws/customer", {
          method: "POST",
          body: envelope(
            getCustomer,
            `<env:Header><x:T xmlns:x="urn:x" env:mustUnderstand="true"/></env:Header>`,
          ),
          headers: { "content-type": SOAP_XML },
        }),
        500,
      ],
      [
        "415 SOAP",
        api("/ws/customer", { method: "POST", body: "{}", headers: { "content-type": "application/json" } }),
        415,
      ],
      ["405 SOAP", api("/ws/customer"), 405],
      ["200 WSDL", fetch(`${s.url}/ws/customer?wsdl`), 200],
      ["200 health", fetch(`${s.url}/health`), 200],
      ["200 docs", fetch(`${s.url}/docs`), 200],
      ["200 docs asset", fetch(`${s.url}/docs/assets/swagger-ui.css`), 200],
      ["200 openapi", fetch(`${s.url}/openapi.json`), 200],
      [
        "204 CORS preflight",
        fetch(`${s.url}/employees`, {
          method: "OPTIONS",
          headers: { origin: ALLOWED, "access-control-request-method": "POST" },
        }),
        204,
      ],
      ["200 token", api("/auth/token", { method: "POST" }), 200],
    ];
    for (const [label, pending, status] of cases) {
      const res = await pending;
      expect(res.status, label).toBe(status);
      expectSecurityHeaders(res, label);
      await res.arrayBuffer();
    }
  });

  it("429 on the resource API and on SOAP carry them too", async () => {
    await fetch(`${limited.url}/departments`, { headers: { authorization: ADMIN } });
    const rest = await fetch(`${limited.url}/departments`, { headers: { authorization: ADMIN } });
    expect(rest.status).toBe(429);
    expectSecurityHeaders(rest, "429 REST");
    const soap = await fetch(`${limited.url}/ws/customer`, {
      method: "POST",
      headers: { authorization: ADMIN, "content-type": SOAP_XML },
      body: envelope(getCustomer),
    });
    expect(soap.status).toBe(429);
    expectSecurityHeaders(soap, "429 SOAP");
  });

  it("503 with the database gone carries them too", async () => {
    const down = await sqlite.start();
    try {
      await down.service.db.close();
      const res = await fetch(`${down.url}/employees`, { headers: { authorization: ADMIN } });
      expect(res.status).toBe(503);
      expectSecurityHeaders(res, "503");
    } finally {
      down.service.server.closeAllConnections();
      await new Promise((r) => down.service.server.close(r));
    }
  });

  it.each([
    ["a malformed header line", "GET /health HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n", "400"],
    ["a bare CR in a value", "GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", "400"],
    [
      "headers beyond the parser's limit",
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      "431",
    ],
  ])(
    "%s → %s from the HTTP parser, still with security headers and the error record",
    async (_label, request, status) => {
      const response = await raw(s.url, request);
      const [head = "", body = ""] = response.split("\r\n\r\n");
      expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(head).toMatch(/^X-Content-Type-Options: nosniff$/im);
      expect(head).toMatch(/^Content-Security-Policy: /im);
      // RFC 6797 §7.2: never over plain HTTP.
      expect(head).not.toMatch(/^Strict-Transport-Security: /im);
      expect(JSON.parse(body)).toMatchObject({ status: Number(status) });
    },
  );
});

// The operational routes and the SOAP endpoints are entered by the path's prefix, whatever query
// follows it and in either form of the target; a path that only begins like one of them is a
// resource path like any other.
describe("prefix-routed paths with and without a query, in origin-form and absolute-form", () => {
  it.each([
    ["/health", "200", /"status"/],
    ["/health?probe=1", "200", /"status"/],
    ["/ws/customer?wsdl", "200", /definitions/],
    ["/ws/customer?xsd=customer.xsd", "200", /schema/],
    // RFC 9112 §3.2.2: a server must accept a target in absolute-form.
    ["http://x/ws/customer?wsdl", "200", /location="http:\/\/x\/ws\/customer"/],
    ["/healthz", "404", /"status":404/],
    ["/health/?x", "404", /"status":404/],
  ])("GET %s → %s", async (target, status, body) => {
    const response = await raw(s.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(response).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(response.split("\r\n\r\n").slice(1).join("\r\n\r\n")).toMatch(body);
  });
});

describe("CORS only for the configured origins", () => {
  it.each([ALLOWED, "http://localhost:5173"])("allowed %s → echoed with Vary: Origin", async (origin) => {
    const res = await fetch(`${s.url}/employees/1`, { headers: { origin, authorization: ADMIN } });
    expect(res.headers.get("access-control-allow-origin")).toBe(origin);
    expect(res.headers.get("vary")).toMatch(/Origin/);
    expect(res.headers.get("access-control-expose-headers")).toMatch(/ETag/);
  });

  it.each([
    "https://evil.example",
    "https://app.example.com.evil.example",
    "https://evilapp.example.com",
    "http://app.example.com",
    "https://app.example.com:8443",
    "null",
    "HTTPS://APP.EXAMPLE.COM",
  ])("other origin %s → no Access-Control-Allow-Origin, on simple and preflight requests", async (origin) => {
    const simple = await fetch(`${s.url}/employees/1`, { headers: { origin, authorization: ADMIN } });
    expect(simple.headers.get("access-control-allow-origin")).toBeNull();
    expect(simple.headers.get("access-control-allow-credentials")).toBeNull();
    const preflight = await fetch(`${s.url}/employees`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "DELETE",
        "access-control-request-headers": "authorization",
      },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("other origins get no Access-Control-* header at all, preflight included", async () => {
    const preflight = await fetch(`${s.url}/employees`, {
      method: "OPTIONS",
      headers: {
        origin: "https://evil.example",
        "access-control-request-method": "DELETE",
        "access-control-request-headers": "x-evil",
      },
    });
    const simple = await fetch(`${s.url}/employees/1`, {
      headers: { origin: "https://evil.example", authorization: ADMIN },
    });
    for (const res of [preflight, simple])
      expect([...res.headers.keys()].filter((k) => k.startsWith("access-control-"))).toEqual([]);
  });

  it("preflight from the allowed origin → 204 with methods, requested headers and max-age", async () => {
    const res = await fetch(`${s.url}/employees/1`, {
      method: "OPTIONS",
      headers: {
        origin: ALLOWED,
        "access-control-request-method": "PUT",
        "access-control-request-headers": "authorization, content-type, if-match, idempotency-key",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(res.headers.get("access-control-allow-methods")).toMatch(/PUT/);
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("if-match");
    expect(res.headers.get("access-control-max-age")).toBe("600");
  });

  it("a server without CORS_ORIGINS sends no CORS headers at all", async () => {
    const res = await fetch(`${limited.url}/health`, { headers: { origin: ALLOWED } });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("ALLOWED_HOSTS: links never point at a host the client made up (RFC 9110 §7.4)", () => {
  let guarded: Started;
  let proxied: Started;
  beforeAll(async () => {
    // 127.0.0.1: the address fetch() names in Host, for the checks of the data.
    guarded = await sqlite.start({ ALLOWED_HOSTS: "api.example.com,.svc.test,127.0.0.1" });
    proxied = await sqlite.start({ ALLOWED_HOSTS: "api.example.com", TRUST_PROXY: "loopback" });
  });
  afterAll(async () => {
    await guarded.stop();
    await proxied.stop();
  });
  let n = 0;
  const post = (host: string, extra = "") => {
    n += 1;
    const body = JSON.stringify({ name: `Hosted ${n}`, city: "Ghent" });
    const head = [
      "POST /departments HTTP/1.1",
      `Host: ${host}`,
      `Authorization: ${ADMIN}`,
      "Content-Type: application/json",
      `Content-Length: ${Buffer.byteLength(body)}`,
      "Connection: close",
      ...(extra ? [extra] : []),
    ];
    return `${head.join("\r\n")}\r\n\r\n${body}`;
  };

  it("Host: evil.example → 421 error record with security headers; nothing is created", async () => {
    const before = (await (
      await fetch(`${guarded.url}/departments?size=100`, { headers: { authorization: ADMIN } })
    ).json()) as {
      page: { totalElements: number };
    };
    const reply = await raw(guarded.url, post("evil.example"));
    expect(reply).toMatch(/^HTTP\/1\.1 421 Misdirected Request\r\n/);
    expect(reply).not.toMatch(/evil\.example/i);
    expect(reply).toMatch(/\r\nx-content-type-options: nosniff\r\n/i);
    const body = JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 421, error: "Misdirected Request", path: "/departments" });
    const after = (await (
      await fetch(`${guarded.url}/departments?size=100`, { headers: { authorization: ADMIN } })
    ).json()) as {
      page: { totalElements: number };
    };
    expect(after.page.totalElements).toBe(before.page.totalElements);
  });

  it.each([
    ["api.example.com", "http://api.example.com/departments/"],
    ["API.Example.com:8443", "http://api.example.com:8443/departments/"],
    ["svc.test", "http://svc.test/departments/"],
    ["eu.svc.test", "http://eu.svc.test/departments/"],
  ])("Host: %s → 201 with Location under it", async (host, prefix) => {
    const reply = await raw(guarded.url, post(host));
    expect(reply).toMatch(/^HTTP\/1\.1 201 /);
    const location = /\r\nlocation: ([^\r]+)\r\n/i.exec(reply)?.[1] ?? "";
    expect(location.startsWith(prefix)).toBe(true);
  });

  it("a suffix that is not a domain boundary is refused: Host: evilsvc.test → 421", async () => {
    expect(await raw(guarded.url, post("evilsvc.test"))).toMatch(/^HTTP\/1\.1 421 /);
  });

  it("behind a trusted proxy the forwarded host is what is checked", async () => {
    const ok = await raw(
      proxied.url,
      post("127.0.0.1", "X-Forwarded-Host: api.example.com\r\nX-Forwarded-Proto: https"),
    );
    expect(ok).toMatch(/^HTTP\/1\.1 201 /);
    expect(ok).toMatch(/\r\nlocation: https:\/\/api\.example\.com\/departments\/\d+\r\n/i);
    expect(await raw(proxied.url, post("api.example.com", "X-Forwarded-Host: evil.example"))).toMatch(
      /^HTTP\/1\.1 421 /,
    );
  });

  it("/health answers 421 too for a foreign host (a load balancer must name an allowed one)", async () => {
    const reply = await raw(
      guarded.url,
      "GET /health HTTP/1.1\r\nHost: 10.9.9.9\r\nConnection: close\r\n\r\n",
    );
    expect(reply).toMatch(/^HTTP\/1\.1 421 /);
  });
});

describe("the JWT attack set against the running server (RFC 6750 §3)", () => {
  const get = (token: string, path = "/employees/1") =>
    fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it("baseline: a token forged with the real key and the real claims is accepted", async () => {
    expect((await get(await sign({ ...claims }))).status).toBe(200);
    // RFC 7515 §4.1.9: the same media type, "application/" written out and in capitals.
    expect((await get(await sign({ ...claims }, { typ: "application/AT+JWT" }))).status).toBe(200);
    expect((await get(readerToken)).status).toBe(200);
  });

  const attacks: Array<[string, () => Promise<string>]> = [
    ["alg none", async () => `${b64({ alg: "none", typ: "JWT", kid })}.${b64(claims)}.`],
    ["alg None with a signature", async () => `${b64({ alg: "None", kid })}.${b64(claims)}.${b64("sig")}`],
    [
      "HS256 keyed with the public key (PEM)",
      async () => {
        const pem = signingKey.publicKey.export({ type: "spki", format: "pem" }) as string;
        const input = `${b64({ alg: "HS256", typ: "JWT", kid })}.${b64(claims)}`;
        return `${input}.${createHmac("sha256", pem).update(input).digest("base64url")}`;
      },
    ],
    [
      "HS256 keyed with the public JWK",
      async () => {
        const jwk = JSON.stringify(await exportJWK(signingKey.publicKey));
        const input = `${b64({ alg: "HS256", kid })}.${b64(claims)}`;
        return `${input}.${createHmac("sha256", jwk).update(input).digest("base64url")}`;
      },
    ],
    ["an unknown kid", () => sign({ ...claims }, { kid: "someone-else" })],
    ["a path-traversal kid", () => sign({ ...claims }, { kid: "../../../../dev/null" })],
    [
      "another key under the real kid",
      () => sign({ ...claims }, {}, generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey),
    ],
    [
      "the attacker's key embedded as jwk",
      async () => {
        const attacker = generateKeyPairSync("ec", { namedCurve: "P-256" });
        return sign({ ...claims }, { jwk: await exportJWK(attacker.publicKey) }, attacker.privateKey);
      },
    ],
    [
      "a jku pointing elsewhere",
      () =>
        sign(
          { ...claims },
          { jku: "http://127.0.0.1:1/jwks.json" },
          generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey,
        ),
    ],
    [
      "an unknown critical header (RFC 7515 §4.1.11)",
      async () => signRaw({ alg: "ES256", kid, typ: "at+jwt", crit: ["exp-ext"], "exp-ext": true }, claims),
    ],
    [
      "a DER-encoded ES256 signature",
      async () => signRaw({ alg: "ES256", typ: "at+jwt", kid }, claims, "der"),
    ],
    ["expired an hour ago", () => sign({ ...claims, iat: now() - 7200, exp: now() - 3600 })],
    ["not valid for another hour", () => sign({ ...claims, nbf: now() + 3600 })],
    // RFC 7519 §4.1.6: a token issued an hour from now was not issued yet.
    ["issued an hour from now (iat)", () => sign({ ...claims, iat: now() + 3600, exp: now() + 7200 })],
    // The signing key outlives the users: a user no longer configured has no principal to serve.
    ["the real key and claims, for a user the server does not have", () => sign({ ...claims, sub: "gone" })],
    [
      "no exp at all",
      async () => sign(Object.fromEntries(Object.entries(claims).filter(([k]) => k !== "exp"))),
    ],
    ["another issuer", () => sign({ ...claims, iss: "https://evil.example" })],
    ["another audience", () => sign({ ...claims, aud: "urn:someone-else" })],
    // RFC 9068 §4, RFC 8725 §3.11: another JWT the same key signs (an ID token) is no access token.
    ['typ "JWT", the real key and the real claims', () => sign({ ...claims }, { typ: "JWT" })],
    ["no typ header, the real key and the real claims", async () => signRaw({ alg: "ES256", kid }, claims)],
    [
      "a tampered payload (reader → write scope)",
      async () => {
        const [h, , sig] = readerToken.split(".");
        return `${h}.${b64({ ...claims, scope: "read write", roles: ["admin"] })}.${sig}`;
      },
    ],
    ["truncated (last character dropped)", async () => readerToken.slice(0, -1)],
    ["two segments", async () => readerToken.split(".").slice(0, 2).join(".")],
    ["an empty signature", async () => `${readerToken.split(".").slice(0, 2).join(".")}.`],
    ["four segments", async () => `${readerToken}.AAAA`],
    ["oversized (12 KiB, signed with the real key)", () => sign({ ...claims, pad: "x".repeat(9 * 1024) })],
    [
      "a JSON array payload",
      async () => `${readerToken.split(".")[0]}.${b64([1, 2])}.${readerToken.split(".")[2]}`,
    ],
  ];

  it.each(attacks)("%s → 401 invalid_token with the error record", async (_label, make) => {
    const res = await get(await make());
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="svc", error="invalid_token"/);
    expect(await res.json()).toMatchObject({ status: 401, error: "Unauthorized", path: "/employees/1" });
  });

  it("baseline for the signer: the raw JOSE signature of the real claims is accepted", async () => {
    expect((await get(signRaw({ alg: "ES256", typ: "at+jwt", kid }, claims))).status).toBe(200);
  });

  it("credentials that are not b64token syntax (RFC 6750 §2.1) → 400 invalid_request", async () => {
    const res = await get("!!!.@@@.###");
    expect(res.status).toBe(400);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="svc", error="invalid_request"/);
  });

  it("a forged token is refused on the SOAP endpoint too (Sender fault, 401 not 200)", async () => {
    const res = await fetch(`${s.url}/ws/customer`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await sign({ ...claims, iss: "https://evil.example" })}`,
        "content-type": SOAP_XML,
      },
      body: envelope(getCustomer),
    });
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("env:Sender");
  });

  it("an admin removed from DEMO_USERS (the same key, after a restart): its token → POST /departments 401, nothing created", async () => {
    const gone = await sign({
      ...claims,
      sub: "gone",
      client_id: "gone",
      scope: "read write",
      roles: ["admin"],
    });
    const res = await fetch(`${s.url}/departments`, {
      method: "POST",
      headers: { authorization: `Bearer ${gone}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Ghosts", city: "Rome" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="svc", error="invalid_token"/);
    const list = await fetch(`${s.url}/departments?size=100`, { headers: { authorization: ADMIN } });
    expect(JSON.stringify(await list.json())).not.toContain("Ghosts");
  });

  it("a valid reader token cannot write: 403, not 401", async () => {
    const res = await fetch(`${s.url}/departments`, {
      method: "POST",
      headers: { authorization: `Bearer ${readerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Nope", city: "Rome" }),
    });
    expect(res.status).toBe(403);
  });
});

describe("tokens in the query string are refused (RFC 6750 §2.3, spec part 5)", () => {
  it.each([
    "/employees?access_token=TOKEN",
    "/employees/1?access_token=TOKEN",
    "/employees/1?size=1&ACCESS_TOKEN=TOKEN",
    "/employees/1?access%5Ftoken=TOKEN",
    "/employees/1?access_token%3DTOKEN",
    "/ws/customer?access_token=TOKEN",
  ])("%s (no Authorization) → never 200", async (path) => {
    const res = await fetch(`${s.url}${path.replace("TOKEN", readerToken)}`);
    expect(res.status).not.toBe(200);
    expect([400, 401, 405]).toContain(res.status);
  });

  it("?access_token= next to a valid header → 400 invalid_request, not served", async () => {
    const res = await fetch(`${s.url}/employees/1?access_token=${readerToken}`, {
      headers: { authorization: `Bearer ${readerToken}` },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_request"/);
  });

  // A write's body is read only after the permission check (spec part 5 rule 4), so a token in
  // it is never looked at: the request carries no credentials and is a 401 with the challenge.
  it("access_token in a JSON body → 401 with the challenge, not authenticated", async () => {
    const res = await fetch(`${s.url}/departments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ access_token: readerToken, name: "X", city: "Y" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
  });
});

describe("Basic authentication edge cases (RFC 7617)", () => {
  const basic = (credentials: string, encoding: BufferEncoding = "utf8") =>
    `Basic ${Buffer.from(credentials, encoding).toString("base64")}`;
  const as = (authorization: string) => fetch(`${s.url}/employees/1`, { headers: { authorization } });

  it.each([
    ["scheme in lower case", `basic ${ADMIN.slice(6)}`],
    ["scheme in upper case", `BASIC ${ADMIN.slice(6)}`],
  ])("%s → 200 (RFC 7235 §2.1: the scheme is case-insensitive)", async (_label, header) => {
    expect((await as(header)).status).toBe(200);
  });

  it.each([
    ["no colon", basic("admin")],
    ["empty password", basic("admin:")],
    ["empty user", basic(":admin")],
    ["password with a colon (split at the first one)", basic("admin:admin:admin")],
    ["user with a trailing space", basic("admin :admin")],
    ["nothing after the scheme", "Basic"],
    ["only spaces after the scheme", "Basic    "],
    ["not base64", "Basic !!!!"],
    ["base64 of invalid UTF-8", `Basic ${Buffer.from([0x61, 0x64, 0xff, 0x3a, 0x61]).toString("base64")}`],
    ["a second credential after a comma", `${ADMIN}, Basic ${ADMIN.slice(6)}`],
    ["a NUL inside", basic("admin\u0000:admin")],
    ["a very long user id", basic(`${"a".repeat(4000)}:admin`)],
  ])("%s → 401 with the Basic challenge and the error record", async (_label, header) => {
    const res = await as(header);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/Basic realm="svc", charset="UTF-8"/);
    expect(await res.json()).toMatchObject({ status: 401, error: "Unauthorized" });
  });

  it('UTF-8 credentials (charset="UTF-8") → 200; the same in Latin-1 → 401', async () => {
    const intl = await sqlite.start({ DEMO_USERS: "zoë:pässwörd-€:reader" });
    try {
      const res = await fetch(`${intl.url}/employees/1`, {
        headers: { authorization: basic("zoë:pässwörd-€") },
      });
      expect(res.status).toBe(200);
      const latin1 = await fetch(`${intl.url}/employees/1`, {
        headers: { authorization: basic("zoë:pässwörd", "latin1") },
      });
      expect(latin1.status).toBe(401);
    } finally {
      await intl.stop();
    }
  });
});

describe("no credential in any log line", () => {
  const PASSWORD = "Corr3ct-Horse-Battery-Staple";
  const WRONG = "Wr0ng-Guess-Pa55word";
  let service: Service;
  const lines: string[] = [];

  beforeAll(async () => {
    const config = loadConfig({
      PORT: "0",
      ...frameworkEnv(),
      DATABASE_URL: "sqlite::memory:",
      LOG_LEVEL: "trace",
      DEMO_USERS: `alice:${PASSWORD}:admin`,
    });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString().split("\n").filter(Boolean));
        done();
      },
    });
    service = await startService(config, { logger: createLogger(config, sink) });
    watchResponses(service.server as Server);
  });
  afterAll(async () => {
    service.server.closeAllConnections();
    await service.close();
  });

  it("Basic, Bearer, query tokens, cookies, SOAP passwords and failures leave no secret in the logs", async () => {
    const url = service.url;
    const basicGood = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString("base64")}`;
    const basicBad = `Basic ${Buffer.from(`alice:${WRONG}`).toString("base64")}`;
    const tokenRes = await fetch(`${url}/auth/token`, {
      method: "POST",
      headers: { authorization: basicGood },
    });
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;
    const requests: Array<[string, RequestInit]> = [
      ["/employees/1", { headers: { authorization: basicGood } }],
      ["/employees/1", { headers: { authorization: basicBad } }],
      ["/employees/1", { headers: { authorization: `Bearer ${token}` } }],
      ["/employees/1", { headers: { authorization: `Bearer ${token}x` } }],
      ["/employees/1", { headers: { "proxy-authorization": basicGood, authorization: basicGood } }],
      [`/employees?access_token=${token}`, {}],
      [`/employees/1?x=1&ACCESS_TOKEN=${token}`, { headers: { authorization: basicGood } }],
      [`/employees/1?access%5Ftoken=${token}`, { headers: { authorization: basicGood } }],
      [`/employees/1?password=${PASSWORD}`, { headers: { authorization: basicGood } }],
      ["/employees/1", { headers: { cookie: `SESSION_ID=${token}` } }],
      ["/nowhere", { headers: { authorization: basicGood } }],
      [
        "/departments",
        {
          method: "POST",
          headers: { authorization: basicGood, "content-type": "application/json" },
          body: JSON.stringify({ access_token: token, password: PASSWORD }),
        },
      ],
      [
        "/ws/customer",
        {
          method: "POST",
          headers: { "content-type": SOAP_XML },
          body: envelope(
            getCustomer,
            `<env:Header><Authentication><Username>alice</Username><Password>${PASSWORD}</Password></Authentication></env:Header>`,
          ),
        },
      ],
      [
        "/ws/customer",
        {
          method: "POST",
          headers: { "content-type": SOAP_XML },
          body: envelope(
            getCustomer,
            `<env:Header><Authentication><Username>alice</Username><Password>${WRONG}</Password></Authentication></env:Header>`,
          ),
        },
      ],
      [
        "/ws/customer",
        { method: "POST", headers: { "content-type": SOAP_XML, authorization: basicGood }, body: "<broken" },
      ],
    ];
    for (const [path, init] of requests) await (await fetch(`${url}${path}`, init)).arrayBuffer();
    // A server-side failure logs the request with its headers: those must be censored too.
    await service.db.close();
    await (await fetch(`${url}/employees`, { headers: { authorization: basicGood } })).arrayBuffer();
    await (
      await fetch(`${url}/ws/customer`, {
        method: "POST",
        headers: { "content-type": SOAP_XML, authorization: `Bearer ${token}` },
        body: envelope(getCustomer),
      })
    ).arrayBuffer();

    const log = lines.join("\n");
    expect(lines.length).toBeGreaterThan(requests.length);
    expect(log).toContain("[Redacted]");
    const secrets = {
      password: PASSWORD,
      "wrong password": WRONG,
      "Basic credentials": basicGood.slice(6),
      "failed Basic credentials": basicBad.slice(6),
      "token signature": token.split(".")[2] ?? "",
      "token payload": token.split(".")[1] ?? "",
    };
    for (const [what, secret] of Object.entries(secrets)) {
      expect(secret.length, what).toBeGreaterThan(10);
      const leak = lines.find((l) => l.includes(secret));
      expect(leak, `${what} in a log line`).toBeUndefined();
    }
  });
});
