import {
  type ColumnDefinitionBuilder,
  type CreateTableBuilder,
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  sql,
} from "kysely";
import { soapTablesMigration } from "../soap/migration.js";
import type { Db } from "./database.js";
import { minorDigits } from "./money.js";

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

/** Every table with a generated `id`, and every column that references one. */
const ID_TABLES = [
  "departments",
  "employees",
  "projects",
  "categories",
  "products",
  "reviews",
  "customers",
  "users",
  "orders",
  "order_items",
  "payments",
  "cart_items",
  "accounts",
  "transfers",
  "events",
  "notifications",
];
const REFERENCES: ReadonlyArray<readonly [string, string]> = [
  ["employees", "department_id"],
  ["employees", "manager_id"],
  ["projects", "department_id"],
  ["employee_projects", "employee_id"],
  ["employee_projects", "project_id"],
  ["products", "category_id"],
  ["reviews", "product_id"],
  ["users", "customer_id"],
  ["orders", "customer_id"],
  ["order_items", "order_id"],
  ["order_items", "product_id"],
  ["payments", "order_id"],
  ["cart_items", "product_id"],
  ["transfers", "from_account_id"],
  ["transfers", "to_account_id"],
];
/**
 * Money columns in the service currency (EUR), and the two whose currency is the account's
 * (a transfer moves money between two accounts of the same currency).
 */
const EUR_MONEY: ReadonlyArray<readonly [string, string]> = [
  ["employees", "salary"],
  ["projects", "budget"],
  ["products", "price"],
  ["orders", "total"],
  ["order_items", "unit_price"],
  ["payments", "amount"],
];
const ACCOUNT_MONEY: ReadonlyArray<readonly [string, string, string]> = [
  ["accounts", "balance", "currency"],
  // A transfer's currency is its source account's.
  ["transfers", "amount", "(select a.currency from accounts a where a.id = transfers.from_account_id)"],
];

/**
 * Issue 18: money becomes integer minor units (cents for EUR; the account's currency for balances
 * and transfers), rounded half away from zero from the old `double precision` values, so sums are
 * exact; and every id becomes 64-bit (a customer id is an `xs:long`), with the ids the service
 * assigns to customers kept in `id_allocations`, apart from the ids SOAP clients choose.
 * SQLite's integers are already 64-bit; its money columns are rebuilt as integers.
 */
function exactMoneyAndLongIds(kind: Kind, minorDigits: (currency: string) => number): Migration {
  return {
    // PostgreSQL runs each migration in a transaction; Kysely does not on SQLite, so this one
    // takes its own: a failure half-way must not leave half the columns converted.
    up: (db: Kysely<unknown>) =>
      kind === "sqlite" ? db.transaction().execute((trx) => convert(trx)) : convert(db),
  };
  async function convert(db: Kysely<unknown>): Promise<void> {
    const currencies = await sql<{ currency: string }>`select distinct currency from accounts`.execute(db);
    const scales = new Map<number, string[]>([[2, []]]);
    for (const { currency } of currencies.rows) {
      const d = minorDigits(currency);
      scales.set(d, [...(scales.get(d) ?? []), currency]);
    }
    /** The conversion of one column: old value × 10^digits, per group of rows. */
    const groups = (currencyOf: string | undefined) =>
      currencyOf === undefined
        ? [{ factor: 100, where: sql`true` }]
        : [...scales].map(([d, codes]) => ({
            factor: 10 ** d,
            where: codes.length ? sql`${sql.raw(currencyOf)} in (${sql.join(codes)})` : sql`false`,
          }));
    const money = [
      ...EUR_MONEY.map(([table, column]) => ({
        table,
        column,
        currencyOf: undefined as string | undefined,
      })),
      ...ACCOUNT_MONEY.map(([table, column, currencyOf]) => ({ table, column, currencyOf })),
    ];
    if (kind === "postgres") {
      for (const table of ID_TABLES) {
        await sql`alter table ${sql.table(table)} alter column id type bigint`.execute(db);
        const seq = await sql<{
          name: string | null;
        }>`select pg_get_serial_sequence(${table}, 'id') as name`.execute(db);
        const name = seq.rows[0]?.name;
        if (name) await sql`alter sequence ${sql.raw(name)} as bigint`.execute(db);
      }
      for (const [table, column] of REFERENCES) {
        await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} type bigint`.execute(db);
      }
      for (const { table, column, currencyOf } of money) {
        const col = sql.ref(column);
        await sql`alter table ${sql.table(table)} alter column ${col} type numeric using ${col}::numeric`.execute(
          db,
        );
        // The transfers' currency comes from accounts, whose balances are converted already:
        // the subquery reads only the currency column.
        for (const g of groups(currencyOf)) {
          await sql`update ${sql.table(table)} set ${col} = round(${col} * ${sql.lit(g.factor)}) where ${g.where}`.execute(
            db,
          );
        }
        await sql`alter table ${sql.table(table)} alter column ${col} type bigint using ${col}::bigint`.execute(
          db,
        );
      }
    } else {
      for (const { table, column, currencyOf } of money) {
        const col = sql.ref(column);
        const next = sql.ref(`${column}__minor`);
        await sql`alter table ${sql.table(table)} add column ${next} integer not null default 0`.execute(db);
        for (const g of groups(currencyOf)) {
          await sql`update ${sql.table(table)} set ${next} = cast(round(${col} * ${sql.lit(g.factor)}) as integer) where ${g.where}`.execute(
            db,
          );
        }
        await sql`alter table ${sql.table(table)} drop column ${col}`.execute(db);
        await sql`alter table ${sql.table(table)} rename column ${next} to ${col}`.execute(db);
      }
    }
    await db.schema
      .createTable("id_allocations")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("next_id", "bigint", (c) => c.notNull())
      .execute();
    await sql`insert into id_allocations (name, next_id) select 'customers', coalesce(max(id), 0) + 1 from customers`.execute(
      db,
    );
  }
}

/**
 * Brings the schema up to date at start-up. Kysely's migrator records what ran in its own table
 * and takes a lock, so several instances starting together migrate once.
 *
 * @example await migrate(db);
 */
export async function migrate(db: Db): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator(db).migrateToLatest();
    const failed = results?.find((r) => r.status === "Error");
    if (!error && !failed) return;
    // Only a failure before any migration ran (no result in error) is retried; see MIGRATE_ATTEMPTS.
    if (!failed && attempt < MIGRATE_ATTEMPTS && isDroppedMeanwhile(error)) {
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      continue;
    }
    throw new Error(`Migration ${failed?.migrationName ?? ""} failed`, { cause: error });
  }
}

/**
 * How often {@link migrate} tries when PostgreSQL answers `invalid_schema_name`,
 * `undefined_table` or `undefined_column` (SQLSTATE 3F000, 42P01, 42703, PostgreSQL docs,
 * Appendix A) before any migration ran. Kysely's migrator first looks for its bookkeeping tables
 * by introspecting every schema of the database, resolving each column of each table by name
 * (`pg_get_serial_sequence`); a schema, a table or a column that another client of the shared
 * database drops while that query runs (another instance's migration replacing a column in its
 * own schema) fails it with "schema ... does not exist", "relation ... does not exist" or "column
 * ... of relation ... does not exist", naming that other object. The drop is over by the next
 * attempt. A schema of our own that is really missing fails every attempt, so it
 * still stops the start-up, a few milliseconds later.
 */
const MIGRATE_ATTEMPTS = 3;

function isDroppedMeanwhile(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === "3F000" || code === "42P01" || code === "42703";
}

/**
 * The migrator of the service's schema (tests take it to an earlier migration, then up).
 *
 * @example await migrator(db).migrateTo("0002_soap_events_notifications");
 */
export function migrator(db: Db): Migrator {
  const provider: MigrationProvider = {
    async getMigrations() {
      return {
        "0001_initial": initial(db.kind),
        // Events and notifications of the SOAP one-way operations.
        "0002_soap_events_notifications": soapTablesMigration(db.kind),
        "0003_exact_money_and_long_ids": exactMoneyAndLongIds(db.kind, minorDigits),
        // Every instance looks for stuck PENDING transfers every few seconds (routes/money.ts):
        // an index of those alone, so the look costs the few there are, not the whole table.
        "0004_pending_transfers_index": {
          up: (k: Kysely<unknown>) =>
            sql`create index transfers_pending_idx on transfers (created_at) where status = 'PENDING'`
              .execute(k)
              .then(() => {}),
        },
      };
    },
  };
  // Kysely finds its bookkeeping tables by introspecting every schema; with a non-default schema
  // it would see another schema's kysely_migration_lock and skip creating its own, so name it.
  return new Migrator({
    db: db.kysely,
    provider,
    ...(db.schema ? { migrationTableSchema: db.schema } : {}),
  });
}
