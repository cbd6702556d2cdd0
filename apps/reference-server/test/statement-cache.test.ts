import SQLite from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { withStatementCache } from "../src/db/database.js";

const opened: SQLite.Database[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) if (db.open) db.close();
});

function cache(max: number) {
  const native = new SQLite(":memory:");
  opened.push(native);
  return withStatementCache(native, max);
}

/** The prepared statements: the same one back while it is held, a fresh one once it has left. */
describe("withStatementCache: the least recently used statement leaves", () => {
  it.each([
    // [texts prepared in order, the text asked last, held then?]
    [["select 1", "select 2", "select 1", "select 3"], "select 1", true],
    [["select 1", "select 2", "select 1", "select 3"], "select 2", false],
    [["select 1", "select 1", "select 2", "select 3"], "select 1", false],
    [["select 1", "select 2", "select 2", "select 3"], "select 2", true],
    [["select 1", "select 2", "select 2", "select 1", "select 3"], "select 2", false],
    [["select 1", "select 2", "select 1", "select 2", "select 3"], "select 2", true],
  ])("%j with room for 2, then %s → held: %s", (texts, last, held) => {
    const statements = cache(2);
    const first = new Map<string, unknown>();
    for (const text of texts) {
      const statement = statements.prepare(text);
      if (!first.has(text)) first.set(text, statement);
    }
    expect(statements.prepare(last) === first.get(last)).toBe(held);
  });

  it("the same text asked 1,000 times → the same statement, and its rows each time", () => {
    const statements = cache(2);
    const statement = statements.prepare("select ? as n");
    for (let i = 0; i < 1_000; i++) {
      const again = statements.prepare("select ? as n");
      expect(again).toBe(statement);
      expect(again.all([i])).toEqual([{ n: i }]);
    }
  });
});

/** `get`: the first row alone, as `all(...)[0]` reads it, integers exact either way. */
describe("withStatementCache: a statement's first row", () => {
  it.each([
    // [query, parameters, the first row]
    ["select ? as n, 'a' as s with 7", "select ? as n, 'a' as s", [7], { n: 7, s: "a" }],
    [
      "two rows → the first",
      "select value as n from (select 2 as value union all select 1) order by value",
      [],
      { n: 1 },
    ],
    ["no row → null", "select 1 as n where 0", [], null],
    ["2^53 + 1 → a BigInt", "select ? as n", [9007199254740993n], { n: 9007199254740993n }],
    ["-(2^53 + 1) → a BigInt", "select ? as n", [-9007199254740993n], { n: -9007199254740993n }],
    ["2^53 - 1 → a number", "select ? as n", [9007199254740991n], { n: 9007199254740991 }],
    ["a name twice → the later column", "select 1 as a, 2 as a", [], { a: 2 }],
    [
      "a column named __proto__ → as better-sqlite3 reads it",
      'select 1 as "__proto__", 2 as n',
      [],
      { n: 2 },
    ],
  ])("%s", (_name, text, parameters, first) => {
    const statements = cache(2);
    const statement = statements.prepare(text);
    const row = statement.get(parameters);
    expect(row).toEqual(first);
    expect(row).toEqual(statement.all(parameters)[0] ?? null);
  });

  it("a statement that returns no rows → null, and it does not run", () => {
    const native = new SQLite(":memory:");
    opened.push(native);
    const statements = withStatementCache(native, 2);
    statements.prepare("create table t (id integer)").run([]);
    expect(statements.prepare("insert into t values (1)").get([])).toBeNull();
    expect(native.prepare("select count(*) as n from t").get()).toEqual({ n: 0 });
  });
});
