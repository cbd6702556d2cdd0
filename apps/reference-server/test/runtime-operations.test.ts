import { generateKeyPairSync, type KeyObject, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serviceUrl } from "@svc/test-utils";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { createLogger, type Service, startService } from "../src/server.js";
import { ADMIN, client, frameworkEnv, watchResponses } from "./harness.js";

const postgresUrl = (() => {
  const url = serviceUrl("DATABASE_URL");
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
})();

/** The environment of a service started in this process: any port, silent logs, in-memory SQLite unless `env` says otherwise. */
function serviceEnv(env: Record<string, string>): Record<string, string> {
  return { PORT: "0", ...frameworkEnv(), DATABASE_URL: "sqlite::memory:", LOG_LEVEL: "silent", ...env };
}

/** A service started in this process with {@link serviceEnv}, its responses checked against /openapi.json. */
async function startQuiet(env: Record<string, string>): Promise<Service> {
  const service = await startService(loadConfig(serviceEnv(env)), {
    logger: createLogger({ logLevel: "silent" }),
  });
  watchResponses(service.server as Server);
  return service;
}

/**
 * Runs `use` against a service started in this process on in-memory SQLite with `env` added
 * (silent logs, any port), then closes it, connections and all, whatever `use` did.
 */
async function withService(
  env: Record<string, string>,
  use: (service: Service) => Promise<void>,
): Promise<void> {
  const service = await startQuiet(env);
  try {
    await use(service);
  } finally {
    service.server.closeAllConnections();
    await service.close();
  }
}

/** The status of `POST /auth/token` as admin:admin. */
async function tokenStatus(service: Service): Promise<number> {
  const res = await fetch(`${service.url}/auth/token`, { method: "POST", headers: { authorization: ADMIN } });
  await res.arrayBuffer();
  return res.status;
}

async function sqlOn<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  try {
    return (await admin.query<T>(text, values)).rows;
  } finally {
    await admin.end();
  }
}

describe.runIf(postgresUrl)(
  'PostgreSQL URLs in the forms libpq accepts (PostgreSQL docs, libpq "Connection URIs")',
  () => {
    const schema = `svc_refops_${process.pid}_${randomBytes(4).toString("hex")}`;
    let service: Service | undefined;
    const others: Service[] = [];

    beforeAll(async () => {
      await sqlOn(`create schema ${schema}`);
    });
    afterAll(async () => {
      service?.server.closeAllConnections();
      await service?.close();
      await sqlOn(`drop schema if exists ${schema} cascade`);
    });

    it("DATABASE_URL with ?options=-c application_name=… and DATABASE_SCHEMA → tables in the schema, the URL's option still applied", async () => {
      const appName = `${schema}_app`;
      const url = new URL(postgresUrl as string);
      url.searchParams.set("options", `-c application_name=${appName}`);
      service = await startQuiet({ DATABASE_URL: url.toString(), DATABASE_SCHEMA: schema });
      const tables = await sqlOn<{ table_schema: string }>(
        "select table_schema from information_schema.tables where table_name = 'employees' and table_schema in ($1, 'public')",
        [schema],
      );
      expect(tables.map((t) => t.table_schema)).toEqual([schema]);
      const res = await client(service.url)("/employees?size=1");
      expect(res.status).toBe(200);
      const sessions = await sqlOn<{ n: string }>(
        "select count(*) as n from pg_stat_activity where application_name = $1",
        [appName],
      );
      expect(Number(sessions[0]?.n)).toBeGreaterThan(0);
    });

    it("DATABASE_URL postgresql:///<db>?host=…&port=…&user=… (no host in the authority) → starts and serves", async () => {
      const url = new URL(postgresUrl as string);
      const other = `${schema}_b`;
      await sqlOn(`create schema ${other}`);
      try {
        const started = await startQuiet({
          DATABASE_URL: `postgresql:///${url.pathname.slice(1)}?host=${url.hostname}&port=${url.port || "5432"}&user=${decodeURIComponent(url.username || "postgres")}`,
          DATABASE_SCHEMA: other,
        });
        others.push(started);
        const res = await client(started.url)("/employees?size=1");
        expect(res.status).toBe(200);
        started.server.closeAllConnections();
        await started.close();
      } finally {
        await sqlOn(`drop schema if exists ${other} cascade`);
      }
    });
  },
);

/** A raw HTTP/1.1 connection: what the server wrote, and whether it closed the connection. */
function rawConnection(url: string) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = "";
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    received += chunk;
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {});
  return {
    socket,
    closed,
    get received() {
      return received;
    },
    /** Resolves once `count` complete response heads have arrived. */
    heads(count: number) {
      return new Promise<void>((resolve) => {
        const check = () => {
          if (received.split("\r\n\r\n").length - 1 >= count) {
            socket.off("data", check);
            resolve();
          }
        };
        socket.on("data", check);
        check();
      });
    },
  };
}

describe("graceful shutdown closes keep-alive connections (RFC 9112 §9.6)", () => {
  it("a request in flight when shutdown starts → its response carries Connection: close and the server closes the connection", async () => {
    await withService({}, async (service) => {
      // An idle keep-alive connection (one answered request) and one with a request in flight.
      const idle = rawConnection(service.url);
      idle.socket.write("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n");
      await idle.heads(1);
      const busy = rawConnection(service.url);
      const body = JSON.stringify({ name: "Operations", city: "Oslo" });
      const arrived = new Promise((resolve) => service.server.once("request", resolve));
      busy.socket.write(
        `POST /departments HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 3)}`,
      );
      await arrived;
      const closing = service.close();
      await idle.closed;
      busy.socket.write(body.slice(3));
      await busy.heads(1);
      expect(busy.received).toMatch(/^HTTP\/1\.1 201 /);
      expect(busy.received).toMatch(/\r\nConnection: close\r\n/i);
      await busy.closed;
      await closing;
    });
  });

  it("a request sent on a kept-alive connection while shutdown drains → answered with Connection: close, then the connection is closed", async () => {
    await withService({}, async (service) => {
      const busy = rawConnection(service.url);
      const body = JSON.stringify({ name: "Logistics", city: "Oslo" });
      const arrived = new Promise((resolve) => service.server.once("request", resolve));
      // The first request's body is incomplete: the connection is busy when shutdown starts.
      busy.socket.write(
        `POST /departments HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 3)}`,
      );
      await arrived;
      const closing = service.close();
      // The rest of the body and, pipelined behind it, a second request.
      busy.socket.write(`${body.slice(3)}GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      await busy.closed;
      const responses = busy.received.match(/^HTTP\/1\.1 \d{3}/gm) ?? [];
      // At most one response after shutdown began, and none without Connection: close.
      expect(responses.length).toBe(1);
      expect(busy.received).not.toMatch(/\r\nConnection: keep-alive\r\n/i);
      await closing;
    });
  });
});

describe("configuration files that exist but cannot serve → start-up refused, naming the variable", () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-refops-"));
  const pem = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const pkcs8 = (key: KeyObject) => key.export({ type: "pkcs8", format: "pem" }).toString();
  const rsa = pem("rsa.pem", pkcs8(generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey));
  const p384 = pem("p384.pem", pkcs8(generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey));
  const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const p256Path = pem("p256.pem", pkcs8(p256.privateKey));
  const publicOnly = pem("public.pem", p256.publicKey.export({ type: "spki", format: "pem" }).toString());
  const garbage = pem("garbage.pem", "not a PEM file\n");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const refused = (env: Record<string, string>): string => {
    try {
      loadConfig(serviceEnv(env));
    } catch (err) {
      if (err instanceof ConfigError) return err.message;
      return `not a ConfigError: ${err instanceof Error ? err.message : String(err)}`;
    }
    return "accepted";
  };

  it.each([
    ["an RSA key", () => rsa],
    ["a P-384 key", () => p384],
    ["a public key", () => publicOnly],
    ["a directory", () => dir],
  ])("JWT_PRIVATE_KEY naming %s → refused with JWT_PRIVATE_KEY in the message", (_what, path) => {
    expect(refused({ JWT_PRIVATE_KEY: path() })).toMatch(
      /^Invalid configuration:\n {2}- JWT_PRIVATE_KEY file /,
    );
  });

  it("JWT_PRIVATE_KEY naming an RSA key: before, the service started and every POST /auth/token was a 500", async () => {
    // The same key accepted is a P-256 one: the token endpoint answers 200 with it.
    await withService({ JWT_PRIVATE_KEY: p256Path }, async (service) => {
      expect(await tokenStatus(service)).toBe(200);
    });
    expect(refused({ JWT_PRIVATE_KEY: rsa })).toMatch(/JWT_PRIVATE_KEY/);
  });

  it.each([
    ["directories", () => ({ TLS_CERT: dir, TLS_KEY: dir }), /TLS_CERT file .* cannot be read \(EISDIR\)/],
    [
      "not PEM",
      () => ({ TLS_CERT: garbage, TLS_KEY: garbage }),
      /TLS_CERT and TLS_KEY must be a PEM certificate/,
    ],
    [
      "a key without a certificate",
      () => ({ TLS_CERT: p256Path, TLS_KEY: p256Path }),
      /TLS_CERT and TLS_KEY/,
    ],
  ])("TLS_CERT and TLS_KEY naming %s → refused with the variables in the message", (_what, env, message) => {
    expect(refused(env())).toMatch(message);
  });
});

describe("values the check passed but start-up refused with no variable named", () => {
  it.each([
    [{ TRUST_PROXY: "10.0.0.0/99" }, /TRUST_PROXY must be/],
    [{ TRUST_PROXY: "::::::::/8" }, /TRUST_PROXY must be/],
    [{ TRUST_PROXY: "999.1.1.1" }, /TRUST_PROXY must be/],
    [{ REDIS_URL: "redis://127.0.0.1:99999" }, /REDIS_URL must be a valid/],
    [{ REDIS_URL: "redis://:6379" }, /REDIS_URL must be a valid/],
  ])("%j → a configuration problem naming the variable", async (env, message) => {
    let error: unknown;
    let service: Service | undefined;
    try {
      // Before: the configuration passed and start-up failed with proxy-addr's or ioredis' words.
      service = await startService(
        loadConfig({
          PORT: "0",
          ...frameworkEnv(),
          DATABASE_URL: "sqlite::memory:",
          LOG_LEVEL: "silent",
          ...env,
        }),
        {
          logger: createLogger({ logLevel: "silent" }),
        },
      );
    } catch (err) {
      error = err;
    } finally {
      service?.server.closeAllConnections();
      await service?.close();
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
  });

  it.each([
    [{ TRUST_PROXY: "10.0.0.0/8, 192.168.1.1, ::1/128, fc00::/7, loopback" }],
    [{ REDIS_URL: "rediss://user:p%40ss@redis.example.com:6380/2" }],
  ])("%j → accepted", (env) => {
    expect(() => loadConfig(env)).not.toThrow();
  });
});

/** A TCP relay to PostgreSQL that can go silent: connections stay open, nothing passes (a network partition). */
async function silentableRelay(target: URL) {
  const sockets = new Set<import("node:net").Socket>();
  let silent = false;
  const relay = createServer((downstream) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [downstream, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        downstream.destroy();
        upstream.destroy();
      });
    }
    downstream.on("data", (chunk) => silent || upstream.write(chunk));
    upstream.on("data", (chunk) => silent || downstream.write(chunk));
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const { port } = relay.address() as import("node:net").AddressInfo;
  return {
    port,
    silence() {
      silent = true;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => relay.close(resolve));
    },
  };
}

describe.runIf(postgresUrl)(
  "PostgreSQL goes silent (a partition: the connection stays open, no answer)",
  () => {
    it("GET /employees/1 and GET /ready → 503 with Retry-After and the error record, not requests that never end", async () => {
      const target = new URL(postgresUrl as string);
      const schema = `svc_refops_${process.pid}_${randomBytes(4).toString("hex")}`;
      await sqlOn(`create schema ${schema}`);
      const relay = await silentableRelay(target);
      const url = new URL(target);
      url.hostname = "127.0.0.1";
      url.port = String(relay.port);
      let service: Service | undefined;
      try {
        service = await startService(
          loadConfig({
            PORT: "0",
            ...frameworkEnv(),
            LOG_LEVEL: "silent",
            DATABASE_URL: url.toString(),
            DATABASE_SCHEMA: schema,
          }),
          { logger: createLogger({ logLevel: "silent" }) },
        );
        watchResponses(service.server as Server);
        expect((await fetch(`${service.url}/ready`)).status).toBe(200);
        relay.silence();
        // The pool's idle connection is the one a resource request takes first.
        const read = await client(service.url)("/employees/1");
        expect(read.status).toBe(503);
        expect(read.headers.get("retry-after")).toBe("5");
        const res = await fetch(`${service.url}/ready`);
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("5");
        expect(await res.json()).toMatchObject({ status: 503, path: "/ready", checks: { database: "DOWN" } });
      } finally {
        await relay.close();
        service?.server.closeAllConnections();
        await service?.close();
        await sqlOn(`drop schema if exists ${schema} cascade`);
      }
    }, 40_000);
  },
);

describe("NODE_ENV spelled with whitespace or capitals is still production: no demo users", () => {
  it.each(["production ", " production", "Production", "PRODUCTION\n"])(
    "NODE_ENV=%j → POST /auth/token as admin:admin → 401",
    async (nodeEnv) => {
      await withService({ NODE_ENV: nodeEnv }, async (service) => {
        expect(await tokenStatus(service)).toBe(401);
      });
    },
  );
});
