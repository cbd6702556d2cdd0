import { option } from "./helpers.mjs";

const RAISER =
  "`idempotency()` of `@svc/idempotency/express` (the same options in `./fastify`, `./node`, `./fetch` and the pipeline step)";
const express = 'import { idempotency } from "@svc/idempotency/express";';
const idem = ({ name, base = "", ...rest }) =>
  option({
    raiser: RAISER,
    name,
    imports: express,
    call: (v) => `export const step = idempotency({ ${base}${name}: ${v} });`,
    ...rest,
  });
const memory = ({ name, ...rest }) =>
  option({
    raiser: "`new MemoryStore()` of `@svc/idempotency`",
    name,
    imports: 'import { MemoryStore } from "@svc/idempotency";',
    call: (v) => `export const store = new MemoryStore({ ${name}: ${v} });`,
    ...rest,
  });
const pg = ({ name, ...rest }) =>
  option({
    raiser: "`new PostgresStore()` of `@svc/idempotency`",
    name,
    imports:
      'import pg from "pg";\nimport { PostgresStore } from "@svc/idempotency";\n\nconst pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });',
    call: (v) => `export const store = new PostgresStore({ pool, ${name}: ${v} });\nawait pool.end();`,
    ...rest,
  });
const redis = ({ name, ...rest }) =>
  option({
    raiser: "`new RedisStore()` of `@svc/idempotency`",
    name,
    imports:
      'import { Redis } from "ioredis";\nimport { RedisStore } from "@svc/idempotency";\n\nconst client = new Redis({ lazyConnect: true });',
    call: (v) => `export const store = new RedisStore({ client, ${name}: ${v} });`,
    ...rest,
  });

export default {
  ERR_SVC_IDEMPOTENCY_OPTIONS: option({
    raiser: `${RAISER}; \`new RedisStore()\`, \`new PostgresStore()\`, the Durable Object store`,
    name: "options",
    refused: "its options argument is not an object",
    accepted: "an object { client, prefix?, timeoutMs?, maxRecordBytes? }",
    imports:
      'import { Redis } from "ioredis";\nimport { RedisStore } from "@svc/idempotency";\n\nconst client = new Redis({ lazyConnect: true });',
    call: (v) => `export const store = new RedisStore(${v});`,
    wrong: '(process.env.REDIS_URL ?? "redis://127.0.0.1:6379") as never',
    right: "{ client }",
    fix: "Pass an object of options: `new RedisStore({ client })`.",
  }),
  ERR_SVC_IDEMPOTENCY_UNKNOWN_OPTION: {
    raiser: RAISER,
    when: "construction",
    refused: "its options name one it does not know; the message names the nearest it knows",
    accepted: 'did you mean "leaseMs"?',
    fix: "Spell the option as the message suggests.",
    wrong: `${express}\n\nconst options = { methods: ["POST"], leaseMS: 30_000 };\nexport const step = idempotency(options);\n`,
    right: `${express}\n\nconst options = { methods: ["POST"], leaseMs: 30_000 };\nexport const step = idempotency(options);\n`,
  },
  ERR_SVC_IDEMPOTENCY_STORE: idem({
    name: "store",
    accepted: "an object with claim, complete and release methods",
    imports: `${express}\nimport { MemoryStore } from "@svc/idempotency";\n\n// An express-rate-limit or cache store is no idempotency store.\nconst cache = { get: async () => undefined, set: async () => {} };`,
    wrong: "cache as never",
    right: "new MemoryStore()",
    fix: "Give an `IdempotencyStore`: `MemoryStore` (the default), `RedisStore`, `PostgresStore` or the Durable Object store.",
  }),
  ERR_SVC_IDEMPOTENCY_METHODS: idem({
    name: "methods",
    accepted: "method names, one per element (an RFC 9110 token: no spaces or commas)",
    wrong: '["POST, PATCH"]',
    right: '["POST", "PATCH"]',
    fix: 'List unsafe methods one per entry: `["POST", "PATCH"]`.',
  }),
  ERR_SVC_IDEMPOTENCY_REQUIRED: idem({
    name: "required",
    accepted: 'paths that start with "/" without query, fragment or spaces',
    wrong: '["payments"]',
    right: '["/payments"]',
    refused:
      "`required` is not a boolean, a list of paths or a function, or a path in it does not start with `/`",
    fix: "Give `required` `true`, a list of paths from the root (`/payments`), or a function `(path, req) => boolean`.",
  }),
  ERR_SVC_IDEMPOTENCY_ROUTING: idem({
    name: "routing",
    accepted: "only the fields caseSensitive and strict",
    wrong: 'JSON.parse(\'{ "caseSensitive": true, "mergeParams": true }\')',
    right: "{ caseSensitive: true }",
    fix: "Give `routing` the router's own settings, `{ caseSensitive?, strict? }`.",
  }),
  ERR_SVC_IDEMPOTENCY_LEASE_MS: idem({
    name: "leaseMs",
    accepted: "a positive finite number",
    wrong: "0",
    right: "60_000",
  }),
  ERR_SVC_IDEMPOTENCY_RENEW_LEASE: idem({
    name: "renewLease",
    accepted: "a boolean",
    wrong: "JSON.parse('\"true\"')",
    right: "false",
  }),
  ERR_SVC_IDEMPOTENCY_MAX_LEASE_MS: idem({
    name: "maxLeaseMs",
    base: "leaseMs: 60_000, ",
    accepted: "at least leaseMs (60000)",
    wrong: "30_000",
    right: "600_000",
    fix: "Give `maxLeaseMs`, the longest a claim is renewed, at least `leaseMs` (ten leases by default).",
  }),
  ERR_SVC_IDEMPOTENCY_RETENTION_MS: idem({
    name: "retentionMs",
    accepted: "a positive finite number",
    wrong: "-1",
    right: "86_400_000",
  }),
  ERR_SVC_IDEMPOTENCY_MAX_STORED_BYTES: idem({
    name: "maxStoredBytes",
    accepted: "a non-negative finite number",
    wrong: "-1",
    right: "65_536",
  }),
  ERR_SVC_IDEMPOTENCY_WAIT_MS: idem({
    name: "waitMs",
    accepted: "a non-negative finite number",
    wrong: "Number.NaN",
    right: "2_000",
  }),
  ERR_SVC_IDEMPOTENCY_RETRY_AFTER_SECONDS: idem({
    name: "retryAfterSeconds",
    accepted: "a non-negative finite number",
    wrong: "-1",
    right: "1",
  }),
  ERR_SVC_IDEMPOTENCY_FINGERPRINT: idem({
    name: "fingerprint",
    accepted: "a non-empty array of JSON Pointers (RFC 6901",
    wrong: '["amount"]',
    right: '["/amount", "/currency"]',
    fix: "List JSON Pointers into the body (`/amount`), or give a function of the request answering a string or bytes.",
  }),
  ERR_SVC_IDEMPOTENCY_STORE_STATUS: idem({
    name: "storeStatus",
    accepted: "a function (status, { started }) => boolean",
    wrong: 'JSON.parse("[200, 201]")',
    right: "(status) => status < 500",
  }),
  ERR_SVC_IDEMPOTENCY_REPLAY_HEADERS: idem({
    name: "replayHeaders",
    accepted: "headers that are safe to replay",
    wrong: '["Location", "Set-Cookie"]',
    right: '["Location"]',
    fix: "Replay only fields that describe the response; never `Set-Cookie`, `Date` and the other fields of one exchange.",
  }),
  ERR_SVC_IDEMPOTENCY_SCOPE: idem({
    name: "scope",
    accepted: "a function (req) => string",
    wrong: "JSON.parse('\"tenant\"')",
    right: '(req) => String(req.headers["x-tenant"] ?? "")',
  }),
  ERR_SVC_IDEMPOTENCY_ON_STORE_ERROR: idem({
    name: "onStoreError",
    accepted: '"fail" or "pass-through"',
    wrong: "JSON.parse('\"ignore\"')",
    right: '"pass-through"',
  }),
  ERR_SVC_IDEMPOTENCY_DOCUMENTATION_URL: idem({
    name: "documentationUrl",
    accepted: "an absolute URL",
    wrong: '"/docs/idempotency"',
    right: '"https://api.example.com/docs/idempotency"',
  }),
  ERR_SVC_IDEMPOTENCY_LOGGER: idem({
    name: "logger",
    accepted: "an object with a warn(obj, msg) method",
    wrong: "console.warn as never",
    right: "console",
  }),
  ERR_SVC_IDEMPOTENCY_MAX_ENTRIES: memory({
    name: "maxEntries",
    accepted: "a positive integer",
    wrong: "0",
    right: "10_000",
  }),
  ERR_SVC_IDEMPOTENCY_MAX_BYTES: memory({
    name: "maxBytes",
    accepted: "an integer of at least 4096 (bytes)",
    wrong: "1024",
    right: "33_554_432",
  }),
  ERR_SVC_IDEMPOTENCY_MAX_ENTRIES_PER_SCOPE: memory({
    name: "maxEntriesPerScope",
    accepted: "an integer from 1 to",
    wrong: "0",
    right: "1000",
    fix: "Give `maxEntriesPerScope` an integer from 1 to `maxEntries`.",
  }),
  ERR_SVC_IDEMPOTENCY_MAX_BYTES_PER_SCOPE: memory({
    name: "maxBytesPerScope",
    accepted: "an integer from 1 to",
    wrong: "0",
    right: "1_048_576",
    fix: "Give `maxBytesPerScope` an integer from 1 to `maxBytes`.",
  }),
  ERR_SVC_IDEMPOTENCY_NOW: memory({
    name: "now",
    accepted: "a function () => number",
    wrong: "Date.now() as never",
    right: "Date.now",
  }),
  ERR_SVC_IDEMPOTENCY_MAX_RECORD_BYTES: memory({
    name: "maxRecordBytes",
    accepted: "an integer from 1024 to",
    wrong: "100",
    right: "1_048_576",
    fix: "Give `maxRecordBytes` an integer of bytes from 1024 to `maxBytes`.",
  }),
  ERR_SVC_IDEMPOTENCY_POOL: option({
    raiser: "`new PostgresStore()` of `@svc/idempotency`",
    name: "pool",
    accepted: "a pg Pool or Client (an object with query())",
    imports: 'import { PostgresStore } from "@svc/idempotency";\nimport pg from "pg";',
    call: (v) =>
      `const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });\nexport const store = new PostgresStore({ pool: ${v} });\nawait pool.end();`,
    wrong: "process.env.DATABASE_URL as never",
    right: "pool",
    fix: "Give a `pg` `Pool` (or `Client`), not its connection string.",
  }),
  ERR_SVC_IDEMPOTENCY_TIMEOUT_MS: pg({
    name: "timeoutMs",
    accepted: "a positive number of milliseconds, at most 2147483647",
    wrong: "0",
    right: "1000",
  }),
  ERR_SVC_IDEMPOTENCY_CLIENT: option({
    raiser: "`new RedisStore()` of `@svc/idempotency`",
    name: "client",
    accepted: "an ioredis Redis or Cluster, or a redis (node-redis) client or cluster",
    imports: 'import { Redis } from "ioredis";\nimport { RedisStore } from "@svc/idempotency";',
    call: (v) => `export const store = new RedisStore({ client: ${v} });`,
    wrong: "process.env.REDIS_URL as never",
    right: 'new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { lazyConnect: true })',
    fix: "Give a connected-or-lazy Redis client (ioredis `Redis` or `Cluster`, node-redis client or cluster), not its URL.",
  }),
  ERR_SVC_IDEMPOTENCY_PREFIX: redis({
    name: "prefix",
    accepted: "a string without { or }",
    wrong: '"{idempotency}:"',
    right: '"idempotency:"',
    fix: "Give a prefix without braces: a hash tag would put every record on one cluster slot.",
  }),
  ERR_SVC_IDEMPOTENCY_NAMESPACE: option({
    raiser: "`new DurableObjectStore()` of `@svc/idempotency/durable-object`",
    name: "namespace",
    accepted: "a Durable Object namespace binding",
    imports:
      'import { DurableObjectStore } from "@svc/idempotency/durable-object";\n\n// In a Worker: env.IDEMPOTENCY, bound in wrangler.toml; here a misspelt binding.\nconst env: Record<string, unknown> = { IDEMPOTENCY: { idFromName: () => ({}), get: () => ({ fetch: async () => new Response() }) } };',
    call: (v) => `export const store = new DurableObjectStore({ namespace: ${v} as never });`,
    wrong: "env.IDEMPOTENCE",
    right: "env.IDEMPOTENCY",
    fix: "Give `namespace` the Durable Object binding (`env.IDEMPOTENCY`), bound to the class `IdempotencyObject` in `wrangler.toml`.",
  }),
};
