import { type Kysely, type Migration, sql } from "kysely";
import type { Db } from "../db/database.js";

/**
 * The tables behind the SOAP one-way operations: `events` (logEvent) and `notifications`
 * (sendNotification). `customer_id` is text because it is an `xs:long` the client chose: it may
 * name no customer, and it must not lose digits beyond 2^53 on its way through the database.
 */
export function soapTablesMigration(kind: Db["kind"]): Migration {
  const id = kind === "sqlite" ? sql`integer primary key autoincrement` : sql`serial primary key`;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("events")
        .addColumn("id", id)
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("severity", "text", (c) => c.notNull())
        .addColumn("message", "text", (c) => c.notNull())
        .addColumn("occurred_at", "text")
        .addColumn("customer_id", "text")
        .addColumn("received_at", "text", (c) => c.notNull())
        .addColumn("submitted_by", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("notifications")
        .addColumn("id", id)
        .addColumn("message", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("queued_at", "text", (c) => c.notNull())
        .addColumn("submitted_by", "text", (c) => c.notNull())
        .execute();
    },
  };
}
