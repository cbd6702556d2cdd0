import {
  type ColumnDefinitionBuilder,
  type CreateTableBuilder,
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
} from "kysely";
import { soapTablesMigration } from "../soap/migration.js";
import type { Db } from "./database.js";

type Kind = Db["kind"];

/** The one place where the two dialects differ: how an auto-increment key is declared. */
function withId<T extends string>(kind: Kind, table: CreateTableBuilder<T, never>) {
  return kind === "sqlite"
    ? table.addColumn("id", "integer", (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement())
    : table.addColumn("id", "serial", (c: ColumnDefinitionBuilder) => c.primaryKey());
}

function initial(kind: Kind): Migration {
  return {
    async up(db: Kysely<unknown>) {
      const money = "double precision";
      await withId(kind, db.schema.createTable("departments"))
        .addColumn("name", "text", (c) => c.notNull().unique())
        .addColumn("city", "text", (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("employees"))
        .addColumn("first_name", "text", (c) => c.notNull())
        .addColumn("last_name", "text", (c) => c.notNull())
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("department_id", "integer", (c) => c.notNull().references("departments.id"))
        .addColumn("city", "text", (c) => c.notNull())
        .addColumn("salary", money, (c) => c.notNull())
        .addColumn("manager_id", "integer", (c) => c.references("employees.id").onDelete("set null"))
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("projects"))
        .addColumn("name", "text", (c) => c.notNull().unique())
        .addColumn("department_id", "integer", (c) => c.notNull().references("departments.id"))
        .addColumn("budget", money, (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("employee_projects")
        .addColumn("employee_id", "integer", (c) =>
          c.notNull().references("employees.id").onDelete("cascade"),
        )
        .addColumn("project_id", "integer", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("role", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("employee_projects_pk", ["employee_id", "project_id"])
        .execute();
      await withId(kind, db.schema.createTable("categories"))
        .addColumn("name", "text", (c) => c.notNull().unique())
        .addColumn("description", "text", (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("products"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("sku", "text", (c) => c.notNull().unique())
        .addColumn("category_id", "integer", (c) => c.notNull().references("categories.id"))
        .addColumn("price", money, (c) => c.notNull())
        .addColumn("stock", "integer", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("reviews"))
        .addColumn("product_id", "integer", (c) => c.notNull().references("products.id").onDelete("cascade"))
        .addColumn("author", "text", (c) => c.notNull())
        .addColumn("rating", "integer", (c) => c.notNull())
        .addColumn("comment", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("customers"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("city", "text", (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("users"))
        .addColumn("username", "text", (c) => c.notNull().unique())
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("customer_id", "integer", (c) => c.references("customers.id").onDelete("set null"))
        .execute();
      await withId(kind, db.schema.createTable("orders"))
        .addColumn("customer_id", "integer", (c) => c.notNull().references("customers.id"))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("total", money, (c) => c.notNull())
        .addColumn("currency", "text", (c) => c.notNull())
        .addColumn("carrier", "text")
        .addColumn("tracking_number", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("order_items"))
        .addColumn("order_id", "integer", (c) => c.notNull().references("orders.id").onDelete("cascade"))
        .addColumn("product_id", "integer", (c) => c.notNull().references("products.id"))
        .addColumn("quantity", "integer", (c) => c.notNull())
        .addColumn("unit_price", money, (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("payments"))
        .addColumn("order_id", "integer", (c) => c.notNull().references("orders.id").unique())
        .addColumn("amount", money, (c) => c.notNull())
        .addColumn("method", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("cart_items"))
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("product_id", "integer", (c) => c.notNull().references("products.id").onDelete("cascade"))
        .addColumn("quantity", "integer", (c) => c.notNull())
        .addUniqueConstraint("cart_items_owner_product", ["owner", "product_id"])
        .execute();
      await withId(kind, db.schema.createTable("accounts"))
        .addColumn("number", "text", (c) => c.notNull().unique())
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("balance", money, (c) => c.notNull())
        .addColumn("currency", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await withId(kind, db.schema.createTable("transfers"))
        .addColumn("from_account_id", "integer", (c) => c.notNull().references("accounts.id"))
        .addColumn("to_account_id", "integer", (c) => c.notNull().references("accounts.id"))
        .addColumn("amount", money, (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("failure_reason", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("completed_at", "text")
        .execute();
      await db.schema
        .createIndex("employees_department_idx")
        .on("employees")
        .column("department_id")
        .execute();
      await db.schema.createIndex("orders_customer_idx").on("orders").column("customer_id").execute();
      await db.schema.createIndex("order_items_order_idx").on("order_items").column("order_id").execute();
      await db.schema.createIndex("reviews_product_idx").on("reviews").column("product_id").execute();
    },
  };
}

/**
 * Brings the schema up to date at start-up. Kysely's migrator records what ran in its own table
 * and takes a lock, so several instances starting together migrate once.
 *
 * @example await migrate(db);
 */
export async function migrate(db: Db): Promise<void> {
  const provider: MigrationProvider = {
    async getMigrations() {
      return {
        "0001_initial": initial(db.kind),
        // Events and notifications of the SOAP one-way operations.
        "0002_soap_events_notifications": soapTablesMigration(db.kind),
      };
    },
  };
  // Kysely finds its bookkeeping tables by introspecting every schema; with a non-default schema
  // it would see another schema's kysely_migration_lock and skip creating its own, so name it.
  const migrator = new Migrator({
    db: db.kysely,
    provider,
    ...(db.schema ? { migrationTableSchema: db.schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(`Migration ${failed?.migrationName ?? ""} failed`, { cause: error });
  }
}
