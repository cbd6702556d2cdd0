import type { IncomingMessage, ServerResponse } from "node:http";
import { connect } from "node:net";
import { errorHandler } from "@svc/errors/express";
import { type Listening, listen } from "@svc/test-utils";
import express, { type NextFunction } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "../src/express.js";

/**
 * A request whose body stream fails before its end (the client closes the connection mid-body,
 * RFC 9112 §8: an incomplete message; or something upstream destroys the stream with an error)
 * is refused with a 400 like every other refusal of parseBody: an HttpError with a `code`, so a
 * handler or a log can tell it apart. Nobody can receive it (Node destroys the socket with the
 * stream), so parseBody itself touches nothing of the response, and the error handler does not
 * log it as a server error: the client went away, the server did not fail.
 */
interface Seen {
  status: unknown;
  code: unknown;
  message: unknown;
  cause: unknown;
  /** The response's headers when the error reached the error middleware: none set by parseBody. */
  headers: string[];
  socketDestroyed: boolean;
}

let server: Listening;
let reached = 0;
const logged: unknown[] = [];
let onError: ((seen: Seen) => void) | undefined;
let onData: (() => void) | undefined;

beforeAll(async () => {
  const app = express();
  app.disable("x-powered-by");
  app.post(
    "/echo",
    (req, _res, next) => {
      next();
      req.once("data", () => onData?.());
    },
    parseBody({ limit: 1000 }),
    (req, res) => {
      reached++;
      res.status(201).json({ received: req.body ?? null });
    },
  );
  app.post(
    "/broken",
    (req, _res, next) => {
      next();
      // A stream error that is not the client's doing: the stream destroyed with an error.
      req.once("data", () => req.destroy(new Error("upstream stream failure")));
    },
    parseBody({ limit: 1000 }),
    (_req, res) => {
      reached++;
      res.status(201).end();
    },
  );
  app.use((err: unknown, req: IncomingMessage, res: ServerResponse, next: NextFunction) => {
    const e = err as { status?: unknown; code?: unknown; message?: unknown; cause?: unknown };
    onError?.({
      status: e.status,
      code: e.code,
      message: e.message,
      cause: e.cause,
      headers: res.getHeaderNames(),
      socketDestroyed: req.socket.destroyed,
    });
    next(err);
  });
  app.use(
    errorHandler({
      logger: {
        error(...args: unknown[]) {
          logged.push(args);
        },
      },
    }),
  );
  server = await listen(app);
});
afterAll(() => server.close());

/** Sends `head` and `first` to `path`, then closes the socket once the server has the first bytes. */
async function abortMidBody(head: string, first: string): Promise<Seen> {
  const seen = new Promise<Seen>((resolve) => {
    onError = resolve;
  });
  const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
  socket.on("error", () => {});
  onData = () => socket.destroy();
  socket.write(`${head}\r\n\r\n${first}`);
  return seen;
}

const json = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json";
const xml = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/xml";

const expectUnreadable = (seen: Seen, causeMessage: string, headers: readonly string[] = []) => {
  expect(seen).toMatchObject({
    status: 400,
    code: "unreadable_body",
    message: "The request body could not be read",
    headers,
    socketDestroyed: true,
  });
  expect(seen.cause).toBeInstanceOf(Error);
  expect((seen.cause as Error).message).toBe(causeMessage);
};

describe("parseBody: the body stream fails before its end → 400 unreadable_body", () => {
  // A chunked body's remainder has no known bound: the refused-body policy closes the connection.
  it.each<[string, string, string, readonly string[]]>([
    ["JSON, Content-Length 100, 6 bytes sent", `${json}\r\nContent-Length: 100`, '{"a":1', []],
    [
      "JSON, chunked, one chunk sent",
      `${json}\r\nTransfer-Encoding: chunked`,
      '6\r\n{"a":1\r\n',
      ["connection"],
    ],
    ["XML, Content-Length 100, 6 bytes sent", `${xml}\r\nContent-Length: 100`, "<a>x</", []],
  ])(
    "%s, then the client closes → code unreadable_body, never reached, not logged",
    async (_label, head, first, headers) => {
      const before = reached;
      const seen = await abortMidBody(head, first);
      expectUnreadable(seen, "aborted", headers);
      expect(reached).toBe(before);
      expect(logged).toEqual([]);
    },
  );

  it("the stream destroyed with an error upstream → code unreadable_body, the error as cause", async () => {
    const before = reached;
    const seen = new Promise<Seen>((resolve) => {
      onError = resolve;
    });
    const res = fetch(`${server.url}/broken`, {
      method: "POST",
      body: '{"a":1}',
      headers: { "content-type": "application/json" },
    });
    await expect(res).rejects.toThrow();
    expectUnreadable(await seen, "upstream stream failure");
    expect(reached).toBe(before);
    expect(logged).toEqual([]);
  });

  it("the same body sent whole → parsed, as before", async () => {
    const res = await fetch(`${server.url}/echo`, {
      method: "POST",
      body: '{"a":1}',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { a: 1 } });
  });
});
