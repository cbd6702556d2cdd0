import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIMIT } from "../src/service.js";
import { FRAMEWORK_NAMES, FRAMEWORKS } from "./frameworks.js";
import { comparable, differences, type Response, resets, send } from "./harness.js";
import { rows } from "./rows.js";
import { removeBundles, type Served } from "./runtimes.js";

/**
 * The rows listed in EXCEPTIONS.md: by row name, the frameworks whose answer differs from the first
 * framework's, each with what differs (a line per row and framework).
 */
function exceptions(): Map<string, Map<string, string[]>> {
  const table = readFileSync(new URL("./EXCEPTIONS.md", import.meta.url), "utf8");
  const listed = new Map<string, Map<string, string[]>>();
  for (const line of table.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const [name, framework, differs] = line
      .slice(1, -1)
      .split(" | ")
      .map((cell) => cell.trim().replace(/^`|`$/g, ""));
    if (!FRAMEWORK_NAMES.includes(framework as string))
      throw new Error(`EXCEPTIONS.md names ${framework}, which is no framework of the table`);
    // A runtime left out here ([skip] where it is not installed) differs in nothing.
    if (!FRAMEWORKS.some((f) => f.name === framework)) continue;
    const row = listed.get(name as string) ?? new Map<string, string[]>();
    row.set(framework as string, (differs as string).split(/,\s*/));
    listed.set(name as string, row);
  }
  return listed;
}

const listed = exceptions();
const [reference, ...others] = FRAMEWORKS;

describe("the README composition on every framework", () => {
  const servers: Served[] = [];
  // Packs the packages, bundles the runtime entries and starts eleven servers, six of them in
  // processes of their own: a minute and more on a loaded two-core machine.
  beforeAll(async () => {
    servers.push(...(await Promise.all(FRAMEWORKS.map((f) => f.start()))));
  }, 180_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    removeBundles();
  });

  it("lists only rows of the table as exceptions", () => {
    const names = new Set(rows.map((r) => r.name));
    expect([...listed.keys()].filter((n) => !names.has(n))).toEqual([]);
    expect(new Set(rows.map((r) => r.name)).size).toBe(rows.length);
  });

  rows.forEach((row, index) => {
    const client = `10.${index >> 8}.${index & 255}.1`;
    it(row.name, async () => {
      const answers = await Promise.all(
        servers.map(async (server) => {
          const before: Response[] = [];
          for (const step of row.before ?? []) before.push(await send(server.url, step, client));
          const request = typeof row.request === "function" ? row.request(before) : row.request;
          return send(server.url, request, client);
        }),
      );
      const first = answers[0] as Response;
      const exception = listed.get(row.name);
      // The row's status, on every framework the table does not list as answering another one;
      // `expect` on the first framework's answer and `every` on each one the table does not list
      // for the row; a listed framework's own answer where the row gives it.
      for (const [i, answer] of answers.entries()) {
        const name = FRAMEWORKS[i]?.name ?? "";
        const own = row.answers?.[name];
        if (own !== undefined) {
          expect(
            exception?.get(name),
            `${name}: listed in EXCEPTIONS.md as answering another status`,
          ).toContain("status");
          expect(answer.status, `${name}: its own status`).toBe(own.status);
          own.expect?.(answer);
          continue;
        }
        if (exception?.get(name)?.includes("status") !== true)
          expect(answer.status, `${name}: status`).toBe(row.status);
        if (i === 0) row.expect?.(answer);
        if (i === 0 || exception?.has(name) !== true) row.every?.(answer);
      }
      for (const [i, answer] of answers.entries()) {
        if (exception?.has(FRAMEWORKS[i]?.name ?? "") === true) continue;
        const seconds = resets(answer);
        expect(seconds.length, `${FRAMEWORKS[i]?.name}: rate limit resets`).toBe(resets(first).length);
        // Seconds apart on the window's clock: requests sent across a fixed window's end read 0
        // on one framework and the whole window on the next.
        const window = LIMIT.windowMs / 1000;
        for (const [j, s] of seconds.entries()) {
          const apart = Math.abs(s - (resets(first)[j] as number)) % window;
          expect(
            Math.min(apart, window - apart),
            `${FRAMEWORKS[i]?.name}: seconds to reset`,
          ).toBeLessThanOrEqual(1);
        }
      }
      const found = others
        .map((framework, i) => ({
          framework: framework.name,
          differs: differences(first, answers[i + 1] as Response),
        }))
        .filter((d) => d.differs.length > 0);
      if (exception !== undefined) {
        // Listed: it still differs, on the frameworks listed, in what is listed (the table stays true).
        expect(Object.fromEntries(found.map((d) => [d.framework, d.differs])), "EXCEPTIONS.md").toEqual(
          Object.fromEntries(exception),
        );
        return;
      }
      for (const [i, framework] of others.entries())
        expect(
          comparable(answers[i + 1] as Response),
          `${framework.name} against ${reference?.name}`,
        ).toEqual(comparable(first));
    });
  });
});
