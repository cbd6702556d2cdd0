import type { ScryptOptions } from "node:crypto";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { app } from "../test/helpers.js";
import { authenticate } from "./express.js";
import { createPasswordHasher, hashPassword, verifyPassword } from "./password-hash.js";

/** Every scrypt call's work: N, r, p, salt and key length (the password and salt values aside). */
const work: Array<{ N: number; r: number; p: number; salt: number; keylen: number }> = [];

// Node's scrypt as password-hash.ts finds it (node-crypto.ts), wrapped to record the work.
vi.mock("./node-crypto.js", async (importOriginal) => {
  const { nodeCrypto: crypto, ...rest } = await importOriginal<typeof import("./node-crypto.js")>();
  if (crypto === undefined) throw new Error("these tests run on Node.js, which has node:crypto");
  return {
    ...rest,
    nodeCrypto: {
      ...crypto,
      scrypt: (
        password: string,
        salt: Uint8Array,
        keylen: number,
        options: ScryptOptions,
        callback: (err: Error | null, key: Buffer) => void,
      ) => {
        work.push({
          N: options.N ?? 0,
          r: options.r ?? 0,
          p: options.p ?? 0,
          salt: salt.length,
          keylen,
        });
        crypto.scrypt(password, salt, keylen, options, callback);
      },
    },
  };
});

beforeEach(() => {
  work.length = 0;
});

describe("an unknown user costs what a known one costs", () => {
  const passwords = createPasswordHasher({ logN: 11, r: 4, p: 1 });
  const users = new Map<string, string>();
  let server: Listening;

  beforeAll(async () => {
    users.set("alice", await passwords.hash("right"));
    server = await listen(
      app(
        authenticate({
          realm: "api",
          basic: {
            cache: false,
            verify: async (username, password) =>
              (await passwords.verify(password, users.get(username))) ? { id: username } : null,
          },
        }) as express.RequestHandler,
      ),
    );
  });
  afterAll(() => server.close());

  const get = (user: string, password: string) =>
    fetch(`${server.url}/me`, {
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` },
    });

  it("known user, wrong password, and unknown user → 401 each, after the same scrypt work (N, r, p, salt, key length)", async () => {
    expect((await get("alice", "wrong")).status).toBe(401);
    expect((await get("nobody", "wrong")).status).toBe(401);
    expect(work).toHaveLength(2);
    expect(work[1]).toEqual(work[0]);
    expect(work[0]).toEqual({ N: 2 ** 11, r: 4, p: 1, salt: 16, keylen: 32 });
  });

  it("createPasswordHasher({ logN: 11, r: 4 }).cost → the resolved cost", () => {
    expect(passwords.cost).toEqual({ logN: 11, r: 4, p: 1 });
  });
});

describe("verifyPassword(password, undefined, options)", () => {
  it("{ logN: 12 } → the stand-in runs scrypt with N = 4096, r = 8, p = 1", async () => {
    expect(await verifyPassword("x", undefined, { logN: 12 })).toBe(false);
    expect(work).toEqual([{ N: 4096, r: 8, p: 1, salt: 16, keylen: 32 }]);
  });

  it("no options → the defaults of hashPassword (N = 32768)", async () => {
    const stored = await hashPassword("x", { logN: 15 });
    await verifyPassword("y", stored);
    await verifyPassword("y", undefined);
    expect(work[2]).toEqual(work[1]);
    expect(work[2]?.N).toBe(2 ** 15);
  });

  it("a malformed stored value → false after the stand-in work", async () => {
    expect(await verifyPassword("x", "$scrypt$garbage", { logN: 10 })).toBe(false);
    expect(work).toEqual([{ N: 1024, r: 8, p: 1, salt: 16, keylen: 32 }]);
  });

  it.each([
    ["logN: 0", { logN: 0 }, "ERR_SVC_AUTH_PASSWORD_HASH_LOG_N"],
    ["logN: 25", { logN: 25 }, "ERR_SVC_AUTH_PASSWORD_HASH_LOG_N"],
    ["r: 0", { r: 0 }, "ERR_SVC_AUTH_PASSWORD_HASH_R"],
    ["p: 1.5", { p: 1.5 }, "ERR_SVC_AUTH_PASSWORD_HASH_P"],
  ])("createPasswordHasher({ %s }) → TypeError with its code", (_label, options, code) => {
    expect(() => createPasswordHasher(options)).toThrow(expect.objectContaining({ name: "TypeError", code }));
  });

  it("verifyPassword with { logN: 99 } → rejects with a TypeError, no scrypt work", async () => {
    await expect(verifyPassword("x", undefined, { logN: 99 })).rejects.toThrow(TypeError);
    expect(work).toEqual([]);
  });
});
