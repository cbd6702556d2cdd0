import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@svc/test-utils";
import { call } from "./http.js";

/** Debian's Prometheus server (`PROMETHEUS` may name another binary), or undefined. */
export function prometheusBinary(): string | undefined {
  const named = process.env.PROMETHEUS;
  if (named) return existsSync(named) ? named : undefined;
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/bin"]) {
    if (dir && existsSync(join(dir, "prometheus"))) return join(dir, "prometheus");
  }
  return undefined;
}

/**
 * Whether the Prometheus suite can run here. In CI (`CI` set) a missing binary is an error, so the
 * suite never passes by skipping there; elsewhere it is skipped with a visible message.
 */
export function prometheusAvailable(): boolean {
  if (prometheusBinary() !== undefined) return true;
  const message = "prometheus not found (Debian: apt-get install prometheus)";
  if (process.env.CI) throw new Error(`${message}: the Prometheus fleet suite needs it in CI`);
  console.warn(`[skip] ${message}: skipping the Prometheus fleet suite`);
  return false;
}

/** One sample of an instant vector, as `/api/v1/query` returns it. */
export interface Sample {
  metric: Record<string, string>;
  value: number;
}

/** A running Prometheus server scraping a fixed list of targets. */
export interface Prometheus {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The instant vector of a PromQL expression, evaluated now (`GET /api/v1/query`). */
  query(promql: string): Promise<Sample[]>;
  /** What Prometheus wrote to stderr (its log), for a failing test's message. */
  log(): string;
  /** Stops the process and removes its config and storage. */
  stop(): Promise<void>;
}

/**
 * Starts Prometheus as a child process with one scrape job, `fleet`, over `targets` (`host:port`)
 * every second, its config and TSDB in a fresh temp dir, and waits until `/-/ready` answers.
 *
 * @see https://prometheus.io/docs/prometheus/latest/configuration/configuration/#scrape_config
 * @see https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries
 */
export async function startPrometheus(targets: readonly string[]): Promise<Prometheus> {
  const binary = prometheusBinary();
  if (binary === undefined) throw new Error("prometheus not found");
  const dir = mkdtempSync(join(tmpdir(), "svc-prometheus-"));
  const config = join(dir, "prometheus.yml");
  writeFileSync(
    config,
    `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: fleet
    metrics_path: /metrics
    static_configs:
      - targets: [${targets.map((t) => JSON.stringify(t)).join(", ")}]
`,
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString("utf8")).slice(-64 * 1024);
  });
  let running = true;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      running = false;
      resolve();
    }),
  );
  const stop = async () => {
    if (running) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (!running) {
      await stop();
      throw new Error(`prometheus exited at start:\n${stderr.slice(-4000)}`);
    }
    try {
      if ((await call(`${url}/-/ready`, { timeoutMs: 1000 })).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus was not ready within 20 s:\n${stderr.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async query(promql) {
      const reply = await call(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = reply.json<{
        status: string;
        error?: string;
        data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
      }>();
      if (body.status !== "success" || body.data?.resultType !== "vector")
        throw new Error(`query ${promql} → ${reply.status}: ${reply.body}`);
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    log: () => stderr,
    stop,
  };
}
