import { describe, expect, it } from "vitest";
import { ipBucket } from "./client-bucket.js";

describe("ipBucket", () => {
  it.each([
    ["192.0.2.1", 64, "192.0.2.1"],
    ["::ffff:192.0.2.1", 64, "192.0.2.1"],
    ["::FFFF:c000:0201", 64, "192.0.2.1"],
    ["2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::/64"],
    ["2001:DB8:1:2::", 64, "2001:db8:1:2::/64"],
    ["2001:0db8:0000:0001:aaaa::1", 64, "2001:db8:0:1::/64"],
    ["2001:db8::1", 64, "2001:db8::/64"],
    ["2001:db8:1:2:3:4:5:6", 48, "2001:db8:1::/48"],
    ["2001:db8:1:2:3:4:5:6", 56, "2001:db8:1::/56"],
    ["2001:db8:1:2ff:3:4:5:6", 56, "2001:db8:1:200::/56"],
    ["2001:db8::1", 128, "2001:db8::1"],
    ["2001:db8::1", false, "2001:db8::1"],
    ["2001:db8:0:0:1:0:0:1", false, "2001:db8::1:0:0:1"],
    ["1:0:0:2:0:0:0:0", false, "1:0:0:2::"],
    ["2a00:0:0:1::", 64, "2a00:0:0:1::/64"],
    ["fe80::1%eth0", 64, "fe80::/64"],
    ["::1", 64, "::/64"],
    ["::", false, "::"],
    // RFC 6052 §2.1 Well-Known Prefix and RFC 2765 §2.1 translated addresses: the IPv4 client
    ["64:ff9b::c633:6407", 64, "198.51.100.7"],
    ["64:ff9b::198.51.100.7", false, "198.51.100.7"],
    ["64:ff9b::192.0.2.1", 64, "192.0.2.1"],
    ["::ffff:0:192.0.2.1", 64, "192.0.2.1"],
    ["::ffff:0:198.51.100.9", 64, "198.51.100.9"],
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
    undefined as unknown as string,
  ])("%j → undefined", (ip) => {
    expect(ipBucket(ip)).toBeUndefined();
  });

  it("every address of one /64 shares one bucket; the next /64 has another", () => {
    const buckets = new Set<string | undefined>();
    for (let i = 0; i < 256; i++)
      buckets.add(ipBucket(`2001:db8:1:2:${i.toString(16)}:${(i * 7).toString(16)}::${i}`));
    expect([...buckets]).toEqual(["2001:db8:1:2::/64"]);
    expect(ipBucket("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
  });
});
