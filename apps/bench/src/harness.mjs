// The measuring machinery: one child process per server on a free loopback port, readiness by
// polling, a warm-up, then autocannon with the same settings for every scenario while the
// server's resident set size is sampled from /proc.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";

/** A free TCP port on 127.0.0.1 (the OS picks it; the listener is closed before use). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts `node [nodeArgs] script` with PORT set, and resolves once `readyPath` answers with
 * `readyStatus` (any status when unset). Rejects with the tail of the server's stderr if it
 * exits or never answers.
 *
 * @param {{ script: string, nodeArgs?: string[], env?: Record<string, string | null | undefined>,
 *   readyPath?: string, readyStatus?: number, timeoutMs?: number, cwd?: string }} options
 */
export async function startServer({
  script,
  nodeArgs = [],
  env = {},
  readyPath = "/",
  readyStatus,
  timeoutMs = 60_000,
  cwd,
}) {
  const port = await freePort();
  // A null value removes an inherited variable (REDIS_URL from CI must not switch stores).
  const childEnv = { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1" };
  for (const [name, value] of Object.entries(childEnv)) if (value === null) delete childEnv[name];
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd,
    env: childEnv,
    // stdout goes to /dev/null: servers log like in production without the harness paying for it.
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  let exited = null;
  child.once("exit", (code, signal) => {
    exited = { code, signal };
  });

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) {
      throw new Error(
        `server ${script} exited (${exited.signal ?? exited.code}) before it answered\n${stderr.trim()}`,
      );
    }
    try {
      const response = await fetch(url + readyPath, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (readyStatus === undefined || response.status === readyStatus) break;
      throw new Error(`not ready: ${response.status}`);
    } catch {
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`server ${script} did not answer on ${url} within ${timeoutMs} ms\n${stderr.trim()}`);
      }
      await sleep(100);
    }
  }

  return {
    url,
    pid: child.pid,
    stderr: () => stderr,
    async stop() {
      if (exited) return;
      const done = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await done;
      clearTimeout(timer);
    },
  };
}

/** Resident set size of a process in bytes, or undefined when it cannot be read. */
async function rssOf(pid) {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system) a process has used so far, in milliseconds, from `/proc/<pid>/stat`
 * (fields 14 and 15, in clock ticks of 10 ms on Linux), or undefined when it cannot be read.
 * The difference over the measured run divided by the requests served is the server's CPU cost
 * per request: unlike requests/s it does not depend on how much CPU the load generator and
 * other processes on the same cores leave to the server.
 */
export async function cpuTimeMs(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: split after it.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS every `intervalMs` until stopped; returns the peak seen. */
export function sampleRss(pid, intervalMs = 100) {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const rss = await rssOf(pid);
      if (rss !== undefined && rss > peak) peak = rss;
      await sleep(intervalMs);
    }
  })();
  return async () => {
    running = false;
    await loop;
    return peak || undefined;
  };
}

/**
 * One autocannon run. `request` is `{ method, path, headers, body, setupRequest }`; a
 * `setupRequest(req)` gives each request its own values (a fresh Idempotency-Key).
 * Latencies are also kept unrounded from autocannon's `response` events: its own histogram
 * has whole-millisecond resolution, too coarse for loopback.
 */
export async function load(url, request, { connections, pipelining, duration }) {
  const requests = [
    {
      method: request.method ?? "GET",
      path: request.path,
      headers: request.headers ?? {},
      ...(request.body === undefined ? {} : { body: request.body }),
      ...(request.setupRequest ? { setupRequest: request.setupRequest } : {}),
    },
  ];
  const instance = autocannon({
    url,
    connections,
    pipelining,
    duration,
    requests,
    // Loopback never takes this long; a request that does is reported as a timeout error.
    timeout: 10,
  });
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  instance.on("response", (_client, _status, _bytes, responseTime) => {
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = responseTime;
  });
  const result = await instance;
  const sorted = latencies.subarray(0, count).sort();
  const percentile = (p) =>
    count === 0 ? undefined : sorted[Math.min(count - 1, Math.ceil((p / 100) * count) - 1)];
  result.preciseLatency = {
    p50: percentile(50),
    p90: percentile(90),
    p99: percentile(99),
    max: count === 0 ? undefined : sorted[count - 1],
    count,
  };
  return result;
}

/** The figures the report keeps from an autocannon result. */
export function summarise(result, expectStatus) {
  const completed = result.requests.total ?? 0;
  const seconds = result.duration || 1;
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]),
  );
  const expected = statusCodes[String(expectStatus)] ?? 0;
  const round = (value) => (value === undefined ? undefined : Math.round(value * 1000) / 1000);
  return {
    requestsPerSecond: Math.round(completed / seconds),
    requests: completed,
    latencyMs: {
      p50: round(result.preciseLatency.p50),
      p90: round(result.preciseLatency.p90),
      p99: round(result.preciseLatency.p99),
      max: round(result.preciseLatency.max),
      average: result.latency.average,
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    expectStatus,
    unexpectedStatus: completed - expected,
    durationSeconds: seconds,
  };
}

/**
 * One request through node:http (not fetch: fetch adds `Cache-Control: no-cache` to a
 * conditional request, which rightly defeats a 304), resolving to `{ status, headers, text }`.
 */
export function rawRequest(url, { method = "GET", path, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url + path, { method, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
    req.end(body);
  });
}
