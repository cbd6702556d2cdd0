import * as diagnostics_channel from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { type Framework, type Mounts, serve } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { errorsChannel } from "./diagnostics.js";
import { errorHandler } from "./express.js";
import { errorPlugin } from "./fastify.js";
import { onError, withErrors } from "./fetch.js";
import { errorValue, HttpError, refusalLog } from "./index.js";
import { errorResponder } from "./node.js";
import { errorConfig } from "./options.js";

/** The messages published on `svc:errors` while `run` runs. */
async function heard(run: () => Promise<unknown> | unknown): Promise<Record<string, unknown>[]> {
  const messages: Record<string, unknown>[] = [];
  const listener = (message: unknown) => messages.push(message as Record<string, unknown>);
  subscribeDiagnostics("svc:errors", listener);
  try {
    await run();
  } finally {
    unsubscribeDiagnostics("svc:errors", listener);
  }
  return messages;
}

const view = { method: "GET", url: "/x?q=1", headers: {} };
const jose = Object.assign(new Error('"exp" claim timestamp check failed'), { code: "ERR_JWT_EXPIRED" });

describe("svc:errors: one message per record the core renders", () => {
  const config = errorConfig({}, "test");
  const rows: { name: string; thrown: unknown; status: number; code: string | undefined }[] = [
    {
      name: "HttpError 401 invalid_token with a cause → status 401, code invalid_token",
      thrown: HttpError.unauthorized("The access token is invalid", {
        code: "invalid_token",
        cause: jose,
        headers: { "WWW-Authenticate": 'Bearer realm="api"' },
      }),
      status: 401,
      code: "invalid_token",
    },
    {
      name: "HttpError 404 without a code → code undefined",
      thrown: HttpError.notFound(),
      status: 404,
      code: undefined,
    },
    { name: "a TypeError → 500, no code", thrown: new TypeError("bug"), status: 500, code: undefined },
    { name: "a thrown string → 500", thrown: "oops", status: 500, code: undefined },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      const request = { native: true };
      const messages = await heard(() => errorValue(row.thrown, view, config, { request }));
      expect(messages).toEqual([
        { request, decision: "record", status: row.status, code: row.code, error: row.thrown },
      ]);
    });
  }

  it("no request in the context → a message without request", async () => {
    const messages = await heard(() => errorValue(HttpError.notFound(), view, config));
    expect(messages).toEqual([
      { decision: "record", status: 404, code: undefined, error: expect.any(HttpError) },
    ]);
  });

  it("no subscriber: nothing is published", () => {
    expect(errorsChannel.hasSubscribers).toBe(false);
    const publish = vi.spyOn(diagnostics_channel.channel(errorsChannel.name), "publish");
    try {
      errorValue(HttpError.notFound(), view, config, { request: {} });
      errorValue(new Error("x"), view, config, { request: {} });
      expect(publish).not.toHaveBeenCalled();
    } finally {
      publish.mockRestore();
    }
  });

  it("a 401 → one info line with the error as thrown, its cause inside", () => {
    const thrown = HttpError.unauthorized("The access token is invalid", { cause: jose });
    const { logs } = errorValue(thrown, view, config);
    expect(logs).toEqual([
      {
        level: "info",
        msg: "The access token is invalid",
        entry: { err: thrown, status: 401, method: "GET", path: "/x?q=1", correlationId: undefined },
      },
    ]);
    expect((logs[0]?.entry.err as Error | undefined)?.cause).toBe(jose);
    expect(refusalLog(new Error("x"), view)).toBeUndefined();
  });
});

/** A logger that keeps its lines. */
function keeper() {
  const lines: { level: string; entry: Record<string, unknown>; msg: string | undefined }[] = [];
  return {
    lines,
    error: (entry: object, msg?: string) => lines.push({ level: "error", entry: entry as never, msg }),
    info: (entry: object, msg?: string) => lines.push({ level: "info", entry: entry as never, msg }),
  };
}

const refusal = () =>
  HttpError.unauthorized("The access token is invalid", {
    code: "invalid_token",
    cause: jose,
    headers: { "WWW-Authenticate": 'Bearer realm="api"' },
  });

function mounts(logger: ReturnType<typeof keeper>, seen: { request?: unknown }): Mounts {
  return {
    express() {
      const app = express();
      app.get("/x", (req) => {
        seen.request = req;
        throw refusal();
      });
      app.use(errorHandler({ logger }));
      return app;
    },
    node() {
      const respond = errorResponder({ logger });
      return (req: IncomingMessage, res) => {
        seen.request = req;
        respond(refusal(), req, res);
      };
    },
    fastify() {
      const app = Fastify();
      app.register(errorPlugin, { logger });
      app.get("/x", async (request) => {
        seen.request = request;
        throw refusal();
      });
      return app;
    },
    fetch() {
      const app = new Hono();
      app.get("/x", (c) => {
        seen.request = c.req.raw;
        throw refusal();
      });
      app.onError(onError({ logger }));
      return app.fetch;
    },
  };
}

describe("svc:errors through a listening server", () => {
  const frameworks: Framework[] = ["express", "node", "fastify", "fetch"];
  for (const framework of frameworks) {
    it(`${framework}: a 401 with jose's error as cause → 401 on the wire, one record message for the framework's request`, async () => {
      const logger = keeper();
      const seen: { request?: unknown } = {};
      const server = await serve(framework, mounts(logger, seen));
      try {
        let response: Response | undefined;
        const messages = await heard(async () => {
          response = await fetch(`${server.url}/x`);
          await response.text();
        });
        expect(response?.status).toBe(401);
        expect(response?.headers.get("www-authenticate")).toBe('Bearer realm="api"');
        expect(messages).toHaveLength(1);
        expect(messages[0]).toMatchObject({ decision: "record", status: 401, code: "invalid_token" });
        expect(messages[0]?.request).toBe(seen.request);
        expect((messages[0]?.error as Error | undefined)?.cause).toBe(jose);
        if (framework !== "fastify") {
          expect(logger.lines).toHaveLength(1);
          expect(logger.lines[0]).toMatchObject({ level: "info", msg: "The access token is invalid" });
          expect((logger.lines[0]?.entry.err as Error | undefined)?.cause).toBe(jose);
        }
      } finally {
        await server.close();
      }
    });
  }

  it("withErrors (Fetch without Hono): one record message for the Request", async () => {
    const handler = withErrors(() => {
      throw HttpError.notFound();
    });
    const request = new Request("http://x/y");
    const messages = await heard(() => handler(request));
    expect(messages).toEqual([
      { request, decision: "record", status: 404, code: undefined, error: expect.any(HttpError) },
    ]);
  });
});

describe("errorPlugin keeps Fastify's own log line of each 4xx", () => {
  const opened: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((app) => app.close()));
  });

  async function logged(
    options: { disableRequestLogging?: boolean } = {},
    plugin: Parameters<typeof errorPlugin>[1] = {},
  ) {
    const stream = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    stream.on("data", (chunk: Buffer) => {
      for (const text of chunk.toString().split("\n")) if (text !== "") lines.push(JSON.parse(text));
    });
    const app = Fastify({ logger: { level: "info", stream }, ...options });
    opened.push(app);
    await app.register(errorPlugin, plugin);
    app.get("/401", async () => {
      throw refusal();
    });
    app.get("/500", async () => {
      throw new Error("database down");
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    expect((await fetch(`${url}/401`)).status).toBe(401);
    expect((await fetch(`${url}/500`)).status).toBe(500);
    await new Promise((resolve) => setImmediate(resolve));
    return lines;
  }

  it("GET /401 → Fastify's info line with err (and its cause) and the 401; GET /500 → the error line", async () => {
    const lines = await logged();
    const refused = lines.filter((line) => line.msg === "The access token is invalid");
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 30, res: { statusCode: 401 }, err: { type: "HttpError" } });
    expect(JSON.stringify(refused[0]?.err)).toContain("claim timestamp check failed");
    expect(lines.filter((line) => line.level === 50)).toHaveLength(1);
  });

  it("disableRequestLogging: true → no line for the 4xx", async () => {
    const lines = await logged({ disableRequestLogging: true });
    expect(lines.filter((line) => line.msg === "The access token is invalid")).toEqual([]);
  });

  it("logger: one without info → no line for the 4xx anywhere; the 500's error line on it", async () => {
    const mine: [string, Record<string, unknown>, string | undefined][] = [];
    const lines = await logged(
      {},
      {
        logger: {
          error: (obj: object, msg?: string) =>
            void mine.push(["error", obj as Record<string, unknown>, msg]),
        },
      },
    );
    expect(lines.filter((line) => line.msg === "The access token is invalid")).toEqual([]);
    expect(mine.map(([level, entry, msg]) => [level, entry.status, msg])).toEqual([
      ["error", 500, "request failed"],
    ]);
  });

  it("logger: one with info → the 4xx's info line on it, not Fastify's", async () => {
    const mine: [string, Record<string, unknown>, string | undefined][] = [];
    const push = (level: string) => (obj: object, msg?: string) =>
      void mine.push([level, obj as Record<string, unknown>, msg]);
    const lines = await logged({}, { logger: { error: push("error"), info: push("info") } });
    expect(lines.filter((line) => line.msg === "The access token is invalid")).toEqual([]);
    expect(mine.map(([level, entry, msg]) => [level, entry.status, msg])).toEqual([
      ["info", 401, "The access token is invalid"],
      ["error", 500, "request failed"],
    ]);
  });
});
