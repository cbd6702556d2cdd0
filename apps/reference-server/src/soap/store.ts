import type { Generated, Kysely } from "kysely";
import { MAX_CUSTOMER_ID } from "../db/customers.js";
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

export { type InsertOutcome, insertCustomer, MAX_CUSTOMER_ID } from "../db/customers.js";

/** A customer as the SOAP contract sees it (the table also has a city, which the contract lacks). */
export interface CustomerRecord {
  id: bigint;
  name: string;
  email: string;
}

/** The customer with this id, or undefined (also for ids no customer can have). */
export async function findCustomer(db: Db, id: bigint): Promise<CustomerRecord | undefined> {
  if (id < 1n || id > MAX_CUSTOMER_ID) return undefined;
  const row = await db.kysely
    .selectFrom("customers")
    .select(["id", "name", "email"])
    .where("id", "=", id)
    .executeTakeFirst();
  return row && { id: BigInt(row.id), name: row.name, email: row.email };
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

/** A product's price (in cents) and stock, found by its name or SKU within a category (by name). */
export async function findPrice(
  db: Db,
  item: string,
  category: string,
): Promise<{ priceMinor: number; stock: number } | undefined> {
  const row = await db.kysely
    .selectFrom("products as p")
    .innerJoin("categories as c", "c.id", "p.category_id")
    .select(["p.price", "p.stock"])
    .where((eb) => eb.or([eb("p.name", "=", item), eb("p.sku", "=", item)]))
    .where("c.name", "=", category)
    .orderBy("p.id")
    .executeTakeFirst();
  return row && { priceMinor: Number(row.price), stock: Number(row.stock) };
}
