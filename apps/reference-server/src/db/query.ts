import {
  type Compilable,
  type CompiledQuery,
  createQueryId,
  type Kysely,
  type SelectQueryBuilder,
  sql,
} from "kysely";
import type { ListQuery } from "../request.js";
import type { Db } from "./database.js";

/** A schema-agnostic view of the database, for the few queries built from a column allow-list. */
export type LooseDb = Record<string, Record<string, unknown>>;
export type LooseQuery = SelectQueryBuilder<LooseDb, string, Record<string, unknown>>;

/** The same Kysely instance, typed for queries whose columns come from an allow-list. */
export function loose(db: Db): Kysely<LooseDb> {
  return db.kysely as unknown as Kysely<LooseDb>;
}

/**
 * Runs a page of a collection read: filters, sort (then id, so pages are stable) and the total.
 * Column names only ever come from the resource's allow-list, never from the request.
 */
export async function listPage(
  base: LooseQuery,
  q: ListQuery,
  idColumn: string,
): Promise<{ rows: Record<string, unknown>[]; total: number }> {
  let filtered = base;
  for (const f of q.filters) {
    if (f.match === "contains") {
      const pattern = `%${String(f.value).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const columns = typeof f.column === "string" ? [f.column] : f.column;
      // Both sides folded by the database's lower(), so they fold alike (JavaScript's toLowerCase
      // and PostgreSQL's lower() differ on some letters, such as U+0130).
      filtered = filtered.where((eb) =>
        eb.or(columns.map((c) => eb(sql`lower(${sql.ref(c)})`, "like", sql`lower(${pattern}) escape '\\'`))),
      );
    } else {
      filtered = filtered.where(sql.ref(String(f.column)), "=", f.value);
    }
  }
  const counted = await filtered
    .clearSelect()
    .select(sql<number>`cast(count(*) as integer)`.as("n"))
    .executeTakeFirst();
  let ordered = filtered;
  if (q.sort) ordered = ordered.orderBy(sql.ref(q.sort.column), q.sort.direction);
  const rows = await ordered
    .orderBy(sql.ref(idColumn), "asc")
    .limit(q.size)
    .offset((q.page - 1) * q.size)
    .execute();
  return { rows, total: Number(counted?.n ?? 0) };
}

/**
 * A query built and compiled once, then run many times with another value in place of one
 * placeholder: the hot primary-key reads skip Kysely's per-request builder and compiler work
 * (the SQL text, and with it the prepared statement, stays the same).
 *
 * `build` receives an opaque placeholder to use as a value (`where("t.id", "=", placeholder)`);
 * every parameter that is the placeholder is replaced by the value given to the returned function.
 *
 * @example
 * const byId = compiledTemplate((id) => loose(db).selectFrom("employees").selectAll().where("id", "=", id));
 * const { rows } = await db.kysely.executeQuery(byId(42));
 */
export function compiledTemplate<R>(
  build: (placeholder: unknown) => Compilable<R>,
): (value: unknown) => CompiledQuery<R> {
  const placeholder = Object.freeze({ placeholder: true });
  let template: CompiledQuery<R> | undefined;
  return (value) => {
    template ??= build(placeholder).compile();
    return {
      query: template.query,
      sql: template.sql,
      parameters: template.parameters.map((p) => (p === placeholder ? value : p)),
      queryId: createQueryId(),
    };
  };
}
