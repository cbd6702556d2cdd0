import { describe, expect, it } from "vitest";
import { ipBucket, ipMatcher } from "./client-key.js";

describe("ipBucket", () => {
  it.each([
    ["192.0.2.1", 64, "192.0.2.1"],
    ["::ffff:192.0.2.1", 64, "192.0.2.1"],
    ["::FFFF:c000:0201", 64, "192.0.2.1"],
    ["2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::/64"],
    ["2001:DB8:1:2::", 64, "2001:db8:1:2::/64"],
    ["2001:db8:1:2:3:4:5:6", 48, "2001:db8:1::/48"],
    ["2001:db8:1:2:3:4:5:6", 56, "2001:db8:1::/56"],
    ["2001:db8:1:2ff:3:4:5:6", 56, "2001:db8:1:200::/56"],
    ["2001:db8::1", 128, "2001:db8::1"],
    ["2001:db8::1", false, "2001:db8::1"],
    ["fe80::1%eth0", 64, "fe80::/64"],
    ["::1", 64, "::/64"],
    // RFC 6052 §2.1 Well-Known Prefix: the IPv4 client a translator (NAT64, SIIT-DC) embeds
    ["64:ff9b::c633:6407", 64, "198.51.100.7"],
    ["64:ff9b::198.51.100.7", false, "198.51.100.7"],
    ["64:ff9b:0:0:1::c633:6407", 64, "64:ff9b::/64"],
    // RFC 3056 §2 6to4 2002:V4ADDR::/48 and RFC 4380 §4 Teredo (client IPv4 inverted, last 32 bits)
    ["2002:c000:201:ffff::1", 64, "192.0.2.1"],
    ["2002:c000:201::1", false, "192.0.2.1"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", 64, "192.0.2.45"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", 128, "192.0.2.45"],
    ["2001:1::1", 64, "2001:1::/64"],
    ["2003:c000:201::1", 64, "2003:c000:201::/64"],
    // RFC 7239 §6 node forms, as some proxies append the client to X-Forwarded-For
    ["192.0.2.1:8080", 64, "192.0.2.1"],
    ["[2001:db8:1:2::1]:443", 64, "2001:db8:1:2::/64"],
    ["[2001:db8:1:2::1]", 64, "2001:db8:1:2::/64"],
    ["[fe80::1%eth0]:80", false, "fe80::1"],
    ["2001:db8::1:80", false, "2001:db8::1:80"],
  ] as const)("%s with /%s → %s", (ip, subnet, expected) => {
    expect(ipBucket(ip, subnet)).toBe(expected);
  });

  it.each([
    "",
    "not-an-ip",
    "999.1.1.1",
    "1.2.3",
    "2001:db8:::1",
    "::ffff:999.0.0.1",
    "192.0.2.1:",
    "192.0.2.1:123456",
    "[192.0.2.1]:80",
    "[2001:db8::1",
    "[2001:db8::1]x",
  ])("%j → undefined", (ip) => {
    expect(ipBucket(ip)).toBeUndefined();
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
