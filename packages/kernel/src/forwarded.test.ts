import { describe, expect, it } from "vitest";
import { trustedHops, trustedListValue } from "./forwarded.js";

const only =
  (...trusted: string[]) =>
  (address: string) =>
    trusted.includes(address);

describe("trustedHops", () => {
  it("counts the X-Forwarded-For addresses the chain vouches for, from the end", () => {
    expect(trustedHops("203.0.113.9, 198.51.100.7", only("198.51.100.7"))).toBe(1);
    expect(trustedHops("203.0.113.9, 198.51.100.7", only())).toBe(0);
    expect(trustedHops("203.0.113.9, 198.51.100.7", () => true)).toBe(2);
  });
  it("stops at what is not an address, and without a trust function or header is 0", () => {
    expect(trustedHops("203.0.113.9, unknown, 198.51.100.7", () => true)).toBe(1);
    expect(trustedHops(undefined, () => true)).toBe(0);
    expect(trustedHops("198.51.100.7", undefined)).toBe(0);
  });
  it("passes each address its hop (1 for the peer's client)", () => {
    const seen: Array<[string, number]> = [];
    trustedHops("192.0.2.1, 192.0.2.2", (address, hop) => {
      seen.push([address, hop]);
      return true;
    });
    expect(seen).toEqual([
      ["192.0.2.2", 1],
      ["192.0.2.1", 2],
    ]);
  });
});

describe("trustedListValue", () => {
  it("a list → the value the trusted chain appended; a client's own first value is never read", () => {
    expect(trustedListValue("evil.example, shop.example", () => 0)).toBe("shop.example");
    expect(trustedListValue("evil.example, shop.example, internal:8080", () => 1)).toBe("shop.example");
    expect(trustedListValue("a, b", () => 5)).toBe("a");
  });
  it("one value is read as is; an empty one or no header is undefined; hops is asked only for a list", () => {
    let asked = 0;
    const hops = () => {
      asked++;
      return 0;
    };
    expect(trustedListValue(" shop.example ", hops)).toBe("shop.example");
    expect(trustedListValue("", hops)).toBeUndefined();
    expect(trustedListValue("a, ", hops)).toBeUndefined();
    expect(trustedListValue(undefined, hops)).toBeUndefined();
    expect(asked).toBe(1);
  });
});
