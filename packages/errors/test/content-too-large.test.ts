import { createServer, type Server } from "node:http";
import net from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { HttpError } from "@svc/kernel";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "../src/express.js";
import { errorPlugin } from "../src/fastify.js";
import { onError } from "../src/fetch.js";
import { errorResponder } from "../src/node.js";

const quiet = { logger: { error() {} } };
const LIMIT = 1024;

/** A server per framework whose `POST /upload` refuses content over LIMIT its own way; `GET /after` answers "after". */
const servers: Record<string, () => Promise<Server>> = {
  async express() {
    const app = express();
    app.post("/upload", express.json({ limit: LIMIT }), (_req, res) => {
      res.send("ok");
    });
    app.get("/after", (_req, res) => {
      res.send("after");
    });
    app.use(errorHandler(quiet));
    return createServer(app);
  },
  async node() {
    const sendError = errorResponder(quiet);
    return createServer((req, res) => {
      if (req.url === "/after") {
        res.end("after");
        return;
      }
      if (Number(req.headers["content-length"]) > LIMIT) sendError(HttpError.contentTooLarge(), req, res);
      else res.end("ok");
    });
  },
  async fastify() {
    const app = Fastify({ bodyLimit: LIMIT });
    await app.register(errorPlugin, quiet);
    app.post("/upload", async () => "ok");
    app.get("/after", async () => "after");
    await app.ready();
    return app.server;
  },
  async fetch() {
    const app = new Hono();
    app.post("/upload", bodyLimit({ maxSize: LIMIT }), (c) => c.text("ok"));
    app.get("/after", (c) => c.text("after"));
    app.onError(onError(quiet));
    return createAdaptorServer({ fetch: app.fetch }) as Server;
  },
};

/**
 * Sends, on one connection, a POST whose content is over the limit and a pipelined GET behind it,
 * and reads until the server closes the connection (or 5 s pass).
 */
function overLimitThenPipelined(port: number): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    let text = "";
    let timedOut = false;
    const socket = net.connect(port, "127.0.0.1", () => {
      const size = LIMIT * 200;
      socket.write(
        `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(size, 0x20));
      socket.write("GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
    });
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, 5000);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closedByServer: !timedOut });
    });
  });
}

describe("a 413 over a limit, kept alive, a GET pipelined behind it", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    server = undefined;
  });

  for (const [name, make] of Object.entries(servers)) {
    // body-parser reads the whole content before its 413 (it drains the request itself), so the
    // refused-body policy finds nothing unread: the connection is kept and the GET answered.
    const readWhole = name === "express";
    it(`${name}: content over the limit → the 413, then ${readWhole ? "the GET answered (body-parser read the content)" : "Connection: close, and nothing more"}`, async () => {
      server = await make();
      await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
      const { port } = server.address() as net.AddressInfo;
      const { text, closedByServer } = await overLimitThenPipelined(port);
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      if (readWhole) {
        expect(text.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(2);
        expect(text).toContain("after");
        return;
      }
      expect(text).toMatch(/\r\nconnection: close\r\n/i);
      // One response: the pipelined GET is not answered on a connection the 413 closed.
      expect(text.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
      expect(text).not.toContain("after");
      expect(closedByServer).toBe(true);
    }, 10_000);
  }
});
