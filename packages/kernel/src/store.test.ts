import { describe, expect, it } from "vitest";
import { concatBytes } from "./concat-bytes.js";
import { StoreOptions } from "./store.js";
import { withinTime } from "./within-time.js";

const namespace = {
  idFromName: () => ({ toString: () => "id" }),
  get: () => ({ fetch: async () => new Response() }),
};

describe("StoreOptions", () => {
  const read = (options: unknown) =>
    new StoreOptions("ratelimit", "DurableObjectStore", options as object, [
      "namespace",
      "prefix",
      "timeoutMs",
    ]);

  it.each([
    [
      "undefined",
      undefined,
      "ERR_SVC_RATELIMIT_OPTIONS",
      "DurableObjectStore: options must be an object with namespace, got undefined",
    ],
    [
      "null",
      null,
      "ERR_SVC_RATELIMIT_OPTIONS",
      "DurableObjectStore: options must be an object with namespace, got null",
    ],
    [
      "a misspelt name",
      { namespace, prefx: "a:" },
      "ERR_SVC_RATELIMIT_UNKNOWN_OPTION",
      'unknown option "prefx" (did you mean "prefix"?)',
    ],
  ])("options %s → refused", (_, options, code, message) => {
    expect(() => read(options)).toThrow(
      expect.objectContaining({ code, message: expect.stringContaining(message) }),
    );
  });

  it("accepted names the store's own shape when given", () => {
    expect(
      () => new StoreOptions("idempotency", "RedisStore", 5 as never, ["client"], "an object { client }"),
    ).toThrow("RedisStore: options must be an object { client }, got 5");
  });

  it("prefix, timeoutMs: the fallbacks when absent, the values given otherwise", () => {
    expect(read({ namespace }).prefix("rl:")).toBe("rl:");
    expect(read({ namespace }).timeoutMs(500)).toBe(500);
    expect(read({ namespace, prefix: "api:", timeoutMs: 20 }).prefix("rl:")).toBe("api:");
    expect(read({ namespace, prefix: "api:", timeoutMs: 20 }).timeoutMs(500)).toBe(20);
  });

  it.each([
    [
      "prefix",
      { namespace, prefix: 1 },
      (o: StoreOptions<object>) => o.prefix("rl:"),
      "ERR_SVC_RATELIMIT_PREFIX",
      "DurableObjectStore: prefix must be a string, got 1",
    ],
    [
      "timeoutMs: 0",
      { namespace, timeoutMs: 0 },
      (o: StoreOptions<object>) => o.timeoutMs(500),
      "ERR_SVC_RATELIMIT_TIMEOUT_MS",
      "at most 2147483647 (the longest setTimeout), got 0",
    ],
    [
      "timeoutMs: 2 ** 31",
      { namespace, timeoutMs: 2 ** 31 },
      (o: StoreOptions<object>) => o.timeoutMs(500),
      "ERR_SVC_RATELIMIT_TIMEOUT_MS",
      "got 2147483648",
    ],
    [
      "namespace",
      { namespace: {} },
      (o: StoreOptions<object>) => o.namespace("env.RATE_LIMIT"),
      "ERR_SVC_RATELIMIT_NAMESPACE",
      "DurableObjectStore: namespace must be a Durable Object namespace binding (env.RATE_LIMIT), got an object",
    ],
  ])("%s → refused with its code", (_, options, get, code, message) => {
    expect(() => get(read(options))).toThrow(
      expect.objectContaining({ code, message: expect.stringContaining(message) }),
    );
  });

  it("namespace: a binding is accepted as it is", () => {
    expect(read({ namespace }).namespace("env.RATE_LIMIT")).toBe(namespace);
  });
});

describe("withinTime", () => {
  it("an answer in time → the answer", async () => {
    await expect(withinTime(Promise.resolve(7), 50, () => new Error("late"))).resolves.toBe(7);
  });

  it("a failure in time → the failure as it is", async () => {
    const failure = new Error("refused");
    await expect(withinTime(Promise.reject(failure), 50, () => new Error("late"))).rejects.toBe(failure);
  });

  it("no answer within ms → timedOut(); a failure after it is dropped", async () => {
    let fail: (err: Error) => void = () => {};
    const pending = new Promise<never>((_, reject) => {
      fail = reject;
    });
    await expect(withinTime(pending, 5, () => new Error("late"))).rejects.toThrow("late");
    fail(new Error("after the timeout"));
    await new Promise((resolve) => setTimeout(resolve, 5));
  });
});

describe("concatBytes", () => {
  it.each([
    ["no chunks", [], []],
    ["one chunk", [[1, 2]], [1, 2]],
    ["three chunks, one empty", [[1], [], [2, 3]], [1, 2, 3]],
  ])("%s → the bytes in order", (_, chunks, bytes) => {
    expect([...concatBytes(chunks.map((c) => new Uint8Array(c)))]).toEqual(bytes);
  });

  it("a view into a larger buffer → its bytes alone, in an array of its own", () => {
    const buffer = new Uint8Array([9, 1, 2, 9]);
    const whole = concatBytes([buffer.subarray(1, 3)], 2);
    expect([...whole]).toEqual([1, 2]);
    expect(whole.buffer).not.toBe(buffer.buffer);
  });
});
