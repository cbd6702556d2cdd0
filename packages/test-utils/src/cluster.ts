import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./services.js";

/** One node of a throw-away cluster, as a client's seed list wants it. */
export interface ClusterNodeAddress {
  host: string;
  port: number;
}

/** Options of {@link redisCluster}. */
export interface RedisClusterOptions {
  /** Number of masters (no replicas). Redis Cluster needs at least 3. @default 3 */
  masters?: number;
  /**
   * `cluster-node-timeout` in milliseconds: how long a silent node takes to be flagged failing.
   * Small so a stopped master is noticed quickly, not so small that a busy machine flaps.
   * @default 1000
   */
  nodeTimeoutMs?: number;
  /**
   * `cluster-require-full-coverage`. Off by default, so a stopped master only takes its own slots
   * down and the others keep answering (what the fail-mode tests want to see).
   * @default false
   */
  requireFullCoverage?: boolean;
}

/** Options of {@link RedisCluster.reshard}. */
export interface ReshardOptions {
  /**
   * Milliseconds to hold the slot half-migrated (source MIGRATING, target IMPORTING) after the
   * first batch of keys moved and before the slot is handed over: requests for keys already moved
   * get `-ASK` redirections all that time. After the hand-over, the old owner answers `-MOVED`.
   * @default 0
   */
  holdMs?: number;
  /** Keys moved per `MIGRATE` call. @default 10 */
  batch?: number;
}

/** A running throw-away Redis Cluster; see {@link redisCluster}. */
export interface RedisCluster {
  /** The nodes, index = the number the other methods take. */
  nodes: ClusterNodeAddress[];
  /** The nodes as `host:port` strings (the `REDIS_CLUSTER_NODES` form). */
  seeds: string[];
  /** The hash slot of a key (CRC16 of the `{hash tag}` or of the whole key, mod 16384). */
  slotOf(key: string): number;
  /** Index of the node that currently owns a slot (asks the cluster). */
  ownerOfSlot(slot: number): Promise<number>;
  /** Index of the node that currently owns a key's slot. */
  masterOf(key: string): Promise<number>;
  /** The slots each node owns right now, by node index. */
  slotsByNode(): Promise<number[][]>;
  /** Cluster node id of node `i` (40 hex characters). */
  nodeId(i: number): string;
  /** Runs one command on node `i` with `redis-cli` and returns its raw output. */
  command(i: number, ...args: string[]): Promise<string>;
  /**
   * Moves one slot (with its keys) to node `toNode` the way `redis-cli --cluster reshard` does:
   * `CLUSTER SETSLOT IMPORTING/MIGRATING`, `MIGRATE` of the keys in batches, then
   * `CLUSTER SETSLOT NODE` on every node. Clients see `-ASK` while it runs and `-MOVED` after.
   */
  reshard(slot: number, toNode: number, options?: ReshardOptions): Promise<void>;
  /** Kills node `i` (SIGKILL) and waits until the other nodes flag it as failed. */
  stopNode(i: number): Promise<void>;
  /** Starts node `i` again with its cluster config (its data is gone) and waits for the cluster. */
  startNode(i: number): Promise<void>;
  /** Kills every node and removes the temporary directory. Safe to call twice. */
  stop(): Promise<void>;
}

const HOST = "127.0.0.1";
const SLOTS = 16384;

/** CRC16/XMODEM, the checksum Redis Cluster hashes keys with (Redis Cluster spec, "Keys distribution model"). */
function crc16(data: Buffer): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

/** The hash slot of a key: only the part inside the first non-empty `{...}` is hashed, if any. */
export function keySlot(key: string): number {
  const open = key.indexOf("{");
  if (open !== -1) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) return crc16(Buffer.from(key.slice(open + 1, close))) % SLOTS;
  }
  return crc16(Buffer.from(key)) % SLOTS;
}

/**
 * Shuts down the Redis nodes at `ports` and removes `dir` once the process `pid` is gone. The
 * nodes are processes of their own: a test process that ends without `stop()` (a file that
 * `vitest list` or a `-t` filter imports, which starts the cluster at collection and never runs
 * its `afterAll`; a worker that is killed) would leave them running, each gossiping on its
 * cluster bus, until the machine restarts. Detached, so that the signal that ends the test
 * process's group does not end the watchdog before it has shut them down.
 *
 * @returns the watchdog, for `stop()` to end when it has shut the nodes down itself.
 */
export function watchNodes(pid: number, dir: string, ports: readonly number[]): ChildProcess {
  const script = [
    "parent=$1; dir=$2; shift 2",
    'while kill -0 "$parent" 2>/dev/null; do sleep 1; done',
    `for port in "$@"; do redis-cli -h ${HOST} -p "$port" shutdown nosave >/dev/null 2>&1; done`,
    'rm -rf "$dir"',
  ].join("\n");
  const watchdog = spawn("sh", ["-c", script, "watchdog", String(pid), dir, ...ports.map(String)], {
    stdio: "ignore",
    detached: true,
  });
  watchdog.unref();
  return watchdog;
}

function onPath(program: string): boolean {
  const probe = spawnSync(program, ["--version"], { stdio: "ignore" });
  return !probe.error && probe.status === 0;
}

function redisCli(port: number, args: string[], timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    // -e: a Redis error reply makes redis-cli exit non-zero instead of printing it as data.
    execFile(
      "redis-cli",
      ["-e", "-h", HOST, "-p", String(port), ...args],
      { timeout: timeoutMs },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`redis-cli -p ${port} ${args.join(" ")}: ${stderr.trim() || error.message}`));
        else resolve(stdout.trim());
      },
    );
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`redis cluster: timed out waiting for ${what}`);
    await sleep(100);
  }
}

interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  slots: number[];
}

/** Parses `CLUSTER NODES` (one line per node: id addr flags master ping pong epoch link slots...). */
function parseNodes(text: string): NodeLine[] {
  return text
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => {
      const [id = "", addr = "", flags = "", , , , , , ...ranges] = line.trim().split(" ");
      const port = Number(addr.split("@")[0]?.split(":").pop());
      const slots: number[] = [];
      for (const range of ranges) {
        if (range.startsWith("[")) continue; // a slot being imported/migrated, still owned here
        const [from, to] = range.split("-").map(Number);
        if (from === undefined || Number.isNaN(from)) continue;
        for (let s = from; s <= (to ?? from); s++) slots.push(s);
      }
      return { id, port, flags: flags.split(","), slots };
    });
}

/**
 * Starts a throw-away Redis Cluster of `masters` loopback `redis-server --cluster-enabled yes`
 * processes (no replicas, nothing saved, config in a temp dir), joins them with
 * `redis-cli --cluster create`, and waits for `cluster_state:ok` on every node.
 *
 * Returns `undefined` with a visible `[skip]` message when `redis-server` or `redis-cli` is not
 * on the PATH; in CI (`CI` set) that is an error instead, so a suite never passes by skipping.
 *
 * @example
 * const cluster = await redisCluster({ masters: 3 });
 * describe.skipIf(!cluster)("RedisStore on a cluster", () => {
 *   afterAll(() => cluster?.stop());
 *   it("...", async () => {
 *     const client = new Cluster(cluster!.nodes);
 *   });
 * });
 * @see https://redis.io/docs/latest/operate/oss_and_stack/management/scaling/
 */
export async function redisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster | undefined> {
  const masters = options.masters ?? 3;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  if (!Number.isInteger(masters) || masters < 3) {
    throw new TypeError(`redisCluster: masters must be an integer >= 3, got ${String(masters)}`);
  }
  if (!onPath("redis-server") || !onPath("redis-cli")) {
    if (process.env.CI)
      throw new Error("redis-server and redis-cli must be on the PATH in CI: the cluster suites need them");
    console.warn("[skip] redis-server or redis-cli is not on the PATH: skipping the Redis Cluster suites");
    return undefined;
  }

  const dir = mkdtempSync(join(tmpdir(), "svc-redis-cluster-"));
  // Client ports and cluster-bus ports (`cluster-port`), all distinct free loopback ports.
  const taken = new Set<number>();
  while (taken.size < masters * 2) taken.add(await freePort());
  const actualPorts = [...taken].slice(0, masters);
  const busPorts = [...taken].slice(masters);
  const confs = actualPorts.map((port, i) => {
    const file = join(dir, `node-${i}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        `bind ${HOST}`,
        `cluster-port ${busPorts[i]}`,
        "cluster-enabled yes",
        `cluster-config-file nodes-${i}.conf`,
        `cluster-node-timeout ${nodeTimeoutMs}`,
        `cluster-require-full-coverage ${options.requireFullCoverage ? "yes" : "no"}`,
        `dir ${dir}`,
        'save ""',
        "appendonly no",
        "protected-mode no",
        "loglevel warning",
        `logfile ${join(dir, `node-${i}.log`)}`,
        "",
      ].join("\n"),
    );
    return file;
  });

  const children: (ChildProcess | undefined)[] = actualPorts.map(() => undefined);
  const killAll = () => {
    for (const child of children) child?.kill("SIGKILL");
  };
  process.once("exit", killAll);
  const watchdog = watchNodes(process.pid, dir, actualPorts);

  const launch = async (i: number) => {
    if (children[i]) return;
    const child = spawn("redis-server", [confs[i] as string], { stdio: "ignore" });
    children[i] = child;
    child.once("exit", () => {
      if (children[i] === child) children[i] = undefined;
    });
    const port = actualPorts[i] as number;
    await until(
      `node ${i} (port ${port}) to answer PING`,
      async () => (await redisCli(port, ["PING"], 1000)) === "PONG",
      10_000,
    );
  };

  const nodeOf = (i: number): number => {
    const port = actualPorts[i];
    if (port === undefined) throw new RangeError(`redis cluster: no node ${i} (there are ${masters})`);
    return port;
  };

  const clusterNodes = async (i: number) => parseNodes(await redisCli(nodeOf(i), ["CLUSTER", "NODES"]));
  const running = () => actualPorts.map((_, i) => i).filter((i) => children[i]);
  const stateOk = async (i: number) =>
    (await redisCli(nodeOf(i), ["CLUSTER", "INFO"])).includes("cluster_state:ok");

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener("exit", killAll);
    watchdog.kill();
    await Promise.all(
      children.map(
        (child) =>
          child &&
          new Promise<void>((resolve) => {
            child.once("exit", () => resolve());
            child.kill("SIGKILL");
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await Promise.all(actualPorts.map((_, i) => launch(i)));
    await redisCli(
      nodeOf(0),
      [
        "--cluster",
        "create",
        ...actualPorts.map((p) => `${HOST}:${p}`),
        "--cluster-replicas",
        "0",
        "--cluster-yes",
      ],
      60_000,
    );
    await until("cluster_state:ok on every node", async () =>
      (await Promise.all(running().map(stateOk))).every(Boolean),
    );
    // Every node must also agree on who owns every slot before a client is pointed at it.
    await until("every node to know the full slot map", async () => {
      const views = await Promise.all(running().map(clusterNodes));
      return views.every((view) => view.reduce((n, node) => n + node.slots.length, 0) === SLOTS);
    });
  } catch (error) {
    await stop();
    throw error;
  }

  const ids = await Promise.all(actualPorts.map((port) => redisCli(port, ["CLUSTER", "MYID"])));
  const indexOfPort = (port: number) => actualPorts.indexOf(port);

  const ownerOfSlot = async (slot: number) => {
    const [asker] = running();
    if (asker === undefined) throw new Error("redis cluster: no node is running");
    const owner = (await clusterNodes(asker)).find((node) => node.slots.includes(slot));
    if (!owner) throw new Error(`redis cluster: no node owns slot ${slot}`);
    return indexOfPort(owner.port);
  };

  const cluster: RedisCluster = {
    nodes: actualPorts.map((port) => ({ host: HOST, port })),
    seeds: actualPorts.map((port) => `${HOST}:${port}`),
    slotOf: keySlot,
    ownerOfSlot,
    masterOf: (key) => ownerOfSlot(keySlot(key)),
    async slotsByNode() {
      const [asker] = running();
      if (asker === undefined) throw new Error("redis cluster: no node is running");
      const view = await clusterNodes(asker);
      return actualPorts.map((port) => view.find((node) => node.port === port)?.slots ?? []);
    },
    nodeId(i) {
      nodeOf(i);
      return ids[i] as string;
    },
    command: (i, ...args) => redisCli(nodeOf(i), args),
    async reshard(slot, toNode, reshardOptions = {}) {
      const batch = reshardOptions.batch ?? 10;
      const from = await ownerOfSlot(slot);
      if (from === toNode) return;
      const source = nodeOf(from);
      const target = nodeOf(toNode);
      const s = String(slot);
      // The order redis-cli --cluster reshard uses: IMPORTING on the target first, so a client
      // sent there by -ASK is accepted before the source starts handing keys over.
      await redisCli(target, ["CLUSTER", "SETSLOT", s, "IMPORTING", ids[from] as string]);
      await redisCli(source, ["CLUSTER", "SETSLOT", s, "MIGRATING", ids[toNode] as string]);
      let held = false;
      for (;;) {
        const keys = (await redisCli(source, ["CLUSTER", "GETKEYSINSLOT", s, String(batch)]))
          .split("\n")
          .filter(Boolean);
        if (keys.length === 0) break;
        await redisCli(source, [
          "MIGRATE",
          HOST,
          String(target),
          "",
          "0",
          "5000",
          "REPLACE",
          "KEYS",
          ...keys,
        ]);
        if (!held && reshardOptions.holdMs) {
          held = true;
          await sleep(reshardOptions.holdMs);
        }
      }
      if (!held && reshardOptions.holdMs) await sleep(reshardOptions.holdMs);
      // Hand the slot over: target first, then source, then everybody else (redis-cli's order).
      const order = [toNode, from, ...running().filter((i) => i !== toNode && i !== from)];
      for (const i of order) {
        await redisCli(nodeOf(i), ["CLUSTER", "SETSLOT", s, "NODE", ids[toNode] as string]);
      }
      await until(`every node to see slot ${slot} on node ${toNode}`, async () => {
        const views = await Promise.all(running().map(clusterNodes));
        return views.every((view) => view.find((node) => node.slots.includes(slot))?.port === target);
      });
    },
    async stopNode(i) {
      const child = children[i];
      nodeOf(i);
      if (!child) return;
      await new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      });
      const id = ids[i] as string;
      await until(`the other nodes to flag node ${i} as failed`, async () => {
        const views = await Promise.all(running().map(clusterNodes));
        return views.every((view) => view.find((node) => node.id === id)?.flags.includes("fail") ?? false);
      });
    },
    async startNode(i) {
      nodeOf(i);
      if (children[i]) return;
      await launch(i);
      const id = ids[i] as string;
      await until(`node ${i} to rejoin the cluster`, async () => {
        const views = await Promise.all(running().map(clusterNodes));
        const healthy = views.every((view) =>
          view.every((node) => !node.flags.includes("fail") && !node.flags.includes("fail?")),
        );
        const states = await Promise.all(running().map(stateOk));
        return healthy && states.every(Boolean) && views.every((view) => view.some((node) => node.id === id));
      });
    },
    stop,
  };
  return cluster;
}

/** What {@link connectIoredisCluster} uses of an ioredis `Cluster`. */
interface IoredisClusterClient {
  on(event: "error", listener: () => void): unknown;
  connect(): Promise<unknown>;
  nodes(role: "master"): { ping(): Promise<unknown> }[];
}

/**
 * An ioredis `Cluster` on `cluster`, configured as the stores' READMEs ask (no offline queue, no
 * resend of a command whose connection closed), connected, with a connection open to every
 * master. The test passes the `Cluster` class it imports, so a variant project's pinned ioredis is
 * the one tested. `redisOptions` are added to each node's.
 * @example const io = await connectIoredisCluster(cluster, Cluster);
 * @see https://github.com/redis/ioredis#cluster
 */
export async function connectIoredisCluster<C extends IoredisClusterClient>(
  cluster: RedisCluster,
  Cluster: new (
    nodes: ClusterNodeAddress[],
    options: {
      enableOfflineQueue: false;
      retryDelayOnFailover: 0;
      lazyConnect: true;
      redisOptions: {
        autoResendUnfulfilledCommands: false;
        maxRetriesPerRequest: 0;
        commandTimeout?: number;
      };
    },
  ) => C,
  redisOptions: { commandTimeout?: number } = {},
): Promise<C> {
  const client = new Cluster(cluster.nodes, {
    enableOfflineQueue: false,
    retryDelayOnFailover: 0,
    lazyConnect: true,
    redisOptions: { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0, ...redisOptions },
  });
  client.on("error", () => {});
  await client.connect();
  // ioredis opens each node's connection lazily, on its first command, and with the offline
  // queue off rejects the commands that arrive while it is still connecting: open them now.
  await Promise.all(client.nodes("master").map((node) => node.ping()));
  return client;
}

/**
 * A node-redis `createCluster` client on `cluster`, configured as the stores' READMEs ask (no
 * offline queue), reconnecting every 100 ms, connected. The test passes the `createCluster` it
 * imports, so a variant project's pinned node-redis is the one tested, and names the client type
 * (`RedisClusterType`): relating the function's inferred type to it costs the type checker
 * seconds a file.
 * @example const nr = await connectNodeRedisCluster<RedisClusterType>(cluster, createCluster);
 * @see https://github.com/redis/node-redis/blob/master/docs/clustering.md
 */
export async function connectNodeRedisCluster<C>(
  cluster: RedisCluster,
  createCluster: (options: never) => unknown,
): Promise<C> {
  const client = createCluster({
    rootNodes: cluster.nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
    defaults: { disableOfflineQueue: true, socket: { reconnectStrategy: () => 100 } },
  } as never) as { on(event: "error", listener: () => void): unknown; connect(): Promise<unknown> };
  client.on("error", () => {});
  await client.connect();
  return client as C;
}

/** Ends a node-redis cluster client: `close()` from node-redis 5, `quit()` on 4 (the peer floor). */
export async function closeNodeRedisCluster(client: unknown): Promise<void> {
  const c = client as { close?: () => Promise<void>; quit?: () => Promise<void> } | undefined;
  await (c?.close ? c.close() : c?.quit?.());
}
