import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { migrationLines, unnamedChanges } from "./migration-consumer.mjs";

/**
 * Check 1 of scripts/migration-consumer.mjs on the fixture: the migrated 0.1.0 application
 * changes only what the migration lines name, and a line missing shows as the change it names.
 */
const fixture = resolve(import.meta.dirname, "fixtures/consumer-0.1");
const before = join(fixture, "app.0.1.ts");
const after = join(fixture, "app.ts");

describe("the 0.1.0 consumer's migration", () => {
  const lines = migrationLines();

  it("every change from app.0.1.ts to app.ts is named by a migration line", () => {
    expect(unnamedChanges(before, after, lines)).toEqual([]);
  });

  it("without the line of a moved import, that import is named", () => {
    const without = lines.filter((line) => !line.includes("@svc/ratelimit/express"));
    expect(without.length).toBeLessThan(lines.length);
    expect(unnamedChanges(before, after, without)).toEqual([
      'rateLimit: imported from "@svc/ratelimit/express" instead of "@svc/ratelimit", which no migration line names',
    ]);
  });

  it("without the line of a new route option, the option is named", () => {
    const without = lines.filter((line) => !line.includes("produces"));
    expect(unnamedChanges(before, after, without)).toEqual([
      expect.stringMatching(/^`produces` \(in ".*\{ produces: \[\] \}.*"\): no migration line names it$/),
    ]);
  });
});
