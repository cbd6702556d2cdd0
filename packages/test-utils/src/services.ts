import { spawn } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, Socket } from "node:net";

/**
 * The URL of an external service the integration suites need (`REDIS_URL`, `DATABASE_URL`).
 * In CI (`CI` set) a missing variable is an error, so a suite can never pass by skipping there.
 * On a developer's machine without it, the suite is skipped with a visible message.
 *
 * @example
 * const redisUrl = serviceUrl("REDIS_URL");
 * describe.skipIf(!redisUrl)("RedisStore", () => { ... });
 */
export function serviceUrl(variable: "REDIS_URL" | "DATABASE_URL"): string | undefined {
  const value = process.env[variable];
  if (value) return value;
  if (process.env.CI) throw new Error(`${variable} must be set in CI: the integration suites need it`);
  console.warn(`[skip] ${variable} is not set: skipping the suites that need it`);
  return undefined;
}

/** A key prefix unique to this test run, so runs sharing one Redis never see each other's keys. */
export function uniquePrefix(label: string): string {
  return `svc-test:${label}:${process.pid}:${randomBytes(4).toString("hex")}:`;
}

/** The lowest port {@link freePort} hands out: above the registered services a machine may run. */
const LOWEST_PORT = 20_000;

/**
 * The ports the kernel gives outgoing connections and `listen(0)` (Linux's
 * `ip_local_port_range`; elsewhere, the IANA dynamic range).
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low as number, high as number];
  } catch {
    // not Linux
  }
  return [49_152, 65_535];
}

function bindable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that is free now, for a process started later (a child server, a
 * Redis node, nginx). It is drawn at random below the kernel's ephemeral range: a port from
 * `listen(0)` lies inside that range, and between this call and the later bind any other
 * process's `listen(0)` or outgoing connection could be given it. Below the range only another
 * caller of this function can pick it, one chance in several thousand.
 */
export async function freePort(): Promise<number> {
  const [ephemeralLow, ephemeralHigh] = ephemeralRange();
  const below = [LOWEST_PORT, ephemeralLow - 1] as const;
  const above = [ephemeralHigh + 1, 65_535] as const;
  const [low, high] = below[1] - below[0] >= above[1] - above[0] ? below : above;
  if (high - low >= 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await bindable(low + randomInt(high - low + 1));
      if (port !== undefined) return port;
    }
  }
  const port = await bindable(0);
  if (port === undefined) throw new Error("freePort: no port could be bound on 127.0.0.1");
  return port;
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.setTimeout(300);
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
    socket.connect(port, "127.0.0.1", () => {
      socket.write("PING\r\n");
    });
    socket.once("data", (data) => {
      socket.destroy();
      resolve(data.toString().startsWith("+PONG"));
    });
  });
}

/** A throw-away `redis-server` on its own port that a test may stop and start at will. */
export interface ThrowawayRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a private `redis-server` (not the shared one) for failure tests: stop it, start it again,
 * watch the code under test fail and recover. Keeps nothing on disk.
 */
export async function throwawayRedis(): Promise<ThrowawayRedis> {
  const port = await freePort();
  let child: ReturnType<typeof spawn> | undefined;
  const instance: ThrowawayRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      if (child) return;
      child = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        {
          stdio: "ignore",
        },
      );
      const deadline = Date.now() + 5000;
      while (!(await answers(port))) {
        if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      const running = child;
      if (!running) return;
      child = undefined;
      await new Promise<void>((resolve) => {
        running.once("exit", () => resolve());
        running.kill("SIGKILL");
      });
    },
  };
  await instance.start();
  return instance;
}
