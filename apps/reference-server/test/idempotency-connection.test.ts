import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { serviceUrl } from "@svc/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ADMIN, backends, client, type Started } from "./harness.js";

/**
 * POST /transfers with an Idempotency-Key, then a malformed request pipelined on the same
 * connection while the transfer is being created: the server answers the malformed request by
 * closing the connection. The transfer must still be created once, and a retry with the same key
 * gets 409 while it runs and its 202 (the same Location) afterwards: one transfer per key.
 */
const redisUrl = serviceUrl("REDIS_URL");
const stores: Array<[string, Record<string, string>]> = [["memory store", {}]];
if (redisUrl)
  stores.push([
    "Redis store",
    {
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: `svc-test-conn-${process.pid}-${randomBytes(4).toString("hex")}:`,
    },
  ]);
const rows = backends.flatMap((b) => stores.map(([name, env]) => [b.name, name, b, env] as const));

const KEYS = 5;
const BODY = JSON.stringify({ fromAccountId: 3, toAccountId: 4, amount: 1 });

let s: Started | undefined;
afterEach(async () => {
  await s?.stop();
  s = undefined;
});

/**
 * Held POST /transfers handlers: each lookup of a transfer's accounts (before anything is
 * written) waits until `open()`.
 */
function holdTransfers(started: Started) {
  const kysely = started.service.db.kysely;
  const selectFrom = kysely.selectFrom.bind(kysely);
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const waiting: Array<() => void> = [];
  let arrived = 0;
  /** The builder, and every builder it returns, with its `execute…` waiting for the gate. */
  const held = <T extends object>(b: T): T =>
    new Proxy(b, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        const call = (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, args);
        if (String(prop).startsWith("execute")) return (...args: unknown[]) => gate.then(() => call(...args));
        return (...args: unknown[]) => {
          const out = call(...args);
          return out && typeof out === "object" ? held(out as object) : out;
        };
      },
    });
  kysely.selectFrom = ((from: never) => {
    const builder = selectFrom(from);
    if (String(from) !== "accounts") return builder;
    arrived++;
    for (const w of waiting.splice(0)) w();
    return held(builder);
  }) as typeof kysely.selectFrom;
  return {
    /** Resolves once `n` handlers are held. */
    reached: (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (arrived >= n ? resolve() : waiting.push(check));
        check();
      }),
    open: () => {
      release();
      kysely.selectFrom = selectFrom as typeof kysely.selectFrom;
    },
  };
}

describe.each(rows)(
  "POST /transfers on %s with the %s, a malformed request pipelined behind it",
  (_b, _s, backend, env) => {
    it(`${KEYS} keys → one transfer each; 409 while it is created, its 202 replayed after`, async () => {
      s = await backend.start(env);
      const api = client(s.url);
      const total = async () =>
        ((await (await api("/transfers?size=1")).json()) as { page: { totalElements: number } }).page
          .totalElements;
      const before = await total();
      const hold = holdTransfers(s);
      const port = Number(new URL(s.url).port);
      const tag = randomBytes(4).toString("hex");
      const keys = Array.from({ length: KEYS }, (_, i) => `conn-${tag}-${i}`);
      const firsts: Promise<void>[] = [];
      for (const [i, key] of keys.entries()) {
        firsts.push(
          new Promise<void>((resolve) => {
            const socket = connect(port, "127.0.0.1", () => {
              socket.write(
                `POST /transfers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${ADMIN}\r\nContent-Type: application/json\r\nIdempotency-Key: "${key}"\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`,
              );
              // Once the handler runs: the malformed request, on the same connection.
              void hold.reached(i + 1).then(() => socket.write("\x01BAD\r\n\r\n"));
            });
            socket.on("data", () => {});
            socket.on("error", () => {});
            socket.once("close", () => resolve());
          }),
        );
        await firsts[i];
      }
      const during: number[] = [];
      const send = (key: string) =>
        api("/transfers", {
          method: "POST",
          headers: { "idempotency-key": `"${key}"`, "content-type": "application/json" },
          body: BODY,
        }).then(async (res) => ({ res, text: await res.text() }));
      for (const key of keys) during.push((await send(key)).res.status);
      hold.open();
      const after: Array<{ status: number; replayed: string | null; location: boolean }> = [];
      for (const key of keys) {
        const { res } = await vi.waitFor(
          async () => {
            const got = await send(key);
            expect(got.res.status).not.toBe(409);
            return got;
          },
          { timeout: 10_000, interval: 20 },
        );
        after.push({
          status: res.status,
          replayed: res.headers.get("idempotent-replayed"),
          location: /\/transfers\/\d+$/.test(res.headers.get("location") ?? ""),
        });
      }
      const created = (await total()) - before;
      expect({ during, created }).toEqual({ during: keys.map(() => 409), created: KEYS });
      expect(after).toEqual(keys.map(() => ({ status: 202, replayed: "true", location: true })));
    });
  },
);
