import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertReadmeShows, readmeRegion, serviceUrl, uniquePrefix } from "@svc/test-utils";
import Database from "better-sqlite3";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DurableObjectStore } from "../src/durable-object-store.js";
import { MemoryStore, PostgresStore, RedisStore } from "../src/index.js";
import { describeStoreContract } from "../src/testing.js";
import { namespace } from "./durable-object-fake.js";
import { postgresUrl, throwawaySchema } from "./postgres.js";
import { SqliteStore } from "./sqlite-store.js";

// One table of behaviours (`@svc/idempotency/testing`), run against every store the package ships
// and against the README's SQLite store, each on its own server: Redis and PostgreSQL as
// configured (REDIS_URL, DATABASE_URL), SQLite on a database file through better-sqlite3.

/** Every store gets the same record bound, so "past maxRecordBytes" means the same everywhere. */
const maxRecordBytes = 262_144;
const runner = { describe, it };

describeStoreContract(
  "MemoryStore",
  { store: () => new MemoryStore({ maxRecordBytes }), maxRecordBytes },
  runner,
);

describeStoreContract(
  "DurableObjectStore (IdempotencyObject over an in-memory storage)",
  { store: () => new DurableObjectStore({ namespace: namespace().binding, maxRecordBytes }), maxRecordBytes },
  runner,
);

const redisUrl = serviceUrl("REDIS_URL");
describe.skipIf(!redisUrl)("on Redis (REDIS_URL)", () => {
  const prefix = uniquePrefix("idem-contract");
  let client: Redis;
  let stores = 0;
  beforeAll(() => {
    client = new Redis(redisUrl ?? "");
  });
  afterAll(async () => {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== "0");
    client.disconnect();
  });
  describeStoreContract(
    "RedisStore",
    {
      store: () => new RedisStore({ client, prefix: `${prefix}${++stores}:`, maxRecordBytes }),
      maxRecordBytes,
    },
    runner,
  );
});

describe.skipIf(!postgresUrl)("on PostgreSQL (DATABASE_URL)", () => {
  const database = throwawaySchema("contract");
  let tables = 0;
  describeStoreContract(
    "PostgresStore",
    {
      async store() {
        const store = new PostgresStore({
          pool: database.pool(),
          table: `contract_${++tables}`,
          maxRecordBytes,
        });
        await store.migrate();
        return store;
      },
      maxRecordBytes,
    },
    runner,
  );
});

describe("on SQLite (better-sqlite3, a database file)", () => {
  const dir = mkdtempSync(join(tmpdir(), "idem-sqlite-"));
  const open: Database.Database[] = [];
  let files = 0;
  afterAll(() => {
    for (const db of open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  describeStoreContract(
    "SqliteStore",
    {
      store() {
        const db = new Database(join(dir, `contract-${++files}.db`));
        db.pragma("journal_mode = WAL");
        open.push(db);
        return new SqliteStore(db, { maxRecordBytes });
      },
      maxRecordBytes,
    },
    runner,
  );
});

it("the README shows the SQLite store as tested here", () => {
  const code = readmeRegion(new URL("./sqlite-store.ts", import.meta.url).href);
  expect(() => assertReadmeShows(import.meta.url, code)).not.toThrow();
});
