import { connect, type Socket } from "node:net";
import { errorHandler } from "@svc/errors/express";
import { clientErrorHandler } from "@svc/errors/node";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { gate } from "../test/helpers.js";
import { idempotency } from "./express.js";
import { MemoryStore } from "./memory-store.js";
import { RedisStore } from "./redis-store.js";
import type { IdempotencyStore } from "./store.js";

// draft-ietf-httpapi-idempotency-key-header §2.6/§2.7: a retry gets 409 "while the original request
// is still being processed" and then "the result of the previously completed operation"; a
// connection that closes under a running handler ends neither the request nor its claim.
const redisUrl = serviceUrl("REDIS_URL");
const io = redisUrl ? new Redis(redisUrl) : undefined;
afterAll(() => io?.disconnect());
const prefix = uniquePrefix("idempotency-conn");

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

let made = 0;
const stores: [string, () => IdempotencyStore][] = [["MemoryStore", () => new MemoryStore()]];
if (io) stores.push(["RedisStore", () => new RedisStore({ client: io, prefix: `${prefix}:${++made}:` })]);

const BODY = '{"amount":5}';

/** Sends raw bytes on a fresh connection; resolves with what came back once the server closed it. */
function rawExchange(port: number, bytes: string, onOpen?: (socket: Socket) => void): Promise<string> {
  return new Promise((resolve) => {
    let got = "";
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(bytes);
      onOpen?.(socket);
    });
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      got += chunk;
    });
    socket.on("error", () => {});
    socket.once("close", () => resolve(got));
  });
}

const keyedPost = (key: string) =>
  `POST /transfers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: "${key}"\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

describe("POST with a key, then a malformed request pipelined on its connection (the server closes it) while the handler runs", () => {
  it.each(stores)(
    "%s: 10 keys → each handler runs once; 409 while it runs, its replay after",
    async (_s, make) => {
      const runs = new Map<string, number>();
      const holds = new Map<string, ReturnType<typeof gate>>();
      const started = new Map<string, ReturnType<typeof gate>>();
      const app = express();
      const svc = expressAdapter(createPipeline());
      app.post(
        "/transfers",
        express.json(),
        svc.handle(
          async (req: express.Request) => {
            const key = String(req.get("idempotency-key"));
            const n = (runs.get(key) ?? 0) + 1;
            runs.set(key, n);
            if (n === 1) {
              started.get(key)?.open();
              await holds.get(key)?.promise;
            }
            return reply(
              { run: n },
              { status: 201, headers: { location: `/transfers/${key.replaceAll('"', "")}-${n}` } },
            );
          },
          { idempotency: idempotency({ store: make(), logger: { warn() {} } }) },
        ),
      );
      app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
      server.server.on("clientError", clientErrorHandler({ logger: { error() {}, warn() {} } as never }));
      const port = Number(new URL(server.url).port);
      const send = (key: string) =>
        fetch(`${server?.url}/transfers`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": `"${key}"` },
          body: BODY,
        });

      const keys = Array.from({ length: 10 }, (_, i) => `${prefix}-k${i}`);
      for (const key of keys) {
        holds.set(`"${key}"`, gate());
        started.set(`"${key}"`, gate());
      }
      const firsts = keys.map((key) =>
        rawExchange(port, keyedPost(key), (socket) => {
          void started.get(`"${key}"`)?.promise.then(() => socket.write("\x01BAD\r\n\r\n"));
        }),
      );
      await Promise.all(firsts);
      const during: number[] = [];
      for (const key of keys) {
        const res = await send(key);
        await res.arrayBuffer();
        during.push(res.status);
      }
      for (const key of keys) holds.get(`"${key}"`)?.open();
      const replays: Array<{
        status: number;
        replayed: string | null;
        location: string | null;
        body: unknown;
      }> = [];
      for (const key of keys) {
        const after = await vi.waitFor(
          async () => {
            const res = await send(key);
            const text = await res.text();
            expect(res.status).not.toBe(409);
            return { res, text };
          },
          { timeout: 10_000, interval: 5 },
        );
        replays.push({
          status: after.res.status,
          replayed: after.res.headers.get("idempotent-replayed"),
          location: after.res.headers.get("location"),
          body: JSON.parse(after.text),
        });
      }
      const twice = keys.filter((key) => (runs.get(`"${key}"`) ?? 0) > 1);
      expect({ during, twice }).toEqual({ during: keys.map(() => 409), twice: [] });
      expect(replays).toEqual(
        keys.map((key) => ({
          status: 201,
          replayed: "true",
          location: `/transfers/${key}-1`,
          body: { run: 1 },
        })),
      );
    },
  );
});
