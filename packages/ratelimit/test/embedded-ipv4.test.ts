import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import type { RateLimitRequest } from "../src/index.js";

// IPv6 addresses that carry an IPv4 client's address: the client is that IPv4 host, whose
// bucket it shares, however it varies the other bits (RFC 3056 §2 6to4, RFC 4380 §4 Teredo,
// RFC 6052 §2.1 NAT64 Well-Known Prefix, RFC 4291 §2.5.5.2 IPv4-mapped, RFC 2765 §2.1
// IPv4-translated).

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** limit 1 per client, trusting the loopback proxy (the test client) for X-Forwarded-For. */
async function serve(): Promise<(client: string) => Promise<{ status: number; key: string | undefined }>> {
  const app = express();
  app.set("trust proxy", "loopback");
  app.get(
    "/",
    rateLimit({ limit: 1, windowMs: 60_000, logger: { warn() {} } }),
    (req: RateLimitRequest, res) => {
      res.json({ key: requestState(req).rateLimit?.key });
    },
  );
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  closers.push(server.close);
  return async (client) => {
    const res = await fetch(server.url, { headers: { "X-Forwarded-For": client } });
    const body = res.status === 200 ? ((await res.json()) as { key?: string }) : {};
    return { status: res.status, key: body.key };
  };
}

/**
 * 6to4 2002:V4ADDR::/48 (RFC 3056 §2). Teredo 2001:0:<server>:<flags>:<port ^ 0xffff>:<client ^
 * 0xffffffff> (RFC 4380 §4): 2001:0:4136:e378:8000:63bf:3fff:fdd2 is client 192.0.2.45 (port
 * 40000) behind server 65.54.227.120.
 */
describe("an IPv6 address embedding an IPv4 client counts in that IPv4 client's bucket", () => {
  it.each([
    ["6to4, two subnets of one site", "192.0.2.1", "2002:c000:201:1::1", "2002:c000:201:ffff::2"],
    ["6to4, the site's /48 itself", "192.0.2.1", "2002:c000:201::", "2002:c000:201:0:ffff:ffff:ffff:ffff"],
    [
      "Teredo, one client through two servers, flags and ports",
      "192.0.2.45",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "2001:0:cb00:7101:1234:1:3fff:fdd2",
    ],
    ["Teredo, uppercase and zero-compressed", "255.255.255.255", "2001:0:A:B:C:D::", "2001::1:2:0:0"],
    ["NAT64 Well-Known Prefix", "198.51.100.7", "64:ff9b::c633:6407", "64:ff9b::198.51.100.7"],
    ["IPv4-mapped", "203.0.113.9", "::ffff:203.0.113.9", "::ffff:cb00:7109"],
    ["IPv4-translated (RFC 2765 §2.1)", "192.0.2.33", "::ffff:0:192.0.2.33", "0:0:0:0:ffff:0:c000:221"],
  ])(
    "%s: IPv4 %s; %s → 200 under its IPv4 key, then %s → 429, the IPv4 host → 429",
    async (_name, ipv4, first, second) => {
      const send = await serve();
      expect(await send(first)).toEqual({ status: 200, key: `ip:${ipv4}` });
      expect((await send(second)).status).toBe(429);
      expect((await send(ipv4)).status).toBe(429);
      // Another IPv4 host is still its own client.
      expect((await send("192.0.2.200")).status).toBe(200);
    },
  );

  it.each([
    ["the IPv4 host first, then its 6to4 address", "192.0.2.1", "2002:c000:201:42::1"],
    ["the IPv4 host first, then its Teredo address", "192.0.2.45", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
  ])("%s: %s then %s → 200, 429", async (_name, ipv4, embedded) => {
    const send = await serve();
    expect(await send(ipv4)).toEqual({ status: 200, key: `ip:${ipv4}` });
    expect((await send(embedded)).status).toBe(429);
  });
});

describe("clients the embedding tells apart stay apart; other IPv6 is grouped by /64 as before", () => {
  it.each([
    // Two 6to4 sites: two IPv4 hosts.
    ["6to4 sites of two IPv4 hosts", "2002:c000:201::1", "ip:192.0.2.1", "2002:c000:202::1", "ip:192.0.2.2"],
    // Teredo clients behind one server shared one /64 before: each is its own IPv4 host.
    [
      "two Teredo clients of one server",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "ip:192.0.2.45",
      "2001:0:4136:e378:8000:63bf:3fff:fdd1",
      "ip:192.0.2.46",
    ],
    // IPv4-translated addresses of two IPv4 hosts shared ::/64 before.
    [
      "IPv4-translated addresses of two IPv4 hosts",
      "::ffff:0:192.0.2.33",
      "ip:192.0.2.33",
      "::ffff:0:192.0.2.34",
      "ip:192.0.2.34",
    ],
    // Next to the prefixes, native IPv6: /64 buckets.
    [
      "::ffff:1:0:0/96 (neither mapped nor translated)",
      "::ffff:1:c000:221",
      "ip:::/64",
      "0:0:0:1::1",
      "ip:0:0:0:1::/64",
    ],
    [
      "2001:0:1::/48 vs 2001:1::/32 (not Teredo)",
      "2001:1::1",
      "ip:2001:1::/64",
      "2001:1:0:1::1",
      "ip:2001:1:0:1::/64",
    ],
    [
      "2003::/16 (not 6to4)",
      "2003:c000:201::1",
      "ip:2003:c000:201::/64",
      "2003:c000:201:1::1",
      "ip:2003:c000:201:1::/64",
    ],
    [
      "2001:db8::/32 (documentation, native)",
      "2001:db8::1",
      "ip:2001:db8::/64",
      "2001:db8:0:1::1",
      "ip:2001:db8:0:1::/64",
    ],
  ])("%s: %s → %s, %s → %s, both 200", async (_name, a, keyA, b, keyB) => {
    const send = await serve();
    expect(await send(a)).toEqual({ status: 200, key: keyA });
    expect(await send(b)).toEqual({ status: 200, key: keyB });
  });

  it("a native /64 still groups its addresses: 2003::1 then 2003::2 → 200, 429", async () => {
    const send = await serve();
    expect(await send("2003::1")).toEqual({ status: 200, key: "ip:2003::/64" });
    expect((await send("2003::2")).status).toBe(429);
  });
});
