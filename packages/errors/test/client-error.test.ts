import type { ServerOptions } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ClientErrorOptions, clientErrorHandler } from "../src/node.js";
import { listenWith } from "./listen-with.js";

const NOW = new Date("2026-01-02T03:04:05.678Z");

/** What escaped the 'clientError' listener: without this catch, an uncaught exception. */
const escaped: unknown[] = [];
afterEach(() => {
  escaped.length = 0;
  vi.restoreAllMocks();
});

async function serve(options: ServerOptions = {}, handler: ClientErrorOptions = {}): Promise<number> {
  const { server, port } = await listenWith(options, (req, res) => {
    // A slow answer, so a pipelined request arrives while this response is under way.
    setTimeout(() => res.end(`ok ${req.url}`), req.url === "/slow" ? 100 : 0);
  });
  const listener = clientErrorHandler({ now: () => NOW, ...handler });
  server.on("clientError", (err, socket) => {
    try {
      listener(err, socket);
    } catch (thrown) {
      escaped.push(thrown);
      socket.destroy();
    }
  });
  return port;
}

/**
 * With `options` throwing and a logger that throws too, a malformed request still gets the
 * handler's own record, and the line the logger could not take goes to stderr, matching `line`.
 */
async function expectStderrFallback(options: ClientErrorOptions, line: RegExp): Promise<void> {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation(((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write);
  const port = await serve(
    {},
    {
      ...options,
      logger: {
        error() {
          throw new Error("log transport down");
        },
      },
    },
  );
  const res = await raw(port, MALFORMED);
  expect(escaped).toEqual([]);
  expectOwnRecord(res);
  expect(lines.join("")).toMatch(line);
}

/** Writes `request` over a plain TCP connection, then reads until the server closes it. */
function raw(
  port: number,
  request: string,
): Promise<{ status: number; head: string; body: string; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1] ?? 0), head, body, text });
    });
  });
}

const headerOf = (head: string, name: string) =>
  new RegExp(`^${name}: (.*)$`, "im").exec(head)?.[1]?.trimEnd();

describe("clientErrorHandler: what Node's parser refuses gets the error record", () => {
  it.each([
    ["a malformed header line", "GET / HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n", 400, "Bad Request"],
    ["a bare CR in a value", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400, "Bad Request"],
    ["a request line that is not HTTP", "HELLO\r\n\r\n", 400, "Bad Request"],
    // RFC 9110 §9.1: "An origin server that receives a request method that is unrecognized or not
    // implemented SHOULD respond with the 501 (Not Implemented) status code."
    [
      "a well-formed request line with an unknown method",
      "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n",
      501,
      "Not Implemented",
    ],
    [
      "a lower-case method (methods are case-sensitive)",
      "get / HTTP/1.1\r\nHost: x\r\n\r\n",
      501,
      "Not Implemented",
    ],
    [
      "an unknown method after an empty line",
      "\r\nFOO / HTTP/1.1\r\nHost: x\r\n\r\n",
      501,
      "Not Implemented",
    ],
    ["a method that is not a token", "G@T / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "Bad Request"],
    [
      "an unknown method in a malformed request line",
      "BREW  HTTP/1.1\r\nHost: x\r\n\r\n",
      400,
      "Bad Request",
    ],
    [
      "a TLS ClientHello on the plain port",
      "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
      400,
      "Bad Request",
    ],
    // RFC 9112 §3: "A server that receives a request-target longer than any URI it wishes to parse
    // MUST respond with a 414 (URI Too Long) status code"; Node reports it as a header overflow.
    [
      "a request-target beyond maxHeaderSize (RFC 9112 §3)",
      `GET /${"a".repeat(4096)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      414,
      "URI Too Long",
    ],
    [
      "a request-target beyond maxHeaderSize after an empty line",
      `\r\nGET /${"a".repeat(4096)}?q=1 HTTP/1.1\r\nHost: x\r\n\r\n`,
      414,
      "URI Too Long",
    ],
    [
      "a request-target under maxHeaderSize, then headers beyond it (RFC 6585 §5)",
      `GET /${"a".repeat(900)} HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(300)}\r\n\r\n`,
      431,
      "Request Header Fields Too Large",
    ],
    [
      "headers beyond maxHeaderSize (RFC 6585 §5)",
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(4096)}\r\n\r\n`,
      431,
      "Request Header Fields Too Large",
    ],
  ])("%s → %i", async (_label, request, status, reason) => {
    const port = await serve({ maxHeaderSize: 1024 });
    const res = await raw(port, request);
    expect(res.head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} ${reason}\r\n`));
    expect(headerOf(res.head, "Connection")).toBe("close");
    expect(headerOf(res.head, "Cache-Control")).toBe("no-store");
    expect(headerOf(res.head, "Content-Type")).toBe("application/json; charset=utf-8");
    expect(Number(headerOf(res.head, "Content-Length"))).toBe(Buffer.byteLength(res.body));
    expect(JSON.parse(res.body)).toEqual({
      timestamp: NOW.toISOString(),
      status,
      error: reason,
      message: expect.any(String),
      path: "/",
    });
  });

  // RFC 9110 §9.3.2: "the server MUST NOT send content in the response" to HEAD; a client reads
  // the head alone, and bytes after it are no part of any response it asked for.
  it.each([
    ["a malformed header line", "HEAD / HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n", 400],
    ["headers beyond maxHeaderSize", `HEAD / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(4096)}\r\n\r\n`, 431],
    ["a request-target beyond maxHeaderSize", `HEAD /${"a".repeat(4096)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
    ["after an empty line", "\r\nHEAD / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400],
  ])("HEAD with %s → %i, the head without content", async (_label, request, status) => {
    const port = await serve({ maxHeaderSize: 1024 });
    const res = await raw(port, request);
    expect(res.status).toBe(status);
    expect(headerOf(res.head, "Content-Type")).toBe("application/json; charset=utf-8");
    expect(res.text.endsWith("\r\n\r\n")).toBe(true);
    expect(res.body).toBe("");
  });

  it("GET with a malformed header line → the record as content (only HEAD goes without)", async () => {
    const port = await serve();
    const res = await raw(
      port,
      "GET / HTTP/1.1\r\nHost: x\r\nX-Note: HEAD / HTTP/1.1\r\nnot a header\r\n\r\n",
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400 });
  });

  it("chunk extensions beyond Node's limit, after an early answer → 413 (RFC 9110 §15.5.14)", async () => {
    const port = await serve();
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () =>
        socket.write("POST /early HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"),
      );
      let out = "";
      socket.on("data", (chunk: Buffer) => {
        // The app answered without reading the body; the body then breaks Node's limit.
        if (!out) socket.write(`1;${"a".repeat(20_000)}\r\nx\r\n0\r\n\r\n`);
        out += chunk.toString("latin1");
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(out));
    });
    const second = text.slice(text.indexOf("HTTP/1.1", 1));
    expect(second).toMatch(/^HTTP\/1\.1 413 Content Too Large\r\n/);
    expect(JSON.parse(second.split("\r\n\r\n")[1] ?? "")).toMatchObject({ status: 413, path: "/" });
  });

  it("headers that stop arriving → 408 (RFC 9110 §15.5.9)", async () => {
    const port = await serve({ headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50 });
    const res = await raw(port, "GET / HTTP/1.1\r\nHost: x\r\n");
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ status: 408, error: "Request Timeout", path: "/" });
  });

  it("sends the headers option's fields, per socket, and drops one that would split the response", async () => {
    const port = await serve(
      {},
      {
        headers: (socket) => [
          ["X-Content-Type-Options", "nosniff"],
          ["X-Encrypted", String((socket as { encrypted?: boolean }).encrypted === true)],
          ["X-Injected", "a\r\nSet-Cookie: evil=1"],
        ],
      },
    );
    const res = await raw(port, "GET / HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n");
    expect(res.status).toBe(400);
    expect(headerOf(res.head, "X-Content-Type-Options")).toBe("nosniff");
    expect(headerOf(res.head, "X-Encrypted")).toBe("false");
    expect(res.head).not.toMatch(/X-Injected|Set-Cookie/i);
  });

  it("a pipelined request refused while a response is under way gets no second status line", async () => {
    const port = await serve();
    const res = await raw(
      port,
      "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nnot a header\r\n\r\n",
    );
    expect(res.text).not.toMatch(/HTTP\/1\.1 400/);
  });

  it("a well-formed request is not touched", async () => {
    const port = await serve();
    const res = await raw(port, "GET /fine HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/ok \/fine$/);
  });

  it("a headers option that is not a function → TypeError naming it", () => {
    expect(() => clientErrorHandler({ headers: [["a", "b"]] as never })).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_HEADERS" }),
    );
  });
});

/** The lines logged through a `logger` option. */
function recorder(): {
  lines: [Record<string, unknown>, string | undefined][];
  error: (o: object, m?: string) => void;
} {
  const lines: [Record<string, unknown>, string | undefined][] = [];
  return { lines, error: (obj, msg) => lines.push([obj as Record<string, unknown>, msg]) };
}

const MALFORMED = "GET / HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n";

/** The response is the 400 record with the handler's own framing and nothing else's. */
function expectOwnRecord(res: Awaited<ReturnType<typeof raw>>): void {
  expect(res.head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  const fields = res.head.split("\r\n").slice(1);
  const count = (name: string) => fields.filter((f) => f.toLowerCase().startsWith(`${name}:`)).length;
  for (const name of ["content-length", "connection", "content-type", "cache-control"])
    expect(count(name)).toBe(1);
  expect(count("transfer-encoding")).toBe(0);
  expect(headerOf(res.head, "Connection")).toBe("close");
  expect(headerOf(res.head, "Cache-Control")).toBe("no-store");
  expect(headerOf(res.head, "Content-Type")).toBe("application/json; charset=utf-8");
  expect(Number(headerOf(res.head, "Content-Length"))).toBe(Buffer.byteLength(res.body));
  expect(JSON.parse(res.body)).toMatchObject({ status: 400, path: "/" });
}

describe("clientErrorHandler: a headers option that throws", () => {
  function* halfway(): Generator<[string, string]> {
    yield ["X-Content-Type-Options", "nosniff"];
    throw new Error("tenant lookup failed at /srv/app/tenants.js:9");
  }
  it.each([
    [
      "throws (reading a TLS property the plain socket lacks)",
      (socket: unknown) =>
        [
          [
            "X-Peer",
            (socket as { getPeerCertificate: () => { subject: { CN: string } } }).getPeerCertificate().subject
              .CN,
          ],
        ] as [string, string][],
    ],
    ["returns undefined (plain JavaScript)", (() => undefined) as never],
    ["returns a pair that is not an array", (() => [{ name: "X-A", value: "1" }]) as never],
    ["yields one field, then throws", halfway],
  ] as [string, NonNullable<ClientErrorOptions["headers"]>][])(
    "headers %s → the 400 record with none of its fields, the failure logged, nothing thrown",
    async (_label, headers) => {
      const logger = recorder();
      const port = await serve({}, { headers, logger });
      const res = await raw(port, MALFORMED);
      expect(escaped).toEqual([]);
      expectOwnRecord(res);
      expect(res.head).not.toMatch(/X-Peer|X-Content-Type-Options|X-A:/i);
      expect(res.body).not.toMatch(/srv\/app|TypeError/);
      expect(logger.lines).toHaveLength(1);
      expect(logger.lines[0]?.[0]).toMatchObject({ err: expect.any(Error), status: 400 });
      expect(logger.lines[0]?.[1]).toMatch(/headers option threw/);
    },
  );

  it("headers that throws, no logger option → one JSON line on stderr, the record sent", async () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation(((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write);
    const port = await serve(
      {},
      {
        headers: () => {
          throw new Error("boom");
        },
      },
    );
    const res = await raw(port, MALFORMED);
    expect(escaped).toEqual([]);
    expectOwnRecord(res);
    expect(lines.join("")).toMatch(
      /"msg":"clientErrorHandler: the headers option threw[^"]*".*"message":"boom"/,
    );
  });

  it("headers that throws and a logger that throws too → the record sent, the line on stderr", async () => {
    await expectStderrFallback(
      {
        headers: () => {
          throw new Error("boom");
        },
      },
      /headers option threw/,
    );
  });
});

// RFC 9112 §6.3: a message with both Transfer-Encoding and Content-Length, or with Content-Length
// fields that disagree, is one a recipient may frame differently from the sender (request
// smuggling); RFC 9110 §7.6.1: connection options belong to the connection, which this handler
// closes. The handler writes these fields itself: the application's are left out and logged.
describe("clientErrorHandler: the headers option cannot frame or keep the response", () => {
  it.each([
    ["Content-Length", "0"],
    ["content-length", "99999"],
    ["Transfer-Encoding", "chunked"],
    ["TRANSFER-ENCODING", "chunked"],
    ["Connection", "keep-alive"],
    ["connection", "close"],
    ["Keep-Alive", "timeout=5"],
    ["Upgrade", "websocket"],
    ["Content-Type", "text/html"],
    ["Content-Encoding", "gzip"],
    ["Cache-Control", "public, max-age=3600"],
  ])("headers returning %s: %s → left out, logged by name, the rest sent", async (name, value) => {
    const logger = recorder();
    const port = await serve(
      {},
      {
        headers: () => [
          ["X-Content-Type-Options", "nosniff"],
          [name, value],
        ],
        logger,
      },
    );
    const res = await raw(port, MALFORMED);
    expectOwnRecord(res);
    expect(res.head).not.toContain(`${name}: ${value}`);
    expect(headerOf(res.head, "X-Content-Type-Options")).toBe("nosniff");
    expect(logger.lines).toEqual([
      [{ droppedHeaders: [name], status: 400 }, expect.stringMatching(/dropped/)],
    ]);
  });

  it("a field that would split the response → left out and logged by name, the value never", async () => {
    const logger = recorder();
    const port = await serve({}, { headers: () => [["X-Injected", "a\r\nSet-Cookie: evil=1"]], logger });
    const res = await raw(port, MALFORMED);
    expectOwnRecord(res);
    expect(res.head).not.toMatch(/X-Injected|Set-Cookie/i);
    expect(logger.lines).toEqual([[{ droppedHeaders: ["X-Injected"], status: 400 }, expect.any(String)]]);
  });

  it("a logger option without error() → TypeError ERR_SVC_ERRORS_LOGGER", () => {
    expect(() => clientErrorHandler({ logger: {} as never })).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_LOGGER" }),
    );
  });
});

// The `now` option is the application's code too, run for a request the client made malformed:
// thrown out of a 'clientError' listener, its exception is uncaught and ends the process.
describe("clientErrorHandler: a now option that throws or gives no valid Date", () => {
  const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
  it.each([
    [
      "throws",
      () => {
        throw new Error("clock service down at /srv/app/clock.js:3");
      },
    ],
    ["returns undefined (plain JavaScript)", (() => undefined) as never],
    ["returns an invalid Date", () => new Date(Number.NaN)],
    ["returns a string", (() => "2026-01-02T03:04:05.678Z") as never],
    ["returns a number", (() => 1767322800000) as never],
    [
      "returns an object whose toISOString throws",
      (() => ({
        toISOString() {
          throw new Error("boom");
        },
      })) as never,
    ],
  ] as [string, () => Date][])(
    "now %s → the 400 record with the system clock's time, the failure logged, nothing thrown",
    async (_label, now) => {
      const logger = recorder();
      const port = await serve({}, { now, logger });
      const res = await raw(port, MALFORMED);
      expect(escaped).toEqual([]);
      expectOwnRecord(res);
      const timestamp = (JSON.parse(res.body) as { timestamp: string }).timestamp;
      expect(timestamp).toMatch(ISO);
      expect(res.body).not.toMatch(/srv\/app|boom/);
      expect(logger.lines).toHaveLength(1);
      expect(logger.lines[0]?.[0]).toMatchObject({ err: expect.any(Error), status: 400 });
      expect(logger.lines[0]?.[1]).toMatch(/now option/);
    },
  );

  it("now returning a Date with a toISOString of its own that throws → that Date's time, nothing thrown", async () => {
    const logger = recorder();
    const now = () =>
      Object.assign(new Date(NOW.getTime()), {
        toISOString() {
          throw new Error("boom");
        },
      });
    const port = await serve({}, { now, logger });
    const res = await raw(port, MALFORMED);
    expect(escaped).toEqual([]);
    expectOwnRecord(res);
    expect(JSON.parse(res.body)).toMatchObject({ timestamp: NOW.toISOString() });
    expect(logger.lines).toEqual([]);
  });

  it("now and headers both throwing → the record with the handler's fields, both logged", async () => {
    const logger = recorder();
    const port = await serve(
      {},
      {
        now: () => {
          throw new Error("clock");
        },
        headers: () => {
          throw new Error("headers");
        },
        logger,
      },
    );
    const res = await raw(port, MALFORMED);
    expect(escaped).toEqual([]);
    expectOwnRecord(res);
    expect(logger.lines.map(([, msg]) => msg)).toEqual([
      expect.stringMatching(/now option/),
      expect.stringMatching(/headers option threw/),
    ]);
  });

  it("now throwing and a logger that throws too → the record sent, the line on stderr", async () => {
    await expectStderrFallback(
      {
        now: () => {
          throw new Error("clock");
        },
      },
      /now option/,
    );
  });
});
