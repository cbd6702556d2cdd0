import { type Kysely, sql } from "kysely";
import { isUniqueViolation } from "../errors.js";
import type { Db } from "./database.js";
import type { Database } from "./schema.js";

/** The largest customer id: the contract's `xs:long` is a signed 64-bit integer. */
export const MAX_CUSTOMER_ID = 9_223_372_036_854_775_807n;

/** A customer row. */
export interface NewCustomer {
  name: string;
  email: string;
  city: string;
}

/** What {@link insertCustomer} did. */
export type InsertOutcome =
  | { outcome: "created"; id: bigint }
  | { outcome: "id-taken"; id: bigint }
  | { outcome: "email-taken" };

/**
 * Inserts a customer, under the id the client chose (SOAP createCustomer with an id) or under the
 * next id the service assigns (`id` undefined: REST `POST /customers`, createCustomer with id 0).
 *
 * The service's ids come from `id_allocations`, not from the table's sequence or AUTOINCREMENT:
 * a client may choose any id up to 2^63 − 1, and both of those would continue after it (to the
 * end of the range, after which every insert fails). The allocator continues after the last id
 * it assigned, and skips the ids clients took. Every customer insert takes a lock that conflicts
 * with itself (a PostgreSQL table lock; SQLite runs one write transaction at a time), so the id
 * and email checks below stay true until commit.
 *
 * `within` runs in the transaction once the customer is inserted (the Idempotency-Key's outcome
 * of `POST /customers` commits with it).
 *
 * @example const r = await insertCustomer(db, { name: "Acme", email: "a@acme.example", city: "" });
 */
export async function insertCustomer(
  db: Db,
  customer: NewCustomer & { id?: bigint | undefined },
  within?: (trx: Kysely<Database>, id: bigint) => Promise<unknown>,
): Promise<InsertOutcome> {
  try {
    return await db.kysely.transaction().execute(async (trx): Promise<InsertOutcome> => {
      if (db.kind === "postgres") {
        // SHARE ROW EXCLUSIVE conflicts with the ROW EXCLUSIVE lock of every other insert or
        // update of customers, and with itself.
        await sql`lock table customers in share row exclusive mode`.execute(trx);
      }
      if (customer.id !== undefined && (await taken(trx, customer.id))) {
        return { outcome: "id-taken", id: customer.id };
      }
      const byEmail = await trx
        .selectFrom("customers")
        .select("id")
        .where("email", "=", customer.email)
        .executeTakeFirst();
      if (byEmail) return { outcome: "email-taken" };
      const id = customer.id ?? (await allocate(trx));
      await trx
        .insertInto("customers")
        .values({ id, name: customer.name, email: customer.email, city: customer.city })
        .execute();
      await within?.(trx, id);
      return { outcome: "created", id };
    });
  } catch (err) {
    // Only reachable if a writer bypassed the lock; the constraint still tells what clashed.
    if (isUniqueViolation(err)) {
      if (/email/i.test(String((err as { message?: unknown }).message))) return { outcome: "email-taken" };
      if (customer.id !== undefined) return { outcome: "id-taken", id: customer.id };
    }
    throw err;
  }
}

async function taken(trx: Kysely<Database>, id: bigint): Promise<boolean> {
  const row = await trx.selectFrom("customers").select("id").where("id", "=", id).executeTakeFirst();
  return row !== undefined;
}

/**
 * The next id the service assigns: the allocator's next id, or when a client took that one, the
 * first free id after it (one indexed query, however long the run of taken ids).
 */
async function allocate(trx: Kysely<Database>): Promise<bigint> {
  const row = await trx
    .selectFrom("id_allocations")
    .select("next_id")
    .where("name", "=", "customers")
    .executeTakeFirstOrThrow();
  let id = BigInt(row.next_id);
  if (await taken(trx, id)) {
    const free = await sql<{ free: number | bigint }>`
      select c.id + 1 as free from customers c
      where c.id >= ${id} and c.id < ${MAX_CUSTOMER_ID}
        and not exists (select 1 from customers d where d.id = c.id + 1)
      order by c.id limit 1`.execute(trx);
    const next = free.rows[0]?.free;
    if (next === undefined) throw new Error("No customer id is left to assign");
    id = BigInt(next);
  }
  if (id > MAX_CUSTOMER_ID) throw new Error("No customer id is left to assign");
  await trx
    .updateTable("id_allocations")
    .set({ next_id: id + 1n > MAX_CUSTOMER_ID ? id : id + 1n })
    .where("name", "=", "customers")
    .execute();
  return id;
}
