import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { rawExchange, rawSend } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { ADMIN, client, READER, type Started, sqlite } from "./harness.js";

/** A raw HTTP/1.1 exchange, for what `fetch` refuses to send (a Host of our choosing, TRACE). */
const raw = rawExchange;

function headerOf(head: string, name: string): string | undefined {
  return new RegExp(`^${name}: (.*)$`, "im").exec(head)?.[1];
}

describe("hardening (SQLite)", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await sqlite.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  async function transferCount(): Promise<number> {
    const page = (await (await api("/transfers?size=1")).json()) as { page: { totalElements: number } };
    return page.page.totalElements;
  }

  describe("an invalid Host is a 400 error record, never a link or a QR code", () => {
    const longHost = `${"a.".repeat(1524)}a`; // 3,049 characters, every label short
    const head = (path: string, host: string, accept = "application/json") =>
      `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${ADMIN}\r\nAccept: ${accept}`;

    it("GET /orders/{shipped}/tracking as image/png with a 3,049-character Host → 400, not 500", async () => {
      const page = (await (await api("/orders?status=SHIPPED&size=1")).json()) as {
        _embedded: { orders: Array<{ id: number }> };
      };
      const id = page._embedded.orders[0]?.id;
      expect(id).toBeDefined();
      const ok = await raw(s.url, head(`/orders/${id}/tracking`, new URL(s.url).host, "image/png"));
      expect(ok.status).toBe(200);
      const res = await raw(s.url, head(`/orders/${id}/tracking`, longHost, "image/png"));
      expect(res.status).toBe(400);
      expect(headerOf(res.head, "Content-Type")).toMatch(/json/);
      expect(JSON.parse(res.body)).toMatchObject({ status: 400 });
      expect(headerOf(res.head, "X-Content-Type-Options")).toBe("nosniff");
    });

    it.each([
      ["/health", "of 3,049 characters", longHost],
      ["/employees/1", "with a 64-character label", `${"a".repeat(64)}.example`],
      ["/employees/1", "api.example:99999", "api.example:99999"],
      ["/employees/1", "[not:an:address]", "[not:an:address]"],
    ])("GET %s with a Host %s → 400 error record", async (path, _label, host) => {
      const res = await raw(s.url, head(path, host));
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ status: 400 });
      expect(res.body).not.toContain(host.slice(0, 40));
    });

    it("an HTTP/1.0 GET /health without Host is still served (load balancer probes)", async () => {
      const res = await raw(s.url, "GET /health HTTP/1.0");
      expect(res.status).toBe(200);
    });
  });

  it("a customer named =cmd|' /C calc'!A0 → its CSV cell is '=cmd|' /C calc'!A0", async () => {
    const name = "=cmd|' /C calc'!A0";
    const created = await api("/customers", {
      method: "POST",
      json: { name, email: `csv-${Date.now()}@example.com`, city: "Oslo" },
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: number }).id;
    const res = await api(`/customers?name=${encodeURIComponent(name)}`, {
      headers: { accept: "text/csv" },
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain(`${id},'=cmd|' /C calc'!A0,`);
    expect(body).not.toMatch(/(^|,)=cmd/m);
  });

  describe("existence and method are decided before permission", () => {
    const as = (who: string, path: string, init: RequestInit = {}) =>
      fetch(`${s.url}${path}`, {
        ...init,
        headers: { ...(who ? { authorization: who } : {}), "content-type": "application/json" },
      });

    it.each([
      ["the reader", READER],
      ["the admin", ADMIN],
      ["an anonymous client", ""],
    ])("POST /nonexistent as %s → 404", async (_who, auth) => {
      const res = await as(auth, "/nonexistent", { method: "POST", body: "{}" });
      expect(res.status).toBe(404);
    });

    it.each([
      ["/employees/1/projects", "GET, HEAD, OPTIONS"],
      ["/payments/1", "GET, HEAD, OPTIONS"],
      // The one-way operations' collections, mounted with the SOAP services.
      ["/events", "GET, HEAD, OPTIONS"],
      ["/events/1", "GET, HEAD, OPTIONS"],
      ["/notifications", "GET, HEAD, OPTIONS"],
    ])("POST %s (read-only) as the reader → 405 with Allow", async (path, allow) => {
      const res = await as(READER, path, { method: "POST", body: "{}" });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
    });

    it("TRACE /employees as an anonymous client → 405 with Allow", async () => {
      const res = await raw(s.url, "TRACE /employees HTTP/1.1\r\nHost: localhost");
      expect(res.status).toBe(405);
      expect(headerOf(res.head, "Allow")).toMatch(/GET/);
    });

    it("POST /departments as the reader (the route exists) → 403; anonymous → 401", async () => {
      expect((await as(READER, "/departments", { method: "POST", body: "{}" })).status).toBe(403);
      expect((await as("", "/departments", { method: "POST", body: "{}" })).status).toBe(401);
      expect((await as("", "/departments")).status).toBe(401);
    });

    // Spec part 5 rule 4: without credentials 401, a known user without permission 403, whatever
    // the body: the body is read only for a caller allowed to write, so neither learns what the
    // write would accept (its media types, its syntax) before the permission check.
    it.each([
      ["malformed JSON", "application/json", "{bad"],
      ["an unsupported media type", "application/xml", "<department/>"],
      ["a body over the size limit", "application/json", `{"name":"${"x".repeat(200 * 1024)}"}`],
    ])("a write with %s: reader → 403, anonymous → 401", async (_what, type, body) => {
      for (const [who, status] of [
        [READER, 403],
        ["", 401],
      ] as const) {
        for (const [method, path] of [
          ["POST", "/departments"],
          ["PUT", "/departments/1"],
          ["PATCH", "/v2/employees/1"],
          ["PUT", "/cart"],
        ] as const) {
          const res = await fetch(`${s.url}${path}`, {
            method,
            headers: { ...(who ? { authorization: who } : {}), "content-type": type },
            body,
          });
          await res.arrayBuffer();
          expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} ${status}`);
        }
      }
    });

    it("DELETE / (the entry point) → 405 with Allow: GET, HEAD, OPTIONS", async () => {
      const res = await as(ADMIN, "/", { method: "DELETE" });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    });

    it.each([
      ["/health", "GET, HEAD, OPTIONS"],
      ["/ready", "GET, HEAD, OPTIONS"],
      ["/openapi.json", "GET, HEAD, OPTIONS"],
      ["/.well-known/jwks.json", "GET, HEAD, OPTIONS"],
      ["/auth/token", "POST, OPTIONS"],
    ])("TRACE %s → 405 with Allow: %s; OPTIONS → 204", async (path, allow) => {
      const res = await raw(s.url, `TRACE ${path} HTTP/1.1\r\nHost: localhost`);
      expect(res.status).toBe(405);
      expect(headerOf(res.head, "Allow")).toBe(allow);
      expect(JSON.parse(res.body)).toMatchObject({ status: 405 });
      const options = await fetch(`${s.url}${path}`, { method: "OPTIONS" });
      expect(options.status).toBe(204);
      expect(options.headers.get("allow")).toBe(allow);
    });

    it("GET /health, /ready, POST /auth/token still work", async () => {
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
      expect((await fetch(`${s.url}/ready`)).status).toBe(200);
      const token = await fetch(`${s.url}/auth/token`, {
        method: "POST",
        headers: { authorization: READER },
      });
      expect(token.status).toBe(200);
    });
  });

  describe("inherited names are not filters or sort fields", () => {
    it.each([
      "constructor=x",
      "toString=1",
      "__proto__=x",
      "hasOwnProperty=1",
      "valueOf=1",
      "__defineGetter__=1",
      "sort=constructor",
      "sort=toString,desc",
      "sort=__proto__",
    ])("GET /customers?%s → 400 error record", async (query) => {
      const res = await api(`/customers?${query}`);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { status: number; errors?: Array<{ field: string }> };
      expect(body.status).toBe(400);
      expect(body.errors?.[0]?.field).toBe(query.split("=")[0]);
    });

    it("a known filter and sort still work: ?name=a&sort=name,desc → 200", async () => {
      expect((await api("/customers?name=a&sort=name,desc")).status).toBe(200);
    });
  });

  describe("Idempotency-Key on money-moving POSTs, whatever the path spelling", () => {
    const transfer = { fromAccountId: 1, toAccountId: 2, amount: 1 };

    it.each([
      "/Transfers",
      "/TRANSFERS",
      "/transfers/",
      "/Payments",
      "/payments/",
      "/v1/Transfers",
      "/V1/transfers",
    ])("POST %s without Idempotency-Key → 404, nothing created", async (path) => {
      const before = await transferCount();
      const res = await api(path, { method: "POST", json: transfer });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/^application\/(problem\+)?json/);
      expect(await transferCount()).toBe(before);
    });

    it.each(["/transfers", "/v1/transfers"])("POST %s without Idempotency-Key → 400", async (path) => {
      const res = await api(path, { method: "POST", json: transfer });
      expect(res.status).toBe(400);
    });

    it("one key over /transfers, /Transfers, /transfers/, /TRANSFERS → one transfer", async () => {
      const before = await transferCount();
      const key = `spelling-${Date.now()}`;
      const statuses: number[] = [];
      for (const path of ["/transfers", "/Transfers", "/transfers/", "/TRANSFERS"]) {
        const res = await api(path, { method: "POST", headers: { "idempotency-key": key }, json: transfer });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([202, 404, 404, 404]);
      expect(await transferCount()).toBe(before + 1);
    });

    it("one key over /transfers, then /v1/transfers (the same route) → one transfer, never a second run", async () => {
      const before = await transferCount();
      const key = `versioned-${Date.now()}`;
      const first = await api("/transfers", {
        method: "POST",
        headers: { "idempotency-key": key },
        json: transfer,
      });
      expect(first.status).toBe(202);
      const second = await api("/v1/transfers", {
        method: "POST",
        headers: { "idempotency-key": key },
        json: transfer,
      });
      // A replay, or 422 where the package's fingerprint counts the target the client named.
      if (second.status === 202) expect(second.headers.get("idempotent-replayed")).toBe("true");
      else expect(second.status).toBe(422);
      expect(await transferCount()).toBe(before + 1);
    });

    it("the canonical spellings still work: HAL links, /v1 prefix, OpenAPI paths", async () => {
      const root = (await (await api("/")).json()) as { _links: Record<string, { href: string }> };
      const href = root._links.transfers?.href ?? "";
      expect(new URL(href).pathname).toBe("/transfers");
      expect((await api(new URL(href).pathname)).status).toBe(200);
      expect((await api("/v1/transfers")).status).toBe(200);
      const doc = (await (await api("/openapi.json")).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).toContain("/transfers");
      for (const path of Object.keys(doc.paths)) {
        const literal = path.replace(/\{[^}]+\}/g, "");
        expect(literal).toBe(literal.toLowerCase());
        expect(path.endsWith("/") && path !== "/").toBe(false);
      }
    });

    it.each([
      "/Employees/1",
      "/employees/1/",
      "/HEALTH",
      "/Health",
      // The one-way operations' collections live in the SOAP module's own router.
      "/events/",
      "/events/1/",
      "/notifications/",
      "/notifications/1/",
    ])("GET %s → 404", async (path) => {
      expect((await api(path)).status).toBe(404);
    });
  });
});

describe("Strict-Transport-Security only over TLS (RFC 6797 §7.2)", () => {
  let plain: Started;
  let proxied: Started;
  beforeAll(async () => {
    [plain, proxied] = await Promise.all([sqlite.start(), sqlite.start({ TRUST_PROXY: "loopback" })]);
  });
  afterAll(async () => {
    await Promise.all([plain.stop(), proxied.stop()]);
  });

  it.each([
    ["/health", 200],
    ["/employees/1", 200],
    ["/nowhere", 404],
  ])("plain HTTP GET %s → %i without Strict-Transport-Security", async (path, status) => {
    const res = await fetch(`${plain.url}${path}`, { headers: { authorization: ADMIN } });
    expect(res.status).toBe(status);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("strict-transport-security")).toBeNull();
  });

  it("X-Forwarded-Proto: https from an untrusted peer → no Strict-Transport-Security", async () => {
    const res = await fetch(`${plain.url}/health`, { headers: { "x-forwarded-proto": "https" } });
    expect(res.headers.get("strict-transport-security")).toBeNull();
  });

  it("X-Forwarded-Proto: https from a trusted proxy → Strict-Transport-Security; http → none", async () => {
    const secure = await fetch(`${proxied.url}/health`, { headers: { "x-forwarded-proto": "https" } });
    expect(secure.headers.get("strict-transport-security")).toMatch(/^max-age=\d+/);
    const insecure = await fetch(`${proxied.url}/health`, { headers: { "x-forwarded-proto": "http" } });
    expect(insecure.headers.get("strict-transport-security")).toBeNull();
  });

  it("X-Forwarded-Proto: http from a trusted proxy with a client's Forwarded: proto=https → no Strict-Transport-Security", async () => {
    // The proxy sets X-Forwarded-Proto and passes the client's own Forwarded through: RFC 6797
    // §7.2, no STS header over non-secure transport, whatever the client claims.
    const res = await fetch(`${proxied.url}/health`, {
      headers: { "x-forwarded-for": "203.0.113.66", "x-forwarded-proto": "http", forwarded: "proto=https" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("strict-transport-security")).toBeNull();
    const bare = await fetch(`${proxied.url}/health`, { headers: { forwarded: "proto=https" } });
    expect(bare.headers.get("strict-transport-security")).toBeNull();
  });

  it("X-Forwarded-Proto: https, http (the client's https, the proxy's http) → no Strict-Transport-Security", async () => {
    // A proxy appends its value; the first one is the client's own (RFC 7239 §8.1). RFC 6797 §7.2:
    // no STS header over non-secure transport.
    const spoofed = await fetch(`${proxied.url}/health`, { headers: { "x-forwarded-proto": "https, http" } });
    expect(spoofed.headers.get("strict-transport-security")).toBeNull();
    const appended = await fetch(`${proxied.url}/health`, {
      headers: { "x-forwarded-proto": "http, https" },
    });
    expect(appended.headers.get("strict-transport-security")).toMatch(/^max-age=\d+/);
  });

  it("a parser error over plain HTTP → 400 record without Strict-Transport-Security", async () => {
    const res = await raw(plain.url, "GET /health HTTP/1.1\r\nHost: x\r\nnot a header");
    expect(res.status).toBe(400);
    expect(headerOf(res.head, "X-Content-Type-Options")).toBe("nosniff");
    expect(headerOf(res.head, "Strict-Transport-Security")).toBeUndefined();
  });

  describe("over TLS", () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-hsts-"));
    let tls: Started | undefined;
    beforeAll(async () => {
      const key = join(dir, "key.pem");
      const cert = join(dir, "cert.pem");
      // biome-ignore format: one openssl argument list
      execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"], { stdio: "ignore" });
      tls = await sqlite.start({ TLS_CERT: cert, TLS_KEY: key });
    });
    afterAll(async () => {
      await tls?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("GET /health over TLS → Strict-Transport-Security", async () => {
      const hsts = await new Promise<string | string[] | undefined>((resolve, reject) => {
        httpsRequest(`${tls?.url}/health`, { rejectUnauthorized: false }, (res) => {
          res.resume();
          resolve(res.headers["strict-transport-security"]);
        })
          .on("error", reject)
          .end();
      });
      expect(hsts).toMatch(/^max-age=\d+/);
    });

    it("a parser error over TLS → 400 record with Strict-Transport-Security", async () => {
      const { port } = new URL(tls?.url ?? "");
      const text = await new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: "127.0.0.1", port: Number(port), rejectUnauthorized: false }, () =>
          socket.write("GET /health HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n"),
        );
        let out = "";
        socket.on("data", (c: Buffer) => {
          out += c.toString("latin1");
        });
        socket.on("error", reject);
        socket.on("close", () => resolve(out));
      });
      expect(text).toMatch(/^HTTP\/1\.1 400 /);
      expect(text).toMatch(/^Strict-Transport-Security: max-age=\d+/im);
    });
  });
});

/** Writes `sent` and then nothing more: what the server answers, and after how long. */
async function stall(
  base: string,
  sent: string,
): Promise<{ status: number; head: string; body: string; ms: number }> {
  const started = Date.now();
  const answer = await rawSend(base, Buffer.from(sent, "latin1"));
  return { ...answer, ms: Date.now() - started };
}

describe("slow clients: HEADERS_TIMEOUT_SECONDS and REQUEST_TIMEOUT_SECONDS → 408", () => {
  let s: Started;
  beforeAll(async () => {
    s = await sqlite.start({ HEADERS_TIMEOUT_SECONDS: "1", REQUEST_TIMEOUT_SECONDS: "1" });
  });
  afterAll(() => s.stop());

  function expect408(res: { status: number; head: string; body: string; ms: number }) {
    expect(res.status).toBe(408);
    expect(headerOf(res.head, "Content-Type")).toMatch(/^application\/(problem\+)?json/);
    expect(JSON.parse(res.body)).toMatchObject({ status: 408 });
    expect(headerOf(res.head, "X-Content-Type-Options")).toBe("nosniff");
    expect(headerOf(res.head, "Content-Security-Policy")).toMatch(/default-src 'self'/);
    expect(headerOf(res.head, "Strict-Transport-Security")).toBeUndefined();
    expect(headerOf(res.head, "Connection")).toBe("close");
    // Closed by the server a moment after the 1 s limit, not after Node's 300 s.
    expect(res.ms).toBeGreaterThanOrEqual(900);
    expect(res.ms).toBeLessThan(6000);
  }

  it("POST /departments: headers, then 10 of 100 body bytes and silence → 408 error record", async () => {
    const res = await stall(
      s.url,
      `POST /departments HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"`,
    );
    expect408(res);
  });

  it("GET /health: half the headers and silence → 408 error record", async () => {
    const res = await stall(s.url, "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    expect408(res);
  });

  it("a body sent in time is still served: POST /departments → 201", async () => {
    const res = await fetch(`${s.url}/departments`, {
      method: "POST",
      headers: { authorization: ADMIN, "content-type": "application/json" },
      body: JSON.stringify({ name: `timely-${Date.now()}`, city: "Oslo" }),
    });
    expect(res.status).toBe(201);
  });
});

describe("time-out settings", () => {
  it("defaults: HEADERS_TIMEOUT_SECONDS 10, REQUEST_TIMEOUT_SECONDS 30", () => {
    const c = loadConfig({});
    expect([c.headersTimeoutSeconds, c.requestTimeoutSeconds]).toEqual([10, 30]);
  });

  it.each([
    ["HEADERS_TIMEOUT_SECONDS", "0"],
    ["HEADERS_TIMEOUT_SECONDS", "301"],
    ["HEADERS_TIMEOUT_SECONDS", "1.5"],
    ["REQUEST_TIMEOUT_SECONDS", "0"],
    ["REQUEST_TIMEOUT_SECONDS", "3601"],
    ["REQUEST_TIMEOUT_SECONDS", "soon"],
  ])("%s=%s → a ConfigError naming it", (name, value) => {
    let problems: readonly string[] = [];
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      if (err instanceof ConfigError) problems = err.problems;
    }
    expect(problems.join("\n")).toMatch(new RegExp(`${name} must be a whole number from 1 to`));
  });
});
