import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type Started, sqlite } from "./harness.js";

/**
 * An item GET on SQLite reads at once, outside Kysely's connection lock (Db.readFirstNow); a transaction
 * holds that lock across its awaits on the one connection, so a read taken at once while it is
 * open would see its uncommitted rows.
 */
describe("item reads while a transaction is open (SQLite)", () => {
  let started: Started;
  beforeAll(async () => {
    started = await sqlite.start();
  });
  afterAll(() => started.stop());

  it("never return a row a transaction wrote and then rolled back", async () => {
    const { kysely } = started.service.db;
    // A Bearer token: its check needs no query, so the GET reaches the read while the
    // transaction is open (a Basic check would itself wait for the connection).
    const issued = await fetch(`${started.url}/auth/token`, {
      method: "POST",
      headers: { authorization: ADMIN },
    });
    const { access_token: token } = (await issued.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${token}`, accept: "application/json" };
    const before = (await (await fetch(`${started.url}/employees/1`, { headers })).json()) as {
      name: string;
    };
    expect(before.name).not.toContain("Uncommitted");
    let read: Promise<{ name: string }> | undefined;
    const rolledBack = kysely
      .transaction()
      .execute(async (trx) => {
        await sql`update employees set last_name = 'Uncommitted' where id = 1`.execute(trx);
        read = fetch(`${started.url}/employees/1`, { headers }).then(
          (res) => res.json() as Promise<{ name: string }>,
        );
        // Long enough for the GET to arrive and be answered, were it not waiting for the lock.
        await new Promise((resolve) => setTimeout(resolve, 300));
        throw new Error("roll back");
      })
      .catch((err: Error) => err.message);
    expect(await rolledBack).toBe("roll back");
    expect((await read)?.name).toBe(before.name);
  });
});
