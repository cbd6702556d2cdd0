import pino from "pino";
import { describe, expect, it } from "vitest";
import { lazyLogger } from "../src/access-log.js";

/** A pino logger at `level` writing into `lines`, and a counter of the children made from it. */
function logger(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const parent = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line)) });
  let made = 0;
  const lazy = lazyLogger(() => {
    made++;
    return parent.child({ reqId: "r1" });
  }, parent);
  return { lazy, lines, made: () => made };
}

describe("lazyLogger: a request's logger made on its first line", () => {
  it("debug at level info → no line, no child made", () => {
    const { lazy, lines, made } = logger("info");
    lazy.debug({ principal: "u1" }, "authenticated");
    expect(lines).toEqual([]);
    expect(made()).toBe(0);
  });

  it("info at level info → one line through the child, made once", () => {
    const { lazy, lines, made } = logger("info");
    lazy.info("one");
    lazy.info("two");
    expect(lines.map((l) => [l.msg, l.reqId])).toEqual([
      ["one", "r1"],
      ["two", "r1"],
    ]);
    expect(made()).toBe(1);
  });

  it("debug at level debug → the line, through the child", () => {
    const { lazy, lines, made } = logger("debug");
    lazy.debug("seen");
    expect(lines.map((l) => l.msg)).toEqual(["seen"]);
    expect(made()).toBe(1);
  });

  it("no parent given (the child has a level of its own) → the child decides", () => {
    let made = 0;
    const lines: string[] = [];
    const child = pino({ level: "debug" }, { write: (line: string) => lines.push(line) });
    const lazy = lazyLogger(() => {
      made++;
      return child;
    });
    lazy.debug("seen");
    expect(made).toBe(1);
    expect(lines).toHaveLength(1);
  });
});
