import { describeValue } from "@svc/kernel/internal";
import { describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import {
  createRateLimiter,
  type ExpressRateLimitStore,
  expressRateLimitStore,
  ipMatcher,
  MemoryStore,
  type MemoryStoreOptions,
  type RateLimiterOptions,
  type RateLimitOptions,
  type RateLimitStore,
  RedisStore,
  type RedisStoreOptions,
} from "../src/index.js";

// Every option of every factory, refused at construction with a TypeError whose `code` is
// ERR_SVC_RATELIMIT_<OPTION> and whose message names the option, what was given and what is
// accepted; never a 500 per request later.

/** A refused value: the message reads `<option> must be <accepted>, got <given>`. */
type Row = [option: string, given: unknown, code: string, accepted: RegExp];

function expectRefused(
  build: () => unknown,
  option: string,
  given: unknown,
  code: string,
  accepted: RegExp,
): void {
  let thrown: unknown;
  try {
    build();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(TypeError);
  const err = thrown as TypeError & { code?: string };
  expect(err.code).toBe(code);
  expect(err.message).toContain(`${option} must be `);
  expect(err.message).toContain(`, got ${describeValue(given)}`);
  expect(err.message).toMatch(accepted);
}

const noRefund = (): RateLimitStore => ({
  consume: () => ({ allowed: true, limit: 1, remaining: 0, resetAt: 0, retryAfterMs: 0, now: 0 }),
  reset() {},
});

describe("rateLimit(options): each option refused at construction", () => {
  const rows: Row[] = [
    ["limit", 0, "ERR_SVC_RATELIMIT_LIMIT", /a positive integer/],
    ["limit", -1, "ERR_SVC_RATELIMIT_LIMIT", /a positive integer/],
    ["limit", 1.5, "ERR_SVC_RATELIMIT_LIMIT", /a positive integer/],
    ["limit", Number.NaN, "ERR_SVC_RATELIMIT_LIMIT", /a positive integer/],
    ["limit", "100", "ERR_SVC_RATELIMIT_LIMIT", /positive integer or a function/],
    ["windowMs", 0, "ERR_SVC_RATELIMIT_WINDOW_MS", />= 1/],
    ["windowMs", "60000", "ERR_SVC_RATELIMIT_WINDOW_MS", />= 1/],
    ["windowMs", Number.POSITIVE_INFINITY, "ERR_SVC_RATELIMIT_WINDOW_MS", />= 1/],
    ["windowMs", 1e15 + 1, "ERR_SVC_RATELIMIT_WINDOW_MS", /at most 1000000000000000 \(10\^15/],
    ["windowMs", 6e16, "ERR_SVC_RATELIMIT_WINDOW_MS", /at most 1000000000000000 \(10\^15/],
    ["algorithm", "leaky-bucket", "ERR_SVC_RATELIMIT_ALGORITHM", /"fixed-window", "sliding-window", "gcra"/],
    ["burst", 0, "ERR_SVC_RATELIMIT_BURST", /a positive integer/],
    ["store", {}, "ERR_SVC_RATELIMIT_STORE", /consume\(key, cost, policy, now\)/],
    ["store", "redis", "ERR_SVC_RATELIMIT_STORE", /RateLimitStore/],
    ["prefix", 5, "ERR_SVC_RATELIMIT_PREFIX", /a string/],
    ["now", 5, "ERR_SVC_RATELIMIT_NOW", /a function/],
    ["limiter", {}, "ERR_SVC_RATELIMIT_LIMITER", /createRateLimiter/],
    ["key", "ip", "ERR_SVC_RATELIMIT_KEY", /a function \(req\) => string \| undefined/],
    ["cost", -1, "ERR_SVC_RATELIMIT_COST", /non-negative integer/],
    ["cost", "2", "ERR_SVC_RATELIMIT_COST", /non-negative integer/],
    ["skip", true, "ERR_SVC_RATELIMIT_SKIP", /a function \(req, res\) => boolean/],
    ["skipSuccessfulRequests", "yes", "ERR_SVC_RATELIMIT_SKIP_SUCCESSFUL_REQUESTS", /true or false/],
    ["skipFailedRequests", 1, "ERR_SVC_RATELIMIT_SKIP_FAILED_REQUESTS", /true or false/],
    ["requestWasSuccessful", true, "ERR_SVC_RATELIMIT_REQUEST_WAS_SUCCESSFUL", /a function/],
    ["handler", "json", "ERR_SVC_RATELIMIT_HANDLER", /a function \(req, res, next, exceeded\)/],
    ["message", 42, "ERR_SVC_RATELIMIT_MESSAGE", /a string, an object/],
    ["message", ["slow down"], "ERR_SVC_RATELIMIT_MESSAGE", /a string, an object/],
    ["message", { status: 200 }, "ERR_SVC_RATELIMIT_MESSAGE", /extension names/],
    ["requestPropertyName", "", "ERR_SVC_RATELIMIT_REQUEST_PROPERTY_NAME", /identifier/],
    ["requestPropertyName", "__proto__", "ERR_SVC_RATELIMIT_REQUEST_PROPERTY_NAME", /identifier/],
    [
      "requestPropertyName",
      "ip",
      "ERR_SVC_RATELIMIT_REQUEST_PROPERTY_NAME",
      /Express and Node.js do not use/,
    ],
    ["requestPropertyName", true, "ERR_SVC_RATELIMIT_REQUEST_PROPERTY_NAME", /false or an identifier/],
    ["allowlist", "10.0.0.0/8", "ERR_SVC_RATELIMIT_ALLOWLIST", /an array of IP addresses/],
    ["allowlist", [5], "ERR_SVC_RATELIMIT_ALLOWLIST", /an array of IP addresses/],
    ["ipv6Subnet", 0, "ERR_SVC_RATELIMIT_IPV6_SUBNET", /1\.\.128 or false/],
    ["ipv6Subnet", 129, "ERR_SVC_RATELIMIT_IPV6_SUBNET", /1\.\.128 or false/],
    ["ipv6Subnet", true, "ERR_SVC_RATELIMIT_IPV6_SUBNET", /1\.\.128 or false/],
    ["legacyHeaders", "false", "ERR_SVC_RATELIMIT_LEGACY_HEADERS", /true or false/],
    ["resetFormat", "http-date", "ERR_SVC_RATELIMIT_RESET_FORMAT", /"epoch-seconds" or "delta-seconds"/],
    [
      "standardHeaders",
      "draft-5",
      "ERR_SVC_RATELIMIT_STANDARD_HEADERS",
      /false, or the draft whose syntax to send: "draft-6", "draft-7", "draft-8", "draft-9", "draft-10", got "draft-5"/,
    ],
    ["standardHeaders", "draft-11", "ERR_SVC_RATELIMIT_STANDARD_HEADERS", /got "draft-11"/],
    ["standardHeaders", "DRAFT-7", "ERR_SVC_RATELIMIT_STANDARD_HEADERS", /got "DRAFT-7"/],
    ["standardHeaders", 7, "ERR_SVC_RATELIMIT_STANDARD_HEADERS", /got 7/],
    ["policyName", "", "ERR_SVC_RATELIMIT_POLICY_NAME", /1 to 64 printable ASCII/],
    ["policyName", "x".repeat(65), "ERR_SVC_RATELIMIT_POLICY_NAME", /1 to 64 printable ASCII/],
    ["policyName", "a\r\nSet-Cookie: x=1", "ERR_SVC_RATELIMIT_POLICY_NAME", /printable ASCII/],
    ["policyName", "café", "ERR_SVC_RATELIMIT_POLICY_NAME", /printable ASCII/],
    ["failMode", "maybe", "ERR_SVC_RATELIMIT_FAIL_MODE", /"open" or "closed"/],
    ["failRetryAfterSeconds", -1, "ERR_SVC_RATELIMIT_FAIL_RETRY_AFTER_SECONDS", /non-negative number/],
    ["failRetryAfterSeconds", "5", "ERR_SVC_RATELIMIT_FAIL_RETRY_AFTER_SECONDS", /non-negative number/],
    ["logger", {}, "ERR_SVC_RATELIMIT_LOGGER", /warn\(obj, msg\)/],
    ["logger", "pino", "ERR_SVC_RATELIMIT_LOGGER", /warn\(obj, msg\)/],
    ["logIntervalMs", -1, "ERR_SVC_RATELIMIT_LOG_INTERVAL_MS", /non-negative number/],
  ];

  it.each(rows)("%s: %o → %s", (option, given, code, accepted) => {
    const options = { limit: 10, [option]: given } as unknown as RateLimitOptions;
    if (option === "limiter") delete (options as { limit?: unknown }).limit;
    expectRefused(() => rateLimit(options), option, given, code, accepted);
  });

  it.each([
    ["skipSuccessfulRequests", "ERR_SVC_RATELIMIT_SKIP_SUCCESSFUL_REQUESTS"],
    ["skipFailedRequests", "ERR_SVC_RATELIMIT_SKIP_FAILED_REQUESTS"],
  ])("%s true with a store that cannot give units back → %s", (option, code) => {
    expectRefused(
      () => rateLimit({ limit: 1, store: noRefund(), [option]: true }),
      option,
      true,
      code,
      /no refund method/,
    );
  });

  it.each([
    ["options undefined", undefined, "ERR_SVC_RATELIMIT_OPTIONS", /must be an object/],
    ["no limit", {}, "ERR_SVC_RATELIMIT_LIMIT", /limit is required/],
    [
      "limiter and limit",
      { limiter: createRateLimiter({ limit: 1 }), limit: 5 },
      "ERR_SVC_RATELIMIT_LIMITER",
      /either limiter or limit/,
    ],
    [
      "gcra with limit 1, burst 1000, windowMs 1e14: the bucket spans 1e17 ms",
      { limit: 1, burst: 1000, windowMs: 1e14, algorithm: "gcra" },
      "ERR_SVC_RATELIMIT_BURST",
      /windowMs × burst \/ limit at most 1000000000000000 \(10\^15 ms\), got 100000000000000000/,
    ],
    [
      "burst on fixed-window",
      { limit: 5, burst: 2, algorithm: "fixed-window" },
      "ERR_SVC_RATELIMIT_BURST",
      /only applies to the gcra/,
    ],
    [
      "allowlist entry not an IP",
      { limit: 1, allowlist: ["not-an-ip"] },
      "ERR_SVC_RATELIMIT_ALLOWLIST",
      /"not-an-ip" is not an IP address or CIDR/,
    ],
    [
      "express-rate-limit's max",
      { max: 5 },
      "ERR_SVC_RATELIMIT_UNKNOWN_OPTION",
      /express-rate-limit's max is limit here/,
    ],
    [
      "express-rate-limit's keyGenerator",
      { limit: 1, keyGenerator: () => "k" },
      "ERR_SVC_RATELIMIT_UNKNOWN_OPTION",
      /is key:/,
    ],
    [
      "express-rate-limit's statusCode",
      { limit: 1, statusCode: 503 },
      "ERR_SVC_RATELIMIT_UNKNOWN_OPTION",
      /handler/,
    ],
    [
      "express-rate-limit's passOnStoreError",
      { limit: 1, passOnStoreError: true },
      "ERR_SVC_RATELIMIT_UNKNOWN_OPTION",
      /failMode: "open"/,
    ],
    [
      "a typo",
      { limit: 1, windowMS: 1000 },
      "ERR_SVC_RATELIMIT_UNKNOWN_OPTION",
      /unknown option "windowMS" \(did you mean "windowMs"\?\)/,
    ],
  ] as const)("%s → %s", (_name, options, code, message) => {
    expect(() => rateLimit(options as unknown as RateLimitOptions)).toThrow(
      expect.objectContaining({ name: "TypeError", code, message: expect.stringMatching(message) }),
    );
  });

  it('key: "ip" and skip: true (which used to pass construction and then fail every request) are refused', () => {
    expect(() => rateLimit({ limit: 1, key: "ip" as unknown as () => string })).toThrow(
      /key must be "client" or a function/,
    );
    expect(() => rateLimit({ limit: 1, key: "client" })).not.toThrow();
    expect(() => rateLimit({ limit: 1, skip: true as unknown as () => boolean })).toThrow(
      /skip must be a function/,
    );
  });

  it("every accepted value builds: functions, booleans, strings at their bounds", () => {
    expect(() =>
      rateLimit({
        limit: async () => 5,
        windowMs: 1,
        key: () => undefined,
        cost: () => 0,
        skip: async () => false,
        skipSuccessfulRequests: true,
        skipFailedRequests: false,
        requestWasSuccessful: (_req, res) => res.statusCode < 500,
        handler: (_req, _res, next, exceeded) => next(exceeded.error),
        message: { plan: "free" },
        requestPropertyName: "quota",
        allowlist: [],
        ipv6Subnet: false,
        legacyHeaders: false,
        standardHeaders: true,
        resetFormat: "delta-seconds",
        policyName: "x".repeat(64),
        failMode: "closed",
        failRetryAfterSeconds: 0,
        logger: { warn() {} },
        logIntervalMs: 0,
      }),
    ).not.toThrow();
    expect(() => rateLimit({ limit: 1, requestPropertyName: false, message: () => "x" })).not.toThrow();
  });
});

describe("createRateLimiter(options): each option refused at construction", () => {
  const rows: Row[] = [
    ["limit", 0, "ERR_SVC_RATELIMIT_LIMIT", /a positive integer/],
    ["limit", undefined, "ERR_SVC_RATELIMIT_LIMIT", /a positive integer/],
    ["windowMs", -5, "ERR_SVC_RATELIMIT_WINDOW_MS", />= 1/],
    ["algorithm", "token-bucket", "ERR_SVC_RATELIMIT_ALGORITHM", /"gcra"/],
    ["burst", -1, "ERR_SVC_RATELIMIT_BURST", /a positive integer/],
    ["store", { consume() {} }, "ERR_SVC_RATELIMIT_STORE", /reset\(key\)/],
    ["prefix", ["a"], "ERR_SVC_RATELIMIT_PREFIX", /a string/],
    ["now", "Date.now", "ERR_SVC_RATELIMIT_NOW", /a function returning epoch milliseconds/],
  ];

  it.each(rows)("%s: %o → %s", (option, given, code, accepted) => {
    const options = { limit: 10, algorithm: "gcra", [option]: given } as unknown as RateLimiterOptions;
    expectRefused(() => createRateLimiter(options), option, given, code, accepted);
  });

  it("options null → ERR_SVC_RATELIMIT_OPTIONS", () => {
    expectRefused(
      () => createRateLimiter(null as unknown as RateLimiterOptions),
      "options",
      null,
      "ERR_SVC_RATELIMIT_OPTIONS",
      /an object/,
    );
  });
});

describe("MemoryStore(options): each option refused at construction", () => {
  const rows: Row[] = [
    ["maxKeys", 0, "ERR_SVC_RATELIMIT_MAX_KEYS", /a positive integer/],
    ["maxKeys", "1e6", "ERR_SVC_RATELIMIT_MAX_KEYS", /a positive integer/],
    ["evictionScan", 0.5, "ERR_SVC_RATELIMIT_EVICTION_SCAN", /a positive integer/],
    ["options", 5, "ERR_SVC_RATELIMIT_OPTIONS", /an object/],
  ];

  it.each(rows)("%s: %o → %s", (option, given, code, accepted) => {
    const options = (option === "options" ? given : { [option]: given }) as MemoryStoreOptions;
    expectRefused(() => new MemoryStore(options), option, given, code, accepted);
  });
});

describe("RedisStore(options): each option refused at construction", () => {
  const client = {
    call: async () => null,
    options: { enableOfflineQueue: false, autoResendUnfulfilledCommands: false },
  };
  const rows: Row[] = [
    ["prefix", 5, "ERR_SVC_RATELIMIT_PREFIX", /a string/],
    ["timeoutMs", 0, "ERR_SVC_RATELIMIT_TIMEOUT_MS", /a positive number of milliseconds/],
    ["timeoutMs", "500", "ERR_SVC_RATELIMIT_TIMEOUT_MS", /a positive number of milliseconds/],
    // Node.js would fire it after 1 ms: every decision a timeout, every request passing (failMode open).
    ["timeoutMs", 2 ** 31, "ERR_SVC_RATELIMIT_TIMEOUT_MS", /at most 2147483647 \(the longest setTimeout\)/],
    ["options", undefined, "ERR_SVC_RATELIMIT_OPTIONS", /an object with client/],
  ];

  it.each(rows)("%s: %o → %s", (option, given, code, accepted) => {
    const options = (option === "options" ? given : { client, [option]: given }) as RedisStoreOptions;
    expectRefused(() => new RedisStore(options), option, given, code, accepted);
  });

  it.each([
    ["no client", {}, /client must be an ioredis or redis client, got undefined/],
    [
      "ioredis with its offline queue",
      { client: { call: async (): Promise<null> => null, options: {} } },
      /enableOfflineQueue: false/,
    ],
    [
      "ioredis resending after reconnect",
      { client: { call: async (): Promise<null> => null, options: { enableOfflineQueue: false } } },
      /autoResendUnfulfilledCommands: false/,
    ],
    [
      "redis with its offline queue",
      { client: { sendCommand: async () => null, options: {} } },
      /disableOfflineQueue: true/,
    ],
    ["an object that is no client", { client: {} }, /no call or sendCommand method/],
  ] as const)("client: %s → ERR_SVC_RATELIMIT_CLIENT", (_name, options, message) => {
    expect(() => new RedisStore(options as unknown as RedisStoreOptions)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_RATELIMIT_CLIENT", message: expect.stringMatching(message) }),
    );
  });
});

describe("RedisStore prefix with a hash tag on a Redis Cluster", () => {
  const ioCluster = {
    call: async () => null,
    isCluster: true,
    options: {
      enableOfflineQueue: false,
      retryDelayOnFailover: 0,
      redisOptions: { autoResendUnfulfilledCommands: false },
    },
  };
  const nodeCluster = {
    sendCommand: async () => null,
    masters: [],
    _options: { defaults: { disableOfflineQueue: true } },
  };
  const single = {
    call: async () => null,
    options: { enableOfflineQueue: false, autoResendUnfulfilledCommands: false },
  };

  it.each([
    ["ioredis Cluster", "{rl}:", ioCluster],
    ["ioredis Cluster", "app:{tenant-1}:rl:", ioCluster],
    ["redis createCluster", "{rl}:", nodeCluster],
  ] as const)(
    "%s, prefix %s → ERR_SVC_RATELIMIT_PREFIX (every client on one slot)",
    (_kind, prefix, client) => {
      expectRefused(
        () => new RedisStore({ client, prefix } as unknown as RedisStoreOptions),
        "prefix",
        prefix,
        "ERR_SVC_RATELIMIT_PREFIX",
        /hash tag/,
      );
    },
  );

  it.each([
    ["ioredis Cluster", "rl:", ioCluster],
    ["ioredis Cluster", "rl:{}:", ioCluster],
    ["ioredis Cluster", "rl{", ioCluster],
    ["redis createCluster", "rl:", nodeCluster],
    ["a single ioredis client", "{rl}:", single],
  ] as const)("%s, prefix %s → accepted", (_kind, prefix, client) => {
    expect(new RedisStore({ client, prefix } as unknown as RedisStoreOptions).prefix).toBe(prefix);
  });
});

describe("expressRateLimitStore(store): the store's shape refused at once", () => {
  const methods = {
    increment: () => ({ totalHits: 1, resetTime: undefined }),
    decrement() {},
    resetKey() {},
  };
  const rows: Row[] = [
    ["store", "memory", "ERR_SVC_RATELIMIT_STORE", /an express-rate-limit Store/],
    ["store.increment", undefined, "ERR_SVC_RATELIMIT_STORE_INCREMENT", /a function/],
    ["store.decrement", "no", "ERR_SVC_RATELIMIT_STORE_DECREMENT", /a function/],
    ["store.resetKey", 1, "ERR_SVC_RATELIMIT_STORE_RESET_KEY", /a function/],
    ["store.init", {}, "ERR_SVC_RATELIMIT_STORE_INIT", /a function or undefined/],
    ["store.get", true, "ERR_SVC_RATELIMIT_STORE_GET", /a function or undefined/],
  ];

  it.each(rows)("%s: %o → %s", (option, given, code, accepted) => {
    const store = option === "store" ? given : { ...methods, [option.slice("store.".length)]: given };
    expectRefused(() => expressRateLimitStore(store as ExpressRateLimitStore), option, given, code, accepted);
  });
});

describe("an unknown option name is refused by every factory, not ignored", () => {
  const client = {
    call: async () => null,
    options: { enableOfflineQueue: false, autoResendUnfulfilledCommands: false },
  };
  it.each([
    [
      "createRateLimiter windowMS",
      () => createRateLimiter({ limit: 1, windowMS: 1000 } as unknown as RateLimiterOptions),
      /rate limit: unknown option "windowMS" \(did you mean "windowMs"\?\)/,
    ],
    [
      "createRateLimiter max",
      () => createRateLimiter({ limit: 1, max: 5 } as unknown as RateLimiterOptions),
      /rate limit: unknown option "max"/,
    ],
    [
      "MemoryStore maxkeys",
      () => new MemoryStore({ maxkeys: 10 } as unknown as MemoryStoreOptions),
      /MemoryStore: unknown option "maxkeys" \(did you mean "maxKeys"\?\)/,
    ],
    [
      "RedisStore timeout",
      () => new RedisStore({ client, timeout: 100 } as unknown as RedisStoreOptions),
      /RedisStore: unknown option "timeout" \(did you mean "timeoutMs"\?\)/,
    ],
    [
      "RedisStore keyPrefix",
      () => new RedisStore({ client, keyPrefix: "app:" } as unknown as RedisStoreOptions),
      /RedisStore: unknown option "keyPrefix"/,
    ],
  ] as const)("%s → ERR_SVC_RATELIMIT_UNKNOWN_OPTION", (_name, build, message) => {
    expect(build).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_UNKNOWN_OPTION",
        message: expect.stringMatching(message),
      }),
    );
  });
});

describe("ipMatcher(entries)", () => {
  it.each(["10.0.0.0/33", "1.2.3", "example.com", ""])(
    "%o → ERR_SVC_RATELIMIT_ALLOWLIST naming the entry",
    (entry) => {
      expect(() => ipMatcher([entry])).toThrow(
        expect.objectContaining({
          code: "ERR_SVC_RATELIMIT_ALLOWLIST",
          message: expect.stringContaining(JSON.stringify(entry)),
        }),
      );
    },
  );
});

describe("blockDurationMs and insurance: refused at construction", () => {
  const code = (build: () => unknown): string | undefined => {
    try {
      build();
    } catch (err) {
      return (err as { code?: string }).code;
    }
    return undefined;
  };
  it.each([-1, Number.NaN, "60000", 1e15 + 1])(
    "blockDurationMs %s → ERR_SVC_RATELIMIT_BLOCK_DURATION_MS",
    (given) => {
      expect(code(() => rateLimit({ limit: 1, blockDurationMs: given as number }))).toBe(
        "ERR_SVC_RATELIMIT_BLOCK_DURATION_MS",
      );
      expect(code(() => createRateLimiter({ limit: 1, blockDurationMs: given as number }))).toBe(
        "ERR_SVC_RATELIMIT_BLOCK_DURATION_MS",
      );
    },
  );
  it("blockDurationMs with an express-rate-limit store → ERR_SVC_RATELIMIT_BLOCK_DURATION_MS", () => {
    const store = {
      increment: async () => ({ totalHits: 1, resetTime: undefined }),
      decrement: async () => {},
      resetKey: async () => {},
    } as unknown as ExpressRateLimitStore;
    expect(
      code(() =>
        rateLimit({
          limit: 1,
          algorithm: "fixed-window",
          store: expressRateLimitStore(store),
          blockDurationMs: 1000,
        }),
      ),
    ).toBe("ERR_SVC_RATELIMIT_BLOCK_DURATION_MS");
  });
  it("blockDuration (rate-limiter-flexible's name, seconds) → ERR_SVC_RATELIMIT_UNKNOWN_OPTION", () => {
    expect(code(() => rateLimit({ limit: 1, blockDuration: 60 } as RateLimitOptions))).toBe(
      "ERR_SVC_RATELIMIT_UNKNOWN_OPTION",
    );
  });
  it.each([
    [{ instances: 0 }, "ERR_SVC_RATELIMIT_INSURANCE"],
    [{ instances: 1.5 }, "ERR_SVC_RATELIMIT_INSURANCE"],
    [{}, "ERR_SVC_RATELIMIT_INSURANCE"],
    [true, "ERR_SVC_RATELIMIT_INSURANCE"],
    [{ instance: 3 }, "ERR_SVC_RATELIMIT_UNKNOWN_OPTION"],
  ])("insurance %o → %s", (given, expected) => {
    expect(code(() => rateLimit({ limit: 1, insurance: given as never }))).toBe(expected);
  });
  it("insurance: { instances: 3 } with limit 600 → accepted", () => {
    expect(code(() => rateLimit({ limit: 600, insurance: { instances: 3 } }))).toBeUndefined();
  });
});
