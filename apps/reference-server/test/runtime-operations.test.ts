import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { serviceUrl } from "@svc/test-utils";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, type Service, startService } from "../src/server.js";
import { client, watchResponses } from "./harness.js";

const postgresUrl = (() => {
  const url = serviceUrl("DATABASE_URL");
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
})();

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
      service = await startService(
        loadConfig({
          PORT: "0",
          LOG_LEVEL: "silent",
          DATABASE_URL: url.toString(),
          DATABASE_SCHEMA: schema,
        }),
        { logger: createLogger({ logLevel: "silent" }) },
      );
      watchResponses(service.server as Server);
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
        const env = {
          PORT: "0",
          LOG_LEVEL: "silent",
          DATABASE_URL: `postgresql:///${url.pathname.slice(1)}?host=${url.hostname}&port=${url.port || "5432"}&user=${decodeURIComponent(url.username || "postgres")}`,
          DATABASE_SCHEMA: other,
        };
        const started = await startService(loadConfig(env), { logger: createLogger({ logLevel: "silent" }) });
        others.push(started);
        watchResponses(started.server as Server);
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
