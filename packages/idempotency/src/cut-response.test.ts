import { connect } from "node:net";
import { errorHandler } from "@svc/errors";
import { type Listening, listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { gate } from "../test/helpers.js";
import { idempotency } from "./idempotency.js";
import { MemoryStore } from "./memory-store.js";
import { RedisStore } from "./redis-store.js";
import type { IdempotencyStore } from "./store.js";

// draft-ietf-httpapi-idempotency-key-header §2.7: the 409 is for a retry "while the original
// request is still being processed". A response the server cut after its header section went out
// (an error mid-body: the error handler closes the connection) is over, and nothing runs any more.
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

type Next = (err?: unknown) => void;

/**
 * An app whose `POST /orders` (behind `idempotency`) runs `first` on its first call, which cuts
 * the response after its first bytes, and answers 201 `{ run }` on every later one.
 */
function ordersApp(make: () => IdempotencyStore, first: (res: express.Response, next: Next) => unknown) {
  let runs = 0;
  const app = express();
  app.post(
    "/orders",
    express.json(),
    idempotency({ store: make(), logger: { warn() {} } }),
    async (_req, res, next) => {
      runs += 1;
      if (runs === 1) {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"partial":');
        await first(res, next);
        return;
      }
      res.status(201).json({ run: runs });
    },
  );
  return { app, runs: () => runs };
}

/** The first POST with `key` is cut; a retry runs the handler again at once; a third replays it. */
async function expectCutThenRetry(url: string, key: string, runs: () => number) {
  const send = () =>
    fetch(`${url}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": `"${key}"` },
      body: '{"qty":1}',
    });
  // The first response is cut: its body never completes.
  const cut = await send()
    .then((res) => res.text())
    .catch((err: unknown) => err);
  expect(cut).toBeInstanceOf(Error);
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

const cuts = [
  ["an error after the first bytes (next(err): the error handler destroys the response)", "next"],
  ["the handler destroying the response itself", "destroy"],
] as const;

const rows = stores.flatMap(([name, make]) => cuts.map(([how, kind]) => [name, how, kind, make] as const));

describe("a response cut before its end by the server", () => {
  it.each(rows)(
    "%s, %s → the key is free at once: a retry runs, then replays",
    async (_s, _h, kind, make) => {
      const { app, runs } = ordersApp(make, (res, next) => {
        if (kind === "next") next(new Error("database went away mid-stream"));
        else res.destroy();
      });
      app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
      await expectCutThenRetry(server.url, "cut-1", runs);
    },
  );
});

/**
 * Express's own final handler (no error handler of the app's): an error after the header
 * section went out is answered with `req.socket.destroy()` (finalhandler 1.x in Express 4, 2.x in
 * Express 5), the connection cut and not the response. A connection that closes is no outcome of
 * the handler (the server closes it for a malformed request pipelined behind a running one too),
 * so the claim is kept and released by its lease alone: 409 until then, never a second run while
 * the first may still be running; then a retry runs, then replays.
 */
describe("a connection cut by Express's default error handler (no app error handler)", () => {
  const when = [
    ["synchronously", false],
    ["after an await", true],
  ] as const;
  const defaultRows = stores.flatMap(([name, make]) =>
    when.map(([how, later]) => [name, how, later, make] as const),
  );

  it.each(defaultRows)(
    "%s, next(err) %s after the first bytes → 409 until the lease ends (maxLeaseMs), then a retry runs, then replays",
    async (_s, _h, later, make) => {
      let runs = 0;
      const app = express();
      app.post(
        "/orders",
        express.json(),
        idempotency({ store: make(), logger: { warn() {} }, leaseMs: 1000, maxLeaseMs: 1000 }),
        async (_req, res, next) => {
          runs += 1;
          if (runs === 1) {
            res.writeHead(200, { "content-type": "application/json" });
            res.write('{"partial":');
            if (later) await new Promise((r) => setImmediate(r));
            next(new Error("database went away mid-stream"));
            return;
          }
          res.status(201).json({ run: runs });
        },
      );
      // Express's default error handler logs the error on stderr unless the env is "test".
      app.set("env", "test");
      server = await listen(app);
      const send = () =>
        fetch(`${server?.url}/orders`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": '"cut-default"' },
          body: '{"qty":1}',
        });
      const cut = await send()
        .then((res) => res.text())
        .catch((err: unknown) => err);
      expect(cut).toBeInstanceOf(Error);
      const during = await send();
      await during.arrayBuffer();
      expect(during.status).toBe(409);
      expect(runs).toBe(1);
      const retry = await vi.waitFor(
        async () => {
          const res = await send();
          const body = await res.json();
          expect(res.status).not.toBe(409);
          return { res, body };
        },
        { timeout: 8_000, interval: 50 },
      );
      expect(retry.res.status).toBe(201);
      expect(retry.res.headers.get("idempotent-replayed")).toBeNull();
      expect(retry.body).toEqual({ run: 2 });
      const replay = await send();
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(await replay.json()).toEqual({ run: 2 });
      expect(runs).toBe(2);
    },
  );
});

/**
 * The other side of it: a connection that closes while the handler still runs is not a request
 * that is over. The client going away (a FIN, an RST, fetch aborted) or the server's own idle
 * timeout: the handler goes on and ends its response, which is stored; a retry meanwhile gets
 * 409 (draft §2.7), never a second run.
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
    "%s, %s after the first bytes → 409 while it runs, then its result replays",
    async (_s, _h, kind, make) => {
      let runs = 0;
      const hold = gate();
      const wrote = gate();
      const app = express();
      app.post(
        "/orders",
        express.json(),
        idempotency({ store: make(), logger: { warn() {} } }),
        async (_req, res) => {
          runs += 1;
          const n = runs;
          res.writeHead(201, { "content-type": "application/json", location: `/orders/${n}` });
          res.write('{"run":');
          if (n === 1) {
            wrote.open();
            await hold.promise;
          }
          res.end(`${n}}`);
        },
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
        await wrote.promise;
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
          socket.once("data", () => {
            if (kind === "fin") socket.end();
            if (kind === "rst") socket.resetAndDestroy();
          });
          socket.once("close", () => resolve("closed"));
          socket.once("timeout", () => reject(new Error("unexpected client timeout")));
        });
        expect(closed).toBe("closed");
      }
      await wrote.promise;
      const during = await send();
      await during.arrayBuffer();
      expect(during.status).toBe(409);
      // The handler ends its response now: its record is there once it is stored.
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

/**
 * A store that never answers `release`: the cut must still reach the client (a retry then meets
 * the claim, or a store that is down), never a connection held open for good.
 */
describe("a cut whose release the store never answers → the connection is cut all the same", () => {
  const hangs = [["errorHandler() (res.destroy())", "errors"]] as const;

  it.each(hangs)("%s", async (_h, kind) => {
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
        idempotency({ store, logger: { warn() {} } }),
        (_req, res, next) => {
          res.writeHead(200, { "content-type": "application/json" });
          res.write('{"partial":');
          next(new Error("database went away mid-stream"));
        },
      );
      app.set("env", "test");
      if (kind === "errors") app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
      const cut = fetch(`${server.url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": '"hung"' },
        body: "{}",
      })
        .then((res) => res.text())
        .catch((err: unknown) => err);
      await asked.promise;
      // However long the store takes: a few seconds of fake time, far past the cap.
      await vi.advanceTimersByTimeAsync(5_000);
      expect(await cut).toBeInstanceOf(Error);
    } finally {
      vi.useRealTimers();
    }
  });
});

/** A store that never answers `complete`: the response's end waits one lease at most. */
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
      idempotency({ store, logger: { warn() {} }, leaseMs: 200 }),
      (_req, res) => {
        res.status(201).json({ ok: true });
      },
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
