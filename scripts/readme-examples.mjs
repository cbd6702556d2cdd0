// README examples as test fixtures: every ```ts / ```typescript / ```js / ```mjs block of a README
// is written out as its own module in a consumer project (one that installed the packed
// tarballs), type-checked in ONE compiler run for all of them, and the blocks marked runnable are
// started and sent real requests. The marker is an HTML comment on the line(s) just before the
// fence (blank lines between are allowed):
//
//   (no marker)                      a whole module: imports what it uses, compiles as it is.
//   <!-- example: fragment -->       a piece of a program: compiled after a prelude that imports,
//                                    from the README's own package (its ./express entry first, then main and ./node), @svc/errors and @svc/kernel, each export
//                                    the block uses without declaring it, and declares the
//                                    Express names it uses without declaring them (`express`,
//                                    `app`, `req`, `res`, `next`). Lines after the first line of
//                                    the comment are more prelude (`declare const users: Users;`).
//   <!-- example: run                a program that serves requests: compiled (with the same
//   GET /employees -> 200            prelude as a fragment), started with its `listen(port)`
//   POST /x Accept: text/csv -> 406  moved to a free port (a preloaded module patches
//   POST /y < {"a":1} -> 201         net.Server#listen and reports the port over IPC), sent each
//   -->                              request line (`METHOD /path [Header: value]... [< body] ->
//                                    status`; `{{unique}}` is one value per run), stopped. The
//                                    comment's other lines are prelude.
//   <!-- example: run express5 ...   the same, for a program that needs Express 5 (an async
//                                    handler's rejection reaching next()): not run against
//                                    Express 4 (the registry suite runs the examples on both).
//   <!-- example: skip <reason> -->  not compiled; the reason is listed in the summary.
//
// And an @svc package a block imports must be named by one of the README's `npm install` lines:
// the consumer project here has every package, a reader has only what the README said to install.
// So must every other package a run block (an app a reader starts as it is) imports, Express
// aside (the framework each example plugs into).
//
// A block that creates an Express app switches `X-Powered-By` off (`app.disable("x-powered-by")`:
// it tells every client the framework, and a reader copies the example as it is), or says why it
// keeps it in a comment `// keeps X-Powered-By: <reason>`; a run block whose response carries the
// header fails.
//
// The compiler settings are a strict consumer's: `strict`, `noUncheckedIndexedAccess`,
// `exactOptionalPropertyTypes`, `module`/`moduleResolution: nodenext` (`skipLibCheck`, since the
// smoke test checks the packages' declarations without it).
import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { builtinModules, createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const LANGS = new Map([
  ["ts", ".ts"],
  ["typescript", ".ts"],
  ["mts", ".mts"],
  ["js", ".js"],
  ["javascript", ".js"],
  ["mjs", ".mjs"],
]);

/** Express names a fragment may use without declaring them. */
const EXPRESS_PRELUDE = new Map([
  ["express", 'import express from "express";'],
  ["app", 'declare const app: import("express").Express;'],
  ["req", 'declare const req: import("express").Request;'],
  ["res", 'declare const res: import("express").Response;'],
  ["next", 'declare const next: import("express").NextFunction;'],
]);

/**
 * The code blocks of a README: `{ file, line, lang, code, kind, prelude, requests, reason }`,
 * `line` being the README line of the block's first code line.
 */
export function extractBlocks(markdown, file) {
  const lines = markdown.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]);
    if (!open) continue;
    const fence = open[2];
    const lang = open[3].toLowerCase();
    let end = i + 1;
    while (end < lines.length && !lines[end].trimStart().startsWith(fence)) end++;
    if (LANGS.has(lang)) {
      const block = {
        file,
        line: i + 2,
        lang,
        code: lines.slice(i + 1, end).join("\n"),
        ...parseMarker(lines, i),
      };
      blocks.push(block);
    }
    i = end;
  }
  return blocks;
}

function parseMarker(lines, fenceIndex) {
  let j = fenceIndex - 1;
  while (j >= 0 && lines[j].trim() === "") j--;
  if (j < 0 || !lines[j].trimEnd().endsWith("-->")) return { kind: "module", prelude: [], requests: [] };
  let start = j;
  while (start >= 0 && !lines[start].includes("<!--")) start--;
  if (start < 0 || !/^\s*<!--\s*example:/.test(lines[start]))
    return { kind: "module", prelude: [], requests: [] };
  const text = lines
    .slice(start, j + 1)
    .join("\n")
    .replace(/^\s*<!--\s*example:\s*/, "")
    .replace(/\s*-->\s*$/, "");
  const [head = "", ...rest] = text.split("\n");
  const [kind = "", ...words] = head.trim().split(/\s+/);
  const markerLine = start + 1;
  if (kind === "skip") {
    const reason = words.join(" ").trim();
    if (!reason) throw new Error(`line ${markerLine}: <!-- example: skip --> needs a reason`);
    return { kind, reason, prelude: [], requests: [] };
  }
  if (kind === "fragment") return { kind, prelude: rest, requests: [] };
  if (kind === "run") {
    const isRequest = (r) => /^[A-Z]+\s+\//.test(r.trim());
    const requests = rest.filter(isRequest).map((r) => parseRequest(r.trim(), markerLine));
    if (requests.length === 0) throw new Error(`line ${markerLine}: <!-- example: run --> lists no request`);
    // `run express5`: the program relies on Express 5 (an async handler's rejection reaching
    // next()); a run against Express 4 lists it as skipped instead of starting it.
    return {
      kind,
      prelude: rest.filter((r) => !isRequest(r)),
      requests,
      express5: words.includes("express5"),
    };
  }
  throw new Error(`line ${markerLine}: unknown example marker "${kind}" (module, fragment, run, skip)`);
}

function parseRequest(text, markerLine) {
  const m = /^([A-Z]+)\s+(\/\S*)((?:\s+[A-Za-z0-9-]+:\s*[^<]*?)*)(?:\s+<\s+(.*?))?\s*->\s*(\d{3})$/.exec(
    text,
  );
  if (!m)
    throw new Error(
      `line ${markerLine}: cannot read request "${text}" (METHOD /path [Header: value]... [< body] -> status)`,
    );
  const headers = {};
  for (const h of m[3].trim() ? m[3].trim().split(/\s+(?=[A-Za-z0-9-]+:\s)/) : []) {
    const at = h.indexOf(":");
    headers[h.slice(0, at).trim()] = h.slice(at + 1).trim();
  }
  const request = { method: m[1], path: m[2], headers, status: Number(m[5]) };
  return m[4] === undefined ? request : { ...request, body: m[4] };
}

/**
 * The @svc packages a README's blocks import that none of its `npm install` lines names: a
 * reader who installs what the README says gets TS2307 there, though the consumer project here,
 * which has every package, compiles the block.
 */
export function uninstalledImports(markdown, blocks) {
  const installed = new Set();
  for (const line of markdown.split("\n")) {
    const command = /^\s*npm\s+(?:install|i|add)\s+([^#]*)/.exec(line)?.[1];
    for (const word of command?.trim().split(/\s+/) ?? []) {
      if (word && !word.startsWith("-")) installed.add(word.replace(/(?<=.)@.*$/, ""));
    }
  }
  if (installed.size === 0) return [];
  const problems = [];
  for (const block of blocks) {
    if (block.kind === "skip") continue;
    const lines = block.code.split("\n");
    lines.forEach((text, i) => {
      for (const m of text.matchAll(/(?:from\s+|import\s+|require\()["']((?:@[^/"']+\/)?[^/"'.][^/"']*)/g)) {
        const name = m[1];
        // Every @svc package; in a run block, every package but Node's own and Express.
        const needed =
          name.startsWith("@svc/") ||
          (block.kind === "run" && !name.startsWith("node:") && !BUILTINS.has(name) && name !== "express");
        if (needed && !installed.has(name))
          problems.push(
            `${block.file}:${block.line + i}: imports ${name}, which no \`npm install\` line of the README names`,
          );
      }
    });
  }
  return problems;
}

const BUILTINS = new Set(builtinModules);

/**
 * The blocks that create an Express app (`express()`) and neither switch `X-Powered-By` off
 * (`app.disable("x-powered-by")`, `app.set("x-powered-by", false)`) nor say why they keep it
 * (`// keeps X-Powered-By: <reason>`). The header names the framework to every client (OWASP's
 * HTTP headers cheat sheet: remove it), and a README's app is copied as it is.
 */
export function poweredByApps(blocks) {
  const problems = [];
  for (const block of blocks) {
    if (block.kind === "skip") continue;
    const at = block.code.split("\n").findIndex((text) => /(?<![\w.$])express\(\s*\)/.test(text));
    if (at === -1) continue;
    const off =
      /\.disable\(\s*["']x-powered-by["']\s*\)/i.test(block.code) ||
      /\.set\(\s*["']x-powered-by["']\s*,\s*false\s*\)/i.test(block.code) ||
      /\/\/\s*keeps X-Powered-By:\s*\S/i.test(block.code);
    if (!off)
      problems.push(
        `${block.file}:${block.line + at}: creates an Express app without app.disable("x-powered-by") (or a comment "// keeps X-Powered-By: <reason>")`,
      );
  }
  return problems;
}

const escapeName = (s) => s.replace(/[$]/g, "\\$");
const uses = (code, name) => new RegExp(`(?<![.\\w$])${escapeName(name)}(?![\\w$])`).test(code);
function declares(code, name) {
  const n = escapeName(name);
  return (
    new RegExp(`\\b(?:const|let|var|function|class|type|interface|enum)\\s+${n}(?![\\w$])`).test(code) ||
    new RegExp(`\\bimport\\s+(?:type\\s+)?${n}\\b`).test(code) ||
    new RegExp(`\\bimport\\s+\\*\\s+as\\s+${n}\\b`).test(code) ||
    new RegExp(`\\bimport[^;]*?\\{[^}]*(?<![\\w$])${n}(?![\\w$])[^}]*\\}`).test(code) ||
    new RegExp(`\\b(?:const|let|var)\\s*\\{[^}]*(?<![\\w$:])${n}(?![\\w$])[^}]*\\}\\s*=`).test(code)
  );
}

/**
 * The module a block is compiled as: `{ source, offset }`, `offset` being the number of prelude
 * lines in front of the README's code. `exportsOf` maps a package name to its value exports.
 */
/**
 * Where a fragment's undeclared names are imported from, first match first: the README's own
 * package's Express entry (fragments are pieces of an Express program, and each package's Express
 * middleware lives there), its main entry, its `node:http` entry, then `@svc/errors` (Express
 * entry, then main) and `@svc/kernel`.
 */
function fragmentSources(packageName) {
  const own = packageName ? [`${packageName}/express`, packageName, `${packageName}/node`] : [];
  return [...new Set([...own, "@svc/errors/express", "@svc/errors", "@svc/kernel"])];
}

export function blockSource(block, packageName, exportsOf) {
  if (block.kind === "module") return { source: `${block.code}\n`, offset: 0 };
  const code = `${block.prelude.join("\n")}\n${block.code}`;
  const head = [];
  const taken = new Set();
  for (const pkg of fragmentSources(packageName)) {
    if (!pkg) continue;
    const names = (exportsOf.get(pkg) ?? []).filter(
      (name) => !taken.has(name) && uses(code, name) && !declares(code, name),
    );
    for (const name of names) taken.add(name);
    if (names.length > 0) head.push(`import { ${names.join(", ")} } from ${JSON.stringify(pkg)};`);
  }
  for (const [name, line] of EXPRESS_PRELUDE) {
    if (!taken.has(name) && uses(code, name) && !declares(code, name)) head.push(line);
  }
  head.push(...block.prelude, "export {};");
  return { source: `${head.join("\n")}\n${block.code}\n`, offset: head.length };
}

export const compilerOptions = {
  module: "nodenext",
  moduleResolution: "nodenext",
  target: "es2022",
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  moduleDetection: "force",
  allowJs: true,
  checkJs: true,
  types: ["node"],
  skipLibCheck: true,
  outDir: "out",
  rootDir: ".",
  noEmitOnError: false,
};

/** A block that loads Express: `express` itself or an adapter entry of a package. */
const LOADS_EXPRESS = /\bfrom\s+["'](?:express|@svc\/[\w-]+\/express)["']/;

/**
 * Type-checks (one compiler run) and runs the README examples of `readmes` (`[{ path, packageName }]`)
 * inside `project`, a directory whose node_modules has the packages, express, @types/express,
 * ioredis, redis and @types/node. Returns `{ checked, run, skipped, failures }`; each failure
 * names the README file and line. `typecheck: false` compiles without checking types and runs;
 * `expressMajor: 4` leaves out the blocks marked `run express5`, and runs only the blocks that load
 * Express (`express` or an `@svc/<package>/express` entry): the others ran on Express 5 already,
 * and nothing in them changes with Express's major.
 */
export async function checkReadmeExamples({
  readmes,
  project,
  root,
  tsc,
  env = {},
  log = console.log,
  typecheck = true,
  expressMajor = 5,
}) {
  const dir = join(project, "readme-examples");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "svc-readme-examples", private: true, type: "module" }),
  );
  const failures = [];
  const skipped = [];
  const files = new Map(); // generated path (relative to dir) -> { block, offset }
  const blocks = [];
  for (const { path, packageName } of readmes) {
    const shown = relative(root, path);
    let found;
    try {
      found = extractBlocks(readFileSync(path, "utf8"), shown);
    } catch (err) {
      failures.push(`${shown}: ${err.message}`);
      continue;
    }
    for (const block of found) blocks.push({ ...block, packageName });
    failures.push(...uninstalledImports(readFileSync(path, "utf8"), found));
    failures.push(...poweredByApps(found));
  }
  const exportsOf = await loadExports(
    dir,
    [
      ...new Set(
        blocks
          .filter((b) => b.kind === "fragment" || b.kind === "run")
          .flatMap((b) => fragmentSources(b.packageName)),
      ),
    ].filter(Boolean),
  );
  for (const block of blocks) {
    if (block.kind === "skip") {
      skipped.push(`${block.file}:${block.line} (${block.reason})`);
      continue;
    }
    const folder = block.file.replace(/\/?README\.md$/i, "").replace(/[^\w.-]+/g, "_") || "root";
    const name = `${folder}/line-${block.line}${LANGS.get(block.lang)}`;
    const { source, offset } = blockSource(block, block.packageName, exportsOf);
    mkdirSync(join(dir, folder), { recursive: true });
    writeFileSync(join(dir, name), source);
    files.set(name, { block, offset, source });
  }
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions, files: [...files.keys()] }, null, 2),
  );
  const bad = new Set();
  const compileStart = Date.now();
  if (files.size > 0) {
    let output = "";
    try {
      // Without `typecheck`, the blocks are only compiled to run (another framework version's
      // types may differ where the code does not): `--noCheck` emits without checking.
      execFileSync(
        "node",
        [tsc, "-p", "tsconfig.json", "--pretty", "false", ...(typecheck ? [] : ["--noCheck"])],
        {
          cwd: dir,
          encoding: "utf8",
          stdio: "pipe",
        },
      );
    } catch (err) {
      output = `${err.stdout ?? ""}${err.stderr ?? ""}`;
      if (!output.trim()) output = String(err.message);
    }
    for (const diagnostic of splitDiagnostics(output)) {
      const m = /^(.+?)\((\d+),(\d+)\): (error [\s\S]*)$/.exec(diagnostic);
      const entry = m && files.get(m[1].replaceAll("\\", "/"));
      if (!m || !entry) {
        failures.push(`tsc: ${diagnostic}`);
        continue;
      }
      const { block, offset } = entry;
      const at = Number(m[2]) - offset;
      const where =
        at >= 1
          ? `${block.file}:${block.line + at - 1}:${m[3]}`
          : `${block.file}:${block.line} (prelude line ${m[2]})`;
      failures.push(`${where} (block at line ${block.line}): ${m[4]}`);
      bad.add(block);
    }
  }
  const compileMs = Date.now() - compileStart;
  const runStart = Date.now();
  let ran = 0;
  let withoutExpress = 0;
  const preload = join(dir, "listen-anywhere.mjs");
  writeFileSync(preload, PRELOAD);
  for (const [name, { block, source }] of files) {
    if (block.kind !== "run") continue;
    if (block.express5 && expressMajor < 5) {
      skipped.push(`${block.file}:${block.line} (run express5: not run on Express ${expressMajor})`);
      continue;
    }
    if (expressMajor < 5 && !LOADS_EXPRESS.test(source)) {
      withoutExpress++;
      continue;
    }
    if (bad.has(block)) {
      failures.push(`${block.file}:${block.line}: not run, it does not compile`);
      continue;
    }
    const out = join(dir, "out", name.replace(/\.ts$/, ".js").replace(/\.mts$/, ".mjs"));
    const problems = await runBlock(out, block, env, preload);
    for (const p of problems) failures.push(`${block.file}:${block.line} (run): ${p}`);
    if (problems.length === 0) ran++;
    log(
      `readme: ${block.file}:${block.line} ran, ${block.requests.length} request(s) ${problems.length === 0 ? "ok" : "FAILED"}`,
    );
  }
  const byPlace = (a, b) => a.localeCompare(b, "en", { numeric: true });
  return {
    found: blocks.length,
    checked: files.size,
    typecheck,
    run: ran,
    withoutExpress,
    skipped,
    failures: failures.sort(byPlace),
    seconds: { compile: compileMs / 1000, run: (Date.now() - runStart) / 1000 },
  };
}

function splitDiagnostics(output) {
  const out = [];
  for (const line of output.split("\n")) {
    if (!line.trim()) continue;
    if (/^\s/.test(line) && out.length > 0) out[out.length - 1] += `\n${line}`;
    else out.push(line);
  }
  return out;
}

async function loadExports(dir, names) {
  const map = new Map();
  if (names.length === 0) return map;
  const script = `const out = {}; for (const n of ${JSON.stringify(names)}) { try { out[n] = Object.keys(await import(n)); } catch { out[n] = []; } } console.log(JSON.stringify(out));`;
  const result = JSON.parse(
    execFileSync("node", ["--input-type=module", "-e", script], { cwd: dir, encoding: "utf8" }),
  );
  for (const [name, keys] of Object.entries(result))
    map.set(
      name,
      keys.filter((k) => k !== "default"),
    );
  return map;
}

const PRELOAD = `
import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\\d+$/.test(args[0]))) args[0] = 0;
  else if (args[0] && typeof args[0] === "object" && "port" in args[0]) args[0] = { ...args[0], port: 0, host: "127.0.0.1" };
  this.once("listening", () => {
    const address = this.address();
    if (address && typeof address === "object") process.send?.({ port: address.port });
  });
  return listen.apply(this, args);
};
`;

/**
 * One request line sent over `node:http`, its fields as written: `fetch` would drop a `Host`
 * (a forbidden header name) and send the server's own, so a line about another host would pass
 * untested.
 */
function send(port, method, path, fill, headers, body) {
  return new Promise((resolve, reject) => {
    // What fetch sent by default (it decoded a coded body; no Accept-Encoding asks for none).
    const fields = { Host: `127.0.0.1:${port}`, Accept: "*/*", "Accept-Language": "*" };
    if (body !== undefined) fields["Content-Type"] = "text/plain;charset=UTF-8";
    for (const [name, value] of Object.entries(headers)) {
      for (const given of Object.keys(fields))
        if (given.toLowerCase() === name.toLowerCase()) delete fields[given];
      fields[name] = fill(value);
    }
    const content = body === undefined ? undefined : Buffer.from(fill(body));
    if (content !== undefined) fields["Content-Length"] = String(content.byteLength);
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path, headers: fields, timeout: 10_000 },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("no answer within 10 s")));
    req.on("error", reject);
    req.end(content);
  });
}

/** Starts the compiled block (its `listen` moved to a free port), sends its requests, stops it. */
async function runBlock(file, block, env, preload) {
  const child = spawn("node", ["--import", pathToFileURL(preload).href, file], {
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    env: { ...process.env, ...env },
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const problems = [];
  try {
    const port = await new Promise((resolvePort, reject) => {
      const timer = setTimeout(() => reject(new Error("did not listen within 10 s")), 10_000);
      child.on("message", (m) => {
        clearTimeout(timer);
        resolvePort(m.port);
      });
      child.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`exited with code ${code} before listening`));
      });
    });
    // `{{unique}}` in a request line is one value per run: an Idempotency-Key, a user name that
    // a shared Redis must not have seen in an earlier run.
    const unique = randomUUID();
    const fill = (text) => text.replaceAll("{{unique}}", unique);
    for (const r of block.requests) {
      try {
        const response = await send(port, r.method, fill(r.path), fill, r.headers, r.body);
        const body = response.body;
        if (response.status !== r.status)
          problems.push(
            `${r.method} ${r.path} answered ${response.status}, expected ${r.status}: ${body.slice(0, 300)}`,
          );
        const poweredBy = response.headers["x-powered-by"] ?? null;
        if (poweredBy !== null && !/\/\/\s*keeps X-Powered-By:\s*\S/i.test(block.code))
          problems.push(`${r.method} ${r.path} answered with X-Powered-By: ${poweredBy}`);
      } catch (err) {
        problems.push(`${r.method} ${r.path} failed: ${err.message}`);
      }
    }
  } catch (err) {
    problems.push(`${err.message}${output ? `\n${output.trim()}` : ""}`);
  } finally {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  }
  return problems;
}

/**
 * The README files to check: the root README, every package's, and the docs site's migration
 * guides (`apps/docs/guides/*.md`, whose "before" blocks import the peer libraries the consumer
 * projects install beside the packages: `PEER_LIBRARIES`).
 */
export function readmeFiles(root, packages) {
  const guides = join(root, "apps/docs/guides");
  return [
    { path: join(root, "README.md"), packageName: undefined },
    ...packages.map(({ dir, manifest }) => ({ path: join(dir, "README.md"), packageName: manifest.name })),
    ...(existsSync(guides) ? readdirSync(guides) : [])
      .filter((f) => f.endsWith(".md"))
      .sort()
      .map((f) => ({ path: join(guides, f), packageName: undefined })),
  ];
}

/**
 * The peer libraries the migration guides' "before" blocks import, pinned (a guide shows the
 * version it was written against), with their types where they ship none. Both consumer projects
 * of the README examples install them (scripts/registry-suite.mjs, scripts/smoke-consumers.mjs).
 */
export const PEER_LIBRARIES = [
  "express-rate-limit@8.7.5",
  "soap@1.13.0",
  "express-oauth2-jwt-bearer@1.10.0",
  "passport@0.7.0",
  "passport-http@0.3.0",
  "@types/passport@1.0.17",
  "@types/passport-http@0.3.11",
  "cors@2.8.6",
  "@types/cors@2.8.19",
  "compression@1.8.2",
  "@types/compression@1.8.1",
  "helmet@8.3.0",
  "@fastify/rate-limit@11.2.0",
  "rate-limiter-flexible@11.4.0",
  "hono-rate-limiter@0.5.4",
  "@fastify/jwt@10.2.8",
  "etag@2.0.0",
  "fresh@2.0.0",
  "@types/fresh@0.5.3",
  "@fastify/etag@6.2.0",
  "http-errors@2.0.1",
  "@types/http-errors@2.0.5",
  "@fastify/sensible@6.0.6",
  "@nestjs/common@12.5.1",
  "@nestjs/core@12.5.1",
  "@nestjs/platform-express@12.5.1",
  "reflect-metadata@0.2.2",
  "rxjs@7.8.2",
];

export function typescriptCompiler(root) {
  return createRequire(join(root, "package.json")).resolve("typescript/bin/tsc");
}

export function printSummary(
  { found, checked, run, withoutExpress = 0, skipped, failures, seconds, typecheck = true },
  log = console.log,
) {
  for (const f of failures) console.error(`readme: ${f}`);
  log(
    `readme: ${found} blocks found, ${checked} ${typecheck ? "type-checked" : "compiled (types not checked)"}, ${run} run${withoutExpress ? ` (${withoutExpress} without Express not run again)` : ""}, ${skipped.length} skipped` +
      (skipped.length ? `: ${skipped.join("; ")}` : "") +
      `; ${failures.length} failure(s)` +
      (seconds ? ` (compile ${seconds.compile.toFixed(1)} s, run ${seconds.run.toFixed(1)} s)` : ""),
  );
}

export const repositoryRoot = resolve(import.meta.dirname, "..");
