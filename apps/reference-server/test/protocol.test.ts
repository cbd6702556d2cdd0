import { createServer, get as httpGet, type Server } from "node:http";
import { freePort, type Listening, listen, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { createDatabase } from "../src/db/database.js";
import { createFastifyApp } from "../src/fastify-app.js";
import { Background } from "../src/routes/money.js";
import { createSecurity } from "../src/security.js";
import { createLogger } from "../src/server.js";
import { createStores } from "../src/stores.js";
import { client, frameworkEnv, READER, type Started, sqlite, watchResponses } from "./harness.js";

/** Parts 4.3, 5, 8 and 9 of the spec: the packages composed in front of the resource API. */
describe("protocol rules through the reference server", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await sqlite.start({ CORS_ORIGINS: "https://app.example.com", RATE_LIMIT_MAX: "100" });
    api = client(s.url);
  });
  afterAll(() => s.stop());

  describe("authentication (part 5)", () => {
    it("no Authorization → 401 with Basic and Bearer challenges and the error record", async () => {
      const res = await fetch(`${s.url}/employees`);
      expect(res.status).toBe(401);
      const challenge = res.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/Basic/);
      expect(challenge).toMatch(/Bearer/);
      expect(await res.json()).toMatchObject({ status: 401, error: "Unauthorized", path: "/employees" });
    });

    it("Basic with a wrong password → 401", async () => {
      const res = await api("/employees", {
        headers: { authorization: `Basic ${Buffer.from("admin:nope").toString("base64")}` },
      });
      expect(res.status).toBe(401);
    });

    it("reader GET → 200; reader POST → 403", async () => {
      expect((await api("/departments", { headers: { authorization: READER } })).status).toBe(200);
      const res = await api("/departments", {
        method: "POST",
        headers: { authorization: READER },
        json: { name: "Legal", city: "Rome" },
      });
      expect(res.status).toBe(403);
    });

    it("?access_token=... → 400, never accepted", async () => {
      const res = await fetch(`${s.url}/employees?access_token=abc.def.ghi`);
      expect(res.status).toBe(400);
    });

    it("POST /auth/token with Basic → a Bearer JWT that works; JWKS is public", async () => {
      const res = await api("/auth/token", { method: "POST" });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const token = (await res.json()) as { access_token: string; token_type: string; expires_in: number };
      expect(token.token_type).toBe("Bearer");
      expect(token.expires_in).toBeGreaterThan(0);
      const header = JSON.parse(Buffer.from(token.access_token.split(".")[0] ?? "", "base64url").toString());
      expect(header.alg).toBe("ES256");
      const jwks = (await (await fetch(`${s.url}/.well-known/jwks.json`)).json()) as {
        keys: Array<{ kid: string }>;
      };
      expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
      const me = await fetch(`${s.url}/employees/1`, {
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      expect(me.status).toBe(200);
    });

    it("a tampered Bearer token → 401 invalid_token", async () => {
      const token = (
        (await (await api("/auth/token", { method: "POST" })).json()) as { access_token: string }
      ).access_token;
      const res = await fetch(`${s.url}/employees`, {
        headers: { authorization: `Bearer ${token.slice(0, -4)}AAAA` },
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/invalid_token/);
    });

    it("POST /auth/token without credentials → 401", async () => {
      expect((await fetch(`${s.url}/auth/token`, { method: "POST" })).status).toBe(401);
    });
  });

  describe("representations (part 4.3)", () => {
    it("Accept: application/xml → XML of the employee", async () => {
      const res = await api("/employees/1", { headers: { accept: "application/xml" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/xml/);
      const body = await res.text();
      expect(body).toMatch(/^<\?xml/);
      expect(body).toContain("<department>Engineering</department>");
    });

    it("Accept: application/hal+json → HAL with _links.self", async () => {
      const res = await api("/employees/1", { headers: { accept: "application/hal+json" } });
      expect(res.headers.get("content-type")).toMatch(/^application\/hal\+json/);
      expect(((await res.json()) as { _links: { self: unknown } })._links.self).toBeDefined();
    });

    it("Accept: text/csv on a collection → one CSV row per item; on an item → 406", async () => {
      const res = await api("/employees?size=3", { headers: { accept: "text/csv" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/csv; charset=utf-8/);
      const lines = (await res.text()).trim().split(/\r?\n/);
      expect(lines).toHaveLength(4);
      expect(lines[0]).toContain("name");
      expect((await api("/employees/1", { headers: { accept: "text/csv" } })).status).toBe(406);
    });

    it("Accept: text/plain and text/html → those types", async () => {
      const t = await api("/employees/1", { headers: { accept: "text/plain" } });
      expect(t.headers.get("content-type")).toMatch(/^text\/plain/);
      const h = await api("/employees/1", { headers: { accept: "text/html" } });
      expect(h.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await h.text()).toContain("Engineering");
    });

    it("Accept: image/png → 406 listing what is available", async () => {
      const res = await api("/employees/1", { headers: { accept: "image/png" } });
      expect(res.status).toBe(406);
      expect(((await res.json()) as { message: string }).message).toContain("application/json");
    });

    it("POST with Content-Type: text/plain → 415; without Content-Type → 415", async () => {
      const a = await api("/departments", {
        method: "POST",
        body: "x",
        headers: { "content-type": "text/plain" },
      });
      expect(a.status).toBe(415);
      const b = await api("/departments", { method: "POST", body: new Uint8Array([123, 125]) });
      expect(b.status).toBe(415);
    });

    it("Accept-Encoding: gzip on a large page → Content-Encoding: gzip", async () => {
      const res = await fetch(`${s.url}/employees?size=100`, {
        headers: {
          authorization: `Basic ${Buffer.from("admin:admin").toString("base64")}`,
          "accept-encoding": "gzip",
        },
      });
      expect(res.headers.get("content-encoding")).toBe("gzip");
      expect(res.headers.get("vary")).toMatch(/Accept-Encoding/i);
    });
  });

  describe("versioning (part 9)", () => {
    it("default is version 1: name", async () => {
      const e = (await (await api("/employees/1")).json()) as Record<string, unknown>;
      expect(e).toHaveProperty("name");
      expect(e).not.toHaveProperty("firstName");
    });

    it.each([
      ["URI /v2/employees/1", "/v2/employees/1", {}],
      ["API-Version: 2", "/employees/1", { "api-version": "2" }],
      ["Accept-Version: 2", "/employees/1", { "accept-version": "2" }],
      ["Accept: application/vnd.svc.v2+json", "/employees/1", { accept: "application/vnd.svc.v2+json" }],
    ])("%s → version 2: firstName and lastName", async (_label, path, headers) => {
      const res = await api(path, { headers });
      expect(res.status).toBe(200);
      const e = (await res.json()) as Record<string, unknown>;
      expect(e).toHaveProperty("firstName");
      expect(e).toHaveProperty("lastName");
      expect(e).not.toHaveProperty("name");
      expect(res.headers.get("api-supported-versions")).toMatch(/1.*2/);
    });

    it("media-type versioning → Vary: Accept; header versioning → Vary: API-Version", async () => {
      const m = await api("/employees/1", { headers: { accept: "application/vnd.svc.v2+json" } });
      expect(m.headers.get("vary")).toMatch(/Accept/);
      expect(m.headers.get("content-type")).toMatch(/application\/vnd\.svc\.v2\+json/);
      const h = await api("/employees/1", { headers: { "api-version": "2" } });
      expect(h.headers.get("vary")).toMatch(/API-Version/i);
    });

    it("/v2/employees links stay on /v2; POST with firstName/lastName → 201", async () => {
      const res = await api("/v2/employees", {
        method: "POST",
        json: {
          firstName: "Mary",
          lastName: "Jackson",
          email: "mary.jackson@example.com",
          department: "Engineering",
          city: "Berlin",
          salary: 90000,
        },
      });
      expect(res.status).toBe(201);
      expect(res.headers.get("location")).toMatch(/\/v2\/employees\/\d+$/);
      const v1 = (await (
        await api(new URL(res.headers.get("location") ?? "").pathname.replace("/v2", ""))
      ).json()) as {
        name: string;
      };
      expect(v1.name).toBe("Mary Jackson");
    });

    it("GET /v2/, /v2/departments and /v2/departments/1 → every link stays on /v2, employees too", async () => {
      const root = (await (await api("/v2/")).json()) as { _links: Record<string, { href: string }> };
      expect(new URL(root._links.self?.href ?? "").pathname).toBe("/v2/");
      expect(new URL(root._links.employees?.href ?? "").pathname).toBe("/v2/employees");
      const department = (await (await api("/v2/departments/1")).json()) as {
        _links: Record<string, { href: string }>;
      };
      const employees = new URL(department._links.employees?.href ?? "");
      expect(employees.pathname).toBe("/v2/employees");
      // Following the link gives version 2, as the client asked for.
      const page = (await (await api(`${employees.pathname}${employees.search}`)).json()) as {
        _embedded: { employees: Array<Record<string, unknown>> };
      };
      expect(page._embedded.employees[0]).toHaveProperty("firstName");
      // Through a version-neutral resource too: /v2/ → departments → a department → its employees.
      const departments = new URL(root._links.departments?.href ?? "");
      expect(departments.pathname).toBe("/v2/departments");
      const listed = (await (await api(`${departments.pathname}?size=1`)).json()) as {
        _embedded: { departments: Array<{ _links: Record<string, { href: string }> }> };
      };
      const first = listed._embedded.departments[0]?._links;
      expect(new URL(first?.self?.href ?? "").pathname).toMatch(/^\/v2\/departments\/\d+$/);
      expect(new URL(first?.employees?.href ?? "").pathname).toBe("/v2/employees");
      // Unversioned requests keep unversioned links.
      const plain = (await (await api("/departments/1")).json()) as {
        _links: Record<string, { href: string }>;
      };
      expect(new URL(plain._links.employees?.href ?? "").pathname).toBe("/employees");
    });

    it("API-Version: 9 → 400; /v9/employees → 404; Accept vnd.svc.v9+json → 406", async () => {
      expect((await api("/employees", { headers: { "api-version": "9" } })).status).toBe(400);
      expect((await api("/v9/employees")).status).toBe(404);
      expect((await api("/employees", { headers: { accept: "application/vnd.svc.v9+json" } })).status).toBe(
        406,
      );
    });
  });

  describe("idempotency (part 4.3)", () => {
    it("the same POST twice with one Idempotency-Key → one creation, the replay flagged", async () => {
      const init = {
        method: "POST",
        headers: { "idempotency-key": "dep-1" },
        json: { name: "Legal", city: "Rome" },
      };
      const first = await api("/departments", init);
      expect(first.status).toBe(201);
      const second = await api("/departments", init);
      expect(second.status).toBe(201);
      expect(second.headers.get("idempotent-replayed")).toBe("true");
      expect(second.headers.get("location")).toBe(first.headers.get("location"));
      const list = (await (await api("/departments?name=Legal")).json()) as {
        page: { totalElements: number };
      };
      expect(list.page.totalElements).toBe(1);
    });

    it("same key, other body → 422", async () => {
      const res = await api("/departments", {
        method: "POST",
        headers: { "idempotency-key": "dep-1" },
        json: { name: "Legal 2", city: "Rome" },
      });
      expect(res.status).toBe(422);
    });

    it("POST /payments or /transfers without Idempotency-Key → 400", async () => {
      expect(
        (await api("/payments", { method: "POST", json: { orderId: 1, amount: 1, method: "card" } })).status,
      ).toBe(400);
      expect(
        (await api("/transfers", { method: "POST", json: { fromAccountId: 1, toAccountId: 2, amount: 1 } }))
          .status,
      ).toBe(400);
    });
  });

  describe("cross-cutting", () => {
    it("security headers and X-Correlation-ID on success, errors alike", async () => {
      for (const path of ["/employees/1", "/employees/999999", "/nowhere"]) {
        const res = await api(path, { headers: { "x-correlation-id": "trace-123" } });
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
        expect(res.headers.get("x-frame-options")).toBeTruthy();
        expect(res.headers.get("content-security-policy")).toBeTruthy();
        expect(res.headers.get("x-correlation-id")).toBe("trace-123");
      }
      const generated = await api("/employees/1");
      expect(generated.headers.get("x-correlation-id")).toMatch(/^[0-9a-f-]{36}$/);
    });

    it("CORS: an allowed origin is echoed, another is not", async () => {
      const ok = await api("/employees/1", { headers: { origin: "https://app.example.com" } });
      expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      const no = await api("/employees/1", { headers: { origin: "https://evil.example" } });
      expect(no.headers.get("access-control-allow-origin")).toBeNull();
    });

    it("rate-limit headers on every API response", async () => {
      const res = await api("/employees/1");
      expect(res.headers.get("x-ratelimit-limit")).toBe("100");
      expect(Number(res.headers.get("x-ratelimit-remaining"))).toBeLessThan(100);
      expect(res.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
    });

    it("Cache-Control: max-age on catalogue data, no-store on accounts and transfers", async () => {
      expect((await api("/products")).headers.get("cache-control")).toMatch(/max-age=\d+/);
      expect((await api("/categories/1")).headers.get("cache-control")).toMatch(/max-age=\d+/);
      expect((await api("/accounts/1")).headers.get("cache-control")).toBe("no-store");
      expect((await api("/transfers")).headers.get("cache-control")).toBe("no-store");
    });

    // RFC 9111 §3.5: a shared cache MUST NOT reuse a response to a request with Authorization
    // unless the response allows it (public, s-maxage, must-revalidate). Every catalogue request
    // carries credentials (spec part 5 rule 4: none → 401), so such a directive would let a proxy
    // hand the catalogue to a client that never authenticated.
    it("catalogue data may be kept by the client's own cache only: private, no public or s-maxage", async () => {
      for (const path of ["/products", "/products/1", "/categories", "/categories/1"]) {
        const cc = (await api(path)).headers.get("cache-control") ?? "";
        expect(cc, path).toMatch(/(?:^|,\s*)private(?:,|$)/);
        expect(cc, path).not.toMatch(/public|s-maxage|must-revalidate/);
      }
    });

    it("/health and /ready → 200 without credentials", async () => {
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
      const ready = await fetch(`${s.url}/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ checks: { database: "UP" } });
    });

    it("/openapi.json is OpenAPI 3.1 with the employee paths and zod-generated schemas", async () => {
      const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as {
        openapi: string;
        paths: Record<string, Record<string, unknown>>;
        components: { schemas: Record<string, { required?: string[] }> };
      };
      expect(doc.openapi).toBe("3.1.0");
      expect(Object.keys(doc.paths["/employees"] ?? {})).toEqual(expect.arrayContaining(["get", "post"]));
      expect(Object.keys(doc.paths["/employees/{id}"] ?? {})).toEqual(
        expect.arrayContaining(["get", "put", "patch", "delete"]),
      );
      expect(doc.components.schemas.EmployeeInput?.required).toEqual(
        expect.arrayContaining(["name", "email", "department", "city", "salary"]),
      );
    });

    it("/docs is an HTML page whose scripts and styles are all local", async () => {
      const res = await fetch(`${s.url}/docs`);
      expect(res.status).toBe(200);
      const page = await res.text();
      const refs = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
      expect(refs.length).toBeGreaterThan(0);
      for (const ref of refs) {
        expect(ref.startsWith("/")).toBe(true);
        expect((await fetch(`${s.url}${ref}`)).status).toBe(200);
      }
    });

    // The assets directory has no index: a redirect to "/docs/assets/" would only lead to a 404
    // naming a path the client never sent. The directory itself is a plain 404 error record.
    for (const path of ["/docs/assets", "/docs/assets/"]) {
      it(`GET ${path} → 404 error record for that path, no redirect`, async () => {
        const res = await fetch(`${s.url}${path}`, { redirect: "manual" });
        expect(res.status).toBe(404);
        expect(res.headers.get("location")).toBeNull();
        expect(((await res.json()) as { path?: string }).path).toBe(path);
      });
    }

    // RFC 9110 §15.4.5: a 304 carries the Vary its 200 would. res.sendFile and express.static
    // (send) remove Content-Type before a 304, on which @svc/negotiate decided Vary.
    for (const path of ["/docs", "/docs/init.js", "/docs/assets/swagger-ui.css"]) {
      for (const coding of ["gzip", "identity"]) {
        it(`${path} revalidated with Accept-Encoding: ${coding} → 304 with the Vary of its 200`, async () => {
          const first = await rawGet(`${s.url}${path}`, { "accept-encoding": coding });
          expect(first.status).toBe(200);
          expect(first.vary).toContain("Accept-Encoding");
          const validator: Record<string, string> = first.etag
            ? { "if-none-match": first.etag }
            : { "if-modified-since": first.lastModified ?? "" };
          const second = await rawGet(`${s.url}${path}`, { "accept-encoding": coding, ...validator });
          expect(second.status).toBe(304);
          expect(second.vary).toBe(first.vary);
        });
      }
    }
  });
});

describe("limits and failures (parts 7 and 8)", () => {
  it("over RATE_LIMIT_MAX → 429 with Retry-After and the error record", async () => {
    const s = await sqlite.start({ RATE_LIMIT_MAX: "3", RATE_LIMIT_WINDOW_SECONDS: "60" });
    try {
      const api = client(s.url);
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await api("/departments")).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const res = await api("/departments");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await res.json()).toMatchObject({ status: 429, error: "Too Many Requests" });
    } finally {
      await s.stop();
    }
  });

  it("a database that cannot be reached → 503 with Retry-After, and /ready → 503", async () => {
    const s = await sqlite.start();
    try {
      await s.service.db.close();
      const res = await client(s.url)("/employees");
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      const ready = await fetch(`${s.url}/ready`);
      expect(ready.status).toBe(503);
      expect(ready.headers.get("retry-after")).toBe("5");
      expect(await ready.json()).toMatchObject({
        status: 503,
        error: "Service Unavailable",
        path: "/ready",
        checks: { database: "DOWN", redis: "not used" },
      });
    } finally {
      s.service.server.closeAllConnections();
      await new Promise((r) => s.service.server.close(r));
    }
  });

  it("PostgreSQL that refuses connections → 503 with Retry-After, never a 500", async () => {
    const config = loadConfig({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/none`,
      LOG_LEVEL: "silent",
      ...frameworkEnv(),
    });
    if (config.database.kind !== "postgres") throw new Error("expected a postgres configuration");
    const db = createDatabase(config.database);
    const stores = createStores(undefined);
    const deps = {
      db,
      logger: createLogger({ logLevel: "silent" }),
      background: new Background(),
      security: await createSecurity(config),
      stores,
    };
    // The service's start-up would stop at the migration: the app alone, on the framework it names.
    let server: Listening;
    if (config.framework === "fastify") {
      let made: Server | undefined;
      const app = createFastifyApp(config, deps, (handler) => {
        made = createServer(handler);
        return made;
      });
      await app.ready();
      server = await listenOn(made as Server);
    } else {
      server = await listen(createApp(config, deps));
    }
    watchResponses(server.server);
    try {
      const res = await client(server.url)("/employees");
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await res.json()).toMatchObject({ status: 503, error: "Service Unavailable" });
      expect((await fetch(`${server.url}/ready`)).status).toBe(503);
    } finally {
      await server.close();
      await db.close();
    }
  });
});

/** A GET through node:http: fetch() sends `Cache-Control: no-cache`, to which send never answers 304. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; vary: string; etag?: string; lastModified?: string }>(
    (resolve, reject) => {
      httpGet(url, { headers }, (res) => {
        res.resume();
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            vary: String(res.headers.vary ?? ""),
            ...(res.headers.etag ? { etag: res.headers.etag } : {}),
            ...(res.headers["last-modified"] ? { lastModified: res.headers["last-modified"] } : {}),
          }),
        );
      }).on("error", reject);
    },
  );
}
