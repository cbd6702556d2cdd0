import { createServer } from "node:http";
import type { Gate } from "@svc/kernel";
import type { Mounts } from "@svc/test-utils/conformance";
import { converse, firstHead, requestHead, unreadBodyPolicy } from "@svc/test-utils/unread-body";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { expressGate } from "../src/express.js";
import { fastifyGate } from "../src/fastify.js";
import { fetchGate } from "../src/fetch.js";
import { nodeGate, settleUnreadBody } from "../src/node.js";
import { UNREAD_BODY_DEFAULTS } from "../src/unread-body.js";

/** A gate that answers in front of the body, as a rate limit or an authentication does. */
const gate: Gate = (view) => {
  const status = view.url === "/large" ? 401 : view.url === "/small" ? 429 : undefined;
  if (status === undefined) return undefined;
  return { answer: { status, fields: { "content-type": "text/plain" }, vary: [], body: Buffer.from("no") } };
};

const mounts: Mounts = {
  express() {
    const app = express();
    app.use(expressGate(gate));
    app.get("/after", (_req, res) => {
      res.send("after");
    });
    return app;
  },
  node() {
    const guard = nodeGate(gate);
    return (req, res) => {
      guard(req, res).then((answered) => {
        if (!answered) res.end("after");
      });
    };
  },
  fastify() {
    const app = Fastify();
    app.addHook("onRequest", fastifyGate(gate));
    app.post("/large", async () => "unreachable");
    app.post("/small", async () => "unreachable");
    app.get("/after", async () => "after");
    return app;
  },
  fetch() {
    const app = new Hono();
    app.use(fetchGate(gate));
    app.get("/after", (c) => c.text("after"));
    return app.fetch;
  },
};

unreadBodyPolicy("@svc/kernel: a gate's answer in front of the content, default bounds", mounts, {
  large: { path: "/large", fields: { "Content-Type": "application/json" }, status: 401 },
  small: { path: "/small", fields: { "Content-Type": "application/json" }, status: 429 },
});

describe("settleUnreadBody on node:http", () => {
  it("Transfer-Encoding: chunked, refused unread → Connection: close, a pipelined GET never answered", async () => {
    const server = createServer((req, res) => {
      if (req.url === "/after") return void res.end("after");
      settleUnreadBody(req, res, UNREAD_BODY_DEFAULTS);
      res.writeHead(415).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    try {
      const head = requestHead("POST", "/chunked", { "Transfer-Encoding": "chunked" });
      const got = await converse(`http://127.0.0.1:${port}`, [
        `${head}5\r\nhello\r\n0\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n`,
      ]);
      expect(got.statuses).toEqual([415]);
      expect(firstHead(got.text)).toMatch(/\r\nconnection: close/i);
      expect(got.closedByServer).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
