import { createServer, request } from "node:http";
import { rawExchange } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, backends, client, type Started, sqlite } from "./harness.js";
import { expectAlive, expectApiResponse, expectSoapResponse, faultCode, SOAP12, TNS } from "./hostile.js";

/** A raw HTTP/1.1 exchange, for what `fetch` refuses to send (bare `..`, CR/LF, invalid bytes). */
function raw(base: string, head: string, body: Buffer | string = "") {
  // A string body goes out as UTF-8.
  return rawExchange(base, head, Buffer.from(body));
}

function headerOf(head: string, name: string): string | undefined {
  const m = new RegExp(`^${name}: (.*)$`, "im").exec(head);
  return m?.[1];
}

const SOAP_XML = "application/soap+xml; charset=utf-8";
const getCustomer = (id: string) =>
  `<env:Envelope xmlns:env="${SOAP12}"><env:Body><c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>${id}</c:customerId></c:GetCustomerRequest></env:Body></env:Envelope>`;

describe("named hostile cases (SQLite)", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await sqlite.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  describe("oversized bodies → 413", () => {
    it("Content-Length above the limit → 413 before the body is sent", async () => {
      const { hostname, port } = new URL(s.url);
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({
          host: hostname,
          port,
          method: "POST",
          path: "/employees",
          headers: {
            authorization: ADMIN,
            "content-type": "application/json",
            "content-length": String(50 * 1024 * 1024),
          },
        });
        req.on("response", (r) => {
          let body = "";
          r.on("data", (c: Buffer) => {
            body += c.toString();
          });
          r.on("end", () => {
            resolve({ status: r.statusCode ?? 0, body });
            req.destroy();
          });
        });
        req.on("error", reject);
        // Only the first kilobyte of the announced 50 MiB is ever written.
        req.write("[".repeat(1024));
      });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({
        status: 413,
        error: "Content Too Large",
        path: "/employees",
      });
      await expectAlive(s.url);
    });

    it("a chunked body growing past the limit → 413 record", async () => {
      const big = JSON.stringify({ name: "x".repeat(200 * 1024) });
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(big));
          c.close();
        },
      });
      const res = await fetch(`${s.url}/departments`, {
        method: "POST",
        headers: { authorization: ADMIN, "content-type": "application/json" },
        body: stream,
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(413);
      await expectApiResponse(res, { method: "POST", target: "/departments" });
    });

    it("an oversized SOAP envelope → 413 Sender fault", async () => {
      const body = getCustomer("1").replace("<env:Body>", `<env:Body><!--${"x".repeat(2 * 1024 * 1024)}-->`);
      const res = await fetch(`${s.url}/ws/customer`, {
        method: "POST",
        headers: { authorization: ADMIN, "content-type": SOAP_XML },
        body,
      });
      expect(res.status).toBe(413);
      await expectSoapResponse(res, { method: "POST", target: "/ws/customer" });
    });
  });

  describe("deep nesting", () => {
    it.each([
      // Under the 100 KiB body limit, so the depth check (not the size) refuses them.
      ["arrays", `${"[".repeat(50_000)}${"]".repeat(50_000)}`],
      ["objects", `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`],
    ])("JSON nested 10^4 deep and more (%s) → 400, server alive", async (_kind, body) => {
      const res = await api("/departments", {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(400);
      await expectApiResponse(res, { method: "POST", target: "/departments" });
      await expectAlive(s.url);
    });

    it("XML nested 10^4 deep in a SOAP body → 400 Sender fault", async () => {
      const deep = `${"<a>".repeat(10_000)}${"</a>".repeat(10_000)}`;
      const res = await fetch(`${s.url}/ws/customer`, {
        method: "POST",
        headers: { authorization: ADMIN, "content-type": SOAP_XML },
        body: `<env:Envelope xmlns:env="${SOAP12}"><env:Body>${deep}</env:Body></env:Envelope>`,
      });
      expect(res.status).toBe(400);
      expect(faultCode(await expectSoapResponse(res, { method: "POST", target: "/ws/customer" }))).toBe(
        "Sender",
      );
    });

    it("XML to the resource API → 415 (JSON only), never parsed", async () => {
      const res = await api("/departments", {
        method: "POST",
        body: `${"<a>".repeat(10_000)}${"</a>".repeat(10_000)}`,
        headers: { "content-type": "application/xml" },
      });
      expect(res.status).toBe(415);
      expect(res.headers.get("accept-post")).toBe("application/json");
    });
  });

  describe("entity expansion and external entities", () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from(
      { length: 9 },
      (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? "" : i};`.repeat(10)}">`,
    ).join("")}]>`;

    it("billion laughs in a SOAP envelope → 400 Sender at once, server alive", async () => {
      const res = await fetch(`${s.url}/ws/customer`, {
        method: "POST",
        headers: { authorization: ADMIN, "content-type": SOAP_XML },
        body: `${laughs}<env:Envelope xmlns:env="${SOAP12}"><env:Body>&lol9;</env:Body></env:Envelope>`,
      });
      expect(res.status).toBe(400);
      const text = await expectSoapResponse(res, { method: "POST", target: "/ws/customer" });
      expect(text).not.toContain("lollol");
      await expectAlive(s.url);
    });

    it("external DTD, SYSTEM and parameter entities → 400 Sender, nothing fetched", async () => {
      let fetched = 0;
      const canary = createServer((_req, res) => {
        fetched++;
        res.end('<!ENTITY x "leak">');
      });
      await new Promise<void>((r) => canary.listen(0, "127.0.0.1", r));
      const port = (canary.address() as { port: number }).port;
      try {
        for (const doctype of [
          `<!DOCTYPE env:Envelope SYSTEM "http://127.0.0.1:${port}/dtd">`,
          `<!DOCTYPE env:Envelope [<!ENTITY % p SYSTEM "http://127.0.0.1:${port}/p"> %p;]>`,
          `<!DOCTYPE env:Envelope [<!ENTITY x SYSTEM "http://127.0.0.1:${port}/x">]>`,
          `<!DOCTYPE env:Envelope [<!ENTITY x SYSTEM "file:///etc/passwd">]>`,
        ]) {
          const res = await fetch(`${s.url}/ws/customer`, {
            method: "POST",
            headers: { authorization: ADMIN, "content-type": SOAP_XML },
            body: `<?xml version="1.0"?>${doctype}<env:Envelope xmlns:env="${SOAP12}"><env:Body>&x;</env:Body></env:Envelope>`,
          });
          expect(res.status).toBe(400);
          const text = await expectSoapResponse(res, { method: "POST", target: "/ws/customer" });
          expect(text).not.toMatch(/leak|root:/);
        }
        expect(fetched).toBe(0);
      } finally {
        canary.close();
      }
    });
  });

  describe("invalid UTF-8", () => {
    const bad = Buffer.from([0xc3, 0x28]);
    it("in a JSON string → 400, nothing stored", async () => {
      const body = Buffer.concat([Buffer.from('{"name":"Bad'), bad, Buffer.from('","city":"Rome"}')]);
      const res = await api("/departments", {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(400);
      await expectApiResponse(res, { method: "POST", target: "/departments" });
      const list = (await (await api("/departments?name=Bad")).json()) as { page: { totalElements: number } };
      expect(list.page.totalElements).toBe(0);
    });

    it("an overlong encoding and a lone surrogate in JSON → 400", async () => {
      for (const bytes of [[0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff]]) {
        const body = Buffer.concat([
          Buffer.from('{"name":"x'),
          Buffer.from(bytes),
          Buffer.from('","city":"Rome"}'),
        ]);
        const res = await api("/departments", {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
        });
        expect(res.status, bytes.join(",")).toBe(400);
      }
    });

    it("in a SOAP envelope → 400 Sender fault", async () => {
      const body = Buffer.concat([
        Buffer.from(getCustomer("1").replace("<c:customerId>1", "<c:customerId>")),
        bad,
      ]);
      const doc = Buffer.from(getCustomer("1").replace("1</c:customerId>", "\u0000</c:customerId>"));
      for (const b of [body, Buffer.concat([doc.subarray(0, 120), bad, doc.subarray(120)])]) {
        const res = await fetch(`${s.url}/ws/customer`, {
          method: "POST",
          headers: { authorization: ADMIN, "content-type": SOAP_XML },
          body: b,
        });
        expect(res.status).toBe(400);
        await expectSoapResponse(res, { method: "POST", target: "/ws/customer" });
      }
    });

    it("in the query → 400 record, never a 5xx", async () => {
      for (const q of ["name=%C3%28", "name=%FF", "sort=%ED%A0%80", "name=%00"]) {
        const res = await api(`/employees?${q}`);
        expect(res.status, q).toBe(400);
        await expectApiResponse(res, { method: "GET", target: `/employees?${q}` });
      }
    });

    it("in headers (obs-text) → a generated correlation id, a 401 for credentials", async () => {
      const r1 = await raw(s.url, `GET /health HTTP/1.1\r\nHost: x\r\nX-Correlation-ID: \xff\xfe\xc3\x28`);
      expect(r1.status).toBe(200);
      expect(headerOf(r1.head, "X-Correlation-ID")).toMatch(/^[0-9a-f-]{36}$/);
      const basic = Buffer.concat([Buffer.from("adm"), bad, Buffer.from(":admin")]).toString("base64");
      const r2 = await raw(s.url, `GET /employees HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${basic}`);
      expect(r2.status).toBe(401);
      const r3 = await raw(s.url, `GET /employees HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \xff\xfe`);
      expect(r3.status).toBe(401);
    });
  });

  describe("header injection", () => {
    it("CR/LF in a header value is refused by the parser: 400, no injected header", async () => {
      const r = await raw(
        s.url,
        "GET /health HTTP/1.1\r\nHost: x\r\nX-Correlation-ID: a\rSet-Cookie: pwned=1",
      );
      expect(r.status).toBe(400);
      expect(r.head).not.toMatch(/^Set-Cookie/im);
    });

    it("encoded CR/LF in the correlation id is not reflected", async () => {
      const res = await api("/employees/1", {
        headers: { "x-correlation-id": "abc%0d%0aSet-Cookie:%20x=1" },
      });
      expect(res.headers.get("x-correlation-id")).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.get("set-cookie")).toBeNull();
    });

    it("CR/LF smuggled through the path never reaches Location or links", async () => {
      const r = await raw(
        s.url,
        `GET /employees/1%0d%0aSet-Cookie:%20x=1 HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN}`,
      );
      expect(r.status).toBe(404);
      expect(r.head).not.toMatch(/^Set-Cookie/im);
      const created = await api("/departments?x=%0d%0aSet-Cookie:%20y", {
        method: "POST",
        json: { name: "Injection\r\nSet-Cookie: z=1", city: "Rome" },
      });
      expect([201, 400]).toContain(created.status);
      expect(created.headers.get("set-cookie")).toBeNull();
      expect(created.headers.get("location") ?? "").not.toMatch(/[\r\n]/);
    });
  });

  describe("HEAD answers with GET's header fields (RFC 9110 §9.3.2)", () => {
    function heads(method: string, path: string, acceptEncoding: string): Promise<Record<string, unknown>> {
      const { hostname, port } = new URL(s.url);
      return new Promise((resolve, reject) => {
        const req = request({
          host: hostname,
          port,
          method,
          path,
          headers: { authorization: ADMIN, "accept-encoding": acceptEncoding },
        });
        req.on("response", (res) => {
          res.resume();
          res.on("end", () => resolve(res.headers));
        });
        req.on("error", reject);
        req.end();
      });
    }

    it.each([
      ["/employees?size=100", "gzip"],
      ["/employees?size=100", "br"],
      ["/employees?size=100", "deflate, gzip;q=0.5"],
      ["/employees?size=100", "identity"],
      ["/employees?size=100", "identity;q=0, gzip"],
      ["/employees/1", "gzip"],
      ["/employees/1", "identity;q=0, gzip"],
      ["/openapi.json", "gzip"],
      ["/products?size=50", "br"],
    ])("%s with Accept-Encoding: %s → same Content-Encoding, Vary and ETag", async (path, ae) => {
      const get = await heads("GET", path, ae);
      const head = await heads("HEAD", path, ae);
      expect(head["content-encoding"], "Content-Encoding").toBe(get["content-encoding"]);
      expect(head.vary, "Vary").toBe(get.vary);
      expect(head.etag, "ETag").toBe(get.etag);
      expect(head["cache-control"]).toBe(get["cache-control"]);
      if (head["content-length"] !== undefined) expect(head["content-length"]).toBe(get["content-length"]);
    });

    it("a HEAD revalidated with the coded response's tag → 304", async () => {
      const head = await heads("HEAD", "/employees?size=100", "gzip");
      expect(head.etag).toMatch(/^W\//);
      const res = await fetch(`${s.url}/employees?size=100`, {
        method: "HEAD",
        headers: { authorization: ADMIN, "accept-encoding": "gzip", "if-none-match": String(head.etag) },
      });
      expect(res.status).toBe(304);
    });
  });

  describe("path traversal", () => {
    it.each([
      "/docs/assets/../../package.json",
      "/docs/assets/../../../../../../etc/passwd",
      "/docs/assets/%2e%2e/%2e%2e/package.json",
      "/docs/assets/%2E%2E%2F%2E%2E%2Fpackage.json",
      "/docs/assets/..%2f..%2f..%2fpackage.json",
      "/docs/assets/..%5c..%5cpackage.json",
      "/docs/assets/%252e%252e/package.json",
      "/docs/assets/swagger-ui.css%00.json",
      "/docs/assets/%00",
      "/docs/assets/....//....//package.json",
      "/docs/assets//etc/passwd",
      "/docs/%2e%2e/package.json",
    ])("%s → 4xx record, no file outside the assets", async (path) => {
      const r = await raw(s.url, `GET ${path} HTTP/1.1\r\nHost: x`);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.body).not.toMatch(/"name":\s*"@svc|root:x:0|"devDependencies"/);
      expect(headerOf(r.head, "X-Content-Type-Options")).toBe("nosniff");
      expect(headerOf(r.head, "Content-Type")).toMatch(/^application\/json/);
    });

    it("the assets themselves are still served", async () => {
      expect((await fetch(`${s.url}/docs/assets/swagger-ui.css`)).status).toBe(200);
    });
  });
});

for (const backend of backends) {
  describe(`named hostile cases on ${backend.name}`, () => {
    let s: Started;
    let api: ReturnType<typeof client>;
    beforeAll(async () => {
      s = await backend.start();
      api = client(s.url);
    });
    afterAll(() => s.stop());

    /** What the tables hold, to prove nothing was executed. */
    async function snapshot(): Promise<string> {
      const parts: string[] = [];
      for (const path of [
        "/employees?size=100",
        "/departments?size=100",
        "/users?size=100",
        "/customers?size=100",
      ]) {
        const res = await api(path);
        expect(res.status).toBe(200);
        parts.push(await res.text());
      }
      return parts.join("\n");
    }

    const SQL = [
      "'; DROP TABLE employees; --",
      "1' OR '1'='1",
      "x'); DELETE FROM departments; --",
      "1; UPDATE employees SET salary = 0",
      "Engineering' UNION SELECT username, email FROM users --",
      "%' OR name LIKE '%",
      "\\'; DROP TABLE users; --",
      "$$; DROP TABLE employees; $$",
    ];

    it("SQL fragments in sort → 400; in filters → an empty page; data unchanged", async () => {
      const before = await snapshot();
      for (const fragment of SQL) {
        for (const sort of [fragment, `name,${fragment}`, `${fragment},desc`]) {
          const res = await api(`/employees?sort=${encodeURIComponent(sort)}`);
          expect(res.status, sort).toBe(400);
          await expectApiResponse(res, {
            method: "GET",
            target: `/employees?sort=${encodeURIComponent(sort)}`,
          });
        }
        for (const filter of ["department", "city", "name", "email"]) {
          const res = await api(`/employees?${filter}=${encodeURIComponent(fragment)}`);
          expect(res.status, `${filter}=${fragment}`).toBe(200);
          const page = (await res.json()) as { page: { totalElements: number } };
          expect(page.page.totalElements, `${filter}=${fragment}`).toBe(0);
        }
        const res = await api(`/employees?managerId=${encodeURIComponent(fragment)}`);
        expect(res.status).toBe(400);
      }
      // LIKE wildcards are literal in the contains filters.
      const pct = (await (await api("/employees?name=%25")).json()) as { page: { totalElements: number } };
      expect(pct.page.totalElements).toBe(0);
      expect(await snapshot()).toBe(before);
    });

    it("NUL and control characters in filters and bodies → 400, never a 5xx", async () => {
      for (const q of ["name=a%00b", "department=%00", "city=%01%02"]) {
        const res = await api(`/employees?${q}`);
        expect(res.status, q).toBeLessThan(500);
        await expectApiResponse(res, { method: "GET", target: `/employees?${q}` });
      }
      const res = await api("/departments", {
        method: "POST",
        json: { name: "Nul\u0000Dept", city: "Rome" },
      });
      expect(res.status).toBe(400);
      await expectApiResponse(res, { method: "POST", target: "/departments" });
    });

    it.each([
      ["page=0", 400],
      ["page=-1", 400],
      ["page=1.5", 400],
      ["size=0", 400],
      ["size=101", 400],
      ["size=99999999999999999999", 400],
      ["page=99999999999999999999", 400],
      ["page=1e9", 400],
      ["page=999999999&size=100", 200],
      ["page=999999999", 200],
    ])("GET /employees?%s → %i", async (q, status) => {
      const res = await api(`/employees?${q}`);
      expect(res.status).toBe(status);
      const body = await expectApiResponse(res, { method: "GET", target: `/employees?${q}` });
      if (status === 200) {
        const page = JSON.parse(body) as { _embedded: { employees: unknown[] }; page: { number: number } };
        expect(page._embedded.employees).toEqual([]);
      }
    });

    it.each([
      "-1",
      "0",
      "1.5",
      "1e3",
      "0x1",
      "01",
      "2147483648",
      "9223372036854775807",
      "NaN",
      "%20",
      "1%00",
    ])("GET, PUT, PATCH, DELETE /employees/%s → 404 record", async (id) => {
      for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
        const res = await api(`/employees/${id}`, {
          method,
          ...(method === "PUT" || method === "PATCH" ? { json: { salary: 1 } } : {}),
        });
        expect(res.status, `${method} ${id}`).toBe(404);
        await expectApiResponse(res, { method, target: `/employees/${id}` });
      }
    });

    // Ids are 64-bit: digits past 2^63 − 1 can be no id at all (issue 18).
    it.each(["9223372036854775808", "99999999999999999999999"])(
      "GET, PUT, PATCH, DELETE /employees/%s → 400 record",
      async (id) => {
        for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
          const res = await api(`/employees/${id}`, {
            method,
            ...(method === "PUT" || method === "PATCH" ? { json: { salary: 1 } } : {}),
          });
          expect(res.status, `${method} ${id}`).toBe(400);
          await expectApiResponse(res, { method, target: `/employees/${id}` });
        }
      },
    );

    it.each([
      [
        "/employees",
        {
          name: "A B",
          email: "ab@example.com",
          department: "Engineering",
          city: "X",
          salary: 1,
          managerId: 2147483648,
        },
      ],
      [
        "/employees",
        {
          name: "A B",
          email: "ab@example.com",
          department: "Engineering",
          city: "X",
          salary: 1,
          managerId: 1e20,
        },
      ],
      [
        "/employees",
        { name: "A B", email: "ab@example.com", department: "Engineering", city: "X", salary: 1e308 },
      ],
      ["/products", { name: "P", sku: "P-1", categoryId: 2147483648, price: 1, stock: 1 }],
      ["/products", { name: "P", sku: "P-2", categoryId: 1, price: 1, stock: 2147483648 }],
      ["/products", { name: "P", sku: "P-3", categoryId: 1, price: 1, stock: -2147483649 }],
      ["/orders", { customerId: 9007199254740991, items: [{ productId: 1, quantity: 1 }] }],
      ["/orders", { customerId: 1, items: [{ productId: 2147483648, quantity: 1 }] }],
      ["/users", { username: "zed", email: "zed@example.com", role: "customer", customerId: 2147483648 }],
      ["/products/1/reviews", { author: "A", rating: 5, comment: "\u0000" }],
    ])("POST %s with out-of-range numbers or NUL %j → 4xx, never a 5xx", async (path, json) => {
      const res = await api(path, { method: "POST", json });
      expect(res.status, await res.clone().text()).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      await expectApiResponse(res, { method: "POST", target: path });
    });

    it("SOAP customerId beyond the database's integers → a Sender fault or not found, never a 5xx", async () => {
      for (const id of ["2147483648", "9223372036854775807", "-9223372036854775808"]) {
        const res = await fetch(`${s.url}/ws/customer`, {
          method: "POST",
          headers: { authorization: ADMIN, "content-type": SOAP_XML },
          body: getCustomer(id),
        });
        expect(res.status, id).toBe(400);
        expect(faultCode(await expectSoapResponse(res, { method: "POST", target: "/ws/customer" }))).toBe(
          "Sender",
        );
      }
    });
  });
}
