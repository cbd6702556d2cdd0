import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Socket } from "node:net";
import { freePort } from "./free-port.mjs";

export { freePort };

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
