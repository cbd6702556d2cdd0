import { connect } from "node:net";
import { Readable } from "node:stream";
import { errorHandler } from "@svc/errors/express";
import { reply } from "@svc/kernel";
import { type Listening, listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { gate } from "../test/helpers.js";
import { keyed } from "../test/pipeline-app.js";
import { MemoryStore } from "./memory-store.js";
import { RedisStore } from "./redis-store.js";
import type { IdempotencyStore } from "./store.js";

// draft-ietf-httpapi-idempotency-key-header §2.7: the 409 is for a retry "while the original
// request is still being processed". A request whose handler failed (it threw, or the body it
// answered with failed) is over, and its key free at once; a connection that closes is no outcome
// of the handler at all.
const redisUrl = serviceUrl("REDIS_URL");
const io = redisUrl ? new Redis(redisUrl) : undefined;
afterAll(() => io?.disconnect());
const prefix = uniquePrefix("idempotency-cut");

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

let made = 0;
const stores: [string, () => IdempotencyStore][] = [["MemoryStore", () => new MemoryStore()]];
if (io) stores.push(["RedisStore", () => new RedisStore({ client: io, prefix: `${prefix}:${++made}:` })]);

/** A body stream that sends its first bytes, then fails. */
function failingStream(): Readable {
  return new Readable({
    read() {
      this.push('{"partial":');
      this.destroy(new Error("database went away mid-stream"));
    },
  });
}

const failures = [
  ["the handler throws", "throw"],
  ["the body stream it answers with fails after its first bytes", "stream"],
] as const;

const rows = stores.flatMap(([name, make]) =>
  failures.map(([how, kind]) => [name, how, kind, make] as const),
);

/** The first POST with `key` fails; a retry runs the handler again at once; a third replays it. */
async function expectFailThenRetry(url: string, key: string, runs: () => number) {
  const send = () =>
    fetch(`${url}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": `"${key}"` },
      body: '{"qty":1}',
    });
  const failed = await send();
  await failed.arrayBuffer();
  expect(failed.status).toBe(500);
  const retry = await send();
  expect(retry.status).toBe(201);
  expect(retry.headers.get("idempotent-replayed")).toBeNull();
  expect(await retry.json()).toEqual({ run: 2 });
  const replay = await send();
  expect(replay.status).toBe(201);
  expect(replay.headers.get("idempotent-replayed")).toBe("true");
  expect(await replay.json()).toEqual({ run: 2 });
  expect(runs()).toBe(2);
}

function ordersApp(make: () => IdempotencyStore, kind: "throw" | "stream") {
  let runs = 0;
  const app = express();
  app.post(
    "/orders",
    express.json(),
    keyed({ store: make(), logger: { warn() {} } }, () => {
      runs += 1;
      if (runs === 1) {
        if (kind === "throw") throw new Error("database went away");
        return reply.bytes(failingStream(), "application/json", { status: 200 });
      }
      return reply({ run: runs }, { status: 201 });
    }),
  );
  return { app, runs: () => runs };
}

describe("the handler fails (an explicit outcome)", () => {
  it.each(rows)(
    "%s, %s → the key is free at once: a retry runs, then replays",
    async (_s, _h, kind, make) => {
      const { app, runs } = ordersApp(make, kind);
      app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
      await expectFailThenRetry(server.url, "cut-1", runs);
    },
  );

  it.each(stores)(
    "%s, no app error handler (Express's default answers the 500) → the key is free at once: a retry runs, then replays",
    async (_s, make) => {
      const { app, runs } = ordersApp(make, "throw");
      // Express's default error handler logs the error on stderr unless the env is "test".
      app.set("env", "test");
      server = await listen(app);
      await expectFailThenRetry(server.url, "cut-default", runs);
    },
  );
});

/**
 * A connection that closes while the handler still runs is not a request that is over. The
 * client going away (a FIN, an RST, fetch aborted) or the server's own idle timeout: the handler
 * goes on and answers, which is recorded; a retry meanwhile gets 409 (draft §2.7), never a second run.
 */
describe("a connection that closes while the handler still runs → the key stays claimed", () => {
  const closes = [
    ["the client half-closes (FIN)", "fin"],
    ["the client resets the connection (RST)", "rst"],
    ["the client's fetch is aborted", "abort"],
    ["the server's idle timeout (server.timeout) destroys the socket", "timeout"],
  ] as const;
  const closeRows = stores.flatMap(([name, make]) =>
    closes.map(([how, kind]) => [name, how, kind, make] as const),
  );

  it.each(closeRows)(
    "%s, %s while it runs → 409 while it runs, then its result replays",
    async (_s, _h, kind, make) => {
      let runs = 0;
      const hold = gate();
      const entered = gate();
      const app = express();
      app.post(
        "/orders",
        express.json(),
        keyed({ store: make(), logger: { warn() {} } }, async () => {
          runs += 1;
          const n = runs;
          if (n === 1) {
            entered.open();
            await hold.promise;
          }
          return reply({ run: n }, { status: 201, headers: { location: `/orders/${n}` } });
        }),
      );
      app.set("env", "test");
      server = await listen(app);
      if (kind === "timeout") server.server.setTimeout(50);
      const url = new URL(`${server.url}/orders`);
      const body = '{"qty":1}';
      const send = () =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": '"stays"' },
          body,
        });
      if (kind === "abort") {
        const abort = new AbortController();
        const first = fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": '"stays"' },
          body,
          signal: abort.signal,
        }).then((res) => res.text());
        await entered.promise;
        abort.abort();
        expect(await first.catch((err: unknown) => err)).toBeInstanceOf(Error);
      } else {
        // A raw connection: the test decides how it ends.
        const closed = await new Promise<string>((resolve, reject) => {
          const socket = connect(Number(url.port), "127.0.0.1", () => {
            socket.write(
              `POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: "stays"\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
            );
          });
          socket.on("error", () => {});
          void entered.promise.then(() => {
            if (kind === "fin") socket.end();
            if (kind === "rst") socket.resetAndDestroy();
          });
          socket.once("close", () => resolve("closed"));
          socket.once("timeout", () => reject(new Error("unexpected client timeout")));
        });
        expect(closed).toBe("closed");
        // The idle timeout has cut the first request; the requests below get connections without
        // it, so a slow machine cannot cut them too.
        if (kind === "timeout") server.server.setTimeout(0);
      }
      await entered.promise;
      const during = await send();
      await during.arrayBuffer();
      expect(during.status).toBe(409);
      // The handler answers now: its record is there once it is stored.
      hold.open();
      const after = await vi.waitFor(
        async () => {
          const res = await send();
          const text = await res.text();
          expect(res.status).not.toBe(409);
          return { res, text };
        },
        { timeout: 10_000, interval: 5 },
      );
      expect(after.res.status).toBe(201);
      expect(after.res.headers.get("idempotent-replayed")).toBe("true");
      expect(after.res.headers.get("location")).toBe("/orders/1");
      expect(after.text).toBe('{"run":1}');
      expect(runs).toBe(1);
    },
  );
});

/** A store that never answers `release`: the failure must still reach the client. */
describe("a failure whose release the store never answers → answered all the same", () => {
  it("the handler throws, release never settles → 500 within the release wait", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const asked = gate();
      const inner = new MemoryStore();
      const store: IdempotencyStore = {
        claim: (...a) => inner.claim(...a),
        complete: (...a) => inner.complete(...a),
        renew: (...a) => inner.renew(...a),
        release: () => {
          asked.open();
          return new Promise<boolean>(() => {});
        },
      };
      const app = express();
      app.post(
        "/orders",
        express.json(),
        keyed({ store, logger: { warn() {} } }, () => {
          throw new Error("database went away");
        }),
      );
      app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
      const answered = fetch(`${server.url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": '"hung"' },
        body: "{}",
      }).then((res) => res.status);
      await asked.promise;
      // However long the store takes: a few seconds of fake time, far past the cap.
      await vi.advanceTimersByTimeAsync(5_000);
      expect(await answered).toBe(500);
    } finally {
      vi.useRealTimers();
    }
  });
});

/** A store that never answers `complete`: the response waits one lease at most. */
describe("a store that never answers complete → the response goes out within one lease", () => {
  it("leaseMs 200, complete never settles → 201 within the lease", async () => {
    const inner = new MemoryStore();
    const store: IdempotencyStore = {
      claim: (...a) => inner.claim(...a),
      complete: () => new Promise<boolean>(() => {}),
      renew: (...a) => inner.renew(...a),
      release: (...a) => inner.release(...a),
    };
    const app = express();
    app.post(
      "/orders",
      express.json(),
      keyed({ store, logger: { warn() {} }, leaseMs: 200 }, () => reply({ ok: true }, { status: 201 })),
    );
    server = await listen(app);
    const started = Date.now();
    const res = await fetch(`${server.url}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": '"silent-store"' },
      body: "{}",
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ ok: true });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
