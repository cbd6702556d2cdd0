import { type KyselyPlugin, sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { createDatabase, type Db } from "./database.js";
import { migrate } from "./migrations.js";

/** A PostgreSQL error as node-postgres raises it: the SQLSTATE in `code`. */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** `db` whose first `failures` queries throw `error` before reaching the database. */
function failing(db: Db, failures: number, error: () => Error): { db: Db; queries: () => number } {
  let queries = 0;
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      queries++;
      if (queries <= failures) throw error();
      return args.node;
    },
    async transformResult(args) {
      return args.result;
    },
  };
  return { db: { ...db, kysely: db.kysely.withPlugin(plugin) }, queries: () => queries };
}

describe("migrate", () => {
  let db: Db | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  const tables = async (d: Db) =>
    (
      await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(d.kysely)
    ).rows.map((r) => r.name);

  it("another client's schema dropped while the migrator introspects (3F000 on its first query) → tried again, migrated", async () => {
    db = createDatabase({ kind: "sqlite", filename: ":memory:", url: "sqlite::memory:" });
    const { db: flaky } = failing(db, 1, () => pgError("3F000", 'schema "svc_other_1" does not exist'));
    await migrate(flaky);
    expect(await tables(db)).toEqual(expect.arrayContaining(["employees", "customers", "kysely_migration"]));
  });

  it("another client's table dropped while the migrator introspects (42P01 on its first query) → tried again, migrated", async () => {
    db = createDatabase({ kind: "sqlite", filename: ":memory:", url: "sqlite::memory:" });
    const { db: flaky } = failing(db, 1, () =>
      pgError("42P01", 'relation "svc_other_1.orders" does not exist'),
    );
    await migrate(flaky);
    expect(await tables(db)).toEqual(expect.arrayContaining(["employees", "customers", "kysely_migration"]));
  });

  it("another client's column dropped while the migrator introspects (42703 on its first query) → tried again, migrated", async () => {
    db = createDatabase({ kind: "sqlite", filename: ":memory:", url: "sqlite::memory:" });
    const { db: flaky } = failing(db, 1, () =>
      pgError("42703", 'column "id" of relation "transfers" does not exist'),
    );
    await migrate(flaky);
    expect(await tables(db)).toEqual(expect.arrayContaining(["employees", "customers", "kysely_migration"]));
  });

  it("3F000 on every attempt (our own schema missing) → fails after 3 attempts", async () => {
    db = createDatabase({ kind: "sqlite", filename: ":memory:", url: "sqlite::memory:" });
    const { db: flaky, queries } = failing(db, Number.POSITIVE_INFINITY, () =>
      pgError("3F000", 'schema "svc_mine" does not exist'),
    );
    await expect(migrate(flaky)).rejects.toThrow(/Migration\s+failed/);
    expect(queries()).toBe(3);
  });

  it("another error before any migration ran (42501 insufficient_privilege) → fails at once, not retried", async () => {
    db = createDatabase({ kind: "sqlite", filename: ":memory:", url: "sqlite::memory:" });
    const { db: flaky, queries } = failing(db, 1, () =>
      pgError("42501", "permission denied for schema public"),
    );
    await expect(migrate(flaky)).rejects.toThrow(/Migration\s+failed/);
    expect(queries()).toBe(1);
  });
});
