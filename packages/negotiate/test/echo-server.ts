import { errorHandler } from "@svc/errors/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll } from "vitest";
import { parseBody } from "../src/express.js";

/** A server for the file's tests, started before them: `POST /echo` parses the body with `parseBody()` and answers 201 with it. */
export interface EchoServer {
  /** The server's base URL (once the file's `beforeAll` has run). */
  readonly url: string;
  /** How many requests reached the handler, so a refusal can be shown to stop before it. */
  readonly reached: number;
}

/** Starts the echo server before the file's tests and closes it after them. */
export function useEchoServer(): EchoServer {
  let server: Listening | undefined;
  let reached = 0;
  beforeAll(async () => {
    const app = express();
    app.post("/echo", parseBody(), (req, res) => {
      reached++;
      res.status(201).json({ received: req.body ?? null });
    });
    app.use(errorHandler());
    server = await listen(app);
  });
  afterAll(() => server?.close());
  return {
    get url() {
      if (server === undefined) throw new Error("the echo server is not started yet");
      return server.url;
    },
    get reached() {
      return reached;
    },
  };
}
