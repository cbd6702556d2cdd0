import { describe, expect, it } from "vitest";

/**
 * One row of an options table: the option's name, a factory call with one bad value, the code it
 * must carry, the message it must match (naming option, value and what is accepted), and the same
 * call with a good value.
 */
export type OptionCase = [
  option: string,
  bad: () => unknown,
  code: string,
  message: RegExp,
  good: () => unknown,
];

/** What `build` threw: name, code and message; a call that returns fails the test. */
export function refusal(build: () => unknown): { name: string; code: unknown; message: string } {
  try {
    build();
  } catch (err) {
    const e = err as Error & { code?: unknown };
    return { name: e.name, code: e.code, message: e.message };
  }
  throw new Error("expected a refused option, but the factory constructed");
}

/**
 * The table test every package runs over its options: for each row, the bad value is refused at
 * construction with a `TypeError`, the row's code and message, and the good value constructs.
 */
export function describeOptions(title: string, rows: readonly OptionCase[]): void {
  describe(title, () => {
    it.each(rows)(
      "%s: bad value → TypeError with its code, naming option, value and what is accepted",
      (_o, bad, code, message) => {
        const err = refusal(bad);
        expect(err).toMatchObject({ name: "TypeError", code });
        expect(err.message).toMatch(message);
      },
    );
    it.each(rows)("%s: good value → constructs", (_o, _bad, _code, _message, good) => {
      expect(good).not.toThrow();
    });
  });
}
