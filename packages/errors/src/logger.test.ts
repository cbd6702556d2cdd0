import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_CAUSE_DEPTH, fallbackLogger, serializeError } from "./index.js";

type Serialized = Record<string, unknown> & { cause?: unknown };

function chain(value: unknown): unknown[] {
  const out: unknown[] = [];
  let cur = value as Serialized | undefined;
  while (cur && typeof cur === "object" && "type" in cur) {
    out.push(cur.message);
    cur = cur.cause as Serialized | undefined;
  }
  if (cur !== undefined) out.push(cur);
  return out;
}

describe("serializeError", () => {
  it("Error with no cause → type, message, stack, no cause key", () => {
    const out = serializeError(new RangeError("bad")) as Serialized;
    expect(out).toMatchObject({ type: "RangeError", message: "bad" });
    expect(out.stack).toContain("RangeError: bad");
    expect("cause" in out).toBe(false);
  });

  it("nested causes (JWKS → fetch failed → ECONNREFUSED) → every link, with code/syscall/address", () => {
    const socket = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), {
      code: "ECONNREFUSED",
      syscall: "connect",
      address: "127.0.0.1",
      port: 9,
    });
    const fetchFailed = new TypeError("fetch failed", { cause: socket });
    const jwks = Object.assign(
      new Error("The JSON Web Key Set could not be fetched", { cause: fetchFailed }),
      {
        url: "https://issuer.example/jwks.json",
      },
    );
    const out = serializeError(jwks) as Serialized;
    expect(out.url).toBe("https://issuer.example/jwks.json");
    expect(chain(out)).toEqual([
      "The JSON Web Key Set could not be fetched",
      "fetch failed",
      "connect ECONNREFUSED 127.0.0.1:9",
    ]);
    expect((out.cause as Serialized).cause).toMatchObject({
      type: "Error",
      code: "ECONNREFUSED",
      syscall: "connect",
      address: "127.0.0.1",
      port: 9,
    });
  });

  it.each([
    ["string cause", "socket hang up", "socket hang up"],
    ["number cause", 42, 42],
    ["null cause", null, null],
    [
      "plain object cause",
      { status: 503, url: "https://x.example" },
      { status: 503, url: "https://x.example" },
    ],
    ["bigint cause", 10n, "10"],
    ["symbol cause", Symbol("s"), "Symbol(s)"],
  ])("non-Error cause: %s → kept as a JSON value", (_name, cause, expected) => {
    const out = serializeError(new Error("outer", { cause })) as Serialized;
    expect(out.cause).toEqual(expected);
    expect(() => JSON.stringify(out)).not.toThrow();
  });

  it("self-cycle (a.cause = a) → [Circular], terminates", () => {
    const a = new Error("a");
    (a as { cause?: unknown }).cause = a;
    expect(chain(serializeError(a))).toEqual(["a", "[Circular]"]);
  });

  it("two-error cycle (a → b → a) → [Circular] at the repeat", () => {
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(chain(serializeError(a))).toEqual(["a", "b", "[Circular]"]);
  });

  it("same error twice in siblings (not a cycle) → written both times", () => {
    const shared = new Error("shared");
    const agg = new AggregateError([shared, shared], "both");
    const out = serializeError(agg) as Serialized;
    expect((out.errors as Serialized[]).map((e) => e.message)).toEqual(["shared", "shared"]);
  });

  it("plain object cause with a cycle → its tag, no throw", () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect((serializeError(new Error("x", { cause: loop })) as Serialized).cause).toBe("[object Object]");
  });

  it(`chain of 20 → ${DEFAULT_CAUSE_DEPTH} causes kept, then "[cause chain truncated]"`, () => {
    let err = new Error("e0");
    for (let i = 1; i < 20; i++) err = new Error(`e${i}`, { cause: err });
    const messages = chain(serializeError(err));
    expect(messages).toEqual([
      ...Array.from({ length: DEFAULT_CAUSE_DEPTH + 1 }, (_, i) => `e${19 - i}`),
      "[cause chain truncated]",
    ]);
  });

  it("depth 0 → only the error itself; depth 1 → one cause", () => {
    const err = new Error("outer", { cause: new Error("mid", { cause: new Error("inner") }) });
    expect(chain(serializeError(err, 0))).toEqual(["outer", "[cause chain truncated]"]);
    expect(chain(serializeError(err, 1))).toEqual(["outer", "mid", "[cause chain truncated]"]);
  });

  it("AggregateError → members serialised, at most 10", () => {
    const agg = new AggregateError(
      Array.from({ length: 15 }, (_, i) => new Error(`m${i}`)),
      "all failed",
    );
    const out = serializeError(agg) as Serialized;
    expect((out.errors as Serialized[]).length).toBe(10);
    expect((out.errors as Serialized[])[0]).toMatchObject({ type: "Error", message: "m0" });
  });

  it("a 1 MB message → clipped", () => {
    const out = serializeError(new Error("x".repeat(1_000_000))) as Serialized;
    expect((out.message as string).length).toBeLessThan(10_000);
  });

  // V8 writes the message again at the head of the stack: clipping the message alone left a 1 MB
  // log line (say, an error quoting a request body the client chose).
  it("a 1 MB message → the stack's copy of it clipped too, its frames kept", () => {
    const out = serializeError(new Error("x".repeat(1_000_000))) as Serialized;
    expect(JSON.stringify(out).length).toBeLessThan(40_000);
    expect(out.stack as string).toMatch(/^Error: x{100}/);
    expect(out.stack as string).toMatch(/\n {4}at /);
  });

  it("a cause that cannot be read (a throwing getter, a Proxy) → that link only is [unserializable]", () => {
    const getter = new Error("db write failed");
    Object.defineProperty(getter, "cause", {
      get() {
        throw new Error("getter at /srv/app/secret.js:12");
      },
    });
    const trap = new Error("upstream failed", {
      cause: new Proxy(new Error("x"), {
        get() {
          throw new Error("trap at /srv/app/secret.js:12");
        },
      }),
    });
    const field = Object.assign(new Error("query failed"), {});
    Object.defineProperty(field, "sql", {
      enumerable: true,
      get() {
        throw new Error("getter at /srv/app/secret.js:12");
      },
    });
    const outer = new Error("request failed", { cause: getter });
    expect(serializeError(outer)).toMatchObject({
      type: "Error",
      message: "request failed",
      cause: { type: "Error", message: "db write failed", cause: "[unserializable]" },
    });
    expect(serializeError(trap)).toMatchObject({
      message: "upstream failed",
      cause: { type: "[unserializable]", message: "[unserializable]" },
    });
    expect(serializeError(field)).toMatchObject({ message: "query failed", sql: "[unserializable]" });
    expect(JSON.stringify(serializeError(outer))).not.toContain("secret.js");
  });

  it("non-Error value → kept as a JSON value", () => {
    expect(serializeError("just a string")).toBe("just a string");
  });
});

describe("fallbackLogger", () => {
  afterEach(() => vi.restoreAllMocks());

  function capture(): string[] {
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    return lines;
  }

  it.each([
    ["error", 50],
    ["warn", 40],
    ["info", 30],
    ["debug", 20],
  ] as const)("%s(obj, msg) → one JSON line, level %i, pino shape", (method, level) => {
    const lines = capture();
    fallbackLogger[method]({ correlationId: "c-1" }, "hello");
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith("\n")).toBe(true);
    expect(lines[0]?.slice(0, -1)).not.toContain("\n");
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({ level, msg: "hello", correlationId: "c-1" });
    expect(typeof line.time).toBe("number");
  });

  it("error field with a cause → the cause chain is in the line", () => {
    const lines = capture();
    const err = new Error("The JSON Web Key Set could not be fetched", {
      cause: new TypeError("fetch failed", {
        cause: Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" }),
      }),
    });
    fallbackLogger.error({ err, status: 500 }, "request failed");
    const line = JSON.parse(lines[0] as string);
    expect(line.err.message).toBe("The JSON Web Key Set could not be fetched");
    expect(line.err.cause.message).toBe("fetch failed");
    expect(line.err.cause.cause).toMatchObject({ message: "getaddrinfo ENOTFOUND", code: "ENOTFOUND" });
  });

  it("fields that JSON cannot write (cycle, bigint) → still one parseable line", () => {
    const lines = capture();
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    fallbackLogger.warn({ loop, n: 5n }, "odd");
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({ loop: "[object Object]", n: "5", msg: "odd" });
  });

  it("a field named level/time/msg → cannot overwrite the line's own", () => {
    const lines = capture();
    fallbackLogger.warn({ level: 99, msg: "spoof" }, "real");
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 40, msg: "real" });
  });
});
