import { describe, expect, it } from "vitest";
import { parseHttpDate } from "./http-date.js";

const NOV_6_1994 = Date.UTC(1994, 10, 6, 8, 49, 37) / 1000;
const NOW = new Date("2026-11-22T00:00:00Z");

describe("parseHttpDate (RFC 9110 §5.6.7)", () => {
  it.each([
    ["Sun, 06 Nov 1994 08:49:37 GMT", NOV_6_1994],
    ["Sunday, 06-Nov-94 08:49:37 GMT", NOV_6_1994],
    ["Sun Nov  6 08:49:37 1994", NOV_6_1994],
    ["Sun Nov 06 08:49:37 1994", NOV_6_1994],
    // Two-digit years: more than 50 years ahead means the previous century.
    ["Saturday, 06-Nov-76 08:49:37 GMT", Date.UTC(2076, 10, 6, 8, 49, 37) / 1000],
    ["Saturday, 06-Nov-77 08:49:37 GMT", Date.UTC(1977, 10, 6, 8, 49, 37) / 1000],
    ["Sat, 29 Feb 2020 00:00:00 GMT", Date.UTC(2020, 1, 29) / 1000],
  ])("%s → its instant", (value, seconds) => {
    expect(parseHttpDate(value, NOW)).toBe(seconds);
  });

  it("Wed, 01 Jan 0050 00:00:00 GMT → the year 50, not 1950", () => {
    expect(parseHttpDate("Wed, 01 Jan 0050 00:00:00 GMT", NOW)).toBe(
      new Date("0050-01-01T00:00:00Z").getTime() / 1000,
    );
  });

  it.each([
    "2026-01-01",
    "2026-01-01T00:00:00Z",
    "2099",
    "0",
    "",
    "yesterday",
    "sun, 06 nov 1994 08:49:37 gmt",
    "Sun, 06 Nov 1994 08:49:37 UTC",
    "Sun, 6 Nov 1994 08:49:37 GMT",
    "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT",
    "Tue, 31 Feb 2026 00:00:00 GMT",
    "Sun, 06 Nov 1994 24:00:00 GMT",
    "Sun, 06 Nov 1994 08:60:00 GMT",
    "Sunday, 06-Nov-1994 08:49:37 GMT",
    "Sun Nov 6 08:49:37 1994",
  ])("%j → undefined (not an HTTP-date)", (value) => {
    expect(parseHttpDate(value, NOW)).toBeUndefined();
  });

  it("a long run of spaces and digits is refused in linear time", () => {
    const hostile = `Sun, ${"0".repeat(50_000)} ${" ".repeat(50_000)}`;
    const started = performance.now();
    expect(parseHttpDate(hostile, NOW)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(100);
  });
});
