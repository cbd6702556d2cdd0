import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { keySlot, type RedisCluster, redisCluster, watchNodes } from "./cluster.js";
import { freePort } from "./services.js";

describe("keySlot", () => {
  // Reference values from the Redis Cluster specification (CRC16/XMODEM of "123456789" = 0x31C3).
  it("123456789 → 12739 (0x31C3 mod 16384)", () => expect(keySlot("123456789")).toBe(0x31c3 % 16384));
  it("{user1000}.following and {user1000}.followers → the same slot", () =>
    expect(keySlot("{user1000}.following")).toBe(keySlot("{user1000}.followers")));
  it("foo{}{bar} → hashes the whole key (the first {} is empty)", () =>
    expect(keySlot("foo{}{bar}")).not.toBe(keySlot("bar")));
  it("foo{{bar}}zap → hashes {bar", () => expect(keySlot("foo{{bar}}zap")).toBe(keySlot("{bar")));
});

const cluster = await redisCluster({ masters: 3 });

describe.skipIf(!cluster)("redisCluster({ masters: 3 })", () => {
  const c = cluster as RedisCluster;
  afterAll(() => c.stop());

  it("three masters that split all 16384 slots", async () => {
    const slots = await c.slotsByNode();
    expect(slots).toHaveLength(3);
    expect(slots.every((s) => s.length > 5000)).toBe(true);
    expect(slots.reduce((n, s) => n + s.length, 0)).toBe(16384);
    expect(await c.command(0, "CLUSTER", "INFO")).toContain("cluster_state:ok");
  });

  it("keySlot agrees with CLUSTER KEYSLOT", async () => {
    for (const key of ["a", "rl:{client-42}", "svc-test:x:{abc}:y", "ünï"]) {
      expect(Number(await c.command(0, "CLUSTER", "KEYSLOT", key))).toBe(keySlot(key));
    }
  });

  it("reshard(slot, other) → the old owner answers MOVED and the key moved with its slot", async () => {
    const key = "harness:{reshard-me}";
    const from = await c.masterOf(key);
    const to = (from + 1) % 3;
    await c.command(from, "SET", key, "v");
    await expect(c.command(to, "GET", key)).rejects.toThrow(/MOVED/);
    await c.reshard(keySlot(key), to);
    expect(await c.masterOf(key)).toBe(to);
    expect(await c.command(to, "GET", key)).toBe("v");
    await expect(c.command(from, "GET", key)).rejects.toThrow(new RegExp(`MOVED ${keySlot(key)} `));
  });

  it("reshard with holdMs → a moved key gets ASK from the old owner during the hold", async () => {
    const key = "harness:{ask-me}";
    const from = await c.masterOf(key);
    const to = (from + 1) % 3;
    await c.command(from, "SET", key, "v");
    const moving = c.reshard(keySlot(key), to, { holdMs: 1500 });
    await new Promise((r) => setTimeout(r, 700));
    await expect(c.command(from, "GET", key)).rejects.toThrow(/ASK/);
    await moving;
    expect(await c.masterOf(key)).toBe(to);
  });

  it("stopNode(i) → the others flag it failed and keep serving; startNode(i) → it rejoins", async () => {
    const key = "harness:{stop-me}";
    const owner = await c.masterOf(key);
    const other = (owner + 1) % 3;
    const otherKey = Array.from({ length: 200 }, (_, n) => `harness:{k${n}}`).find(
      (k) => keySlot(k) !== keySlot(key),
    ) as string;
    await c.stopNode(owner);
    await expect(c.command(owner, "PING")).rejects.toThrow();
    const survivor = await c.masterOf(otherKey);
    if (survivor !== owner) expect(await c.command(survivor, "SET", otherKey, "1")).toBe("OK");
    await c.startNode(owner);
    expect(await c.command(owner, "PING")).toBe("PONG");
    expect(await c.masterOf(key)).toBe(owner);
    expect(await c.command(other, "CLUSTER", "INFO")).toContain("cluster_state:ok");
  });
});

describe.skipIf(!cluster)("watchNodes: a node does not outlive the process that started it", () => {
  it("the watched process ends without stop() → the node is shut down, its directory removed", async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "svc-redis-watch-"));
    const node = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", ""], {
      stdio: "ignore",
    });
    const exited = new Promise<number | null>((resolve) => node.once("exit", (code) => resolve(code)));
    try {
      for (let i = 0; i < 50; i++) {
        const ping = spawnSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), "PING"], {
          encoding: "utf8",
        });
        if (ping.stdout.trim() === "PONG") break;
        await new Promise((r) => setTimeout(r, 100));
      }
      // The test process stands in for one that `vitest list` ran: it ends, stop() never called.
      const parent = spawn("sleep", ["1"], { stdio: "ignore" });
      watchNodes(parent.pid as number, dir, [port]);
      const timeout = new Promise<"running">((r) => setTimeout(() => r("running"), 10_000).unref());
      expect(await Promise.race([exited, timeout])).toBe(0);
      // The directory goes once every node is down.
      for (let i = 0; i < 50 && existsSync(dir); i++) await new Promise((r) => setTimeout(r, 100));
      expect(existsSync(dir)).toBe(false);
    } finally {
      node.kill("SIGKILL");
    }
  });
});
