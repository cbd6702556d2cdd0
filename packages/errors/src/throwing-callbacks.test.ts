import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ErrorHandlerOptions, errorHandler, notFound } from "./express.js";
import { type ErrorLogger, HttpError } from "./index.js";

// The error handler runs the application's callbacks (correlationId, the logger) on every failed
// request. One that throws for some request (a correlationId reading a header the client left
// out) must not throw out of the handler: through Express the client would get the framework's
// HTML page (with the stack trace outside production, RFC 9457 §6), and on plain node:http the
// exception would escape the request listener and take the process down.

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
  vi.restoreAllMocks();
});

function quietStderr(): string[] {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation(((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write);
  return lines;
}

const fail = (status: number) => {
  if (status === 500) return new Error("boom at /srv/app/db.js:12");
  // An error header that cannot be sent is logged (droppedHeaders) whatever the status.
  return HttpError.badRequest("bad", { headers: { "X-Bad": "a\r\nb" } });
};

// A realistic bug: the header is absent on this request, so `.slice` reads undefined.
const readsHeader: ErrorHandlerOptions["correlationId"] = (req) =>
  (req.headers["x-request-id"] as string).slice(0, 64);
const throwingLogger: ErrorLogger = {
  error() {
    throw new Error("log transport down at /srv/app/log.js:3");
  },
};

const cases: [string, ErrorHandlerOptions, number][] = [
  ["correlationId reading an absent X-Request-ID, a thrown Error", { correlationId: readsHeader }, 500],
  [
    "correlationId reading an absent X-Request-ID, a 400 with an unsendable header",
    { correlationId: readsHeader },
    400,
  ],
  ["a logger whose error() throws, a 400 with an unsendable header", { logger: throwingLogger }, 400],
  [
    "now throwing, a thrown Error",
    {
      now: () => {
        throw new Error("clock down at /srv/app/clock.js:1");
      },
    },
    500,
  ],
  ["now returning an invalid Date, a 400", { now: () => new Date(Number.NaN) }, 400],
  ["now returning undefined (plain JavaScript), a 400", { now: (() => undefined) as never }, 400],
  ["now returning a string, a thrown Error", { now: (() => "2026-01-02") as never }, 500],
];

async function expectRecord(res: Response, status: number): Promise<void> {
  const text = await res.text();
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(text).not.toMatch(/srv\/app|TypeError|at /);
  expect(JSON.parse(text)).toMatchObject({ status, path: "/x" });
}

describe("errorHandler callbacks that throw: the record still goes out", () => {
  it.each(cases)("Express: %s → the record", async (_label, options, status) => {
    quietStderr();
    const app = express();
    app.get("/x", () => {
      throw fail(status);
    });
    app.use(errorHandler({ logger: { error() {} }, ...options }));
    const server = await listen(app);
    closers.push(server.close);
    await expectRecord(await fetch(`${server.url}/x`), status);
  });

  it.each(cases)("plain node:http: %s → the record, nothing thrown", async (_label, options, status) => {
    const lines = quietStderr();
    const handleError = errorHandler({ logger: { error() {} }, ...options });
    const thrown: unknown[] = [];
    const server = createServer((req, res) => {
      try {
        handleError(fail(status), req, res, () => res.destroy());
      } catch (err) {
        // On the old code the exception escaped here (the process's uncaughtException without this).
        thrown.push(err);
        res.destroy();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    await expectRecord(await fetch(`http://127.0.0.1:${port}/x`), status);
    expect(thrown).toEqual([]);
    // The line still reaches stderr when the logger itself failed.
    if (options.logger === throwingLogger) expect(lines.join("")).toContain("droppedHeaders");
  });
});

describe("errorHandler: a now option that throws or gives no valid Date", () => {
  it.each([
    [
      "throws",
      () => {
        throw new Error("clock down");
      },
    ],
    ["returns an invalid Date", () => new Date(Number.NaN)],
    ["returns a number", (() => 1767322800000) as never],
  ] as [string, () => Date][])(
    "now %s → a 404 record with the system clock's time, the failure logged once",
    async (_label, now) => {
      const calls: [Record<string, unknown>, string | undefined][] = [];
      const app = express();
      app.use(notFound());
      app.use(errorHandler({ now, logger: { error: (obj, msg) => calls.push([obj as never, msg]) } }));
      const server = await listen(app);
      closers.push(server.close);
      const res = await fetch(`${server.url}/x`, { headers: { Accept: "application/problem+xml" } });
      expect(res.status).toBe(404);
      expect(await res.text()).toMatch(/<timestamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z<\/timestamp>/);
      expect(calls).toHaveLength(1);
      expect(calls[0]?.[0]).toMatchObject({ err: expect.any(Error), status: 404, path: "/x" });
      expect(calls[0]?.[1]).toMatch(/now option/);
    },
  );
});
