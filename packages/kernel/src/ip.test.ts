import * as net from "node:net";
import { describe, expect, it } from "vitest";
import { isIP, isIPv4, isIPv6 } from "./ip.js";

// The kernel reads addresses without node:net (its main and Fetch entries run on workerd, Deno,
// browsers); on Node.js it must answer as net.isIP does, which the Node entries relied on.
const written = [
  "",
  "1.2.3.4",
  "0.0.0.0",
  "255.255.255.255",
  "256.1.1.1",
  "01.2.3.4",
  "1.2.3",
  "1.2.3.4.5",
  "1.2.3.",
  ".1.2.3",
  "1..2.3",
  "1.2.3.4 ",
  " 1.2.3.4",
  "1.2.3.-4",
  "1.2.3.+4",
  "0x7f.0.0.1",
  "127.1",
  "١.٢.٣.٤",
  "::",
  "::1",
  "1::",
  "1:2:3:4:5:6:7:8",
  "1:2:3:4:5:6:7:8:9",
  "1:2:3:4:5:6:7::",
  "1:2:3:4:5:6:7::8",
  "::2:3:4:5:6:7:8",
  "1:2:3:4:5:6::8",
  "1::2::3",
  ":::",
  ":1::",
  "1:",
  ":1",
  "1:::2",
  "12345::",
  "abcd:EF01::",
  "g::",
  "::ffff:1.2.3.4",
  "::ffff:01.2.3.4",
  "::1.2.3.4",
  "1.2.3.4::",
  "1:2:3:4:5:6:1.2.3.4",
  "1:2:3:4:5:6:7:1.2.3.4",
  "1:2:3:4:5::1.2.3.4",
  "1:2:3:4:5:6::1.2.3.4",
  "::1.2.3.4:1",
  "fe80::1%eth0",
  "fe80::1%25eth0",
  "fe80::1%",
  "fe80::1%eth 0",
  "fe80::1%a:b.c-d",
  "fe80::1%eth0%1",
  "1.2.3.4%eth0",
  "[::1]",
  "::1/128",
  `${"1:".repeat(40)}1`,
  `::${"f".repeat(300)}`,
];

/** Random strings over the characters addresses are made of. */
function generated(count: number): string[] {
  const alphabet = "0123456789abcdefABCDEFgG:.%-_ ";
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  const out: string[] = [];
  for (let n = 0; n < count; n++) {
    let value = "";
    const length = next() % 24;
    for (let i = 0; i < length; i++) value += alphabet[next() % alphabet.length];
    out.push(value);
  }
  return out;
}

/** Valid addresses with one character changed, the near misses a random string seldom hits. */
function mutated(): string[] {
  const bases = ["192.168.10.254", "2001:db8:85a3::8a2e:370:7334", "::ffff:10.0.0.1", "1:2:3:4:5:6:7:8"];
  const out: string[] = [];
  for (const base of bases)
    for (let i = 0; i <= base.length; i++)
      for (const c of ["", ":", ".", "0", "f", "::", "9"]) out.push(base.slice(0, i) + c + base.slice(i + 1));
  return out;
}

describe("isIP, isIPv4, isIPv6 answer as node:net", () => {
  it.each(written)("%j", (value) => {
    expect([isIP(value), isIPv4(value), isIPv6(value)]).toEqual([
      net.isIP(value),
      net.isIPv4(value),
      net.isIPv6(value),
    ]);
  });

  it("20,000 random strings and every one-character change of four addresses", () => {
    const differ = [...generated(20_000), ...mutated()].filter((value) => isIP(value) !== net.isIP(value));
    expect(differ).toEqual([]);
  });
});
