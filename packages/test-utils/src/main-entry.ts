import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * Module specifiers that tie a module to a framework or to a framework's adapter entry: another
 * package's (`@svc/kernel/express`) or the package's own Express adapter (`./express.js`).
 */
const ADAPTER_IMPORT =
  /^(?:express|fastify|hono(?:\/.*)?|@svc\/[^/]+\/(?:express|fastify|fetch|node)|\.{1,2}\/(?:[\w-]+\/)*express\.js)$/;

/** Reads of a framework's objects that only an adapter may do (Express's app, its settings, `res.locals`). */
const FRAMEWORK_READS: readonly { name: string; pattern: RegExp }[] = [
  { name: "Express's app (`.app`)", pattern: /\.app\b/ },
  {
    name: 'an Express setting (`get("trust proxy")`)',
    pattern: /\bget\(\s*["'`](?:trust proxy|case sensitive routing|strict routing)/,
  },
  { name: "Express's `res.locals`", pattern: /\.locals\b/ },
];

/** `text` without its comments (the block and line comments of TypeScript; URLs in strings kept). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of code(text).matchAll(
    /(?:import|export)\s[^;]*?from\s*"([^"]+)"|import\s*\(\s*"([^"]+)"\s*\)/g,
  ))
    found.push((m[1] ?? m[2]) as string);
  return found;
}

/**
 * The source files the main entry (`src/index.ts`) of the package in `dir` loads, itself included,
 * following its relative imports (`./x.js` is `./x.ts`).
 */
export function mainEntryFiles(dir: string): string[] {
  const seen = new Set<string>();
  const pending = [resolve(dir, "src/index.ts")];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of specifiers(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(file), spec.replace(/\.js$/, ".ts"));
      const source = existsSync(target) ? target : join(target, "index.ts");
      if (existsSync(source)) pending.push(source);
    }
  }
  return [...seen].sort();
}

/**
 * What ties the main entry of the package in `dir` to a framework: each file it loads that imports
 * a framework or an adapter entry (`@svc/kernel/express`), or reads Express's app, its settings
 * or `res.locals`, as `<file>: <what>`. Empty for a framework-free main entry.
 */
export function mainEntryFrameworkTies(dir: string): string[] {
  const ties: string[] = [];
  for (const file of mainEntryFiles(dir)) {
    const text = readFileSync(file, "utf8");
    const name = relative(dir, file);
    for (const spec of specifiers(text)) if (ADAPTER_IMPORT.test(spec)) ties.push(`${name}: imports ${spec}`);
    const body = code(text);
    for (const { name: what, pattern } of FRAMEWORK_READS)
      if (pattern.test(body)) ties.push(`${name}: reads ${what}`);
  }
  return ties;
}
