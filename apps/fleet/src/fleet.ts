import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uniquePrefix } from "@svc/test-utils";
import { Cluster, Redis } from "ioredis";
import pg from "pg";
import { createInstance, type Instance } from "./instance.js";
import { type Nginx, PROXY_ADDRESS, startProxy } from "./nginx.js";

export interface FleetOptions {
  /** How many reference-server processes. @default 3 */
  instances?: number;
  /** The PostgreSQL to share (`postgres://...`); each fleet gets a fresh schema in it, dropped on close. */
  databaseUrl: string;
  /** Point the instances at this address instead (a {@link tcpProxy} in front of `databaseUrl`). */
  databaseUrlForInstances?: string;
  /**
   * The Redis to share (`redis://...`); the fleet's keys get a unique prefix and are deleted on
   * close. Give either this or `redisClusterNodes`.
   */
  redisUrl?: string;
  /**
   * A Redis Cluster to share instead, as seed nodes (`host:port`): the instances get
   * `REDIS_CLUSTER_NODES`, and the fleet's keys are found and deleted on every master.
   */
  redisClusterNodes?: readonly string[];
  /** More environment for every instance (`RATE_LIMIT_MAX`, `DEMO_USERS`, `LOG_LEVEL`, ...). */
  env?: Record<string, string>;
  /**
   * Environment of one instance (0-based), over `env`: its own `DATABASE_URL` or `REDIS_URL`
   * through a {@link tcpProxy}, so a fault suite can cut one instance off while the others go on.
   */
  instanceEnv?: (index: number) => Record<string, string>;
  /** How long each instance may take to be ready at the start (see {@link Instance.start}). @default 30000 */
  readyTimeoutMs?: number;
  /** Put nginx in front. @default true */
  proxy?: boolean;
  label?: string;
}

/** Several reference-server processes sharing PostgreSQL and Redis, behind nginx. */
export interface Fleet {
  instances: Instance[];
  /** nginx (undefined with `proxy: false`). */
  proxy: Nginx | undefined;
  /** The PostgreSQL schema the instances share. */
  schema: string;
  /** The Redis key prefix the instances share. */
  redisPrefix: string;
  /** A query on the fleet's database (in its schema), to check what the service stored. */
  query<T extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<T[]>;
  /** The fleet's Redis keys. */
  redisKeys(): Promise<string[]>;
  /** Every instance's output, labelled, for a failing test's message. */
  diagnostics(): string;
  /** Stops nginx and every instance, drops the schema, deletes the keys, removes the temp dir. */
  close(): Promise<void>;
}

/**
 * Starts a fleet: a fresh PostgreSQL schema, one instance first (it migrates and seeds), then the
 * others, then nginx round-robin in front of them all. Each instance trusts only the proxy's
 * address, so behind nginx the client address is the real one, and a client talking to an
 * instance directly cannot choose its address with `X-Forwarded-For`. If anything fails on the
 * way, what was started is stopped and removed again.
 *
 * @example
 * const fleet = await startFleet({ databaseUrl, redisUrl });
 * await call(`${fleet.proxy?.url}/employees`, { headers: { authorization: basic("admin") } });
 * await fleet.close();
 */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const count = options.instances ?? 3;
  const label = options.label ?? "fleet";
  const schema = `svc_${label.replace(/\W/g, "_")}_${process.pid}_${randomBytes(4).toString("hex")}`;
  const redisPrefix = uniquePrefix(label);
  const dir = mkdtempSync(join(tmpdir(), `svc-${label}-`));
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 2 });
  pool.on("error", () => {});
  const seeds = options.redisClusterNodes;
  if ((options.redisUrl === undefined) === (seeds === undefined || seeds.length === 0))
    throw new TypeError("startFleet: give redisUrl or redisClusterNodes, exactly one of them");
  const redis: Redis | Cluster = seeds?.length
    ? new Cluster(
        seeds.map((seed) => {
          const at = seed.lastIndexOf(":");
          return { host: seed.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port: Number(seed.slice(at + 1)) };
        }),
        { lazyConnect: true, redisOptions: { maxRetriesPerRequest: 1 } },
      )
    : new Redis(options.redisUrl as string, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on("error", () => {});
  const instances: Instance[] = [];
  let proxy: Nginx | undefined;
  let schemaCreated = false;

  // On a cluster every master holds a part of the keys: scan each of them.
  const redisKeys = async () => {
    const keys: string[] = [];
    const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
    for (const node of nodes) {
      let cursor = "0";
      do {
        const [next, batch] = await node.scan(cursor, "MATCH", `${redisPrefix}*`, "COUNT", 1000);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== "0");
    }
    return keys;
  };
  // One DEL per key: on a cluster, keys of different slots cannot share a command.
  const deleteKeys = async (keys: string[]) => {
    if (redis instanceof Cluster) await Promise.all(keys.map((key) => redis.del(key)));
    else if (keys.length > 0) await redis.del(...keys);
  };

  const close = async () => {
    const problems: unknown[] = [];
    const attempt = async (step: () => Promise<unknown>) => {
      try {
        await step();
      } catch (err) {
        problems.push(err);
      }
    };
    await attempt(async () => proxy?.stop());
    await Promise.all(instances.map((i) => attempt(() => i.kill("SIGKILL"))));
    if (schemaCreated) await attempt(() => pool.query(`drop schema if exists ${schema} cascade`));
    await attempt(async () => {
      await deleteKeys(await redisKeys());
    });
    await attempt(() => pool.end());
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
    if (problems.length > 0) throw new AggregateError(problems, "the fleet did not close cleanly");
  };

  try {
    await redis.connect();
    if (redis instanceof Cluster) await Promise.all(redis.nodes("master").map((node) => node.ping()));
    await pool.query(`create schema ${schema}`);
    schemaCreated = true;
    // One token signing key for the whole fleet (JWT_PRIVATE_KEY): a token one instance issued
    // must verify on every other, whichever of them nginx picks for the next request.
    const keyFile = join(dir, "jwt-signing-key.pem");
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    writeFileSync(keyFile, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    const env: Record<string, string> = {
      JWT_PRIVATE_KEY: keyFile,
      DATABASE_URL: options.databaseUrlForInstances ?? options.databaseUrl,
      DATABASE_SCHEMA: schema,
      ...(seeds?.length
        ? { REDIS_CLUSTER_NODES: seeds.join(",") }
        : { REDIS_URL: options.redisUrl as string }),
      REDIS_KEY_PREFIX: redisPrefix,
      TRUST_PROXY: PROXY_ADDRESS,
      LOG_LEVEL: "info",
      ...options.env,
    };
    for (let i = 0; i < count; i++)
      instances.push(await createInstance(`${label}-${i + 1}`, { ...env, ...options.instanceEnv?.(i) }));
    // The first instance migrates and seeds the empty schema; the others then find it ready.
    await instances[0]?.start(options.readyTimeoutMs);
    await Promise.all(instances.slice(1).map((i) => i.start(options.readyTimeoutMs)));
    if (options.proxy !== false)
      proxy = await startProxy(
        dir,
        instances.map((i) => i.port),
      );
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }

  return {
    instances,
    proxy,
    schema,
    redisPrefix,
    async query(text, values) {
      const client = await pool.connect();
      try {
        await client.query(`set search_path to ${schema}`);
        return (await client.query(text, values)).rows;
      } finally {
        client.release();
      }
    },
    redisKeys,
    diagnostics: () =>
      [
        ...instances.map((i) => `--- ${i.name} (${i.url})\n${i.output().slice(-3000)}`),
        ...(proxy ? [`--- nginx\n${proxy.errorLog().slice(-2000)}`] : []),
      ].join("\n"),
    close,
  };
}
