import { createPrivateKey } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import { dirname, join, resolve } from "node:path";
import { createSecureContext } from "node:tls";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/** A demo account, usable with Basic or to get a token from `POST /auth/token`. */
export interface DemoUser {
  username: string;
  password: string;
  /** `admin` may read and write every resource; `reader` may only read. */
  role: "admin" | "reader";
}

/** Where the data lives: an embedded SQLite file (or memory), or a PostgreSQL server. */
export type DatabaseConfig =
  | { kind: "sqlite"; filename: string; url: string }
  | { kind: "postgres"; url: string; schema?: string };

/** One Redis node address (a Redis Cluster seed). */
export interface RedisNode {
  host: string;
  port: number;
}

/** The resolved, validated configuration of the server. */
export interface Config {
  /**
   * The web framework that serves the service (`SERVER_FRAMEWORK`): `express` (Express 5) or
   * `fastify` (Fastify 5). Both compose the same packages, handlers, database and stores, and
   * answer every request alike.
   */
  framework: "express" | "fastify";
  port: number;
  host: string;
  database: DatabaseConfig;
  redisUrl: string | undefined;
  /**
   * The seed nodes of a Redis Cluster (`REDIS_CLUSTER_NODES=host:port,host:port`), used instead of
   * `REDIS_URL`: the client discovers the other nodes and the slot map from any seed that answers.
   */
  redisClusterNodes: readonly RedisNode[] | undefined;
  /** Prefix of every Redis key the instance writes (`REDIS_KEY_PREFIX`); instances of one fleet share it. */
  redisKeyPrefix: string;
  rateLimit: { max: number; windowSeconds: number };
  /**
   * What the rate limiter does while its store (Redis) fails (`RATE_LIMIT_FAIL_MODE`): `open` lets
   * requests through unlimited, `closed` answers 503 with `Retry-After` (spec part 8 rule 2).
   */
  rateLimitFailMode: "open" | "closed";
  /** Express's `trust proxy` value. */
  trustProxy: boolean | number | string;
  corsOrigins: string[];
  /**
   * The host names the service answers for (`ALLOWED_HOSTS`): exact names, `.example.com` for a
   * domain and its subdomains, IPv4 addresses or `[IPv6]` literals; `undefined` (unset or `*`)
   * answers for any. Links and `Location` are built from the request's host, so set it wherever
   * the `Host` header (or a trusted proxy's forwarded host) is not under the operator's control.
   */
  allowedHosts: readonly string[] | undefined;
  tls: { cert: string; key: string } | undefined;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /**
   * Whether the packages' decisions are recorded (`TELEMETRY`, `on` or `off`): OpenTelemetry
   * metrics, served in the Prometheus text format on the metrics' listener ({@link Config.metrics}),
   * and each request's decisions and principal in its access line. Off, no package builds a
   * decision message.
   */
  telemetry: boolean;
  /**
   * Where the request spans go, as the OpenTelemetry environment asks ({@link readTraces}):
   * `undefined` when nothing would receive them, and then no span is built.
   */
  traces: TraceExport | undefined;
  /**
   * Where `GET /metrics` is served (`METRICS_PORT`, `METRICS_HOST`): a listener of its own, never
   * the API's, on the loopback interface unless `METRICS_HOST` names another; `undefined` when
   * `METRICS_PORT` is unset, and then no listener serves the metrics. What they show (refusals by
   * reason, versions, error codes) is the operator's, and a scrape costs the event loop the API
   * runs on: a client must not reach it where it reaches the API.
   */
  metrics: { port: number; host: string } | undefined;
  demoUsers: DemoUser[];
  /** PEM of the token signing key (`JWT_PRIVATE_KEY`, a file path); generated at start-up when absent. */
  jwtPrivateKey: string | undefined;
  /**
   * How long a SIGTERM/SIGINT shutdown may take to finish in-flight requests and background work
   * before the process gives up and exits 1 (`SHUTDOWN_GRACE_SECONDS`). Keep it below the
   * orchestrator's kill timeout (Kubernetes' `terminationGracePeriodSeconds`, 30 s by default).
   */
  shutdownGraceSeconds: number;
  /**
   * Seconds a client has to send the request line and headers (`HEADERS_TIMEOUT_SECONDS`); later
   * → 408 with the error record, and the connection is closed (Node's `server.headersTimeout`).
   */
  headersTimeoutSeconds: number;
  /**
   * Seconds a client has to send a request body once its headers are in
   * (`REQUEST_TIMEOUT_SECONDS`); a body that trickles or stalls → 408 with the error record
   * (@svc/negotiate `parseBody`'s `timeout`). Node's `server.requestTimeout` closes any request
   * still incomplete after both time-outs and 5 s more, such as a body nothing reads.
   */
  requestTimeoutSeconds: number;
  /**
   * How long an Idempotency-Key's claim lasts (`IDEMPOTENCY_LEASE_SECONDS`, @svc/idempotency's
   * `leaseMs`): it is renewed while its request runs, so this is how long a key stays blocked
   * (409 with `Retry-After`) after the instance running its request died or hung.
   */
  idempotencyLeaseSeconds: number;
  production: boolean;
}

/** The default SQLite file, under the app's own `data/` folder whatever the working directory. */
export const DEFAULT_SQLITE_FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "data",
  "reference-server.sqlite",
);

/** A bad environment: every problem found, one per line, so it can be fixed in one go. */
export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const optional = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim();

function intIn(name: string, min: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, `${name} must be a whole number from ${min} to ${max}`)
        .max(max, `${name} must be a whole number from ${min} to ${max}`),
    );
}

function parseDatabase(raw: string | undefined, problems: string[]): DatabaseConfig {
  if (raw === undefined) return { kind: "sqlite", filename: DEFAULT_SQLITE_FILE, url: "sqlite:default" };
  if (raw === "sqlite::memory:") return { kind: "sqlite", filename: ":memory:", url: raw };
  if (raw.startsWith("sqlite:")) {
    const path = raw.slice("sqlite:".length).replace(/^\/\//, "");
    if (path === "")
      problems.push('DATABASE_URL "sqlite:" needs a file path, such as sqlite:./data/app.sqlite');
    return { kind: "sqlite", filename: resolve(path), url: raw };
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      const url = new URL(raw);
      // libpq also takes the host as a query parameter, leaving the authority empty
      // (postgresql:///mydb?host=localhost&port=5433, PostgreSQL docs, libpq "Connection URIs").
      if (!url.hostname && !url.searchParams.get("host")?.trim())
        problems.push(
          "DATABASE_URL must name a PostgreSQL host (postgres://host/db or postgres:///db?host=…)",
        );
    } catch {
      problems.push("DATABASE_URL is not a valid postgres:// URL");
    }
    return { kind: "postgres", url: raw };
  }
  problems.push('DATABASE_URL must be "sqlite::memory:", "sqlite:<path>" or "postgres://user@host:port/db"');
  return { kind: "sqlite", filename: ":memory:", url: "sqlite::memory:" };
}

function parseDemoUsers(raw: string | undefined, production: boolean, problems: string[]): DemoUser[] {
  if (raw === undefined) {
    // Well-known passwords must never guard a production deployment by accident.
    return production
      ? []
      : [
          { username: "admin", password: "admin", role: "admin" },
          { username: "reader", password: "reader", role: "reader" },
        ];
  }
  if (raw === "none") return [];
  const users: DemoUser[] = [];
  for (const entry of raw.split(",")) {
    const parts = entry.trim().split(":");
    const [username, password, role = "reader"] = parts;
    if (parts.length < 2 || parts.length > 3 || !username || !password) {
      problems.push(
        `DEMO_USERS entry "${entry.trim()}" must be "username:password" or "username:password:admin|reader"`,
      );
      continue;
    }
    if (role !== "admin" && role !== "reader") {
      problems.push(`DEMO_USERS entry for "${username}" has role "${role}"; use admin or reader`);
      continue;
    }
    if (users.some((u) => u.username === username)) {
      problems.push(`DEMO_USERS names "${username}" twice`);
      continue;
    }
    users.push({ username, password, role });
  }
  return users;
}

/** An IPv4 or IPv6 address, optionally with a prefix length the address family has (/0 to /32, /0 to /128). */
function isAddressOrCidr(value: string): boolean {
  const m = /^([0-9a-fA-F:.]+)(?:\/(\d{1,3}))?$/.exec(value);
  const family = m?.[1] ? isIP(m[1]) : 0;
  if (family === 0) return false;
  return m?.[2] === undefined || Number(m[2]) <= (family === 4 ? 32 : 128);
}

function parseTrustProxy(raw: string | undefined, problems: string[]): boolean | number | string {
  if (raw === undefined || raw === "false") return false;
  if (raw === "true") return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const ok = raw
    .split(",")
    .map((s) => s.trim())
    .every((s) => /^(loopback|linklocal|uniquelocal)$/.test(s) || isAddressOrCidr(s));
  if (!ok) {
    problems.push(
      "TRUST_PROXY must be true, false, a hop count, or a comma-separated list of addresses/CIDRs (loopback, linklocal and uniquelocal allowed)",
    );
    return false;
  }
  return raw;
}

function parseOrigins(raw: string | undefined, problems: string[]): string[] {
  if (raw === undefined) return [];
  const origins: string[] = [];
  for (const item of raw.split(",")) {
    const value = item.trim();
    if (!value) continue;
    try {
      const url = new URL(value);
      if (
        (url.protocol !== "http:" && url.protocol !== "https:") ||
        url.origin !== value.replace(/\/$/, "")
      ) {
        throw new Error("not an origin");
      }
      origins.push(url.origin);
    } catch {
      problems.push(`CORS_ORIGINS entry "${value}" is not an origin such as https://app.example.com`);
    }
  }
  return origins;
}

const HOST_NAME =
  /^\.?(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const IPV6_LITERAL = /^\[[0-9a-f:.]+\]$/;

function parseAllowedHosts(raw: string | undefined, problems: string[]): string[] | undefined {
  if (raw === undefined || raw === "*") return undefined;
  const hosts: string[] = [];
  const before = problems.length;
  for (const item of raw.split(",")) {
    const value = item.trim().toLowerCase();
    if (!value) continue;
    if (HOST_NAME.test(value) || IPV6_LITERAL.test(value)) hosts.push(value);
    else
      problems.push(
        `ALLOWED_HOSTS entry "${item.trim()}" must be a host name (api.example.com), a domain with its subdomains (.example.com), an IPv4 address or an [IPv6] literal, without a port`,
      );
  }
  if (hosts.length === 0 && problems.length === before)
    problems.push("ALLOWED_HOSTS names no host; leave it unset or * to answer for any");
  return hosts;
}

/** Most seeds accepted: a client needs one that answers; a few more cover a node being down. */
const MAX_CLUSTER_SEEDS = 64;

function parseClusterNodes(raw: string | undefined, problems: string[]): RedisNode[] | undefined {
  if (raw === undefined) return undefined;
  const nodes: RedisNode[] = [];
  const before = problems.length;
  const entries = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length > MAX_CLUSTER_SEEDS) {
    problems.push(
      `REDIS_CLUSTER_NODES lists ${entries.length} nodes; give at most ${MAX_CLUSTER_SEEDS} seeds`,
    );
    return undefined;
  }
  for (const entry of entries) {
    // host:port, with an IPv6 address in brackets ([::1]:7000); the port is required
    const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):(\d{1,5})$/.exec(entry);
    const host = m?.[1]?.replace(/^\[(.*)\]$/, "$1").toLowerCase();
    const port = Number(m?.[2]);
    if (
      !m ||
      !host ||
      host.startsWith(".") ||
      !(HOST_NAME.test(host) || IPV6_LITERAL.test(`[${host}]`)) ||
      port < 1 ||
      port > 65535
    ) {
      problems.push(
        `REDIS_CLUSTER_NODES entry "${entry.slice(0, 80)}" must be host:port (a host name or IPv4 address, or [IPv6]:port; port 1 to 65535)`,
      );
      continue;
    }
    if (nodes.some((n) => n.host === host && n.port === port)) {
      problems.push(`REDIS_CLUSTER_NODES names ${entry} twice`);
      continue;
    }
    nodes.push({ host, port });
  }
  if (nodes.length === 0 && problems.length === before)
    problems.push("REDIS_CLUSTER_NODES names no node; give host:port,host:port or leave it unset");
  return problems.length === before ? nodes : undefined;
}

function isUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** Reads one variable through its schema: the fallback when unset, a problem when invalid. */
function reader(env: Readonly<Record<string, string | undefined>>, problems: string[]) {
  return <T>(name: string, schema: z.ZodType<T>, fallback: T): T => {
    const value = optional(env[name]);
    if (value === undefined) return fallback;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    problems.push(`${parsed.error.issues[0]?.message ?? `${name} is invalid`} (got "${value.slice(0, 80)}")`);
    return fallback;
  };
}

/** `DATABASE_SCHEMA`: a lowercase SQL identifier, for a PostgreSQL database only. */
function applySchema(database: Config["database"], schema: string | undefined, problems: string[]): void {
  if (schema === undefined) return;
  if (database.kind !== "postgres")
    problems.push("DATABASE_SCHEMA only applies to a postgres:// DATABASE_URL");
  else if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    problems.push("DATABASE_SCHEMA must be a lowercase SQL identifier");
  else database.schema = schema;
}

/** A host name or address to listen on (`HOST`, `METRICS_HOST`). */
const hostName = (name: string) => z.string().regex(/^[\w.:-]+$/, `${name} must be a host name or address`);

/**
 * `METRICS_PORT` and `METRICS_HOST` (loopback by default): the metrics' own listener, which
 * needs `TELEMETRY=on` (nothing is recorded otherwise) and a port of its own.
 */
function readMetrics(
  read: ReturnType<typeof reader>,
  env: Readonly<Record<string, string | undefined>>,
  telemetry: boolean,
  api: { port: number; host: string },
  problems: string[],
): Config["metrics"] {
  const host = read("METRICS_HOST", hostName("METRICS_HOST"), "127.0.0.1");
  if (optional(env.METRICS_PORT) === undefined) {
    if (optional(env.METRICS_HOST) !== undefined)
      problems.push("METRICS_HOST needs METRICS_PORT: the metrics are served only on a port of their own");
    return undefined;
  }
  const port = read("METRICS_PORT", intIn("METRICS_PORT", 0, 65535), 0);
  if (!telemetry) problems.push("METRICS_PORT needs TELEMETRY=on: with telemetry off nothing is recorded");
  if (port !== 0 && port === api.port && host === api.host)
    problems.push(`METRICS_PORT must differ from PORT (${port}): the metrics have a listener of their own`);
  return { port, host };
}

/** Where the request spans are exported. */
export interface TraceExport {
  /** `otlp`: to a collector over OTLP/HTTP; `console`: to standard output, one span a line. */
  readonly exporters: readonly ("otlp" | "console")[];
  /** The OTLP encoding: `http/protobuf` (the specification's default) or `http/json`. */
  readonly protocol: "http/protobuf" | "http/json";
  /** The OTLP traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  readonly url: string;
}

const TRACE_PROTOCOLS = ["http/protobuf", "http/json"] as const;

/**
 * The OpenTelemetry SDK's environment for traces: `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER`
 * (`otlp`, `console`, `none`, comma-separated), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, and `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` or
 * `OTEL_EXPORTER_OTLP_PROTOCOL`. The exporter reads its headers, compression and timeout from
 * the same environment, the batch processor its `OTEL_BSP_*` settings.
 *
 * One departure from the specification's defaults: with `OTEL_TRACES_EXPORTER` unset, spans are
 * exported only when an OTLP endpoint is named. Sending every request's span to
 * `localhost:4318`, where a developer's machine has no collector, would cost each request a span
 * that nobody receives. A value the server cannot honour (`zipkin`, `grpc`) is refused by name.
 * @see https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/
 * @see https://opentelemetry.io/docs/specs/otel/protocol/exporter/
 */
function readTraces(
  env: Readonly<Record<string, string | undefined>>,
  telemetry: boolean,
  problems: string[],
): TraceExport | undefined {
  if (optional(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true") return undefined;
  const tracesEndpoint = optional(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const endpoint = optional(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const named = optional(env.OTEL_TRACES_EXPORTER);
  const asked =
    named === undefined
      ? tracesEndpoint !== undefined || endpoint !== undefined
        ? ["otlp"]
        : []
      : named.split(",").map((part) => part.trim().toLowerCase());
  const exporters: ("otlp" | "console")[] = [];
  for (const name of asked) {
    if (name === "otlp" || name === "console") {
      if (!exporters.includes(name)) exporters.push(name);
    } else if (name !== "none")
      problems.push(
        `OTEL_TRACES_EXPORTER names ${JSON.stringify(name.slice(0, 32))}: this server exports spans with otlp or console (or none)`,
      );
  }
  if (asked.includes("none") && exporters.length > 0)
    problems.push("OTEL_TRACES_EXPORTER names none beside an exporter: say one or the other");
  const protocol = (
    optional(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ??
    optional(env.OTEL_EXPORTER_OTLP_PROTOCOL) ??
    "http/protobuf"
  ).toLowerCase();
  if (!(TRACE_PROTOCOLS as readonly string[]).includes(protocol))
    problems.push(
      `OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(protocol.slice(0, 32))} is not one this server sends: http/protobuf or http/json`,
    );
  const url = tracesEndpoint ?? `${(endpoint ?? "http://localhost:4318").replace(/\/+$/, "")}/v1/traces`;
  if (exporters.includes("otlp") && !URL.canParse(url))
    problems.push(
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (or OTEL_EXPORTER_OTLP_ENDPOINT) must be an http(s) URL",
    );
  if (exporters.length === 0) return undefined;
  if (!telemetry)
    problems.push("OTEL_TRACES_EXPORTER needs TELEMETRY=on: with telemetry off nothing is recorded");
  return { exporters, protocol: protocol as TraceExport["protocol"], url };
}

/** `TLS_CERT` and `TLS_KEY`: both or neither, each an existing PEM file. */
function readTls(
  certPath: string | undefined,
  keyPath: string | undefined,
  problems: string[],
): Config["tls"] {
  if ((certPath === undefined) !== (keyPath === undefined)) {
    problems.push("TLS_CERT and TLS_KEY must be set together (paths to PEM files)");
    return undefined;
  }
  if (certPath === undefined || keyPath === undefined) return undefined;
  const files: Array<[string, string]> = [
    ["TLS_CERT", certPath],
    ["TLS_KEY", keyPath],
  ];
  const contents: string[] = [];
  for (const [name, path] of files) {
    const text = readPemFile(name, path, problems);
    if (text !== undefined) contents.push(text);
  }
  if (contents.length !== 2) return undefined;
  const [cert, key] = contents as [string, string];
  try {
    // What https.createServer would refuse at start-up, with Node's words and no variable name.
    createSecureContext({ cert, key });
  } catch (err) {
    problems.push(
      `TLS_CERT and TLS_KEY must be a PEM certificate and its PEM private key (${err instanceof Error ? err.message : String(err)})`,
    );
    return undefined;
  }
  return { cert, key };
}

/** A file's text, or a problem naming the variable when it is missing, a directory or unreadable. */
function readPemFile(name: string, path: string, problems: string[]): string | undefined {
  if (!existsSync(path)) {
    problems.push(`${name} file "${path}" does not exist`);
    return undefined;
  }
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    problems.push(`${name} file "${path}" cannot be read${typeof code === "string" ? ` (${code})` : ""}`);
    return undefined;
  }
}

/**
 * `JWT_PRIVATE_KEY`: the path of a PEM file holding the ES256 signing key, a P-256 EC private key
 * (RFC 7518 §3.4: ES256 is ECDSA using P-256). Any other key signs no ES256 token: every
 * `POST /auth/token` would fail with a 500.
 */
function readJwtPrivateKey(path: string | undefined, problems: string[]): string | undefined {
  if (path === undefined) return undefined;
  const pem = readPemFile("JWT_PRIVATE_KEY", path, problems);
  if (pem === undefined) return undefined;
  let curve: string | undefined;
  try {
    const key = createPrivateKey(pem);
    curve = key.asymmetricKeyType === "ec" ? key.asymmetricKeyDetails?.namedCurve : undefined;
  } catch {
    // Not a private key at all (a public key, a certificate, garbage); the message below says so.
  }
  if (curve !== "prime256v1") {
    problems.push(
      `JWT_PRIVATE_KEY file "${path}" must hold a P-256 EC private key in PEM (the ES256 signing key), such as the one "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256" writes`,
    );
    return undefined;
  }
  return pem;
}

/**
 * Reads and validates the configuration from the environment. Every problem is collected and
 * thrown at once as a {@link ConfigError}, so start-up fails with one clear message.
 *
 * @example
 * const config = loadConfig(process.env);
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const problems: string[] = [];
  const read = reader(env, problems);
  // Read like every other variable (trimmed): "production " from a .env file or a YAML value, or
  // "Production", must not fall back to the development defaults (the well-known demo passwords).
  const production = optional(env.NODE_ENV)?.toLowerCase() === "production";
  const port = read("PORT", intIn("PORT", 0, 65535), 3000);
  const host = read("HOST", hostName("HOST"), "127.0.0.1");
  const database = parseDatabase(optional(env.DATABASE_URL), problems);
  applySchema(database, optional(env.DATABASE_SCHEMA), problems);
  const redisUrl = read(
    "REDIS_URL",
    z
      .string()
      .regex(/^rediss?:\/\/\S+$/, "REDIS_URL must be a redis:// or rediss:// URL")
      // What ioredis would refuse at start-up as a bare "Invalid URL": an empty host, a port above 65535.
      .refine(isUrl, "REDIS_URL must be a valid redis:// or rediss:// URL (host, port 1 to 65535)"),
    undefined as string | undefined,
  );
  const redisClusterNodes = parseClusterNodes(optional(env.REDIS_CLUSTER_NODES), problems);
  if (redisUrl !== undefined && optional(env.REDIS_CLUSTER_NODES) !== undefined)
    problems.push(
      "REDIS_URL and REDIS_CLUSTER_NODES are both set: give REDIS_URL for one Redis or REDIS_CLUSTER_NODES for a Redis Cluster, not both",
    );
  const redisKeyPrefix = read(
    "REDIS_KEY_PREFIX",
    z.string().regex(/^[\w:.-]{1,100}$/, "REDIS_KEY_PREFIX must be 1 to 100 letters, digits, _ - . or :"),
    "svc:",
  );
  const max = read("RATE_LIMIT_MAX", intIn("RATE_LIMIT_MAX", 1, 1_000_000), 100);
  const windowSeconds = read("RATE_LIMIT_WINDOW_SECONDS", intIn("RATE_LIMIT_WINDOW_SECONDS", 1, 86_400), 60);
  const rateLimitFailMode = read(
    "RATE_LIMIT_FAIL_MODE",
    z.enum(["open", "closed"], { error: "RATE_LIMIT_FAIL_MODE must be open or closed" }),
    "open",
  );
  const shutdownGraceSeconds = read("SHUTDOWN_GRACE_SECONDS", intIn("SHUTDOWN_GRACE_SECONDS", 1, 3600), 10);
  const headersTimeoutSeconds = read("HEADERS_TIMEOUT_SECONDS", intIn("HEADERS_TIMEOUT_SECONDS", 1, 300), 10);
  const requestTimeoutSeconds = read(
    "REQUEST_TIMEOUT_SECONDS",
    intIn("REQUEST_TIMEOUT_SECONDS", 1, 3600),
    30,
  );
  const idempotencyLeaseSeconds = read(
    "IDEMPOTENCY_LEASE_SECONDS",
    intIn("IDEMPOTENCY_LEASE_SECONDS", 1, 86_400),
    60,
  );
  const framework = read(
    "SERVER_FRAMEWORK",
    z.enum(["express", "fastify"], { error: "SERVER_FRAMEWORK must be express or fastify" }),
    "express",
  );
  const trustProxy = parseTrustProxy(optional(env.TRUST_PROXY), problems);
  const corsOrigins = parseOrigins(optional(env.CORS_ORIGINS), problems);
  const allowedHosts = parseAllowedHosts(optional(env.ALLOWED_HOSTS), problems);
  const logLevel = read(
    "LOG_LEVEL",
    z.enum(LOG_LEVELS, { error: `LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}` }),
    "info",
  );
  const telemetry =
    read("TELEMETRY", z.enum(["on", "off"], { error: "TELEMETRY must be on or off" }), "on") === "on";
  const metrics = readMetrics(read, env, telemetry, { port, host }, problems);
  const traces = readTraces(env, telemetry, problems);
  const tls = readTls(optional(env.TLS_CERT), optional(env.TLS_KEY), problems);
  const jwtPrivateKey = readJwtPrivateKey(optional(env.JWT_PRIVATE_KEY), problems);
  const demoUsers = parseDemoUsers(optional(env.DEMO_USERS), production, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    framework,
    port,
    host,
    database,
    redisUrl,
    redisClusterNodes,
    redisKeyPrefix,
    rateLimit: { max, windowSeconds },
    rateLimitFailMode,
    trustProxy,
    corsOrigins,
    allowedHosts,
    tls,
    logLevel,
    telemetry,
    traces,
    metrics,
    demoUsers,
    jwtPrivateKey,
    shutdownGraceSeconds,
    headersTimeoutSeconds,
    requestTimeoutSeconds,
    idempotencyLeaseSeconds,
    production,
  };
}
