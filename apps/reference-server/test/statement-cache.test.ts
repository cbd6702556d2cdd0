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
