import { errorHandler } from "@svc/errors";
import { type Listening, listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
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

const cuts = [
  ["an error after the first bytes (next(err): the error handler destroys the response)", "next"],
  ["the handler destroying the response itself", "destroy"],
] as const;

const rows = stores.flatMap(([name, make]) => cuts.map(([how, kind]) => [name, how, kind, make] as const));

describe("a response cut before its end by the server", () => {
  it.each(rows)(
    "%s, %s → the key is free at once: a retry runs, then replays",
    async (_s, _h, kind, make) => {
      let runs = 0;
      const app = express();
      app.post(
        "/orders",
        express.json(),
        idempotency({ store: make(), logger: { warn() {} } }),
        (_req, res, next) => {
          runs += 1;
          if (runs === 1) {
            res.writeHead(200, { "content-type": "application/json" });
            res.write('{"partial":');
            if (kind === "next") next(new Error("database went away mid-stream"));
            else res.destroy();
            return;
          }
          res.status(201).json({ run: runs });
        },
      );
      app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
      const send = () =>
        fetch(`${server?.url}/orders`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": '"cut-1"' },
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
      expect(runs).toBe(2);
    },
  );
});
