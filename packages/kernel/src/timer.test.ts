import { describe, expect, it } from "vitest";
import { isTimerDelay, MAX_TIMER_MS } from "./timer.js";

describe("isTimerDelay", () => {
  it.each([1, 0.5, 500, MAX_TIMER_MS])("%s → true", (value) => {
    expect(isTimerDelay(value)).toBe(true);
  });
  it.each([0, -1, MAX_TIMER_MS + 1, 2 ** 31, Number.POSITIVE_INFINITY, Number.NaN, "500", undefined])(
    "%s → false",
    (value) => {
      expect(isTimerDelay(value)).toBe(false);
    },
  );
});
