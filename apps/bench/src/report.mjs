// The Markdown table and JSON document of a run.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

const mb = (bytes) => (bytes ? (bytes / 1024 / 1024).toFixed(0) : "–");
const ms = (value) => (typeof value === "number" ? value.toFixed(value < 10 ? 2 : 1) : "–");

/** Adds `ratios` (requests/s relative to each measured baseline of the group) to every result. */
export function addRatios(results, groups) {
  const byId = new Map(results.map((r) => [r.id, r]));
  for (const result of results) {
    if (result.status !== "ok") continue;
    const group = groups.find((g) => g.id === result.group);
    result.ratios = {};
    for (const baseline of group?.baselines ?? []) {
      const base = byId.get(baseline);
      if (base?.status !== "ok" || !base.summary.requestsPerSecond) continue;
      result.ratios[baseline] = {
        requestsPerSecond: round(result.summary.requestsPerSecond / base.summary.requestsPerSecond),
        p99: base.summary.latencyMs.p99
          ? round(result.summary.latencyMs.p99 / base.summary.latencyMs.p99)
          : null,
      };
    }
  }
}

function round(value) {
  return Math.round(value * 100) / 100;
}

/** Which load generator ran, how, and where the server and it were pinned. */
export function generatorLine({ generator = { name: "autocannon" }, connections, pipelining, pinning }) {
  const how =
    generator.name === "wrk"
      ? `**wrk** ${generator.version ?? ""} (${generator.threads ?? 1} thread, ${connections} connections, ` +
        "latency percentiles from its histogram, statuses ≥ 400 counted during the measured run)"
      : `**autocannon** ${generator.version ?? ""} (in the harness process, ${connections} connections, ` +
        `pipelining ${pipelining}, every status counted)`;
  const where =
    pinning?.server !== undefined
      ? `pinned with taskset: server on CPU ${pinning.server}, ${generator.name} on CPU ${pinning.generator}`
      : `not pinned${pinning?.reason ? ` (${pinning.reason})` : ""}`;
  return `Load generator: ${how}; ${where}.`;
}

export function markdown(run, groups) {
  const lines = [];
  const { settings, machine } = run;
  lines.push(
    `# Load benchmark${settings.quick ? " (--quick: proves the harness, figures mean nothing)" : ""}`,
  );
  lines.push("");
  lines.push(
    `${run.startedAt} · Node ${machine.node} · ${machine.cpus} × ${machine.cpuModel} · ${machine.memoryGiB} GiB · ` +
      `load average at start ${machine.loadAverage.join(" / ")}`,
  );
  lines.push("", generatorLine(settings));
  lines.push(
    "",
    `${settings.warmupSeconds} s warm-up (every status counted: one unexpected status fails the scenario) ` +
      `then ${settings.durationSeconds} s measured per scenario; ` +
      "each server in its own process; peak RSS sampled every 100 ms during the measured run; " +
      "CPU µs/req: the server process's user + system CPU time over the measured run divided by its requests; " +
      "server CPU %: that time over the run's duration (well under 100 %: the server did not get a whole core).",
  );
  for (const group of groups) {
    const rows = run.results.filter((r) => r.group === group.id);
    if (rows.length === 0) continue;
    const baselines = group.baselines.filter((b) => rows.some((r) => r.id === b && r.status === "ok"));
    lines.push("", `## ${group.title}`, "");
    const header = [
      "Scenario",
      "req/s",
      "p50 ms",
      "p99 ms",
      "CPU µs/req",
      "server CPU %",
      "errors",
      "non-2xx",
      "peak RSS MB",
    ];
    for (const b of baselines) header.push(`× ${b}`);
    lines.push(
      `| ${header.join(" | ")} |`,
      `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
    );
    for (const r of rows) {
      if (r.status !== "ok") {
        const cells = [`${r.id}: ${r.label}`, `${r.status}: ${r.reason.split("\n")[0]}`];
        while (cells.length < header.length) cells.push("");
        lines.push(`| ${cells.join(" | ")} |`);
        continue;
      }
      const s = r.summary;
      const cells = [
        `${r.id}: ${r.label}`,
        s.requestsPerSecond.toLocaleString("en-US"),
        ms(s.latencyMs.p50),
        ms(s.latencyMs.p99),
        s.cpuMicrosPerRequest === undefined ? "–" : String(s.cpuMicrosPerRequest),
        s.serverCpuPercent === undefined ? "–" : String(s.serverCpuPercent),
        String(s.errors),
        s.expectStatus === 304 ? `${s.non2xx} (304 expected)` : String(s.non2xx),
        mb(r.peakRssBytes),
      ];
      for (const b of baselines) {
        const ratio = r.ratios?.[b];
        cells.push(b === r.id ? "1.00" : ratio ? ratio.requestsPerSecond.toFixed(2) : "–");
      }
      lines.push(`| ${cells.join(" | ")} |`);
    }
  }
  const failed = run.results.filter((r) => r.status === "failed");
  if (failed.length > 0) {
    lines.push("", "## Failures", "");
    for (const f of failed) lines.push(`- ${f.id}: ${f.reason}`);
  }
  lines.push("");
  return lines.join("\n");
}

export async function writeReport(dir, name, run, groups) {
  await mkdir(dir, { recursive: true });
  const md = markdown(run, groups);
  await writeFile(join(dir, `${name}.json`), `${JSON.stringify(run, null, 2)}\n`);
  await writeFile(join(dir, `${name}.md`), md);
  return md;
}
