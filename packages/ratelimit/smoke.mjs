// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default async function smoke(mod) {
  const limiter = mod.createRateLimiter({ limit: 2, windowMs: 1000, store: new mod.MemoryStore() });
  const first = await limiter.consume("k");
  if (!first.allowed || first.remaining !== 1) throw new Error("createRateLimiter/MemoryStore is broken");
  if (typeof mod.rateLimitGate({ limit: 1, key: () => "smoke" }) !== "function")
    throw new Error("rateLimitGate() is not a function");
  if (mod.ipBucket("2001:db8::1") !== "2001:db8::/64") throw new Error("ipBucket is broken");
  if (typeof mod.RedisStore !== "function") throw new Error("RedisStore is missing");
}
