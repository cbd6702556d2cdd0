import type { IncomingMessage, ServerResponse } from "node:http";
import { request as httpRequest } from "node:http";
import { brotliCompressSync, constants, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import * as onExpress from "@svc/negotiate/express";
import * as onFastify from "@svc/negotiate/fastify";
import * as onFetch from "@svc/negotiate/fetch";
import * as onNode from "@svc/negotiate/node";
import { express4 } from "@svc/test-utils";
import {
  conformance,
  errorStatus,
  FRAMEWORKS,
  fallbackErrors,
  type Mounts,
  type Row,
  serve,
} from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { ParseBodyOptions } from "../src/index.js";

const options: ParseBodyOptions = { limit: "1mb", contentCodings: ["gzip", "deflate", "br"] };

/** `POST /echo`: the body parsed with `options`, answered 201 with it. */
function mounts(opts: ParseBodyOptions = options, expressApp: () => express.Express = express): Mounts {
  return {
    express() {
      const app = expressApp();
      app.post("/echo", onExpress.parseBody(opts), (req: onExpress.ParsedBodyRequest, res) => {
        res.status(201).json(req.body ?? null);
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const readBody = onNode.parseBody(opts);
      return (req: IncomingMessage, res: ServerResponse) => {
        readBody(req, res).then(
          (value) => {
            res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(value ?? null));
          },
          (err) => fallbackErrors.node(err, req, res),
        );
      };
    },
    async fastify() {
      const app = Fastify();
      await app.register(onFastify.parseBody, opts);
      app.post("/echo", async (request, reply) => reply.code(201).send(request.body ?? null));
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const readBody = onFetch.parseBody(opts);
      const app = new Hono();
      app.post("/echo", async (c) => c.json((await readBody(c.req.raw)) ?? null, 201));
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return app.fetch;
    },
  };
}

const order = { id: 7, lines: ["a", "b"] };
const orderJson = JSON.stringify(order);
const post = (headers: Record<string, string>, body: Uint8Array) => ({
  method: "POST",
  path: "/echo",
  headers: { "content-type": "application/json", ...headers },
  body,
});

const rows: Row[] = [
  {
    name: "Content-Encoding: gzip → decoded, parsed, 201",
    request: post({ "content-encoding": "gzip" }, gzipSync(orderJson)),
    status: 201,
    body: order,
  },
  {
    name: "Content-Encoding: x-gzip → gzip (RFC 9110 §8.4.1.3)",
    request: post({ "content-encoding": "x-gzip" }, gzipSync(orderJson)),
    status: 201,
    body: order,
  },
  {
    name: "Content-Encoding: deflate (zlib format) → 201",
    request: post({ "content-encoding": "deflate" }, deflateSync(orderJson)),
    status: 201,
    body: order,
  },
  {
    name: "Content-Encoding: br → 201",
    request: post({ "content-encoding": "br" }, brotliCompressSync(orderJson)),
    status: 201,
    body: order,
  },
  {
    name: "Content-Encoding: gzip, br (br applied last) → decoded in reverse, 201",
    request: post({ "content-encoding": "gzip, br" }, brotliCompressSync(gzipSync(orderJson))),
    status: 201,
    body: order,
  },
  {
    name: "Content-Encoding: gzip, gzip, gzip → 415 (at most two stacked)",
    request: post({ "content-encoding": "gzip, gzip, gzip" }, gzipSync(gzipSync(gzipSync(orderJson)))),
    status: 415,
    headers: { "accept-encoding": "gzip, deflate, br, identity" },
    body: errorStatus(415),
  },
  {
    name: "Content-Encoding: compress → 415 with Accept-Encoding naming the enabled codings",
    request: post({ "content-encoding": "compress" }, Buffer.from(orderJson)),
    status: 415,
    headers: {
      "accept-encoding": "gzip, deflate, br, identity",
      "accept-post": "application/json, application/xml",
    },
    body: errorStatus(415),
  },
  {
    name: "Content-Encoding: zstd, not enabled → 415",
    request: post({ "content-encoding": "zstd" }, Buffer.from(orderJson)),
    status: 415,
    headers: { "accept-encoding": "gzip, deflate, br, identity" },
    body: errorStatus(415),
  },
  {
    name: "gzip of 2 MiB decoding past limit 1mb → 413",
    request: post(
      { "content-encoding": "gzip" },
      gzipSync(JSON.stringify({ pad: "x".repeat(2 * 1024 * 1024) })),
    ),
    status: 413,
    body: errorStatus(413),
  },
  {
    name: "Content-Encoding: gzip on bytes that are not gzip → 400",
    request: post({ "content-encoding": "gzip" }, Buffer.from(orderJson)),
    status: 400,
    body: errorStatus(400),
  },
];

conformance("negotiate contentCodings", mounts(), rows);
conformance("negotiate contentCodings (Express 4)", mounts(options, express4), rows, ["express"]);

conformance("negotiate without contentCodings", mounts({}), [
  {
    name: "Content-Encoding: gzip → 415, Accept-Encoding: identity",
    request: post({ "content-encoding": "gzip" }, gzipSync(orderJson)),
    status: 415,
    headers: { "accept-encoding": "identity" },
    body: errorStatus(415),
  },
]);

/**
 * A gzip member whose content is `segments` MiB of zeros, produced a segment at a time: one MiB
 * of zeros deflated with a full flush is a run of blocks that refers to nothing before it, so
 * repeating it makes a valid deflate stream without compressing gigabytes in the test.
 */
const segment = deflateRawSync(Buffer.alloc(1024 * 1024), { finishFlush: constants.Z_FULL_FLUSH });
const BOMB_SEGMENTS = 10 * 1024;
const BOMB_BYTES = 10 + BOMB_SEGMENTS * segment.byteLength;

function* gzipBomb(segments: number): Generator<Uint8Array> {
  yield Uint8Array.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  for (let i = 0; i < segments; i++) yield segment;
}

/** Sends the bomb chunked until the server answers; resolves with the answer and the bytes sent by then. */
function sendBomb(url: string, segments: number): Promise<{ status: number; body: string; sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest(`${url}/echo`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "transfer-encoding": "chunked",
      },
    });
    req.on("response", (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), sent });
        req.destroy();
      });
    });
    // The server may close the connection once it has answered: not a failure of the test.
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    const bomb = gzipBomb(segments);
    const pump = () => {
      for (;;) {
        if (answered || req.destroyed) return;
        const next = bomb.next();
        if (next.done) {
          req.end();
          return;
        }
        sent += next.value.byteLength;
        if (!req.write(next.value)) {
          req.once("drain", pump);
          return;
        }
      }
    };
    pump();
  });
}

describe("a gzip body of ~10 MB decoding to 10 GiB, limit 1mb", () => {
  const frameworks = [
    ...FRAMEWORKS.map((f) => [f, mounts()] as const),
    ["express", mounts(options, express4)] as const,
  ];
  for (const [framework, m] of frameworks) {
    it(`${framework}${m === frameworks[FRAMEWORKS.length]?.[1] ? " (Express 4)" : ""} → 413 before the body is sent, rss flat`, async () => {
      const server = await serve(framework, m);
      const heard: unknown[] = [];
      const listener = (message: unknown) => heard.push(message);
      subscribeDiagnostics("svc:negotiate", listener);
      try {
        const before = process.memoryUsage().rss;
        const answer = await sendBomb(server.url, BOMB_SEGMENTS);
        const growth = process.memoryUsage().rss - before;
        expect(answer.status).toBe(413);
        expect(JSON.parse(answer.body)).toEqual({
          status: 413,
          message: "The request body exceeds 1048576 bytes",
        });
        // Refused early: the answer came before the whole ~10 MB was sent.
        expect(answer.sent).toBeLessThan(BOMB_BYTES);
        expect(growth).toBeLessThan(64 * 1024 * 1024);
        expect(heard).toContainEqual(
          expect.objectContaining({ decision: "body-refused", reason: "decoded-too-large" }),
        );
      } finally {
        unsubscribeDiagnostics("svc:negotiate", listener);
        await server.close();
      }
    });
  }
});
