/**
 * `@svc/idempotency/testing`: the contract every {@link IdempotencyStore} keeps, as a suite a
 * store's own tests run against a real server (README, "Writing a store"). Kept out of the main
 * entry so production code never loads it.
 */
import { createIdempotency } from "./core.js";
import type { ClaimResult, IdempotencyStore, StoredResponse } from "./store.js";

export type { ClaimResult, IdempotencyStore, StoredResponse } from "./store.js";

/**
 * The two functions of a test runner the suite registers its tests with: vitest's, Jest's or
 * Mocha's `describe` and `it` fit as they are; `node:test`'s too.
 */
export interface StoreContractRunner {
  /** Groups the contract's tests under one name. */
  describe(name: string, body: () => void): unknown;
  /** One test: its promise rejects when the store breaks the contract. */
  it(name: string, body: () => Promise<void>): unknown;
}

/**
 * What the suite needs of the store under test.
 *
 * @example describeStoreContract("SqliteStore", { store: () => new SqliteStore(new Database(":memory:")) }, { describe, it });
 */
export interface StoreContractOptions {
  /**
   * A store for one test, holding no record of the keys the test uses: a new one on an empty
   * database, or one on a prefix, table or schema of its own. Called once per test.
   */
  store(): IdempotencyStore | Promise<IdempotencyStore>;
  /**
   * The `maxRecordBytes` the stores were made with: a response past it must be replayed without
   * its body (`bodyOmitted`). Omit it for a store that keeps every response whole (the
   * middleware still bounds the body by `maxStoredBytes`).
   */
  maxRecordBytes?: number;
  /**
   * The short lease and retention of the expiry tests, in milliseconds: long enough for a claim
   * to answer within it on the store's server.
   * @default 150
   */
  shortMs?: number;
  /** @default 20 */
  concurrentClaims?: number;
}

/** Inputs and helpers of one behaviour. */
interface Context {
  store: IdempotencyStore;
  options: StoreContractOptions;
  shortMs: number;
}

/** One row of the contract: what every store must do, and how it is checked. */
interface Behaviour {
  name: string;
  run(context: Context): Promise<void>;
}

const LONG = 60_000;

function check(ok: boolean, message: string): asserts ok {
  if (!ok) throw new Error(`store contract: ${message}`);
}

function claimedToken(result: ClaimResult, what: string): string {
  check(result.outcome === "claimed", `${what}: expected claimed, got ${JSON.stringify(result)}`);
  check(typeof result.token === "string" && result.token !== "", `${what}: a claim needs a token`);
  return result.token;
}

/** Every byte value, `length` bytes. */
function bytes(length: number, seed = 0): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (i + seed) & 255;
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

const created = (body: Uint8Array = bytes(256)): StoredResponse => ({
  status: 201,
  headers: {
    location: "/orders/1",
    "content-type": "application/octet-stream",
    "set-cookie": ["a=1", "b=2"],
  },
  body,
});

async function replayOf(store: IdempotencyStore, key: string, fingerprint: string): Promise<StoredResponse> {
  const result = await store.claim(key, fingerprint, LONG);
  check(result.outcome === "completed", `${key}: expected completed, got ${result.outcome}`);
  check(result.fingerprint === fingerprint, `${key}: the stored fingerprint must come back as stored`);
  return result.response;
}

/** Claims `key` until it is claimed (its record expired), for at most `patienceMs`. */
async function claimOnceExpired(store: IdempotencyStore, key: string, patienceMs: number): Promise<string> {
  const until = Date.now() + patienceMs;
  for (;;) {
    const result = await store.claim(key, "fp", LONG);
    if (result.outcome === "claimed") return claimedToken(result, key);
    check(
      Date.now() < until,
      `${key}: still ${result.outcome} ${patienceMs} ms after it should have expired`,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const BEHAVIOURS: readonly Behaviour[] = [
  {
    name: "a new key → claimed with a token; a second claim → in flight, with the first's fingerprint and its lease left",
    async run({ store }) {
      claimedToken(await store.claim("s:POST:/a:k", "fp-1", LONG), "first claim");
      const again = await store.claim("s:POST:/a:k", "fp-2", LONG);
      check(again.outcome === "in-flight", `second claim: expected in-flight, got ${again.outcome}`);
      check(again.fingerprint === "fp-1", "an in-flight record answers the fingerprint it was claimed with");
      check(
        again.leaseRemainingMs > 0 && again.leaseRemainingMs <= LONG + 1000,
        `leaseRemainingMs ${again.leaseRemainingMs} is not within the lease`,
      );
    },
  },
  {
    name: "concurrent claims of one key → exactly one claimed, every other in flight",
    async run({ store, options }) {
      const n = options.concurrentClaims ?? 20;
      const results = await Promise.all(
        Array.from({ length: n }, () => store.claim("s:POST:/a:race", "fp", LONG)),
      );
      const won = results.filter((r) => r.outcome === "claimed");
      check(won.length === 1, `${won.length} of ${n} concurrent claims won; exactly one must`);
      check(
        results.every((r) => r.outcome !== "completed"),
        "nothing was completed, so no claim may answer completed",
      );
    },
  },
  {
    name: "complete with the claim's token → true; a claim then replays status, headers (lists too) and every body byte",
    async run({ store }) {
      const token = claimedToken(await store.claim("s:POST:/a:done", "fp", LONG), "claim");
      const response = created();
      check(
        (await store.complete("s:POST:/a:done", token, response, LONG)) === true,
        "complete must answer true",
      );
      response.body.fill(0); // the store kept its own copy
      const replay = await replayOf(store, "s:POST:/a:done", "fp");
      check(replay.status === 201, `status ${replay.status}, stored 201`);
      check(replay.headers.location === "/orders/1", "the location header comes back");
      check(
        JSON.stringify(replay.headers["set-cookie"]) === '["a=1","b=2"]',
        "a header with several values comes back as the same list",
      );
      check(sameBytes(replay.body, bytes(256)), "the body comes back byte for byte");
      check(replay.bodyOmitted !== true, "a small body is not omitted");
    },
  },
  {
    name: "a fingerprint mismatch: a claim with another fingerprint answers the stored one, in flight and completed",
    async run({ store }) {
      const token = claimedToken(await store.claim("s:POST:/a:fp", "fp-original", LONG), "claim");
      const during = await store.claim("s:POST:/a:fp", "fp-other", LONG);
      check(
        during.outcome === "in-flight" && during.fingerprint === "fp-original",
        "in flight: the stored fingerprint",
      );
      await store.complete("s:POST:/a:fp", token, created(), LONG);
      const after = await store.claim("s:POST:/a:fp", "fp-other", LONG);
      check(
        after.outcome === "completed" && after.fingerprint === "fp-original",
        "completed: the stored fingerprint",
      );
    },
  },
  {
    name: "through the core: the same key with another body → 422, with the same body → the replay",
    async run({ store }) {
      const core = createIdempotency({ store, waitMs: 0 });
      const attempt = (body: unknown) =>
        core.begin({ method: "POST", target: "/orders", headers: { "idempotency-key": '"k-core"' }, body });
      const first = await attempt({ amount: 1 });
      check(first.outcome === "claimed", `first: expected claimed, got ${first.outcome}`);
      if (first.outcome !== "claimed") return;
      await core.complete(first.claim, { status: 201, headers: { location: "/orders/1" }, body: bytes(16) });
      const other = await attempt({ amount: 2 });
      check(other.outcome === "error" && other.error.status === 422, "another body: a 422");
      const same = await attempt({ amount: 1 });
      check(same.outcome === "replay" && same.response.status === 201, "the same body: the replay");
    },
  },
  {
    name: "a stale token is refused: complete, release and renew with another token → false, the record unchanged",
    async run({ store }) {
      const token = claimedToken(await store.claim("s:POST:/a:fence", "fp", LONG), "claim");
      const stale = `${token}-stale`;
      check((await store.complete("s:POST:/a:fence", stale, created(), LONG)) === false, "complete");
      check((await store.release("s:POST:/a:fence", stale)) === false, "release");
      if (store.renew) check((await store.renew("s:POST:/a:fence", stale, LONG)) === false, "renew");
      const still = await store.claim("s:POST:/a:fence", "fp", LONG);
      check(still.outcome === "in-flight", `the claim still holds the key, got ${still.outcome}`);
      check(
        (await store.complete("s:POST:/a:fence", token, created(), LONG)) === true,
        "the owner completes",
      );
    },
  },
  {
    name: "release on failure → true; the key is claimed again with a new token, and the released one cannot complete",
    async run({ store }) {
      const first = claimedToken(await store.claim("s:POST:/a:rel", "fp", LONG), "claim");
      check((await store.release("s:POST:/a:rel", first)) === true, "release must answer true");
      const second = claimedToken(await store.claim("s:POST:/a:rel", "fp", LONG), "claim after release");
      check(second !== first, "a new claim has a new token");
      check((await store.complete("s:POST:/a:rel", first, created(), LONG)) === false, "the released token");
      check((await store.complete("s:POST:/a:rel", second, created(), LONG)) === true, "the new token");
    },
  },
  {
    name: "a completed record is never released: release → false, the response still replayed",
    async run({ store }) {
      const token = claimedToken(await store.claim("s:POST:/a:kept", "fp", LONG), "claim");
      await store.complete("s:POST:/a:kept", token, created(), LONG);
      check((await store.release("s:POST:/a:kept", token)) === false, "release of a completed record");
      check((await replayOf(store, "s:POST:/a:kept", "fp")).status === 201, "still replayed");
    },
  },
  {
    name: "renew (when the store has it) after the owner's own complete → false: a completed record has no lease, and is still replayed",
    async run({ store }) {
      const token = claimedToken(await store.claim("s:POST:/a:done-renew", "fp", LONG), "claim");
      check((await store.complete("s:POST:/a:done-renew", token, created(), LONG)) === true, "complete");
      if (store.renew === undefined) return; // optional: a claim then lasts its lease
      check(
        (await store.renew("s:POST:/a:done-renew", token, LONG)) === false,
        "renew of a completed record must answer false",
      );
      check((await replayOf(store, "s:POST:/a:done-renew", "fp")).status === 201, "still replayed");
    },
  },
  {
    name: "a claimer that died: its lease runs out, the key is claimed again, and the dead claimer's complete → false",
    async run({ store, shortMs }) {
      const dead = claimedToken(await store.claim("s:POST:/a:dead", "fp", shortMs), "claim");
      const next = await claimOnceExpired(store, "s:POST:/a:dead", shortMs + 5000);
      check(next !== dead, "the new claim has a new token");
      check((await store.complete("s:POST:/a:dead", dead, created(), LONG)) === false, "the dead claimer");
      check((await store.complete("s:POST:/a:dead", next, created(), LONG)) === true, "the new claimer");
    },
  },
  {
    name: "renew (when the store has it) extends the lease from now: still in flight after the short lease",
    async run({ store, shortMs }) {
      const token = claimedToken(await store.claim("s:POST:/a:renew", "fp", shortMs), "claim");
      if (store.renew === undefined) return; // optional: a claim then lasts its lease
      check((await store.renew("s:POST:/a:renew", token, LONG)) === true, "renew by the owner");
      await new Promise((resolve) => setTimeout(resolve, shortMs * 2));
      const later = await store.claim("s:POST:/a:renew", "fp", LONG);
      check(later.outcome === "in-flight", `renewed: expected in-flight, got ${later.outcome}`);
      check(later.leaseRemainingMs > shortMs, "the lease left is the renewed one");
    },
  },
  {
    name: "retention: a completed record expires after retentionMs, and the key is claimed again",
    async run({ store, shortMs }) {
      const token = claimedToken(await store.claim("s:POST:/a:ttl", "fp", LONG), "claim");
      await store.complete("s:POST:/a:ttl", token, created(), shortMs);
      await claimOnceExpired(store, "s:POST:/a:ttl", shortMs + 5000);
    },
  },
  {
    name: "a 64 KiB body (the middleware's default maxStoredBytes) is replayed byte for byte",
    async run({ store }) {
      const token = claimedToken(await store.claim("s:POST:/a:big", "fp", LONG), "claim");
      await store.complete("s:POST:/a:big", token, created(bytes(65_536, 7)), LONG);
      const replay = await replayOf(store, "s:POST:/a:big", "fp");
      check(replay.bodyOmitted !== true && sameBytes(replay.body, bytes(65_536, 7)), "the body, whole");
    },
  },
  {
    name: "past maxRecordBytes: the status replayed without the body (bodyOmitted); a quarter of it kept whole",
    async run({ store, options }) {
      const max = options.maxRecordBytes;
      if (max === undefined) return; // a store that keeps any size
      const over = claimedToken(await store.claim("s:POST:/a:over", "fp", LONG), "claim");
      check(
        (await store.complete("s:POST:/a:over", over, created(bytes(max + 1)), LONG)) === true,
        "complete",
      );
      const omitted = await replayOf(store, "s:POST:/a:over", "fp");
      check(
        omitted.status === 201 && omitted.bodyOmitted === true,
        "past the bound: bodyOmitted, status kept",
      );
      check(omitted.body.byteLength === 0, "past the bound: no body bytes");
      const under = claimedToken(await store.claim("s:POST:/a:under", "fp", LONG), "claim");
      await store.complete("s:POST:/a:under", under, created(bytes(Math.floor(max / 4))), LONG);
      const whole = await replayOf(store, "s:POST:/a:under", "fp");
      check(whole.bodyOmitted !== true && sameBytes(whole.body, bytes(Math.floor(max / 4))), "within: whole");
    },
  },
  {
    name: "keys with odd bytes (wildcards of LIKE and glob, quotes, case, spaces, non-ASCII, 1 KiB) stay distinct",
    async run({ store }) {
      const keys = [
        "s:POST:%2Fa:k",
        "s:POST:%2Fa:K",
        "s:POST:%2Fa:k ",
        "s:POST:%2Fa:%",
        "s:POST:%2Fa:_",
        "s:POST:%2Fa:*",
        "s:POST:%2Fa:?[k]{k}",
        "s:POST:%2Fa:'k'\"k\"\\",
        "s:POST:%2Fa:ünïcødé 𝄞",
        `s:POST:%2Fa:${"x".repeat(1024)}`,
      ];
      const tokens = await Promise.all(keys.map(async (k) => claimedToken(await store.claim(k, k, LONG), k)));
      await Promise.all(
        keys.map((k, i) => store.complete(k, tokens[i] as string, created(bytes(8, i)), LONG)),
      );
      for (const [i, k] of keys.entries()) {
        const replay = await replayOf(store, k, k);
        check(sameBytes(replay.body, bytes(8, i)), `${JSON.stringify(k)} replays its own response`);
      }
    },
  },
  {
    name: "isolation: one key under two scopes (principals) or two routes → two claims, two records",
    async run({ store }) {
      const keys = [
        "alice:POST:%2Forders:k",
        "bob:POST:%2Forders:k",
        "alice:POST:%2Frefunds:k",
        "alice:POST",
      ];
      const results = await Promise.all(keys.map((k) => store.claim(k, "fp", LONG)));
      const tokens = results.map((r, i) => claimedToken(r, keys[i] as string));
      await store.complete(keys[0] as string, tokens[0] as string, created(bytes(4, 1)), LONG);
      const other = await store.claim(keys[1] as string, "fp", LONG);
      check(other.outcome === "in-flight", "bob's record stays in flight when alice's completes");
      check(
        (await store.release(keys[2] as string, tokens[2] as string)) === true,
        "release of one scope's claim",
      );
      check(sameBytes((await replayOf(store, keys[0] as string, "fp")).body, bytes(4, 1)), "alice's replay");
    },
  },
];

/** The names of the contract's behaviours, in the order the suite runs them. */
export const STORE_CONTRACT: readonly string[] = BEHAVIOURS.map((b) => b.name);

/**
 * Registers the store contract, one test per behaviour of {@link STORE_CONTRACT}, in a `describe`
 * block named `name`: atomic claims, the fencing token, the fingerprint stored and answered,
 * release, lease and retention expiry, bodies to the bound, odd keys, scopes kept apart.
 *
 * @example
 * import { describeStoreContract } from "@svc/idempotency/testing";
 * import { describe, it } from "vitest";
 * describeStoreContract("SqliteStore", { store: () => new SqliteStore(new Database(":memory:")) }, { describe, it });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export function describeStoreContract(
  name: string,
  options: StoreContractOptions,
  runner: StoreContractRunner,
): void {
  const shortMs = options.shortMs ?? 150;
  runner.describe(name, () => {
    for (const behaviour of BEHAVIOURS) {
      runner.it(behaviour.name, async () => {
        const store = await options.store();
        await behaviour.run({ store, options, shortMs });
      });
    }
  });
}
