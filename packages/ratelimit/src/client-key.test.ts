import { ipBucket } from "@svc/kernel";
import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { ipMatcher } from "./client-key.js";

describe("ipBucket (the kernel's) against ipaddr.js", () => {
  /** A deterministic stream of IPv6 addresses in every text form: full, compressed, upper case. */
  function* addresses(count: number): Generator<string> {
    let seed = 0x9e3779b9;
    const next = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed;
    };
    for (let i = 0; i < count; i++) {
      // Leading groups that are never mapped, translated, NAT64, 6to4 or Teredo.
      const words = [
        0x2a00 + (next() % 0x100),
        ...Array.from({ length: 7 }, () => (next() % 3 === 0 ? 0 : next() % 0x10000)),
      ];
      const full = words.map((w) => w.toString(16)).join(":");
      yield i % 3 === 0 ? full.toUpperCase() : i % 3 === 1 ? ipaddr.parse(full).toString() : full;
    }
  }

  it.each([32, 48, 56, 64, 96, 127])("5,000 addresses grouped by /%i give ipaddr.js's network", (bits) => {
    for (const address of addresses(5_000)) {
      const network = ipaddr.parseCIDR(`${address}/${bits}`)[0] as ipaddr.IPv6;
      const bytes = network.toByteArray();
      for (let bit = bits; bit < 128; bit++)
        bytes[bit >> 3] = (bytes[bit >> 3] as number) & ~(0x80 >> (bit & 7));
      const expected = ipaddr.fromByteArray(bytes) as ipaddr.IPv6;
      const bucket = ipBucket(address, bits) as string;
      const [prefix, length] = bucket.split("/");
      expect(length).toBe(String(bits));
      expect(ipaddr.parse(prefix as string).toNormalizedString()).toBe(expected.toNormalizedString());
      expect(prefix).toBe(expected.toRFC5952String());
    }
  });
});

describe("ipMatcher", () => {
  const match = ipMatcher(["10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "::1"]);
  it.each([
    ["10.200.1.1", true],
    ["11.0.0.1", false],
    ["192.0.2.7", true],
    ["192.0.2.8", false],
    ["::ffff:10.1.1.1", true],
    ["2001:db8:ffff::1", true],
    ["2001:db9::1", false],
    ["::1", true],
    ["garbage", false],
  ] as const)("%s → %s", (ip, expected) => {
    expect(match(ip)).toBe(expected);
  });

  // RFC 4291 §2.5.5.2: an IPv4-mapped range holds the IPv4 hosts it maps, as a client's
  // ::ffff:a.b.c.d is the IPv4 host a.b.c.d.
  it.each([
    ["::ffff:10.0.0.0/104", "10.1.2.3", true],
    ["::ffff:10.0.0.0/104", "::ffff:10.1.2.3", true],
    ["::ffff:10.0.0.0/104", "11.1.2.3", false],
    ["::ffff:192.0.2.0/120", "192.0.2.200", true],
    ["::ffff:192.0.2.0/120", "192.0.3.1", false],
    ["::ffff:0:0/96", "203.0.113.9", true],
    ["::/0", "203.0.113.9", true],
    ["::/0", "2001:db8::1", true],
    ["2001:db8::/32", "203.0.113.9", false],
    ["::ffff:0:0/95", "203.0.113.9", true],
  ] as const)("entry %s, client %s → %s", (entry, ip, expected) => {
    expect(ipMatcher([entry])(ip)).toBe(expected);
  });

  it.each(["10.0.0.0/33", "host.example", "10.0.0.0/-1", "10.0/8", ""])("entry %j → TypeError", (entry) => {
    expect(() => ipMatcher([entry])).toThrow(TypeError);
  });
});
