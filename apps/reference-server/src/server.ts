import { mkdirSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { dirname } from "node:path";
import pino, { type Logger } from "pino";
import { createApp } from "./app.js";
import type { Config } from "./config.js";
import { createDatabase, type Db } from "./db/database.js";
import { migrate } from "./db/migrations.js";
import { seed } from "./db/seed.js";
import { Background, resumeTransfers } from "./routes/money.js";

/** A started service. */
export interface Service {
  server: Server;
  /** `http(s)://host:port` */
  url: string;
  db: Db;
  logger: Logger;
  /** Graceful shutdown: stop accepting, finish in-flight requests and background work, close pools. */
  close(): Promise<void>;
}

/** Credentials and tokens never reach the logs (spec part 5 rule 2). */
export const LOG_REDACT = [
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers['proxy-authorization']",
  "res.headers['set-cookie']",
  "password",
  "access_token",
];

/** Strips query-string credentials from logged URLs, whatever parameter carried them. */
function safeUrl(url: string): string {
  return url.replace(/([?&](?:access_token|token|password|api_key)=)[^&#]*/gi, "$1[Redacted]");
}

/** A pino logger with redaction of credentials. */
export function createLogger(config: Pick<Config, "logLevel">, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: LOG_REDACT, censor: "[Redacted]" },
      serializers: {
        req: (req: { method?: string; url?: string; headers?: Record<string, unknown>; id?: unknown }) => ({
          id: req.id,
          method: req.method,
          url: safeUrl(req.url ?? ""),
          headers: req.headers,
        }),
      },
    },
    destination,
  );
}

/**
 * Opens the database, migrates, seeds an empty database, and listens (HTTPS when TLS is configured).
 *
 * @example const service = await startService(loadConfig());
 */
export async function startService(config: Config, options: { logger?: Logger } = {}): Promise<Service> {
  const logger = options.logger ?? createLogger(config);
  if (config.database.kind === "sqlite" && config.database.filename !== ":memory:") {
    mkdirSync(dirname(config.database.filename), { recursive: true });
  }
  const db = createDatabase(config.database);
  try {
    await migrate(db);
    if (await seed(db)) logger.info("seeded an empty database with demo data");
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  const background = new Background();
  await resumeTransfers(db, background);
  const app = createApp(config, { db, logger, background });
  const server = config.tls
    ? createHttpsServer({ cert: config.tls.cert, key: config.tls.key }, app)
    : createHttpServer(app);
  // Keep-alive sockets must not outlive a shutdown by more than a few seconds.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `${config.tls ? "https" : "http"}://${host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    server,
    url,
    db,
    logger,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await background.drain();
        await db.close();
      })();
      return closing;
    },
  };
}
