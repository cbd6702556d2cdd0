import type { ScryptOptions } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Started, sqlite } from "./harness.js";

/**
 * Response times must not tell which user names exist: an unknown user's stand-in verification
 * does the same scrypt work as a known user's wrong password. Checked on the work itself (every
 * scrypt call's N, r, p, salt and key length), not on a clock; the medians are measured by
 * `packages/auth/bench/basic-timing.mjs`.
 */
const work: Array<{ N: number; r: number; p: number; salt: number; keylen: number }> = [];

// `@svc/auth` finds Node's scrypt through `process.getBuiltinModule`, the same module object as
// `require("node:crypto")`, and calls it as a property at each derivation: observed there.
const crypto = (
  process as unknown as { getBuiltinModule(id: string): typeof import("node:crypto") }
).getBuiltinModule("node:crypto");
const scrypt = crypto.scrypt;
vi.spyOn(crypto, "scrypt").mockImplementation(((
  password: string,
  salt: Uint8Array,
  keylen: number,
  options: ScryptOptions,
  callback: (err: Error | null, key: Buffer) => void,
) => {
  work.push({ N: options.N ?? 0, r: options.r ?? 0, p: options.p ?? 0, salt: salt.length, keylen });
  scrypt(password, salt, keylen, options, callback);
}) as typeof crypto.scrypt);

let s: Started;
beforeAll(async () => {
  s = await sqlite.start();
});
afterAll(async () => {
  await s.stop();
});

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("Basic timing does not reveal user names", () => {
  it("admin with a wrong password and an unknown user → 401 each, after identical scrypt work", async () => {
    work.length = 0;
    const known = await fetch(`${s.url}/departments`, { headers: { authorization: basic("admin", "nope") } });
    const unknown = await fetch(`${s.url}/departments`, {
      headers: { authorization: basic("no-such-user", "nope") },
    });
    expect([known.status, unknown.status]).toEqual([401, 401]);
    expect(work).toHaveLength(2);
    expect(work[1]).toEqual(work[0]);
  });
});
