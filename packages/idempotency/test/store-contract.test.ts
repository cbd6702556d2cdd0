import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { assertReadmeShows, readmeRegion, serviceUrl, uniquePrefix } from "@svc/test-utils";
import type Database from "better-sqlite3";
import { transform } from "esbuild";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DurableObjectStore } from "../src/durable-object-store.js";
import { MemoryStore, PostgresStore, RedisStore } from "../src/index.js";
import { describeStoreContract } from "../src/testing.js";
import { namespace } from "./durable-object-fake.js";
import { dropPrefix } from "./helpers.js";
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
  afterAll(() => dropPrefix(client, prefix));
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

/** better-sqlite3, or undefined where its native binding does not load (the SQLite suites skip). */
const Sqlite = await import("better-sqlite3").then(
  (driver) => driver.default,
  (err: unknown) => {
    console.warn(`SQLite store suites skipped: better-sqlite3 does not load here (${String(err)})`);
    return undefined;
  },
);

describe.skipIf(Sqlite === undefined)("on SQLite (better-sqlite3, a database file)", () => {
  const dir = mkdtempSync(join(tmpdir(), "idem-sqlite-"));
  const open: Database.Database[] = [];
  let files = 0;
  const database = (file: string) => {
    const db = new (Sqlite as typeof Database)(join(dir, file));
    db.pragma("journal_mode = WAL");
    open.push(db);
    return db;
  };
  afterAll(() => {
    for (const db of open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  describeStoreContract(
    "SqliteStore",
    { store: () => new SqliteStore(database(`contract-${++files}.db`), { maxRecordBytes }), maxRecordBytes },
    runner,
  );

  it("four processes claiming the same 500 keys at once on one file → each key claimed exactly once", async () => {
    // The store as JavaScript for plain `node` children (its one import of the package is of types).
    const source = readFileSync(new URL("./sqlite-store.ts", import.meta.url), "utf8");
    const { code } = await transform(source, { loader: "ts", format: "esm" });
    writeFileSync(join(dir, "sqlite-store.mjs"), code);
    const driver = pathToFileURL(createRequire(import.meta.url).resolve("better-sqlite3")).href;
    writeFileSync(
      join(dir, "claimer.mjs"),
      `import { SqliteStore } from "./sqlite-store.mjs";
      const { default: Database } = await import(${JSON.stringify(driver)});
      const store = new SqliteStore(new Database(process.argv[2]));
      while (Date.now() < Number(process.argv[3])); // every child starts at once
      const won = [];
      for (let i = 0; i < 500; i++) if ((await store.claim("k" + i, "fp", 60000)).outcome === "claimed") won.push(i);
      process.stdout.write(JSON.stringify(won));`,
    );
    const file = join(dir, "shared.db");
    new SqliteStore(database("shared.db"));
    const start = String(Date.now() + 1500);
    const children = Array.from({ length: 4 }, () =>
      promisify(execFile)(process.execPath, [join(dir, "claimer.mjs"), file, start]),
    );
    const won = (await Promise.all(children)).flatMap(({ stdout }) => JSON.parse(stdout) as number[]);
    expect(won.sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });
});

it("the README shows the SQLite store as tested here", () => {
  const code = readmeRegion(new URL("./sqlite-store.ts", import.meta.url).href);
  expect(() => assertReadmeShows(import.meta.url, code)).not.toThrow();
});
