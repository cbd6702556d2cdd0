import { randomBytes } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
import { freePort, serviceUrl } from "@svc/test-utils";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, startService } from "../src/server.js";
import { frameworkEnv } from "./harness.js";

/**
 * A service started while its PostgreSQL does not answer yet (a failover, both restarted at once,
 * a host too busy to connect in 2 s) waits for it, with backoff, instead of exiting: its database
 * is reached through a forwarder that starts listening only after the service has begun.
 */
const postgresUrl = (() => {
  const url = serviceUrl("DATABASE_URL");
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
})();

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Forwards `port` to the database's host and port, once started. */
function forwarder(target: URL): Server {
  return createServer((socket) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
}

/**
 * A forwarder that can cut every connection it forwards and hold new ones unanswered for a while
 * (a database that answered the first start-up step, then restarted or was too busy to accept).
 */
function unsteadyForwarder(target: URL): Server & { cut(forMs: number): void } {
  const live = new Set<Socket>();
  let heldUntil = 0;
  const forward = (socket: Socket) => {
    if (socket.destroyed) return;
    const upstream = connect(Number(target.port || 5432), target.hostname);
    live.add(socket);
    socket.on("close", () => live.delete(socket));
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
    upstream.on("close", () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  };
  const server = createServer((socket) => {
    socket.on("error", () => {});
    const wait = heldUntil - Date.now();
    if (wait > 0) setTimeout(() => forward(socket), wait);
    else forward(socket);
  });
  return Object.assign(server, {
    cut(forMs: number) {
      heldUntil = Date.now() + forMs;
      for (const socket of live) socket.destroy();
    },
  });
}

/** A fresh schema of the test database, dropped after the test. */
async function freshSchema(url: URL): Promise<string> {
  const schema = `svc_startup_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url.href });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  cleanups.push(async () => {
    const dropper = new pg.Client({ connectionString: url.href });
    await dropper.connect();
    await dropper.query(`drop schema if exists ${schema} cascade`);
    await dropper.end();
  });
  return schema;
}

/** A silent logger that keeps the messages of its warnings. */
function retryLogger(): { logger: ReturnType<typeof createLogger>; warnings: string[] } {
  const warnings: string[] = [];
  const logger = createLogger({ logLevel: "silent" });
  logger.warn = ((_obj: unknown, msg: string) => {
    warnings.push(msg);
  }) as typeof logger.warn;
  return { logger, warnings };
}

/** The service started after retrying (each retry a warning of its own) and is ready; closed after the test. */
async function expectServedAfterRetries(
  service: Awaited<ReturnType<typeof startService>>,
  warnings: readonly string[],
): Promise<void> {
  cleanups.push(async () => {
    service.server.closeAllConnections();
    await service.close();
  });
  expect(warnings.length).toBeGreaterThan(0);
  expect(new Set(warnings)).toEqual(new Set(["the database does not answer yet; retrying"]));
  expect((await fetch(`${service.url}/ready`)).status).toBe(200);
}

describe.skipIf(!postgresUrl)("a service whose PostgreSQL answers only after it started", () => {
  it("waits for the database, logs each retry, then serves /ready → 200", async () => {
    const url = new URL(postgresUrl as string);
    const schema = await freshSchema(url);
    const port = await freePort();
    const late = new URL(url.href);
    late.hostname = "127.0.0.1";
    late.port = String(port);
    const proxy = forwarder(url);
    cleanups.push(() => new Promise((resolve) => proxy.close(() => resolve())));
    const { logger, warnings } = retryLogger();
    const starting = startService(
      loadConfig({
        PORT: "0",
        LOG_LEVEL: "silent",
        DATABASE_URL: late.href,
        DATABASE_SCHEMA: schema,
        ...frameworkEnv(),
      }),
      { logger },
    );
    // Nothing listens on the port yet: every connection is refused until the forwarder starts.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await new Promise<void>((resolve) => proxy.listen(port, "127.0.0.1", resolve));
    const service = await starting;
    await expectServedAfterRetries(service, warnings);
  }, 60_000);

  it("the database lost right after migrating: the start-up steps after it wait too, then /ready → 200", async () => {
    const url = new URL(postgresUrl as string);
    const schema = await freshSchema(url);
    const proxy = unsteadyForwarder(url);
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => proxy.close(() => resolve())));
    const through = new URL(url.href);
    through.hostname = "127.0.0.1";
    through.port = String((proxy.address() as { port: number }).port);
    const { logger, warnings } = retryLogger();
    // Once the schema is migrated and seeded, every connection is cut and new ones wait 3 s,
    // longer than the pool's 2 s connection time-out: the next step (the transfers' resumption)
    // finds the database gone.
    logger.info = ((_obj: unknown, msg?: string) => {
      if (
        _obj === "seeded an empty database with demo data" ||
        msg === "seeded an empty database with demo data"
      )
        proxy.cut(3000);
    }) as typeof logger.info;
    const service = await startService(
      loadConfig({
        PORT: "0",
        LOG_LEVEL: "silent",
        DATABASE_URL: through.href,
        DATABASE_SCHEMA: schema,
        ...frameworkEnv(),
      }),
      { logger },
    );
    await expectServedAfterRetries(service, warnings);
  }, 60_000);
});
