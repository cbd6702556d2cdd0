// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default async function smoke(mod) {
  if (typeof mod.idempotency().begin !== "function") throw new Error("idempotency() is not a pipeline step");
  const key = mod.parseIdempotencyKey('"abc"');
  if (key.kind !== "valid" || key.key !== "abc") throw new Error("parseIdempotencyKey is broken");
  if (mod.canonicalJson({ b: 1, a: 2 }) !== '{"a":2,"b":1}') throw new Error("canonicalJson is broken");
  const store = new mod.MemoryStore();
  const claim = await store.claim("k", "fp", 1000);
  if (claim.outcome !== "claimed") throw new Error("MemoryStore.claim is broken");
  if ((await store.renew("k", claim.token, 1000)) !== true) throw new Error("MemoryStore.renew is broken");
  if (typeof mod.RedisStore !== "function") throw new Error("RedisStore is missing");
  const core = mod.createIdempotency();
  const decision = await core.begin({ method: "POST", target: "/o", headers: { "idempotency-key": "k" } });
  if (decision.outcome !== "claimed") throw new Error("createIdempotency().begin is broken");
  await core.complete(decision.claim, { status: 201, headers: {}, body: new Uint8Array() });
  if (typeof mod.commitKey !== "function") throw new Error("commitKey is missing");
  if (typeof mod.PostgresStore !== "function") throw new Error("PostgresStore is missing");
}
