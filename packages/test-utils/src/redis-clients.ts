import { createRequire } from "node:module";
import { Command as Command5, Redis as IoRedis5 } from "ioredis5";
import { Command as Command6, Redis as IoRedis6 } from "ioredis6";
import { createClient as createClient4, type RedisClientType as RedisClient4 } from "redis4";
import { createClient as createClient5, type RedisClientType as RedisClient5 } from "redis5";
import { createClient as createClient6, type RedisClientType as RedisClient6 } from "redis6";

/** One Redis client major the packages' stores declare support for (their `ioredis`/`redis` peers). */
export interface RedisClientMajor {
  /** `ioredis 6.0.0`, `redis 5.12.1`, ... (the installed version). */
  name: string;
  /**
   * A connected client, configured the way the packages' READMEs ask (no offline queue, no resend
   * of unfulfilled commands), and how to close it.
   */
  connect(url: string): Promise<{
    client: RedisTestClient;
    close(): Promise<void>;
    /**
     * The commands sent through an ioredis client so far that ioredis itself finds no key slot
     * for (its own `Command#getSlot`), as `name args...`: an ioredis Cluster sends such a command
     * to a random master instead of the key's. Empty for node-redis, which is given the key.
     */
    unroutable(): string[];
  }>;
}

/** Any of the clients {@link redisClientMajors} connects. */
export type RedisTestClient = IoRedis5 | IoRedis6 | RedisClient4 | RedisClient5 | RedisClient6;

const require = createRequire(import.meta.url);
const version = (alias: string) => (require(`${alias}/package.json`) as { version: string }).version;

const ioredisOptions = {
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  commandTimeout: 1000,
  lazyConnect: true,
} as const;

function ioredis(
  alias: string,
  create: (url: string) => unknown,
  Command: typeof Command5 | typeof Command6,
): RedisClientMajor {
  return {
    name: `ioredis ${version(alias)}`,
    async connect(url) {
      const client = create(url) as IoRedis5 | IoRedis6;
      client.on("error", () => {});
      await client.connect();
      const sent: (string | number)[][] = [];
      const call = client.call.bind(client) as (...args: unknown[]) => Promise<unknown>;
      // The store gets the client itself with its `call` recorded (an own property over the
      // prototype's method), so every check it makes of the client's options still sees ioredis.
      Object.defineProperty(client, "call", {
        configurable: true,
        value: (...args: unknown[]) => {
          sent.push(args.flat() as (string | number)[]);
          return call(...args);
        },
      });
      return {
        client,
        close: async () => void (await client.quit()),
        unroutable: () =>
          sent
            .filter(([name, ...args]) => new Command(String(name), args).getSlot() === null)
            .map((command) => command.join(" ")),
      };
    },
  };
}

type NodeRedisClient = Exclude<RedisTestClient, IoRedis5 | IoRedis6>;

function nodeRedis(alias: string, create: (url: string) => unknown): RedisClientMajor {
  return {
    name: `redis ${version(alias)}`,
    async connect(url) {
      const client = create(url) as NodeRedisClient;
      client.on("error", () => {});
      await client.connect();
      return { client, close: async () => void (await client.quit()), unroutable: () => [] };
    },
  };
}

/**
 * Every client major inside the packages' peer ranges (`ioredis ^5 || ^6`,
 * `redis ^4.6 || ^5 || ^6`), installed side by side under aliases (root devDependencies), so a
 * store's suite can run once per major.
 *
 * @example
 * describe.each(redisClientMajors())("RedisStore on $name", ({ connect }) => { ... });
 */
export function redisClientMajors(): RedisClientMajor[] {
  return [
    ioredis("ioredis5", (url) => new IoRedis5(url, ioredisOptions), Command5),
    ioredis("ioredis6", (url) => new IoRedis6(url, ioredisOptions), Command6),
    nodeRedis("redis4", (url) => createClient4({ url, disableOfflineQueue: true })),
    nodeRedis("redis5", (url) => createClient5({ url, disableOfflineQueue: true })),
    nodeRedis("redis6", (url) => createClient6({ url, disableOfflineQueue: true })),
  ];
}
