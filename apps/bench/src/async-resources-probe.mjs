// Loaded by async-resources.mjs into the reference server (`node --import`): an async_hooks init
// hook that, between SIGUSR1 and SIGUSR2, counts the async resources made (promises, tick
// objects, timers, ...) by type, and each promise by the JavaScript frames that made it. On
// SIGUSR2 it prints them after a marker line, as JSON, and stops the server through its SIGTERM
// handler. The hook itself costs every async resource a call: figures of time or instructions
// taken with it loaded mean nothing; the counts are what it is for.
import { createHook } from "node:async_hooks";

let counting = false;
const types = new Map();
const sites = new Map();
/** The frames under async_hooks' own that made a promise, its three nearest. */
function siteOf() {
  const lines = new Error().stack.split("\n").slice(1);
  const own = lines.filter(
    (line) => !line.includes("node:internal/async_hooks") && !line.includes(import.meta.url),
  );
  return own
    .slice(0, 3)
    .map((line) =>
      line
        .trim()
        .replace(/^at /, "")
        .replace(/(file:\/\/)?\/\S*?\/(packages|apps|node_modules)\//, "$2/"),
    )
    .join(" < ");
}
createHook({
  init(_id, type) {
    if (!counting) return;
    types.set(type, (types.get(type) ?? 0) + 1);
    if (type === "PROMISE") {
      const site = siteOf();
      sites.set(site, (sites.get(site) ?? 0) + 1);
    }
  },
}).enable();
process.on("SIGUSR1", () => {
  counting = true;
});
process.on("SIGUSR2", () => {
  counting = false;
  const printed = JSON.stringify({ types: Object.fromEntries(types), promises: [...sites] });
  process.stdout.write(`\n--- probe ---\n${printed}\n`, () => process.kill(process.pid, "SIGTERM"));
});
