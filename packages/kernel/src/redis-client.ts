import { digest } from "./digest.js";
import { followRedirection, type RedirectingCluster } from "./redis-redirection.js";

/**
 * The client shapes the Redis stores accept, told apart structurally (no client library is
 * imported): an `ioredis` `Redis` or `Cluster` (`call`), a `redis` (node-redis v4+) cluster from
 * `createCluster` (`sendCommand(firstKey, isReadonly, args)`, with its `masters` and
 * `getSlotMaster`), or a `redis` client from `createClient` (`sendCommand(args)`).
 * @see https://github.com/redis/ioredis/blob/main/API.md
 * @see https://github.com/redis/node-redis/blob/master/docs/clustering.md
 *
 * @internal
 */
export type RedisClientShape = "ioredis" | "node-redis cluster" | "node-redis";

/** What {@link redisClientShape} reads of a client. @internal */
interface ShapedClient {
  call?: unknown;
  sendCommand?: unknown;
  masters?: unknown;
  getSlotMaster?: unknown;
}

/**
 * The shape of `client`, or `undefined` when it is none of them. An ioredis `Cluster` is an
 * `ioredis` shape: it routes by the command's keys itself.
 *
 * @internal
 */
export function redisClientShape(client: unknown): RedisClientShape | undefined {
  if (typeof client !== "object" || client === null) return undefined;
  const c = client as ShapedClient;
  if (typeof c.call === "function") return "ioredis";
  if (typeof c.sendCommand !== "function") return undefined;
  return Array.isArray(c.masters) || typeof c.getSlotMaster === "function"
    ? "node-redis cluster"
    : "node-redis";
}

/**
 * Sends one command, its words in `args` (the name first), to the node that owns `key`'s slot on a
 * cluster. @internal
 */
export type RedisSend = (key: string, args: string[]) => Promise<unknown>;

/**
 * The one way a store sends a command on each client shape, or `undefined` for a client of no
 * known shape:
 * - ioredis (`Redis` and `Cluster` alike) routes by the command's keys itself (EVALSHA's KEYS
 *   after numkeys, DEL's or SET's key), which it finds by the command's name in lower case, as
 *   the stores spell them;
 * - a node-redis cluster routes by its first argument, the key whose slot picks the master; every
 *   store command writes, so it runs on the master (isReadonly false), and an `ASK` or `MOVED`
 *   redirection the cluster gave up on is followed ({@link followRedirection});
 * - a node-redis client sends the words as they are.
 *
 * @internal For the Redis stores of `@svc/ratelimit`, `@svc/idempotency` and `@svc/auth`.
 */
export function redisSender(client: unknown): RedisSend | undefined {
  const shape = redisClientShape(client);
  if (shape === "ioredis") {
    const io = client as { call(command: string, ...args: string[]): Promise<unknown> };
    return (_key, [command, ...args]) => io.call(command as string, ...args);
  }
  if (shape === "node-redis cluster") {
    const cluster = client as RedirectingCluster & {
      sendCommand(firstKey: string, isReadonly: boolean, args: string[]): Promise<unknown>;
    };
    return (key, args) =>
      cluster.sendCommand(key, false, args).catch((err: unknown) => followRedirection(cluster, err, args));
  }
  if (shape === "node-redis") {
    const node = client as { sendCommand(args: string[]): Promise<unknown> };
    return (_key, args) => node.sendCommand(args);
  }
  return undefined;
}

/** A Lua script and its SHA1, for `EVALSHA`. @internal */
export interface RedisScript {
  readonly source: string;
  readonly sha: string;
}

/** `source` with its SHA1 (hex), as `EVALSHA` names it. @internal */
export function redisScript(source: string): RedisScript {
  return { source, sha: digest("sha1", source, "hex") };
}

/** Whether Redis answered `NOSCRIPT`: the script is not in its cache, and nothing ran. @internal */
export function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith("NOSCRIPT");
}

/**
 * Runs `script` on the one key `key` (KEYS[1], ARGV `args`) with `EVALSHA`: one round trip. The
 * script cache is empty after a restart, `SCRIPT FLUSH`, a failover, or on a node a slot moved
 * to; Redis then answers `NOSCRIPT` without running anything, so sending the script once in full
 * with `EVAL` (which caches it again) cannot run it twice. `send` may bound each round trip; it
 * must let a `NOSCRIPT` error through as it is.
 * @see https://redis.io/docs/latest/commands/evalsha/
 *
 * @internal
 */
export async function evalScript(
  send: RedisSend,
  script: RedisScript,
  key: string,
  args: readonly string[],
): Promise<unknown> {
  const tail = ["1", key, ...args];
  try {
    return await send(key, ["evalsha", script.sha, ...tail]);
  } catch (err) {
    if (!isNoScript(err)) throw err;
    return send(key, ["eval", script.source, ...tail]);
  }
}
