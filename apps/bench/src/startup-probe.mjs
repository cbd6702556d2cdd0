// One start-up measurement, in a fresh process: `node startup-probe.mjs <esm|cjs> [<specifier>...]`
// loads each specifier in order (`import()` or `require()`, resolved from here as a consumer's
// code resolves it: through node_modules and each package's `exports`) and prints one JSON line:
// the time the loads took, the CPU time the process spent meanwhile (user + system, all its
// threads: less sensitive than the wall time to what else runs on the machine), the growth of the
// resident set and of the used heap over them, and the time since the process began
// (`performance.now()` counts from its time origin).
import { createRequire } from "node:module";

const [mode, ...specifiers] = process.argv.slice(2);
if (mode !== "esm" && mode !== "cjs") {
  console.error("usage: node startup-probe.mjs <esm|cjs> [<specifier>...]");
  process.exit(2);
}
const require = createRequire(import.meta.url);
const before = process.memoryUsage();
const cpuBefore = process.cpuUsage();
const start = performance.now();
for (const specifier of specifiers) {
  if (mode === "esm") await import(specifier);
  else require(specifier);
}
const end = performance.now();
const cpu = process.cpuUsage(cpuBefore);
const after = process.memoryUsage();
process.stdout.write(
  `${JSON.stringify({
    loadMs: end - start,
    cpuMs: (cpu.user + cpu.system) / 1000,
    sinceOriginMs: end,
    rssBytes: after.rss - before.rss,
    heapBytes: after.heapUsed - before.heapUsed,
  })}\n`,
);
