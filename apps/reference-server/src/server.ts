import { mkdirSync } from "node:fs";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { dirname } from "node:path";
import { pinoRedaction } from "@svc/auth";
import { isHttpError } from "@svc/errors";
import { expressServerOptions } from "@svc/errors/express";
import { clientErrorHandler } from "@svc/errors/node";
import { PostgresStore } from "@svc/idempotency";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import pino, { type Logger } from "pino";
import { createApp } from "./app.js";
import type { Config } from "./config.js";
import { createDatabase, type Db } from "./db/database.js";
import { migrate } from "./db/migrations.js";
import { seed } from "./db/seed.js";
import { fromDatabaseError } from "./errors.js";
import { createFastifyApp } from "./fastify-app.js";
import { metricsServer } from "./metrics-listener.js";
import {
  Background,
  resumeTransfers,
  startTransferSweep,
  TRANSFER_SWEEP,
  type TransferSweep,
} from "./routes/money.js";
import { clientErrorHeaders, createSecurity } from "./security.js";
import { createStores } from "./stores.js";
import { createTelemetry } from "./telemetry.js";

/** How long the idempotency store waits for each of its statements (its default). */
const KEYS_TIMEOUT_MS = 1000;

/** A started service. */
export interface Service {
  server: Server;
  /** `http(s)://host:port` */
  url: string;
  /** `http://host:port/metrics` on the metrics' own listener (`METRICS_PORT`); none without one. */
  metricsUrl: string | undefined;
  db: Db;
  logger: Logger;
  /** Graceful shutdown: stop accepting, finish in-flight requests and background work, close pools. */
  close(): Promise<void>;
}

/**
 * A pino logger that never writes credentials: @svc/auth's redaction preset censors
 * `Authorization`, cookies and `access_token` wherever they appear (spec part 5 rule 2).
 */
export function createLogger(config: Pick<Config, "logLevel">, destination?: pino.DestinationStream): Logger {
  return pino(
    { level: config.logLevel, redact: { ...pinoRedaction, paths: [...pinoRedaction.paths] } },
    destination,
  );
}

/**
 * How long a starting service waits for a database that does not answer yet (a failover, a
 * database restarted with the service, a host too busy to connect within the pool's 2 s), before
 * it gives up and exits.
 */
const DATABASE_WAIT_MS = 30_000;

/**
 * Whether `err`, or an error it was caused by (a failed migration wraps the driver's), says the
 * database cannot be reached: the errors a request answers 503 for.
 */
function unreachable(err: unknown): boolean {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const mapped = fromDatabaseError(e);
    if (isHttpError(mapped) && mapped.status === 503) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs a start-up step that needs the database, again with backoff while the database cannot be
 * reached (each retry logged), until `deadline`: a PostgreSQL that answered the first step may be
 * slow to accept the next connection (a host too busy to connect in 2 s, a failover).
 */
async function whileUnreachable<T>(step: () => Promise<T>, logger: Logger, deadline: number): Promise<T> {
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 2000)) {
    try {
      return await step();
    } catch (err) {
      if (!unreachable(err) || Date.now() + delayMs > deadline) throw err;
      logger.warn({ err, retryInMs: delayMs }, "the database does not answer yet; retrying");
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/**
 * Opens the database (making a SQLite file's directory), migrates it, and seeds it when empty;
 * while the database cannot be reached, retries until `deadline` ({@link whileUnreachable}).
 */
async function openDatabase(config: Config, logger: Logger, deadline: number): Promise<Db> {
  if (config.database.kind === "sqlite" && config.database.filename !== ":memory:") {
    mkdirSync(dirname(config.database.filename), { recursive: true });
  }
  const db = createDatabase(config.database);
  try {
    await whileUnreachable(
      async () => {
        await migrate(db);
        if (await seed(db)) logger.info("seeded an empty database with demo data");
      },
      logger,
      deadline,
    );
    return db;
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

/** Listens on `where`'s host and port; the listener's `scheme://host:port`. */
async function listen(
  server: Server,
  where: { port: number; host: string },
  scheme: string,
): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(where.port, where.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : where.port;
  const host = where.host.includes(":") ? `[${where.host}]` : where.host;
  return `${scheme}://${host}:${port}`;
}

/**
 * Keep-alive connections during a shutdown. `server.close()` only closes the connections idle at
 * that moment: a response in flight went out with `Connection: keep-alive`, and the client could go
 * on sending requests on that connection until the grace period ran out. Once the drain starts,
 * every response not yet begun carries `Connection: close` and Node closes its connection after it
 * ("A server that does not support persistent connections MUST send the close connection option
 * in every response", RFC 9112 §9.6; "close" ends the connection after the response, RFC 9110
 * §7.6.1). A response already begun with keep-alive gets its connection closed once idle.
 */
function shutdownDrain(server: Server) {
  const open = new Set<ServerResponse>();
  let draining = false;
  function forget(this: ServerResponse) {
    open.delete(this);
    if (draining) server.closeIdleConnections();
  }
  server.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.shouldKeepAlive = false;
    open.add(res);
    // "close" follows "finish", or the connection going away first, once per response.
    res.on("close", forget);
  });
  return {
    start() {
      draining = true;
      for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
    },
  };
}

/**
 * Opens the database, migrates, seeds an empty database, and listens (HTTPS when TLS is configured).
 * Its Redis keys begin with `options.redisPrefix`, else the configuration's `REDIS_KEY_PREFIX`.
 *
 * @example const service = await startService(loadConfig());
 */
export async function startService(
  config: Config,
  options: { logger?: Logger; redisPrefix?: string; transferSweep?: TransferSweep } = {},
): Promise<Service> {
  const logger = options.logger ?? createLogger(config);
  // The start-up steps that need the database wait for it, together, at most this long.
  const deadline = Date.now() + DATABASE_WAIT_MS;
  const db = await openDatabase(config, logger, deadline);
  const background = new Background((err) =>
    logger.warn({ err }, "a background transfer failed; it stays PENDING for the next sweep"),
  );
  await whileUnreachable(() => resumeTransfers(db, background), logger, deadline);
  const security = await createSecurity(config);
  // On PostgreSQL the idempotency records live next to the data: a write and its key's outcome
  // commit in one transaction (exactly once, whatever fails after the commit). The store's own
  // statements (claims, renewals, completions) run on a small pool of their own, so a burst of
  // keyed writes never waits for the connections its transactions hold.
  // The server ends each of the store's statements when the store gives up on it (1 s), so a claim
  // that got a 503 cannot commit later than the store takes it back. The table is migrated on the
  // main pool: its ALTER may wait for other instances' transactions longer than that.
  const keysPool = db.pool
    ? new pg.Pool({ ...db.pool.options, max: 4, statement_timeout: KEYS_TIMEOUT_MS })
    : undefined;
  keysPool?.on("error", () => {});
  keysPool?.on("connect", (client) => client.on("error", () => {}));
  const pool = db.pool;
  if (pool) await whileUnreachable(() => new PostgresStore({ pool }).migrate(), logger, deadline);
  const keys = keysPool ? new PostgresStore({ pool: keysPool, timeoutMs: KEYS_TIMEOUT_MS }) : undefined;
  const stores = createStores(
    config.redisClusterNodes ?? config.redisUrl,
    options.redisPrefix ?? config.redisKeyPrefix,
    keys,
  );
  await stores.ready(3000);
  const telemetry = config.telemetry
    ? createTelemetry(config.traces, logger, { storeCalls: stores.redis !== undefined || keys !== undefined })
    : undefined;
  const deps = { db, logger, background, security, stores, telemetry };
  // Node checks its header and request time-outs every `connectionsCheckingInterval` (30 s by
  // default, which would stretch a 10 s HEADERS_TIMEOUT_SECONDS to 40 s): every second instead.
  const timeouts = {
    connectionsCheckingInterval: 1000,
    headersTimeout: config.headersTimeoutSeconds * 1000,
    // A backstop for bodies nothing reads: the app's body parser answers 408 before this.
    requestTimeout: (config.headersTimeoutSeconds + config.requestTimeoutSeconds + 5) * 1000,
  };
  const serverOf = (
    app: (req: IncomingMessage, res: ServerResponse) => void,
    classes: Partial<Pick<ServerOptions, "IncomingMessage" | "ServerResponse">> = {},
  ): Server => {
    const handler = telemetry ? telemetry.traced(app) : app;
    return config.tls
      ? createHttpsServer({ cert: config.tls.cert, key: config.tls.key, ...timeouts, ...classes }, handler)
      : createHttpServer({ ...timeouts, ...classes }, handler);
  };
  let server: Server;
  let fastify: FastifyInstance | undefined;
  if (config.framework === "fastify") {
    let made: Server | undefined;
    fastify = createFastifyApp(config, deps, (handler) => {
      made = serverOf(handler);
      return made;
    });
    await fastify.ready();
    server = made as Server;
  } else {
    const app = createApp(config, deps);
    // Requests and responses are built with the app's prototypes, so Express's per-request
    // Object.setPrototypeOf is a no-op (measured on this server: 189 → 78 µs of CPU per request).
    server = serverOf(app, expressServerOptions(app));
  }
  // Requests the HTTP parser refuses still get security headers and the error record (in place
  // of Fastify's own answer, which has neither).
  server.removeAllListeners("clientError");
  server.on("clientError", clientErrorHandler({ headers: clientErrorHeaders() }));
  // Keep-alive sockets must not outlive a shutdown by more than a few seconds.
  server.keepAliveTimeout = 5000;
  const drain = shutdownDrain(server);
  const url = await listen(server, config, config.tls ? "https" : "http");
  // The metrics on a listener of their own (loopback unless METRICS_HOST says otherwise), never
  // the API's: see Config.metrics.
  const metrics = telemetry && config.metrics ? metricsServer(telemetry, logger) : undefined;
  let metricsUrl: string | undefined;
  if (metrics !== undefined && config.metrics !== undefined) {
    try {
      metricsUrl = `${await listen(metrics, config.metrics, "http")}/metrics`;
    } catch (err) {
      server.close();
      throw err;
    }
  }
  // Transfers whose retries ran out while the database was unreachable run again without a restart.
  const stopSweep = startTransferSweep(db, background, options.transferSweep ?? TRANSFER_SWEEP);
  let closing: Promise<void> | undefined;
  return {
    server,
    url,
    metricsUrl,
    db,
    logger,
    close() {
      closing ??= (async () => {
        const metricsClosed = new Promise<void>((resolve) => {
          if (metrics === undefined) return resolve();
          metrics.close(() => resolve());
          metrics.closeAllConnections();
        });
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          drain.start();
          server.closeIdleConnections();
        });
        await metricsClosed;
        await fastify?.close();
        stopSweep();
        await background.drain();
        await db.close();
        await stores.close();
        await keysPool?.end();
        await telemetry?.close();
      })();
      return closing;
    },
  };
}
