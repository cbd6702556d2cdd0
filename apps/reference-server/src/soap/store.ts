import { type Generated, type Kysely, sql } from "kysely";
import type { Db } from "../db/database.js";
import type { Database } from "../db/schema.js";

/** The tables of {@link soapTablesMigration}, as Kysely sees them. */
export type SoapTables = {
  events: {
    id: Generated<number>;
    type: string;
    severity: string;
    message: string;
    occurred_at: string | null;
    customer_id: string | null;
    received_at: string;
    submitted_by: string;
  };
  notifications: {
    id: Generated<number>;
    message: string;
    status: string;
    queued_at: string;
    submitted_by: string;
  };
};

/** The service's database with the SOAP tables added to its type. */
function typed(db: Db): Kysely<Database & SoapTables> {
  return db.kysely.withTables<SoapTables>();
}

/**
 * The largest customer id both databases store exactly: PostgreSQL's `serial` is a 32-bit
 * integer, and the REST API's path ids stop at the same bound. The contract's `xs:long` is wider,
 * so ids beyond it are refused on creation and never found on reads.
 */
export const MAX_CUSTOMER_ID = 2_147_483_647n;

/** A customer as the SOAP contract sees it (the table also has a city, which the contract lacks). */
export interface CustomerRecord {
  id: number;
  name: string;
  email: string;
}

/** The customer with this id, or undefined (also for ids no customer can have). */
export async function findCustomer(db: Db, id: bigint): Promise<CustomerRecord | undefined> {
  if (id < 1n || id > MAX_CUSTOMER_ID) return undefined;
  const row = await db.kysely
    .selectFrom("customers")
    .select(["id", "name", "email"])
    .where("id", "=", Number(id))
    .executeTakeFirst();
  return row && { id: Number(row.id), name: row.name, email: row.email };
}

/** What {@link insertCustomerWithId} did. */
export type InsertOutcome = "created" | "id-taken" | "email-taken";

const UNIQUE_VIOLATIONS = new Set(["23505", "SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"]);

/**
 * Inserts a customer under the id the client chose (the contract's createCustomer keeps the id it
 * is sent). The same rows serve REST's `POST /customers`, which takes ids from the table's
 * sequence, so on PostgreSQL the sequence is moved past the new id in the same transaction; the
 * table lock keeps a concurrent REST insert from drawing that id in between. SQLite's
 * AUTOINCREMENT already continues after the largest id ever inserted.
 */
export async function insertCustomerWithId(
  db: Db,
  customer: CustomerRecord & { city: string },
): Promise<InsertOutcome> {
  try {
    return await typed(db)
      .transaction()
      .execute(async (trx) => {
        if (db.kind === "postgres") {
          // SHARE ROW EXCLUSIVE conflicts with the ROW EXCLUSIVE lock of every other insert or
          // update of customers, and with itself: the checks below stay true until commit.
          await sql`lock table customers in share row exclusive mode`.execute(trx);
        }
        const byId = await trx
          .selectFrom("customers")
          .select("id")
          .where("id", "=", customer.id)
          .executeTakeFirst();
        if (byId) return "id-taken";
        const byEmail = await trx
          .selectFrom("customers")
          .select("id")
          .where("email", "=", customer.email)
          .executeTakeFirst();
        if (byEmail) return "email-taken";
        await trx.insertInto("customers").values(customer).execute();
        if (db.kind === "postgres") {
          await sql`select setval(pg_get_serial_sequence('customers', 'id'), (select max(id) from customers))`.execute(
            trx,
          );
        }
        return "created";
      });
  } catch (err) {
    // Only reachable if a writer bypassed the lock; the constraint still tells what clashed.
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" && UNIQUE_VIOLATIONS.has(code)) {
      return /email/i.test(String((err as { message?: unknown }).message)) ? "email-taken" : "id-taken";
    }
    throw err;
  }
}

/** An event as logEvent stores it. */
export interface EventRecord {
  type: string;
  severity: string;
  message: string;
  occurredAt: string | undefined;
  customerId: bigint | undefined;
  submittedBy: string;
}

/** Stores one logged event; returns its id. */
export async function insertEvent(db: Db, event: EventRecord, now = new Date()): Promise<number> {
  const row = await typed(db)
    .insertInto("events")
    .values({
      type: event.type,
      severity: event.severity,
      message: event.message,
      occurred_at: event.occurredAt ?? null,
      customer_id: event.customerId === undefined ? null : event.customerId.toString(),
      received_at: now.toISOString(),
      submitted_by: event.submittedBy,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Queues one notification; returns its id. */
export async function queueNotification(
  db: Db,
  notification: { message: string; submittedBy: string },
  now = new Date(),
): Promise<number> {
  const row = await typed(db)
    .insertInto("notifications")
    .values({
      message: notification.message,
      status: "QUEUED",
      queued_at: now.toISOString(),
      submitted_by: notification.submittedBy,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** A product's price and stock, found by its name or SKU within a category (by name). */
export async function findPrice(
  db: Db,
  item: string,
  category: string,
): Promise<{ price: number; stock: number } | undefined> {
  const row = await db.kysely
    .selectFrom("products as p")
    .innerJoin("categories as c", "c.id", "p.category_id")
    .select(["p.price", "p.stock"])
    .where((eb) => eb.or([eb("p.name", "=", item), eb("p.sku", "=", item)]))
    .where("c.name", "=", category)
    .orderBy("p.id")
    .executeTakeFirst();
  return row && { price: Number(row.price), stock: Number(row.stock) };
}
