import { randomBytes } from "node:crypto";
import { serviceUrl } from "@svc/test-utils";
import { sql } from "kysely";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createDatabase, type Db } from "../src/db/database.js";
import { Background, sweepTransfers } from "../src/routes/money.js";
import { createLogger, type Service, startService } from "../src/server.js";
import { client, frameworkEnv } from "./harness.js";

/**
 * Spec 4.1 rule 8: a transfer accepted with 202 is executed later. One whose execution failed until
 * its retries ran out (the database unreachable for longer than them) or whose instance died is
 * found again by a sweep of the running service, without a restart, and is applied once however
 * many instances sweep at the same time.
 */
const postgresUrl = (() => {
  const url = serviceUrl("DATABASE_URL");
  return url && /^postgres(ql)?:\/\//.test(url) ? url : undefined;
})();

/** A fresh PostgreSQL schema; dropped by the returned function. */
async function freshSchema(url: string): Promise<{ schema: string; drop: () => Promise<void> }> {
  const schema = `svc_sweep_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  return {
    schema,
    async drop() {
      const dropper = new pg.Client({ connectionString: url });
      await dropper.connect();
      await dropper.query(`drop schema if exists ${schema} cascade`);
      await dropper.end();
    },
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const backends: Array<[string, string | undefined]> = postgresUrl
  ? [
      ["SQLite", undefined],
      ["PostgreSQL", postgresUrl],
    ]
  : [["SQLite", undefined]];

/** A service sweeping every 100 ms for transfers PENDING for 200 ms. */
async function start(url: string | undefined): Promise<Service> {
  const env: Record<string, string> = {
    PORT: "0",
    LOG_LEVEL: "silent",
    DATABASE_URL: "sqlite::memory:",
    ...frameworkEnv(),
  };
  if (url) {
    const { schema, drop } = await freshSchema(url);
    cleanups.push(drop);
    Object.assign(env, { DATABASE_URL: url, DATABASE_SCHEMA: schema });
  }
  const service = await startService(loadConfig(env), {
    logger: createLogger({ logLevel: "silent" }),
    transferSweep: { everyMs: 100, stuckAfterMs: 200 },
  });
  cleanups.push(async () => {
    service.server.closeAllConnections();
    await service.close();
  });
  return service;
}

/** Inserts a transfer as an instance leaves it when its execution never succeeded: PENDING. */
async function pendingTransfer(db: Db, from: number, to: number, amount: number): Promise<number> {
  const row = await db.kysely
    .insertInto("transfers")
    .values({
      from_account_id: from,
      to_account_id: to,
      amount,
      status: "PENDING",
      failure_reason: null,
      created_at: new Date(Date.now() - 60_000).toISOString(),
      completed_at: null,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

async function balances(db: Db): Promise<Map<number, bigint>> {
  const rows = await db.kysely.selectFrom("accounts").select(["id", "balance"]).execute();
  return new Map(rows.map((r) => [Number(r.id), BigInt(r.balance)]));
}

/** Polls `check` every 50 ms until it holds, for at most `ms`; answers whether it held. */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(backends)("stuck transfers on %s", (_name, url) => {
  it("a transfer left PENDING after the service started is executed by the running service", async () => {
    const service = await start(url);
    const before = await balances(service.db);
    const id = await pendingTransfer(service.db, 6, 2, 123);
    const api = client(service.url);
    const status = async () => ((await (await api(`/transfers/${id}`)).json()) as { status: string }).status;
    expect(await eventually(async () => (await status()) === "COMPLETED")).toBe(true);
    const after = await balances(service.db);
    expect((before.get(6) ?? 0n) - (after.get(6) ?? 0n)).toBe(123n);
    expect((after.get(2) ?? 0n) - (before.get(2) ?? 0n)).toBe(123n);
  });

  it("while the database refuses the execution it stays PENDING, no money moves; once it accepts, a later sweep executes it", async () => {
    const service = await start(url);
    const db = service.db;
    // The database refuses the claim (PENDING → PROCESSING) as a failing server would: every
    // attempt's transaction rolls back, retries and sweeps included.
    if (db.kind === "postgres") {
      await sql`create function refuse_claim() returns trigger language plpgsql as $$
          begin raise exception 'the database refuses the claim'; end $$`.execute(db.kysely);
      await sql`create trigger refuse_claim before update of status on transfers for each row
          when (new.status = 'PROCESSING') execute function refuse_claim()`.execute(db.kysely);
    } else {
      await sql`create trigger refuse_claim before update of status on transfers
          when new.status = 'PROCESSING' begin select raise(abort, 'the database refuses the claim'); end`.execute(
        db.kysely,
      );
    }
    const before = await balances(db);
    const id = await pendingTransfer(db, 6, 3, 77);
    const status = async () =>
      String(
        (await db.kysely.selectFrom("transfers").select("status").where("id", "=", id).executeTakeFirst())
          ?.status,
      );
    // Several sweeps come and go (100 ms apart) while every execution fails.
    await new Promise((r) => setTimeout(r, 500));
    expect(await status()).toBe("PENDING");
    expect(await balances(db)).toEqual(before);
    await sql`drop trigger refuse_claim${sql.raw(db.kind === "postgres" ? " on transfers" : "")}`.execute(
      db.kysely,
    );
    expect(await eventually(async () => (await status()) === "COMPLETED")).toBe(true);
    const after = await balances(db);
    expect((before.get(6) ?? 0n) - (after.get(6) ?? 0n)).toBe(77n);
    expect((after.get(3) ?? 0n) - (before.get(3) ?? 0n)).toBe(77n);
  });
});

describe.each(backends)("the sweep's index on %s", (_name, url) => {
  it("PENDING transfers have an index of their own, so a sweep reads only them", async () => {
    const service = await start(url);
    const found =
      service.db.kind === "postgres"
        ? await sql<{ name: string }>`select indexname as name from pg_indexes
            where tablename = 'transfers' and schemaname = ${service.db.schema}`.execute(service.db.kysely)
        : await sql<{ name: string }>`select name from sqlite_master
            where type = 'index' and tbl_name = 'transfers'`.execute(service.db.kysely);
    expect(found.rows.map((r) => r.name)).toContain("transfers_pending_idx");
  });
});

describe.skipIf(!postgresUrl)("two instances sweeping at once (PostgreSQL)", () => {
  it("every stuck transfer is applied exactly once", async () => {
    const url = postgresUrl as string;
    const first = await start(url);
    const schema = first.db.schema as string;
    // A second instance on the same schema, with its own pool and its own background work.
    const dbs = [first.db, createDatabase({ kind: "postgres", url, schema })];
    cleanups.push(() => (dbs[1] as Db).close());
    const before = await balances(first.db);
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) ids.push(await pendingTransfer(first.db, 6, 1 + (i % 5), 1000 + i));
    const backgrounds = [new Background(), new Background()];
    for (let round = 0; round < 3; round++) {
      await Promise.all(dbs.map((db, i) => sweepTransfers(db, backgrounds[i] as Background, 0)));
    }
    await Promise.all(backgrounds.map((b) => b.drain()));
    // The running service's own sweep may take some too; wait for all of them.
    expect(
      await eventually(async () => {
        const rows = await first.db.kysely
          .selectFrom("transfers")
          .select("id")
          .where("id", "in", ids)
          .where("status", "=", "COMPLETED")
          .execute();
        return rows.length === ids.length;
      }),
    ).toBe(true);
    const after = await balances(first.db);
    const moved = ids.reduce((s, _id, i) => s + 1000 + i, 0);
    expect((before.get(6) ?? 0n) - (after.get(6) ?? 0n)).toBe(BigInt(moved));
    let credited = 0n;
    for (const id of [1, 2, 3, 4, 5]) credited += (after.get(id) ?? 0n) - (before.get(id) ?? 0n);
    expect(credited).toBe(BigInt(moved));
  });
});

describe("a background task that fails", () => {
  it("is reported to the Background's listener (the service logs it), not swallowed", async () => {
    const heard: unknown[] = [];
    const background = new Background((err) => heard.push(err));
    background.run(() => Promise.reject(new Error("connection terminated")));
    background.run(() => Promise.resolve());
    await background.drain();
    expect(heard).toEqual([new Error("connection terminated")]);
  });
});
