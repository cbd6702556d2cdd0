// The measuring machinery: one child process per server on a free loopback port, readiness by
// polling, a warm-up, then the load generator (wrk when installed, else autocannon) with the same
// settings for every scenario while the server's resident set size is sampled from /proc. Where
// the machine has two cores or more, the server and the generator are pinned to different ones.
import { execFile, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { freePort } from "@svc/test-utils/free-port";
import autocannon from "autocannon";

const run = promisify(execFile);

/**
 * Starts `node [nodeArgs] script` with PORT set, and resolves once `readyPath` answers with
 * `readyStatus` (any status when unset). Rejects with the tail of the server's stderr if it
 * exits or never answers.
 *
 * With `cpu` set, the server runs under `taskset -c <cpu>` (taskset execs node, so `pid` is the
 * server's own). With `command` (a runtime's binary and its arguments), that runs `script` in
 * place of this Node.js and `nodeArgs`.
 *
 * With `metrics` (`{ portEnv, path? }`: the variable naming the port a server serves its
 * Prometheus metrics on, such as `OTEL_EXPORTER_PROMETHEUS_PORT`), that variable is given a free
 * port and the result has `metricsUrl` (`path` defaults to `/metrics`).
 *
 * @param {{ script: string, nodeArgs?: string[], env?: Record<string, string | null | undefined>,
 *   readyPath?: string, readyStatus?: number, timeoutMs?: number, cwd?: string, cpu?: number,
 *   command?: string[], metrics?: { portEnv: string, path?: string } }} options
 */
export async function startServer({
  script,
  nodeArgs = [],
  env = {},
  readyPath = "/",
  readyStatus,
  timeoutMs = 60_000,
  cwd,
  cpu,
  command: runtime,
  metrics,
}) {
  const port = await freePort();
  const metricsPort = metrics === undefined ? undefined : await freePort();
  // A null value removes an inherited variable (REDIS_URL from CI must not switch stores).
  const childEnv = {
    ...process.env,
    ...env,
    ...(metrics === undefined ? {} : { [metrics.portEnv]: String(metricsPort) }),
    PORT: String(port),
    HOST: "127.0.0.1",
  };
  for (const [name, value] of Object.entries(childEnv)) if (value === null) delete childEnv[name];
  const command = [...(runtime ?? [process.execPath, ...nodeArgs]), script];
  if (cpu !== undefined) command.unshift("taskset", "-c", String(cpu));
  const child = spawn(command[0], command.slice(1), {
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
    metricsUrl:
      metrics === undefined ? undefined : `http://127.0.0.1:${metricsPort}${metrics.path ?? "/metrics"}`,
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

// ---------------------------------------------------------------------------------------------
// Load generators and pinning.

/** The absolute path of an executable found on PATH, or undefined. */
export function which(name) {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/**
 * The load generator to use: `requested` ("wrk" or "autocannon") or, when unset, wrk if it is
 * installed (Debian's `wrk`) and autocannon otherwise. Asking for wrk without it is an error.
 * Resolves to `{ name, path?, version, connections }` (32 connections for wrk, as issue 22
 * measured; 50 for autocannon, as before).
 */
export async function chooseGenerator(requested) {
  if (requested !== undefined && requested !== "wrk" && requested !== "autocannon") {
    throw new Error(`--generator must be wrk or autocannon, got ${requested}`);
  }
  const wrk = requested === "autocannon" ? undefined : which("wrk");
  if (requested === "wrk" && !wrk) throw new Error("--generator wrk: no wrk on PATH (apt-get install wrk)");
  if (wrk) {
    // `wrk -v` prints its version line, then the usage, and exits with 1.
    const output = await run(wrk, ["-v"]).then(
      (r) => r.stdout,
      (error) => `${error.stdout ?? ""}`,
    );
    const version = /^wrk (\S+)/m.exec(output)?.[1] ?? "unknown version";
    return { name: "wrk", path: wrk, version, connections: 32 };
  }
  const { version } = JSON.parse(
    await readFile(new URL("../node_modules/autocannon/package.json", import.meta.url), "utf8").catch(() =>
      readFile(new URL("../../../node_modules/autocannon/package.json", import.meta.url), "utf8"),
    ),
  );
  return { name: "autocannon", version, connections: 50 };
}

/** The CPUs this process may run on (`taskset -pc`), or undefined without taskset. */
async function allowedCpus(pid = process.pid) {
  if (!which("taskset")) return undefined;
  try {
    const { stdout } = await run("taskset", ["-pc", String(pid)]);
    const list = /list:\s*([\d,-]+)/.exec(stdout)?.[1];
    if (!list) return undefined;
    const cpus = [];
    for (const part of list.split(",")) {
      const [from, to = from] = part.split("-").map(Number);
      for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
    }
    return { list, cpus };
  } catch {
    return undefined;
  }
}

/**
 * Where the server and the generator run: with taskset and two allowed CPUs or more, the
 * generator on the first and the server on the last (`{ generator: 0, server: 1 }` on two
 * cores), else `{ reason }` saying why nothing is pinned. `restore` gives this process back the
 * CPUs it had (autocannon runs inside it, so it is the process pinned for autocannon).
 */
export async function choosePinning(enabled = true) {
  if (!enabled) return { reason: "--no-pin" };
  const allowed = await allowedCpus();
  if (!allowed) return { reason: "no taskset" };
  if (allowed.cpus.length < 2) return { reason: `one CPU allowed (${allowed.list})` };
  return {
    generator: allowed.cpus[0],
    server: allowed.cpus[allowed.cpus.length - 1],
    allowed: allowed.list,
  };
}

/** Pins every thread of this process to `cpus` (a taskset list such as "0" or "0,1"). */
export async function pinSelf(cpus) {
  await run("taskset", ["-a", "-pc", String(cpus), String(process.pid)]);
}

/**
 * Per-request values: every `{{seq}}` in the body or a header value is replaced by a string that
 * is unique across the whole run (a fresh Idempotency-Key, a unique e-mail address).
 */
export const SEQ = "{{seq}}";
let seqRuns = 0;

function isTemplated(request) {
  return (
    request.body?.includes(SEQ) === true ||
    Object.values(request.headers ?? {}).some((value) => String(value).includes(SEQ))
  );
}

/** A prefix no earlier load of this process used, so sequences never repeat between loads. */
function seqPrefix() {
  seqRuns += 1;
  return `${process.pid}-${Date.now().toString(36)}-${seqRuns}`;
}

/** The request with `{{seq}}` replaced by `seq` (for the preflight and for autocannon). */
export function instantiate(request, seq) {
  const fill = (value) => (typeof value === "string" ? value.replaceAll(SEQ, seq) : value);
  return {
    ...request,
    body: fill(request.body),
    headers: Object.fromEntries(Object.entries(request.headers ?? {}).map(([k, v]) => [k, fill(v)])),
  };
}

/**
 * One load run with the chosen generator. `request` is `{ method, path, headers, body }`;
 * `{{seq}}` in the body or a header is filled in per request. Resolves to the generator's figures
 * in one shape: `{ requests, durationSeconds, latencyMs: { p50, p90, p99, max, average }, errors,
 * timeouts, non2xx, statusCodes, exactStatus }`. `statusCodes` counts every status when
 * `exactStatus` is true (always with autocannon; with wrk only when asked, since its Lua
 * `response()` hook costs the generator a few µs per request); otherwise wrk's own count of
 * responses with a status of 400 or more is what is known.
 */
export function load(url, request, options) {
  return options.generator?.name === "wrk"
    ? loadWrk(url, request, options)
    : loadAutocannon(url, request, options);
}

/**
 * autocannon, in this process. Latencies are kept unrounded from its `response` events: its own
 * histogram has whole-millisecond resolution, too coarse for loopback.
 */
async function loadAutocannon(url, request, { connections, pipelining = 1, duration }) {
  const prefix = seqPrefix();
  let n = 0;
  const requests = [
    {
      method: request.method ?? "GET",
      path: request.path,
      headers: request.headers ?? {},
      ...(request.body === undefined ? {} : { body: request.body }),
      ...(isTemplated(request)
        ? {
            setupRequest: (req) => {
              n += 1;
              const { body, headers } = instantiate(request, `${prefix}-${n}`);
              return { ...req, body, headers };
            },
          }
        : {}),
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
  return {
    requests: result.requests.total ?? 0,
    durationSeconds: result.duration || duration,
    latencyMs: {
      p50: percentile(50),
      p90: percentile(90),
      p99: percentile(99),
      max: count === 0 ? undefined : sorted[count - 1],
      average: result.latency.average,
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]),
    ),
    exactStatus: true,
  };
}

/**
 * A Lua string literal for any text: bytes outside printable ASCII, `"` and the backslash as
 * decimal escapes of three digits (Lua reads up to three: `\34` then `1` would be byte 341).
 */
function luaString(text) {
  let out = '"';
  for (const byte of Buffer.from(String(text), "utf8")) {
    out +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c
        ? String.fromCharCode(byte)
        : `\\${String(byte).padStart(3, "0")}`;
  }
  return `${out}"`;
}

/**
 * The wrk script of one run: the request, `request()` filling in `{{seq}}` when the request is
 * templated, a `response()` hook counting statuses when `exactStatus`, and `done()` printing
 * the figures as one `WRK_JSON {...}` line (latencies in µs from wrk's histogram).
 */
export function wrkScript(request, { exactStatus, prefix }) {
  const lines = [
    "-- generated by apps/bench/src/harness.mjs",
    `wrk.method = ${luaString(request.method ?? "GET")}`,
    `wrk.path = ${luaString(request.path)}`,
  ];
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  }
  if (request.body !== undefined) lines.push(`wrk.body = ${luaString(request.body)}`);
  lines.push(
    "local threads = {}",
    "tid = 0",
    "function setup(thread)",
    '  thread:set("tid", #threads + 1)',
    "  table.insert(threads, thread)",
    "end",
  );
  if (isTemplated(request)) {
    // string.gsub with a function replacement: the sequence is never read as a pattern.
    lines.push(
      `local prefix = ${luaString(prefix)}`,
      "local n = 0",
      "local function fill(text, seq)",
      `  return (string.gsub(text, "{{seq}}", function() return seq end))`,
      "end",
      "function request()",
      "  n = n + 1",
      '  local seq = prefix .. "-" .. tid .. "-" .. n',
      "  local headers = {}",
      "  for name, value in pairs(wrk.headers) do headers[name] = fill(value, seq) end",
      "  local body = wrk.body and fill(wrk.body, seq) or nil",
      "  return wrk.format(wrk.method, wrk.path, headers, body)",
      "end",
    );
  }
  lines.push("statuses = {}");
  if (exactStatus) {
    lines.push(
      "function response(status, headers, body)",
      "  statuses[status] = (statuses[status] or 0) + 1",
      "end",
    );
  }
  lines.push(
    "function done(summary, latency, requests)",
    "  local all = {}",
    "  for _, thread in ipairs(threads) do",
    '    for status, count in pairs(thread:get("statuses") or {}) do',
    "      all[status] = (all[status] or 0) + count",
    "    end",
    "  end",
    "  local codes = {}",
    "  for status, count in pairs(all) do",
    "    codes[#codes + 1] = string.format('\"%d\":%.0f', status, count)",
    "  end",
    "  local e = summary.errors",
    "  io.write(string.format(",
    '    \'WRK_JSON {"durationUs":%.0f,"requests":%.0f,"bytes":%.0f,\' ..',
    '    \'"errors":{"connect":%.0f,"read":%.0f,"write":%.0f,"status":%.0f,"timeout":%.0f},\' ..',
    '    \'"latencyUs":{"p50":%.0f,"p90":%.0f,"p99":%.0f,"max":%.0f,"mean":%.3f},\' ..',
    "    '\"statusCodes\":{%s}}\\n',",
    "    summary.duration, summary.requests, summary.bytes,",
    "    e.connect, e.read, e.write, e.status, e.timeout,",
    "    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,",
    '    table.concat(codes, ",")))',
    "end",
    "",
  );
  return lines.join("\n");
}

/** wrk's duration argument: whole seconds, at least one. */
export function wrkSeconds(duration) {
  return Math.max(1, Math.round(duration));
}

/**
 * wrk in a child process (one thread, pinned to `cpu` when given). wrk has no pipelining; its
 * duration is whole seconds.
 */
async function loadWrk(url, request, { generator, connections, duration, cpu, exactStatus = false }) {
  const script = join(tmpdir(), `svc-bench-wrk-${process.pid}-${Date.now().toString(36)}.lua`);
  await writeFile(script, wrkScript(request, { exactStatus, prefix: seqPrefix() }));
  const seconds = wrkSeconds(duration);
  const args = ["-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", "10s", "-s", script, url];
  const command =
    cpu === undefined ? [generator.path, ...args] : ["taskset", "-c", String(cpu), generator.path, ...args];
  let stdout;
  let stderr;
  try {
    ({ stdout, stderr } = await run(command[0], command.slice(1), { timeout: (seconds + 30) * 1000 }));
  } catch (error) {
    throw new Error(`wrk failed: ${error.message}\n${error.stdout ?? ""}${error.stderr ?? ""}`.trim());
  } finally {
    await rm(script, { force: true });
  }
  const line = /^WRK_JSON (.*)$/m.exec(stdout)?.[1];
  if (!line) throw new Error(`wrk printed no figures:\n${stdout}${stderr}`.trim());
  const figures = JSON.parse(line);
  const requests = figures.requests;
  const ms = (us) => (requests === 0 ? undefined : us / 1000);
  const { connect, read, write, status, timeout } = figures.errors;
  return {
    requests,
    durationSeconds: figures.durationUs / 1e6,
    latencyMs: {
      p50: ms(figures.latencyUs.p50),
      p90: ms(figures.latencyUs.p90),
      p99: ms(figures.latencyUs.p99),
      max: ms(figures.latencyUs.max),
      average: ms(figures.latencyUs.mean),
    },
    // Socket errors; wrk's timeouts are counted apart, as autocannon's are.
    errors: connect + read + write,
    timeouts: timeout,
    // wrk counts a response as a status error when its status is 400 or more.
    non2xx: exactStatus
      ? Object.entries(figures.statusCodes).reduce((n, [code, count]) => (code[0] === "2" ? n : n + count), 0)
      : status,
    statusCodes: figures.statusCodes,
    statusErrors: status,
    exactStatus,
  };
}

/**
 * The figures the report keeps from a load result. `unexpectedStatus` counts responses whose
 * status is not `expectStatus`: exactly when every status was counted, else (wrk without its
 * `response()` hook) the responses with a status of 400 or more.
 */
export function summarise(result, expectStatus) {
  const completed = result.requests;
  const seconds = result.durationSeconds || 1;
  const round = (value) => (value === undefined ? undefined : Math.round(value * 1000) / 1000);
  const unexpectedStatus = result.exactStatus
    ? completed - (result.statusCodes[String(expectStatus)] ?? 0)
    : result.statusErrors;
  return {
    requestsPerSecond: Math.round(completed / seconds),
    requests: completed,
    latencyMs: {
      p50: round(result.latencyMs.p50),
      p90: round(result.latencyMs.p90),
      p99: round(result.latencyMs.p99),
      max: round(result.latencyMs.max),
      average: round(result.latencyMs.average),
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: result.statusCodes,
    statusCounting: result.exactStatus ? "every status" : "status >= 400 (wrk)",
    expectStatus,
    unexpectedStatus,
    durationSeconds: Math.round(seconds * 1000) / 1000,
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
