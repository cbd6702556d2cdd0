import { describe, expect, it } from "vitest";
import { escapeStrayPercent, malformedEscape } from "./target.js";

// RFC 3986 §2.1: pct-encoded = "%" HEXDIG HEXDIG; only the path is the router's.
describe("malformedEscape and escapeStrayPercent", () => {
  it.each([
    ["/%ZZ", true, "/%25ZZ"],
    ["/employees/%zz", true, "/employees/%25zz"],
    ["/%", true, "/%25"],
    ["/employees/1%", true, "/employees/1%25"],
    ["/a%2", true, "/a%252"],
    ["/a%2Fb%2f", false, "/a%2Fb%2f"],
    ["/employees/%31", false, "/employees/%31"],
    ["/employees/1?x=%ZZ", false, "/employees/1?x=%ZZ"],
    ["/%ZZ?x=%ZZ", true, "/%25ZZ?x=%ZZ"],
    ["/a#%ZZ", false, "/a#%ZZ"],
    ["/%G0/%0G/%00", true, "/%25G0/%250G/%00"],
    ["/plain", false, "/plain"],
  ])("%s → malformed %s, routed as %s", (target, malformed, escaped) => {
    expect(malformedEscape(target)).toBe(malformed);
    expect(escapeStrayPercent(target)).toBe(escaped);
    expect(malformedEscape(escapeStrayPercent(target))).toBe(false);
  });
});
