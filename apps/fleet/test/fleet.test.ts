import { createHash, randomBytes, randomUUID } from "node:crypto";
import { connect } from "node:net";
import { type RedisCluster, redisCluster } from "@svc/test-utils";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../src/build.js";
import { type Fleet, startFleet } from "../src/fleet.js";
import { basic, call, type Reply } from "../src/http.js";
import { fleetServices } from "./setup.js";

const services = fleetServices();

const WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
const WSU = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
const WSS_PROFILE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0";
const WSS_BASE64 =
  "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary";

/** Idempotency-Key case: concurrent POSTs, and rounds of retries for the ones told 503. */
const CONCURRENT = 50;
const RETRY_ROUNDS = 3;

/**
 * The fleet-wide rate limit: per principal, else per client address. It admits every request the
 * Idempotency-Key case can send as one principal (a token, then each POST and its retries), so
 * that case never meets the limit, whatever number of 503s a loaded machine hands out.
 */
const L = 1 + CONCURRENT * (1 + RETRY_ROUNDS);

/** The same suite on a throw-away 3-master Redis Cluster (only started when the fleet can run). */
const cluster = services ? await redisCluster({ masters: 3 }) : undefined;

/**
 * Three reference-server processes sharing PostgreSQL and Redis behind nginx (round-robin,
 * `X-Forwarded-*` set, connections from 127.0.0.2, the only address the instances trust).
 * Test clients connect from other 127.x addresses, so each is a distinct real client. It runs
 * twice: on the shared Redis (`REDIS_URL`) and on a Redis Cluster (`REDIS_CLUSTER_NODES`).
 */
function fleetSuite(
  title: string,
  redis: { redisUrl: string } | { redisClusterNodes: readonly string[] } | undefined,
  label: string,
  after?: () => Promise<void>,
) {
  describe.skipIf(!services || !redis)(title, () => {
    let fleet: Fleet;
    let proxyUrl: string;

    beforeAll(async () => {
      ensureBuilt();
      fleet = await startFleet({
        databaseUrl: services?.databaseUrl ?? "",
        ...redis,
        label,
        env: {
          RATE_LIMIT_MAX: String(L),
          RATE_LIMIT_WINDOW_SECONDS: "600",
          DEMO_USERS:
            "admin:admin:admin,idem:idem:admin,occ:occ:admin,links:links:admin,hostile:hostile:admin,reader:reader:reader",
          // Short, so the slow-client cases below end within seconds.
          HEADERS_TIMEOUT_SECONDS: "3",
          REQUEST_TIMEOUT_SECONDS: "3",
        },
      });
      proxyUrl = fleet.proxy?.url ?? "";
    }, 180_000);

    afterAll(async () => {
      await fleet?.close();
      await after?.();
    }, 30_000);

    afterEach((context) => {
      if (context.task.result?.state === "fail") console.error(fleet?.diagnostics());
    });

    /**
     * Which instance logged each correlation id (its access log line). A line may reach the
     * pipe a moment after its response, so this waits up to two seconds for all of them.
     */
    async function servedBy(ids: readonly string[]): Promise<Map<string, number>> {
      const deadline = Date.now() + 2000;
      for (;;) {
        const counts = new Map<string, number>();
        for (const id of ids) {
          const instance = fleet.instances.find((i) => i.output().includes(`"correlationId":"${id}"`));
          const name = instance?.name ?? "nobody";
          counts.set(name, (counts.get(name) ?? 0) + 1);
        }
        if (!counts.has("nobody") || Date.now() > deadline) return counts;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    describe("rate limit across the fleet", () => {
      it(`${L + 6} concurrent anonymous requests from one client through nginx → exactly ${L} admitted, whichever instance serves`, async () => {
        const ids = Array.from({ length: L + 6 }, () => randomUUID());
        const replies = await Promise.all(
          ids.map((id) =>
            call(`${proxyUrl}/employees`, { localAddress: "127.0.0.3", headers: { "x-correlation-id": id } }),
          ),
        );
        const limited = replies.filter((r) => r.status === 429);
        // Anonymous reads are counted, then refused by the authorization check.
        expect(replies.filter((r) => r.status === 401)).toHaveLength(L);
        expect(limited).toHaveLength(6);
        for (const r of limited) {
          expect(Number(r.header("retry-after"))).toBeGreaterThan(0);
          expect(r.json()).toMatchObject({ status: 429, path: "/employees" });
        }
        expect([...(await servedBy(ids)).keys()].sort()).toEqual(fleet.instances.map((i) => i.name).sort());
        // The key is the real client address that nginx reported, not nginx's own.
        const keys = await fleet.redisKeys();
        expect(keys.some((k) => k.includes("127.0.0.3"))).toBe(true);
        expect(keys.some((k) => k.includes("127.0.0.2"))).toBe(false);
      });

      it("another client address through nginx has its own budget; its X-Forwarded-For is not believed", async () => {
        const first = await call(`${proxyUrl}/employees`, { localAddress: "127.0.0.4" });
        expect(first.status).toBe(401);
        expect(first.header("x-ratelimit-remaining")).toBe(String(L - 1));
        // nginx appends the address it saw; the instance takes the last untrusted hop, not this claim.
        const forged = await call(`${proxyUrl}/employees`, {
          localAddress: "127.0.0.4",
          headers: { "x-forwarded-for": "10.9.9.9" },
        });
        expect(forged.header("x-ratelimit-remaining")).toBe(String(L - 2));
        const still = await call(`${proxyUrl}/employees`, { localAddress: "127.0.0.3" });
        expect(still.status).toBe(429);
        expect((await fleet.redisKeys()).some((k) => k.includes("10.9.9.9"))).toBe(false);
      });

      it("X-Forwarded-For sent straight to an instance is not trusted: the key is the connection's address", async () => {
        const [a, b] = fleet.instances;
        const one = await call(`${a?.url}/employees`, {
          localAddress: "127.0.0.5",
          headers: { "x-forwarded-for": "10.8.8.8" },
        });
        const two = await call(`${b?.url}/employees`, {
          localAddress: "127.0.0.5",
          headers: { "x-forwarded-for": "10.7.7.7" },
        });
        expect(one.header("x-ratelimit-remaining")).toBe(String(L - 1));
        expect(two.header("x-ratelimit-remaining")).toBe(String(L - 2));
        const keys = await fleet.redisKeys();
        expect(keys.some((k) => k.includes("127.0.0.5"))).toBe(true);
        expect(keys.some((k) => k.includes("10.8.8.8") || k.includes("10.7.7.7"))).toBe(false);
      });
    });

    it(`${CONCURRENT} concurrent POSTs with one Idempotency-Key over the fleet → one review created; the rest 409 or a faithful replay`, async () => {
      const author = `idem-${randomUUID()}`;
      const key = randomUUID();
      const ids = Array.from({ length: CONCURRENT }, () => randomUUID());
      // A Bearer token, verified once per instance: 50 Basic checks at once would each hash the
      // password, and past the verification slots an instance sheds them with a 503, which is
      // its overload answer, not what this test is about.
      const issued = await call(`${proxyUrl}/auth/token`, {
        method: "POST",
        localAddress: "127.0.0.6",
        headers: { authorization: basic("idem") },
      });
      expect(issued.status).toBe(200);
      const authorization = `Bearer ${issued.json<{ access_token: string }>().access_token}`;
      const send = (id: string) =>
        call(`${proxyUrl}/products/1/reviews`, {
          method: "POST",
          localAddress: "127.0.0.6",
          headers: { authorization, "idempotency-key": key, "x-correlation-id": id },
          body: { author, rating: 4, comment: "fleet" },
        });
      const replies = await Promise.all(ids.map(send));
      // A 503 with Retry-After is an instance's overload answer (on a loaded machine a claim can
      // wait past the key store's limit): a client sends the same request again when told, and
      // these do, so it ends as one of the outcomes below like the rest.
      for (let round = 0; round < RETRY_ROUNDS; round++) {
        const unavailable = ids.flatMap((_, i) => (replies[i]?.status === 503 ? [i] : []));
        if (unavailable.length === 0) break;
        let wait = 0;
        for (const i of unavailable) {
          const r = replies[i] as Reply;
          expect(r.json(), r.body).toMatchObject({ status: 503 });
          const after = Number(r.header("retry-after"));
          expect(after, r.body).toBeGreaterThan(0);
          wait = Math.max(wait, Math.min(after, 5));
        }
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
        const again = await Promise.all(unavailable.map((i) => send(ids[i] as string)));
        unavailable.forEach((i, k) => {
          replies[i] = again[k] as Reply;
        });
      }
      expect([...(await servedBy(ids)).keys()].sort()).toEqual(fleet.instances.map((i) => i.name).sort());
      const fresh = replies.filter((r) => r.status === 201 && r.header("idempotent-replayed") === undefined);
      expect(fresh).toHaveLength(1);
      const original = fresh[0] as Reply;
      const others = replies.filter((r) => r !== original);
      for (const r of others) {
        if (r.status === 409) {
          expect(r.json()).toMatchObject({ status: 409 });
          expect(r.header("retry-after")).toBeDefined();
          continue;
        }
        expect(r.status, r.body).toBe(201);
        expect(r.header("idempotent-replayed")).toBe("true");
        expect(r.header("location")).toBe(original.header("location"));
        expect(r.header("etag")).toBe(original.header("etag"));
        expect(r.body).toBe(original.body);
      }
      const rows = await fleet.query("select id from reviews where author = $1", [author]);
      expect(rows).toHaveLength(1);
      expect(original.header("location")).toBe(`${proxyUrl}/products/1/reviews/${rows[0]?.id}`);
    });

    it("concurrent PUTs with the same If-Match on different instances → exactly one 200, the rest 412", async () => {
      const name = `occ-${randomUUID()}`;
      const auth = { authorization: basic("occ") };
      const created = await call(`${proxyUrl}/departments`, {
        method: "POST",
        headers: auth,
        body: { name, city: "Oslo" },
      });
      expect(created.status).toBe(201);
      const path = new URL(created.header("location") ?? "").pathname;
      const current = await call(`${proxyUrl}${path}`, { headers: auth });
      const etag = current.header("etag") ?? "";
      expect(etag).toMatch(/^"/);
      // Through nginx: the tag belongs to the representation with the proxy's links, and round-robin
      // hands the PUTs to every instance.
      const ids = Array.from({ length: 12 }, () => randomUUID());
      const replies = await Promise.all(
        ids.map((id, i) =>
          call(`${proxyUrl}${path}`, {
            method: "PUT",
            headers: { ...auth, "if-match": etag, "x-correlation-id": id },
            body: { name: `${name}-${i}`, city: "Bergen" },
          }),
        ),
      );
      expect((await servedBy(ids)).size).toBe(fleet.instances.length);
      const statuses = replies.map((r) => r.status).sort();
      expect(statuses).toEqual([200, ...Array(11).fill(412)]);
      const winner = replies.find((r) => r.status === 200)?.json<{ name: string }>().name;
      const rows = await fleet.query<{ name: string }>("select name from departments where name like $1", [
        `${name}%`,
      ]);
      // No lost update: the stored row is the one the single 200 reported.
      expect(rows.map((r) => r.name)).toEqual([winner]);
    });

    it("a Bearer token issued through nginx is accepted by every instance (one JWT_PRIVATE_KEY for the fleet)", async () => {
      const issued = await call(`${proxyUrl}/auth/token`, {
        method: "POST",
        localAddress: "127.0.0.6",
        headers: { authorization: basic("links") },
      });
      expect(issued.status).toBe(200);
      const bearer = { authorization: `Bearer ${issued.json<{ access_token: string }>().access_token}` };
      for (const instance of fleet.instances) {
        const reply = await call(`${instance.url}/departments/1`, {
          localAddress: "127.0.0.6",
          headers: bearer,
        });
        expect([instance.name, reply.status]).toEqual([instance.name, 200]);
      }
    });

    it("a WS-Security UsernameToken message replayed on another instance is refused (one nonce store for the fleet)", async () => {
      // WS-Security UsernameToken Profile 1.1 §4.1: the receiver keeps the nonces it has seen.
      // A message captured once must not be accepted again by any instance of the fleet.
      const nonce = randomBytes(16);
      const created = new Date().toISOString();
      const digest = createHash("sha1").update(nonce).update(created).update("admin").digest("base64");
      const envelope = `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:c="http://svc.example.com/ws/customer/v1" xmlns:wsse="${WSSE}" xmlns:wsu="${WSU}"><env:Header><wsse:Security env:mustUnderstand="true"><wsse:UsernameToken><wsse:Username>admin</wsse:Username><wsse:Password Type="${WSS_PROFILE}#PasswordDigest">${digest}</wsse:Password><wsse:Nonce EncodingType="${WSS_BASE64}">${nonce.toString("base64")}</wsse:Nonce><wsu:Created>${created}</wsu:Created></wsse:UsernameToken></wsse:Security></env:Header><env:Body><c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest></env:Body></env:Envelope>`;
      const statuses: number[] = [];
      const bodies: string[] = [];
      for (const instance of fleet.instances) {
        const reply = await call(`${instance.url}/ws/customer`, {
          method: "POST",
          localAddress: "127.0.0.7",
          headers: { "content-type": "application/soap+xml; charset=utf-8" },
          body: envelope,
        });
        statuses.push(reply.status);
        bodies.push(reply.body);
      }
      expect(statuses).toEqual([200, 400, 400]);
      for (const body of bodies.slice(1)) expect(body).toContain("FailedAuthentication");
    });

    describe("links carry the proxy's scheme and host", () => {
      it("through nginx's TLS listener: self links, Location and the WSDL address are https://localhost:<port>", async () => {
        const proxy = fleet.proxy;
        if (!proxy) throw new Error("no proxy");
        const { httpsUrl, ca } = proxy;
        const auth = { authorization: basic("links") };
        const item = await call(`${httpsUrl}/departments/1`, { ca, headers: auth });
        expect(item.status).toBe(200);
        expect(item.json<{ _links: { self: { href: string } } }>()._links.self.href).toBe(
          `${httpsUrl}/departments/1`,
        );
        const created = await call(`${httpsUrl}/departments`, {
          ca,
          method: "POST",
          headers: auth,
          body: { name: `links-${randomUUID()}`, city: "Oslo" },
        });
        expect(created.status).toBe(201);
        expect(created.header("location")).toMatch(new RegExp(`^${httpsUrl}/departments/\\d+$`));
        const wsdl = await call(`${httpsUrl}/ws/customer?wsdl`, { ca });
        expect(wsdl.status).toBe(200);
        expect(wsdl.body).toMatch(new RegExp(`<soap12:address location="${httpsUrl}/ws/customer"`));
      });

      it("through nginx's plain listener the links are http://127.0.0.1:<proxy port>, never an instance's", async () => {
        const page = await call(`${proxyUrl}/departments?size=1`, {
          headers: { authorization: basic("links") },
        });
        expect(page.status).toBe(200);
        const self = page.json<{ _links: { self: { href: string } } }>()._links.self.href;
        expect(self.startsWith(`${proxyUrl}/departments`)).toBe(true);
        for (const i of fleet.instances) expect(page.body).not.toContain(`:${i.port}/`);
      });

      it("X-Forwarded-Host/Proto sent straight to an instance are ignored", async () => {
        const instance = fleet.instances[0];
        const item = await call(`${instance?.url}/departments/1`, {
          headers: {
            authorization: basic("links"),
            "x-forwarded-host": "evil.example",
            "x-forwarded-proto": "https",
          },
        });
        expect(item.json<{ _links: { self: { href: string } } }>()._links.self.href).toBe(
          `${instance?.url}/departments/1`,
        );
      });
    });
    describe("hostile cases through nginx (issue 17)", () => {
      const admin = { authorization: basic("hostile") };

      it("Strict-Transport-Security on nginx's TLS listener, never on its plain one nor for a forged X-Forwarded-Proto", async () => {
        const proxy = fleet.proxy;
        if (!proxy) throw new Error("no proxy");
        const tls = await call(`${proxy.httpsUrl}/health`, { ca: proxy.ca });
        expect(tls.status).toBe(200);
        expect(tls.header("strict-transport-security")).toMatch(/^max-age=\d+/);
        const plain = await call(`${proxyUrl}/health`);
        expect(plain.status).toBe(200);
        expect(plain.header("x-content-type-options")).toBe("nosniff");
        expect(plain.header("strict-transport-security")).toBeUndefined();
        // nginx overwrites X-Forwarded-Proto with the scheme it saw.
        const forged = await call(`${proxyUrl}/health`, { headers: { "x-forwarded-proto": "https" } });
        expect(forged.header("strict-transport-security")).toBeUndefined();
        const direct = await call(`${fleet.instances[0]?.url}/health`, {
          headers: { "x-forwarded-proto": "https" },
        });
        expect(direct.header("strict-transport-security")).toBeUndefined();
      });

      it("POST /Transfers, /TRANSFERS, /transfers/ without Idempotency-Key through nginx → 404, no transfer", async () => {
        const [{ count: before = "0" } = {}] = await fleet.query<{ count: string }>(
          "select count(*) from transfers",
        );
        for (const path of ["/Transfers", "/TRANSFERS", "/transfers/", "/v1/Transfers", "/Payments"]) {
          const reply = await call(`${proxyUrl}${path}`, {
            method: "POST",
            headers: admin,
            body: { fromAccountId: 1, toAccountId: 2, amount: 1 },
          });
          expect([path, reply.status]).toEqual([path, 404]);
        }
        const [{ count: after = "0" } = {}] = await fleet.query<{ count: string }>(
          "select count(*) from transfers",
        );
        expect(after).toBe(before);
        const keyless = await call(`${proxyUrl}/transfers`, {
          method: "POST",
          headers: admin,
          body: { fromAccountId: 1, toAccountId: 2, amount: 1 },
        });
        expect(keyless.status).toBe(400);
      });

      it("one Idempotency-Key over four spellings of /transfers through nginx → one transfer row", async () => {
        const [{ count: before = "0" } = {}] = await fleet.query<{ count: string }>(
          "select count(*) from transfers",
        );
        const key = randomUUID();
        const statuses: number[] = [];
        for (const path of ["/transfers", "/Transfers", "/transfers/", "/TRANSFERS"]) {
          const reply = await call(`${proxyUrl}${path}`, {
            method: "POST",
            headers: { ...admin, "idempotency-key": key },
            body: { fromAccountId: 1, toAccountId: 2, amount: 1 },
          });
          statuses.push(reply.status);
        }
        expect(statuses).toEqual([202, 404, 404, 404]);
        const [{ count: after = "0" } = {}] = await fleet.query<{ count: string }>(
          "select count(*) from transfers",
        );
        expect(Number(after)).toBe(Number(before) + 1);
      });

      it("a Host of 3,049 characters through nginx → 400 error record from the instance, not 500", async () => {
        const reply = await call(`${proxyUrl}/orders/1/tracking`, {
          headers: { ...admin, host: `${"a.".repeat(1524)}a`, accept: "image/png" },
        });
        expect(reply.status).toBe(400);
        expect(reply.json()).toMatchObject({ status: 400 });
      });

      it("the reader's POST /nonexistent through nginx → 404, not 403; POST /departments → 403", async () => {
        const reader = { authorization: basic("reader") };
        expect(
          (await call(`${proxyUrl}/nonexistent`, { method: "POST", headers: reader, body: {} })).status,
        ).toBe(404);
        expect(
          (await call(`${proxyUrl}/departments`, { method: "POST", headers: reader, body: {} })).status,
        ).toBe(403);
      });

      it.each(["constructor=x", "toString=1", "__proto__=x"])(
        "GET /customers?%s through nginx → 400",
        async (query) => {
          const reply = await call(`${proxyUrl}/customers?${query}`, { headers: admin });
          expect(reply.status).toBe(400);
        },
      );

      it("a body that stalls after the headers, sent to an instance → 408 error record with security headers within REQUEST_TIMEOUT_SECONDS", async () => {
        const instance = fleet.instances[1];
        if (!instance) throw new Error("no instance");
        const { port } = new URL(instance.url);
        const started = Date.now();
        const text = await stalled(
          Number(port),
          `POST /departments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basic("hostile")}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"`,
        );
        const ms = Date.now() - started;
        expect(text).toMatch(/^HTTP\/1\.1 408 /);
        expect(text).toMatch(/^X-Content-Type-Options: nosniff\r$/im);
        expect(text).toMatch(/^Connection: close\r$/im);
        expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toMatchObject({ status: 408 });
        expect(ms).toBeGreaterThanOrEqual(2900);
        expect(ms).toBeLessThan(10_000);
      }, 20_000);

      it("headers that stall, sent to an instance → 408 error record within HEADERS_TIMEOUT_SECONDS", async () => {
        const { port } = new URL(fleet.instances[2]?.url ?? "");
        const started = Date.now();
        const text = await stalled(Number(port), "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
        expect(text).toMatch(/^HTTP\/1\.1 408 /);
        expect(text).toMatch(/^Content-Security-Policy: /im);
        expect(Date.now() - started).toBeLessThan(10_000);
      }, 20_000);

      it("a body that stalls through nginx → nginx gives up (client_body_timeout), no instance holds it", async () => {
        const { port } = new URL(proxyUrl);
        const started = Date.now();
        const text = await stalled(
          Number(port),
          `POST /departments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basic("hostile")}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"`,
        );
        // nginx buffers request bodies before it picks an instance, and closes the connection
        // after its client_body_timeout; the instances never see the request.
        expect(text === "" || /^HTTP\/1\.1 408 /.test(text)).toBe(true);
        expect(Date.now() - started).toBeLessThan(15_000);
      }, 30_000);
    });
  });
}

fleetSuite(
  "a fleet of three instances behind nginx",
  services ? { redisUrl: services.redisUrl } : undefined,
  "fleet",
);
fleetSuite(
  "a fleet of three instances behind nginx, on a 3-master Redis Cluster",
  cluster ? { redisClusterNodes: cluster.seeds } : undefined,
  "fleet-cluster",
  () => (cluster as RedisCluster).stop(),
);

/** Writes `sent` on a new connection and nothing more; resolves with all the server wrote once it closes. */
function stalled(port: number, sent: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (c: Buffer) => {
      text += c.toString("latin1");
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
    socket.write(sent, "latin1");
  });
}
