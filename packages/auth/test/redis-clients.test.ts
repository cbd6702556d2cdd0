import { serviceUrl, uniquePrefix } from "@svc/test-utils";
import { redisClientMajors } from "@svc/test-utils/redis-clients";
import { describe, expect, it } from "vitest";
import { redisNonceStore } from "../src/index.js";

// Every client major inside the peer ranges (`ioredis ^5 || ^6`, `redis ^4.6 || ^5 || ^6`)
// claims a nonce with the same `SET key 1 PX ttl NX`.
const url = serviceUrl("REDIS_URL");

describe.skipIf(!url).each(redisClientMajors())("redisNonceStore with $name", ({ connect }) => {
  it("a nonce is claimed once; a replay of it is refused; it expires after its ttl", async () => {
    const { client, close, unroutable } = await connect(url as string);
    try {
      const store = redisNonceStore({ client, prefix: uniquePrefix("nonce-clients") });
      expect(await store.claim("n-1", 200)).toBe(true);
      expect(await store.claim("n-1", 200)).toBe(false);
      expect(await store.claim("n-2", 200)).toBe(true);
      await new Promise((r) => setTimeout(r, 300));
      expect(await store.claim("n-1", 200)).toBe(true);
      // On a Cluster, ioredis must find the nonce's key in every command, or it picks a master at random.
      expect(unroutable()).toEqual([]);
    } finally {
      await close();
    }
  });
});
