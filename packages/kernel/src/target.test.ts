import { describe, expect, it } from "vitest";
import { absoluteOrigin, escapeStrayPercent, malformedEscape, routerTarget, targetPath } from "./target.js";

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

// RFC 9112 §3.2: every form of request-target a router meets, routed as Express's router does.
describe("targetPath and routerTarget", () => {
  it.each([
    ["/employees/7?x=1", "/employees/7", "/employees/7?x=1"],
    ["/employees/7#top", "/employees/7", "/employees/7#top"],
    // §3.2.2: absolute-form of any scheme, routed by its path; an empty path is `/`.
    ["http://api.example/employees/7", "/employees/7", "http://api.example/employees/7"],
    ["https://api.example", "/", "https://api.example"],
    ["ftp://api.example/employees/7?x=1", "/employees/7", "/employees/7?x=1"],
    ["ws://api.example", "/", "/"],
    ["ws://api.example?x=1", "/", "/?x=1"],
    ["HTTP://API.EXAMPLE/employees/7", "/employees/7", "/employees/7"],
    ["Https://api.example/employees/7", "/employees/7", "/employees/7"],
    ["git+ssh://h/employees/7", "/employees/7", "/employees/7"],
    ["ftp://api.example/employees/%ZZ", "/employees/%ZZ", "/employees/%25ZZ"],
    ["http://api.example/%ZZ?q=%ZZ", "/%ZZ", "http://api.example/%25ZZ?q=%ZZ"],
    // §3.2.4 and §3.2.3: the asterisk-form and the authority-form name no route.
    ["*", "*", "//"],
    ["api.example:443", "api.example:443", "//"],
    ["1ftp://api.example/employees/7", "1ftp://api.example/employees/7", "//"],
  ])("%s → dispatched on %s, routed as %s", (target, path, routed) => {
    expect(targetPath(target)).toBe(path);
    expect(routerTarget(target)).toBe(routed);
  });
});

// RFC 9112 §3.2.2: the absolute-form's scheme and authority, of any scheme, in any case.
describe("absoluteOrigin", () => {
  it.each([
    ["http://api.example/v2/employees?x=1", "http://api.example"],
    ["HTTPS://API.EXAMPLE:8443", "HTTPS://API.EXAMPLE:8443"],
    ["ftp://api.example/employees/1", "ftp://api.example"],
    ["http://api.example?x", "http://api.example"],
    ["/v2/employees", ""],
    ["//api.example/x", ""],
    ["*", ""],
    ["api.example:443", ""],
    ["urn:x", ""],
    ["1http://x/", ""],
  ])("%s → %j", (target, origin) => {
    expect(absoluteOrigin(target)).toBe(origin);
  });
});
