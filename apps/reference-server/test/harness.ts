import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { serviceUrl } from "@svc/test-utils";
import pg from "pg";
import { type Config, ConfigError, loadConfig } from "../src/config.js";
import { createLogger, type Service, startService } from "../src/server.js";
import { watchResponses } from "./openapi-check.js";

// Every suite's responses are checked against /openapi.json: test/setup.ts installs the check.
export { watchResponses };

/** The databases every black-box suite runs against: SQLite always, PostgreSQL when configured. */
export interface Backend {
  name: string;
  start(env?: Record<string, string>): Promise<Started>;
}

export interface Started {
  url: string;
  service: Service;
  config: Config;
  stop(): Promise<void>;
}

const postgresUrl = (() => {
  const url = serviceUrl("DATABASE_URL");
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
})();

/**
 * The framework the suites run the service on: `SERVER_FRAMEWORK` of the test process (the
 * `@svc/reference-server (fastify)` project sets it), else the configuration's default.
 */
export function frameworkEnv(): Record<string, string> {
  const framework = process.env.SERVER_FRAMEWORK;
  return framework ? { SERVER_FRAMEWORK: framework } : {};
}

async function boot(env: Record<string, string>, after?: () => Promise<void>): Promise<Started> {
  let service: Service;
  let config: Config;
  try {
    config = loadConfig({
      PORT: "0",
      LOG_LEVEL: "silent",
      RATE_LIMIT_MAX: "100000",
      ...frameworkEnv(),
      ...env,
    });
    service = await startService(config, { logger: createLogger({ logLevel: "silent" }) });
  } catch (err) {
    // A service refused or failed at start still gives back what was made for it (a schema).
    await after?.();
    throw err;
  }
  watchResponses(service.server as Server);
  return {
    url: service.url,
    service,
    config,
    async stop() {
      service.server.closeAllConnections();
      await service.close();
      await after?.();
    },
  };
}

export const sqlite: Backend = {
  name: "SQLite",
  start: (env = {}) => boot({ DATABASE_URL: "sqlite::memory:", ...env }),
};

/** PostgreSQL in a fresh schema per run, dropped afterwards. */
export const postgres: Backend | undefined = postgresUrl
  ? {
      name: "PostgreSQL",
      async start(env = {}) {
        const schema = `svc_test_${process.pid}_${randomBytes(4).toString("hex")}`;
        const admin = new pg.Client({ connectionString: postgresUrl });
        await admin.connect();
        await admin.query(`create schema ${schema}`);
        await admin.end();
        return boot({ DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema, ...env }, async () => {
          const dropper = new pg.Client({ connectionString: postgresUrl });
          await dropper.connect();
          await dropper.query(`drop schema if exists ${schema} cascade`);
          await dropper.end();
        });
      },
    }
  : undefined;

export const backends: Backend[] = postgres ? [sqlite, postgres] : [sqlite];

/** Demo credentials as an Authorization header value. */
export const ADMIN = `Basic ${Buffer.from("admin:admin").toString("base64")}`;
export const READER = `Basic ${Buffer.from("reader:reader").toString("base64")}`;

/** A client bound to one server, sending the admin's credentials unless told otherwise. */
export function client(base: string) {
  return async (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has("authorization")) headers.set("authorization", ADMIN);
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    const { json: _json, ...rest } = init;
    return fetch(`${base}${path}`, { ...rest, headers, body: body ?? null });
  };
}

/** What `loadConfig` refuses in `env`, each problem as its error names it; none when it loads. */
export function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  return [];
}
