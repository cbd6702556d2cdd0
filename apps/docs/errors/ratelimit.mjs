import { option } from "./helpers.mjs";

const RATE_LIMIT =
  "`rateLimit()` of `@svc/ratelimit/express` (the same options in `./fastify`, `./node`, `./fetch` and `rateLimitGate()` of `@svc/ratelimit`)";
const express = 'import { rateLimit } from "@svc/ratelimit/express";';

/** An option of `rateLimit()`, next to `limit` and `windowMs`. */
const rl = ({
  name,
  accepted,
  wrong,
  right,
  fix,
  refused,
  imports = express,
  base = "limit: 100, windowMs: 60_000, ",
}) =>
  option({
    raiser: RATE_LIMIT,
    name,
    accepted,
    wrong,
    right,
    fix,
    refused,
    imports,
    call: (v) => `export const limiter = rateLimit({ ${base}${name}: ${v} });`,
  });

const redisImports = `import { Redis } from "ioredis";
import { RedisStore } from "@svc/ratelimit";

const client = new Redis({ lazyConnect: true, enableOfflineQueue: false, autoResendUnfulfilledCommands: false });`;
const erlStore = `import { expressRateLimitStore } from "@svc/ratelimit";

// An express-rate-limit store (rate-limit-redis, rate-limit-postgresql, ...): the three methods every one has.
const hits = new Map<string, number>();
const store = {
  async increment(key: string) {
    const totalHits = (hits.get(key) ?? 0) + 1;
    hits.set(key, totalHits);
    return { totalHits, resetTime: undefined };
  },
  async decrement(key: string) {
    hits.set(key, (hits.get(key) ?? 1) - 1);
  },
  async resetKey(key: string) {
    hits.delete(key);
  },
};`;

export default {
  ERR_SVC_RATELIMIT_LIMIT: rl({
    name: "limit",
    accepted: "a positive integer",
    wrong: "0",
    right: "100",
    base: "windowMs: 60_000, ",
    fix: "Give `limit` the number of requests a client may make per window, a positive integer (or a function of the request answering one); it has no default.",
  }),
  ERR_SVC_RATELIMIT_WINDOW_MS: rl({
    name: "windowMs",
    accepted: "a number of milliseconds >= 1",
    wrong: "0",
    right: "60_000",
    base: "limit: 100, ",
  }),
  ERR_SVC_RATELIMIT_ALGORITHM: rl({
    name: "algorithm",
    accepted: 'one of "fixed-window", "sliding-window", "gcra"',
    wrong: "JSON.parse('\"token-bucket\"')",
    right: '"gcra"',
    fix: 'Name one of the algorithms the message lists (`"sliding-window"`, the default, `"fixed-window"` or `"gcra"`).',
  }),
  ERR_SVC_RATELIMIT_BURST: rl({
    name: "burst",
    accepted: "burst only applies to the gcra algorithm",
    wrong: "20",
    right: '20, algorithm: "gcra"',
    refused:
      '`burst` was given with an algorithm that has no burst (only `"gcra"` has one), or is not a positive integer',
    fix: 'Give `burst` with `algorithm: "gcra"` only, as a positive integer; the window algorithms take `limit` alone.',
  }),
  ERR_SVC_RATELIMIT_PREFIX: rl({
    name: "prefix",
    accepted: "a string",
    wrong: 'JSON.parse("7")',
    right: '"search:"',
    fix: "Give `prefix` a string (the store keys of this limiter start with it); two limiters sharing a store need different prefixes.",
  }),
  ERR_SVC_RATELIMIT_STORE: rl({
    name: "store",
    accepted: "a RateLimitStore (consume(key, cost, policy, now) and reset(key))",
    imports: `${express}\nimport { MemoryStore } from "@svc/ratelimit";\n\n// An express-rate-limit store, passed as it is.\nconst erlStore = JSON.parse("{}");`,
    wrong: "erlStore",
    right: "new MemoryStore()",
    fix: "Give a `RateLimitStore`: `MemoryStore`, `RedisStore`, the Durable Object store, or an express-rate-limit store wrapped by `expressRateLimitStore(store)`.",
  }),
  ERR_SVC_RATELIMIT_NOW: rl({
    name: "now",
    accepted: "not epoch milliseconds",
    wrong: "() => new Date().toISOString() as unknown as number",
    right: "() => Date.now()",
    refused:
      "the clock `now` does not answer epoch milliseconds (it is called once when the limiter is built, and for each decision)",
    fix: "Give `now` a function answering epoch milliseconds, as `Date.now` does.",
  }),
  ERR_SVC_RATELIMIT_BLOCK_DURATION_MS: rl({
    name: "blockDurationMs",
    accepted: "0 (no block) or a number of milliseconds > 0",
    wrong: "-1",
    right: "15 * 60_000",
  }),
  ERR_SVC_RATELIMIT_OPTIONS: option({
    raiser: RATE_LIMIT,
    name: "options",
    refused: "its options argument is not an object",
    accepted: "an object with at least limit",
    imports: `${express}\n\n// The options read from a configuration file that has no "search" entry.\nconst config = JSON.parse('{ "login": { "limit": 5 } }');`,
    call: (v) => `export const limiter = rateLimit(config.${v});`,
    wrong: "search",
    right: "login",
    fix: "Pass an object with at least `limit`.",
  }),
  ERR_SVC_RATELIMIT_UNKNOWN_OPTION: {
    raiser: RATE_LIMIT,
    when: "construction",
    refused:
      "its options name one it does not know: a misspelling (the message names the nearest option it knows) or an option of express-rate-limit that has another name here",
    accepted: "express-rate-limit's max is limit here",
    fix: "Use the name the message gives: express-rate-limit's `max` is `limit`, its `keyGenerator` is `key`; a misspelt `windowMS` is `windowMs`.",
    wrong: `${express}\n\n// Options kept from express-rate-limit.\nconst options = { max: 100, windowMs: 60_000 };\nexport const limiter = rateLimit(options as never);\n`,
    right: `${express}\n\nconst options = { limit: 100, windowMs: 60_000 };\nexport const limiter = rateLimit(options);\n`,
  },
  ERR_SVC_RATELIMIT_LIMITER: rl({
    name: "limiter",
    accepted: "pass either limiter or limit, not both",
    imports: `${express}\nimport { createRateLimiter } from "@svc/ratelimit";\n\nconst shared = createRateLimiter({ limit: 100, windowMs: 60_000 });`,
    wrong: "shared, limit: 100",
    right: "shared",
    base: "",
    refused:
      "`limiter` was given with options that build a limiter (`limit`, `windowMs`, `algorithm`, `store`, ...), or is not a limiter",
    fix: "Pass either a limiter from `createRateLimiter()` (shared by several middleware) or the options that build one, not both.",
  }),
  ERR_SVC_RATELIMIT_IPV6_SUBNET: rl({
    name: "ipv6Subnet",
    accepted: "an integer 1..128 or false",
    wrong: "0",
    right: "56",
  }),
  ERR_SVC_RATELIMIT_COST: rl({
    name: "cost",
    accepted: "a request costing more can never be allowed",
    wrong: "500",
    right: "5",
    refused:
      "`cost` is not a non-negative integer (or a function answering one), or is more than the quota, so no request could ever be allowed",
    fix: "Give `cost` a non-negative integer no greater than `limit` (the burst with gcra), or a function of the request answering one.",
  }),
  ERR_SVC_RATELIMIT_FAIL_MODE: rl({
    name: "failMode",
    accepted: '"open" or "closed"',
    wrong: "JSON.parse('\"fail-open\"')",
    right: '"closed"',
  }),
  ERR_SVC_RATELIMIT_FAIL_RETRY_AFTER_SECONDS: rl({
    name: "failRetryAfterSeconds",
    accepted: "a non-negative number of seconds",
    wrong: "-5",
    right: "5",
  }),
  ERR_SVC_RATELIMIT_INSURANCE: rl({
    name: "insurance",
    accepted: "insurance.instances: a positive integer",
    wrong: "{ instances: 0 }",
    right: "{ instances: 3 }",
    fix: "Give `insurance` `{ instances }`, the number of instances sharing the store, a positive integer: each instance then allows its share while the store is down.",
  }),
  ERR_SVC_RATELIMIT_LOGGER: rl({
    name: "logger",
    accepted: "an object with warn(obj, msg)",
    wrong: "console.warn as never",
    right: "{ warn: (obj: object, msg: string) => console.warn(msg, obj) }",
    fix: "Give `logger` an object with `warn(obj, msg)`: a pino logger fits (`logger: pino()`), or wrap `console`.",
  }),
  ERR_SVC_RATELIMIT_LOG_INTERVAL_MS: rl({
    name: "logIntervalMs",
    accepted: "a non-negative number of milliseconds",
    wrong: "-1",
    right: "60_000",
  }),
  ERR_SVC_RATELIMIT_ALLOWLIST: rl({
    name: "allowlist",
    accepted: "is not an IP address or CIDR",
    wrong: '["localhost"]',
    right: '["127.0.0.1", "::1", "10.0.0.0/8"]',
    refused: "an entry of `allowlist` is not an IP address or a CIDR range (host names are not resolved)",
    fix: 'List IP addresses and CIDR ranges (`"10.0.0.0/8"`, `"::1"`), not host names.',
  }),
  ERR_SVC_RATELIMIT_SKIP: rl({
    name: "skip",
    accepted: "a function (req, res) => boolean | Promise<boolean>",
    wrong: 'JSON.parse("true")',
    right: '(req) => req.url === "/health"',
  }),
  ERR_SVC_RATELIMIT_KEY: rl({
    name: "key",
    accepted: '"client" or a function (req) => string | undefined',
    wrong: "JSON.parse('\"ip\"')",
    right: '"client"',
  }),
  ERR_SVC_RATELIMIT_SKIP_SUCCESSFUL_REQUESTS: rl({
    name: "skipSuccessfulRequests",
    accepted: "true or false",
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
  ERR_SVC_RATELIMIT_SKIP_FAILED_REQUESTS: rl({
    name: "skipFailedRequests",
    accepted: "true or false",
    wrong: "JSON.parse('\"false\"')",
    right: "false",
  }),
  ERR_SVC_RATELIMIT_REQUEST_WAS_SUCCESSFUL: rl({
    name: "requestWasSuccessful",
    accepted: "a function (req, res) => boolean | Promise<boolean>",
    wrong: 'JSON.parse("[200, 201]")',
    right: "(_req, res) => res.statusCode < 400",
  }),
  ERR_SVC_RATELIMIT_HANDLER: rl({
    name: "handler",
    accepted: "a function (req, res, next, exceeded) => void",
    wrong: "JSON.parse('\"Too many requests\"')",
    right: '(_req, res) => {\n    res.statusCode = 429;\n    res.end("Too many requests");\n  }',
    fix: "Give `handler` a function that answers the refused request; to change only the text, use `message`.",
  }),
  ERR_SVC_RATELIMIT_MESSAGE: rl({
    name: "message",
    accepted: "a string, an object of extension members, or a function (req, res) => either",
    wrong: 'JSON.parse("429")',
    right: '"Too many searches, try again later"',
  }),
  ERR_SVC_RATELIMIT_REQUEST_PROPERTY_NAME: rl({
    name: "requestPropertyName",
    accepted:
      "false or an identifier of up to 64 characters that Express and Node.js do not use on the request",
    wrong: '"headers"',
    right: '"rateLimit"',
  }),
  ERR_SVC_RATELIMIT_RESET_FORMAT: rl({
    name: "resetFormat",
    accepted: '"epoch-seconds" or "delta-seconds"',
    wrong: "JSON.parse('\"seconds\"')",
    right: '"delta-seconds"',
  }),
  ERR_SVC_RATELIMIT_POLICY_NAME: rl({
    name: "policyName",
    accepted: "printable ASCII characters",
    wrong: '"search quota ✓"',
    right: '"search"',
  }),
  ERR_SVC_RATELIMIT_STANDARD_HEADERS: rl({
    name: "standardHeaders",
    accepted:
      "true (RateLimit-Policy and RateLimit, draft-ietf-httpapi-ratelimit-headers-10), false, or the draft whose syntax to send",
    wrong: "JSON.parse('\"draft-11\"')",
    right: '"draft-7"',
  }),
  ERR_SVC_RATELIMIT_LEGACY_HEADERS: rl({
    name: "legacyHeaders",
    accepted: "true or false",
    wrong: "JSON.parse('\"no\"')",
    right: "false",
  }),
  ERR_SVC_RATELIMIT_FORWARDED_HEADERS: option({
    raiser: "`rateLimitGate()` of `@svc/ratelimit` (and the framework entries' `rateLimit()`)",
    name: "forwardedHeaders",
    accepted: '"x-forwarded" (X-Forwarded-For, -Proto, -Host, -Prefix) or "forwarded" (RFC 7239 Forwarded)',
    imports: 'import { rateLimitGate } from "@svc/ratelimit";',
    call: (v) =>
      `export const gate = rateLimitGate({ limit: 100, trustProxy: "loopback", forwardedHeaders: ${v} });`,
    wrong: "JSON.parse('\"x-forwarded-for\"')",
    right: '"forwarded"',
  }),
  ERR_SVC_RATELIMIT_GATE: option({
    raiser: "`rateLimit` of `@svc/ratelimit/fastify`",
    when: "registration",
    name: "gate",
    accepted: "pass either gate or limit, not both",
    refused:
      "`gate` was given with options that build a gate (`limit`, `windowMs`, ...), or is not a gate of `rateLimitGate()`",
    imports:
      'import Fastify, { type FastifyRequest } from "fastify";\nimport { rateLimitGate } from "@svc/ratelimit";\nimport { rateLimit } from "@svc/ratelimit/fastify";\n\nconst gate = rateLimitGate<FastifyRequest>({ limit: 100, windowMs: 60_000 });\nconst app = Fastify();',
    call: (v) => `await app.register(rateLimit, { ${v} });\nawait app.ready();\nawait app.close();`,
    wrong: "gate, limit: 100",
    right: "gate",
    fix: "Register `{ gate }` alone: a gate's options are given where it is built, with `rateLimitGate()`.",
  }),
  ERR_SVC_RATELIMIT_CONNECTION: option({
    raiser: "`rateLimit()` of `@svc/ratelimit/fetch`",
    name: "connection",
    accepted: "a function (request) => { address } | undefined",
    imports: 'import { rateLimit } from "@svc/ratelimit/fetch";',
    call: (v) => `export const limiter = rateLimit({ limit: 100, connection: ${v} });`,
    wrong: 'JSON.parse(\'{ "address": "203.0.113.7" }\')',
    right: '(request) => ({ address: request.headers.get("cf-connecting-ip") ?? undefined })',
  }),
  ERR_SVC_RATELIMIT_CLIENT_ADDRESS_HEADER: option({
    raiser: "`rateLimit()` of `@svc/ratelimit/fetch`",
    name: "clientAddressHeader",
    accepted: "names the client itself; give it without connection and trustProxy",
    refused:
      "`clientAddressHeader` was given with `trustProxy` or `connection`, whose addresses it would contradict, or is not a field name",
    imports: 'import { rateLimit } from "@svc/ratelimit/fetch";',
    call: (v) =>
      `export const limiter = rateLimit({ limit: 100, clientAddressHeader: "cf-connecting-ip"${v} });`,
    wrong: ", trustProxy: true",
    right: "",
    fix: "Give `clientAddressHeader` (the field your edge sets to the client's address) alone, without `trustProxy` and `connection`.",
  }),
  ERR_SVC_RATELIMIT_MAX_KEYS: option({
    raiser: "`new MemoryStore()` of `@svc/ratelimit`",
    name: "maxKeys",
    accepted: "a positive integer",
    imports: 'import { MemoryStore } from "@svc/ratelimit";',
    call: (v) => `export const store = new MemoryStore({ maxKeys: ${v} });`,
    wrong: "0",
    right: "100_000",
  }),
  ERR_SVC_RATELIMIT_EVICTION_SCAN: option({
    raiser: "`new MemoryStore()` of `@svc/ratelimit`",
    name: "evictionScan",
    accepted: "a positive integer",
    imports: 'import { MemoryStore } from "@svc/ratelimit";',
    call: (v) => `export const store = new MemoryStore({ evictionScan: ${v} });`,
    wrong: "0",
    right: "32",
  }),
  ERR_SVC_RATELIMIT_CLIENT: option({
    raiser: "`new RedisStore()` of `@svc/ratelimit`",
    name: "client",
    accepted: "enableOfflineQueue: false, or requests stall while Redis is down",
    refused:
      "the Redis client would queue commands while Redis is down (so requests stall instead of `failMode` deciding) or resend them after a reconnect (so a request counts twice), or is no Redis client",
    imports: 'import { Redis } from "ioredis";\nimport { RedisStore } from "@svc/ratelimit";',
    call: (v) =>
      `const client = new Redis({ lazyConnect: true${v} });\nexport const store = new RedisStore({ client });`,
    wrong: "",
    right: ", enableOfflineQueue: false, autoResendUnfulfilledCommands: false",
    fix: "Create the ioredis client with `enableOfflineQueue: false` and `autoResendUnfulfilledCommands: false` (a node-redis client with `disableOfflineQueue: true`), as the message says.",
  }),
  ERR_SVC_RATELIMIT_TIMEOUT_MS: option({
    raiser: "`new RedisStore()` and `new DurableObjectStore()` of `@svc/ratelimit`",
    name: "timeoutMs",
    accepted: "a positive number of milliseconds, at most 2147483647",
    imports: redisImports,
    call: (v) => `export const store = new RedisStore({ client, timeoutMs: ${v} });`,
    wrong: "0",
    right: "500",
  }),
  ERR_SVC_RATELIMIT_NAMESPACE: option({
    raiser: "`new DurableObjectStore()` of `@svc/ratelimit/durable-object`",
    name: "namespace",
    accepted: "a Durable Object namespace binding",
    imports:
      'import { DurableObjectStore } from "@svc/ratelimit/durable-object";\n\n// In a Worker: env.RATE_LIMIT, bound in wrangler.toml; here a misspelt binding.\nconst env: Record<string, unknown> = { RATE_LIMIT: { idFromName: () => ({}), get: () => ({ fetch: async () => new Response() }) } };',
    call: (v) => `export const store = new DurableObjectStore({ namespace: ${v} as never });`,
    wrong: "env.RATELIMIT",
    right: "env.RATE_LIMIT",
    fix: "Give `namespace` the Durable Object binding (`env.RATE_LIMIT`), bound to the class `RateLimitObject` in `wrangler.toml`.",
  }),
  ERR_SVC_RATELIMIT_MAX_COST: option({
    raiser: "`expressRateLimitStore()` of `@svc/ratelimit`",
    name: "maxCost",
    accepted: "a positive integer (increment calls one decision may make)",
    imports: erlStore,
    call: (v) => `export const wrapped = expressRateLimitStore(store, { maxCost: ${v} });`,
    wrong: "0",
    right: "100",
  }),
  ERR_SVC_RATELIMIT_STORE_INCREMENT: option({
    raiser: "`expressRateLimitStore()` of `@svc/ratelimit`",
    name: "store.increment",
    accepted: "store.increment must be a function",
    refused: "the express-rate-limit store given has no `increment` method",
    imports: erlStore,
    call: (v) => `export const wrapped = expressRateLimitStore(${v});`,
    wrong: "{ ...store, increment: undefined } as never",
    right: "store",
    fix: "Wrap an express-rate-limit store: an object with `increment`, `decrement` and `resetKey` methods (and optionally `init` and `get`).",
  }),
  ERR_SVC_RATELIMIT_STORE_DECREMENT: option({
    raiser: "`expressRateLimitStore()` of `@svc/ratelimit`",
    name: "store.decrement",
    accepted: "store.decrement must be a function",
    refused: "the express-rate-limit store given has no `decrement` method",
    imports: erlStore,
    call: (v) => `export const wrapped = expressRateLimitStore(${v});`,
    wrong: "{ ...store, decrement: undefined } as never",
    right: "store",
    fix: "Wrap an express-rate-limit store: an object with `increment`, `decrement` and `resetKey` methods.",
  }),
  ERR_SVC_RATELIMIT_STORE_RESET_KEY: option({
    raiser: "`expressRateLimitStore()` of `@svc/ratelimit`",
    name: "store.resetKey",
    accepted: "store.resetKey must be a function",
    refused: "the express-rate-limit store given has no `resetKey` method",
    imports: erlStore,
    call: (v) => `export const wrapped = expressRateLimitStore(${v});`,
    wrong: "{ ...store, resetKey: undefined } as never",
    right: "store",
    fix: "Wrap an express-rate-limit store: an object with `increment`, `decrement` and `resetKey` methods.",
  }),
  ERR_SVC_RATELIMIT_STORE_INIT: option({
    raiser: "`expressRateLimitStore()` of `@svc/ratelimit`",
    name: "store.init",
    accepted: "a function or undefined",
    imports: erlStore,
    call: (v) => `export const wrapped = expressRateLimitStore({ ...store, init: ${v} });`,
    wrong: 'JSON.parse("{}")',
    right: "() => {}",
  }),
  ERR_SVC_RATELIMIT_STORE_GET: option({
    raiser: "`expressRateLimitStore()` of `@svc/ratelimit`",
    name: "store.get",
    accepted: "a function or undefined",
    imports: erlStore,
    call: (v) => `export const wrapped = expressRateLimitStore({ ...store, get: ${v} });`,
    wrong: 'JSON.parse("{}")',
    right: "async (key: string) => ({ totalHits: hits.get(key) ?? 0, resetTime: undefined })",
  }),
};
