import { describe, expect, it } from "vitest";
import { postgresUrl, throwawaySchema } from "../test/postgres.js";
import { ClaimLostError, PostgresStore } from "./postgres-store.js";
import type { StoredResponse } from "./store.js";

// draft-ietf-httpapi-idempotency-key-header §2.6: a retry of a completed request gets "the result of
// the previously completed operation". With the key's outcome committed in the transaction of the
// effect, no failure after the commit (a 5xx, the process gone, the store unreachable) lets a retry
// run the effect again.
const database = throwawaySchema("store");

let tables = 0;
async function freshStore(options: { retentionMs?: number } = {}): Promise<PostgresStore> {
  const store = new PostgresStore({ pool: database.pool(), table: `idem_${++tables}`, ...options });
  await store.migrate();
  return store;
}

const response = (status: number, location: string): StoredResponse => ({
  status,
  headers: { location },
  body: new Uint8Array(Buffer.from(`{"location":"${location}"}`)),
});

describe.skipIf(!postgresUrl)("PostgresStore, the store interface", () => {
  it("claim → in-flight for a duplicate → complete → completed with the response", async () => {
    const store = await freshStore();
    const first = await store.claim("k1", "fp", 60_000);
    expect(first.outcome).toBe("claimed");
    const dup = await store.claim("k1", "fp", 60_000);
    expect(dup.outcome).toBe("in-flight");
    if (dup.outcome === "in-flight") expect(dup.leaseRemainingMs).toBeGreaterThan(50_000);
    if (first.outcome !== "claimed") throw new Error("not claimed");
    expect(await store.complete("k1", "other-token", response(201, "/a/1"), 60_000)).toBe(false);
    expect(await store.complete("k1", first.token, response(201, "/a/1"), 60_000)).toBe(true);
    const again = await store.claim("k1", "fp", 60_000);
    expect(again).toMatchObject({ outcome: "completed", fingerprint: "fp", response: { status: 201 } });
    if (again.outcome === "completed")
      expect(Buffer.from(again.response.body).toString()).toBe('{"location":"/a/1"}');
  });

  it("release frees the key; renew keeps it; an expired lease is claimed again with a new token", async () => {
    const store = await freshStore();
    const a = await store.claim("k2", "fp", 60_000);
    if (a.outcome !== "claimed") throw new Error("not claimed");
    expect(await store.renew("k2", a.token, 60_000)).toBe(true);
    expect(await store.release("k2", a.token)).toBe(true);
    const b = await store.claim("k2", "fp", 50);
    if (b.outcome !== "claimed") throw new Error("not claimed");
    await new Promise((r) => setTimeout(r, 80));
    const c = await store.claim("k2", "fp", 60_000);
    expect(c.outcome).toBe("claimed");
    expect(await store.complete("k2", b.token, response(201, "/stale"), 60_000)).toBe(false);
  });

  it("20 concurrent claims of one key → exactly one claimed", async () => {
    const store = await freshStore();
    const results = await Promise.all(Array.from({ length: 20 }, () => store.claim("k3", "fp", 60_000)));
    expect(results.filter((r) => r.outcome === "claimed")).toHaveLength(1);
  });

  async function committed(store: PostgresStore, key: string, leaseMs: number, location: string) {
    const a = await store.claim(key, "fp", leaseMs);
    if (a.outcome !== "claimed") throw new Error("not claimed");
    const client = await database.pool().connect();
    try {
      await client.query("BEGIN");
      await store.commit(client, { key, token: a.token }, response(202, location));
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    return a.token;
  }

  it("commit in a transaction → a committed claim is never released; once its execution answers with it, it replays", async () => {
    const store = await freshStore();
    const token = await committed(store, "k4", 60_000, "/t/4");
    expect(await store.release("k4", token)).toBe(false);
    expect((await store.recorded("k4", token))?.status).toBe(202);
    expect(await store.claim("k4", "fp", 60_000)).toMatchObject({
      outcome: "completed",
      response: { status: 202 },
    });
  });

  it("a retry while the committed execution still makes its response → in flight (409), never the committed stand-in; then the final response replays", async () => {
    const store = await freshStore();
    const token = await committed(store, "k6", 60_000, "/t/6");
    const early = await store.claim("k6", "fp", 60_000);
    expect(early.outcome).toBe("in-flight");
    if (early.outcome === "in-flight") expect(early.leaseRemainingMs).toBeGreaterThan(1000);
    const final: StoredResponse = {
      status: 202,
      headers: { location: "/t/6", etag: '"final"', "content-type": "application/json" },
      body: new Uint8Array(Buffer.from('{"id":6}')),
    };
    expect(await store.complete("k6", token, final, 60_000)).toBe(true);
    const later = await store.claim("k6", "fp", 60_000);
    expect(later).toMatchObject({
      outcome: "completed",
      response: { status: 202, headers: { etag: '"final"' } },
    });
  });

  it("the execution died after the commit → 2 s later (or at its lease's end if sooner) retries replay the committed record; it is never claimed again", async () => {
    const store = await freshStore();
    await committed(store, "k8", 60_000, "/t/8");
    expect((await store.claim("k8", "fp", 60_000)).outcome).toBe("in-flight");
    await new Promise((r) => setTimeout(r, 2300));
    expect(await store.claim("k8", "fp", 60_000)).toMatchObject({
      outcome: "completed",
      response: { status: 202 },
    });
  });

  it("a short lease: the committed record replays at the lease's end", async () => {
    const store = await freshStore();
    await committed(store, "k7", 200, "/t/7");
    expect((await store.claim("k7", "fp", 60_000)).outcome).toBe("in-flight");
    await new Promise((r) => setTimeout(r, 400));
    expect(await store.claim("k7", "fp", 60_000)).toMatchObject({
      outcome: "completed",
      response: { status: 202 },
    });
  });

  it("commit after the lease was claimed by another execution → ClaimLostError, the effect rolls back", async () => {
    const store = await freshStore();
    const a = await store.claim("k5", "fp", 30);
    if (a.outcome !== "claimed") throw new Error("not claimed");
    await new Promise((r) => setTimeout(r, 60));
    expect((await store.claim("k5", "fp", 60_000)).outcome).toBe("claimed");
    const client = await database.pool().connect();
    try {
      await client.query("BEGIN");
      await client.query("INSERT INTO effects (key) VALUES ('k5')");
      await expect(
        store.commit(client, { key: "k5", token: a.token }, response(202, "/t/5")),
      ).rejects.toThrow(ClaimLostError);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    const { rows } = await database.pool().query("SELECT count(*)::int AS n FROM effects WHERE key = 'k5'");
    expect(rows[0]).toEqual({ n: 0 });
  });
});

// The three failure paths after a commit, through the pipeline step: commit-key.test.ts.
