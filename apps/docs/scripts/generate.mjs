// The docs site's pages, generated from what the repository already says: each package's
// README (one page each), its "Frameworks" table (one page per framework, the rows of every
// package), the root README's runtime table and the conformance suite's runtime entries (one page
// per runtime), each package's "What it tells you" section (one observability page), and every
// `ERR_SVC_*` code the packages throw (one page each, with what their READMEs say of it), every
// `code` of an error record they answer with (one page each, linked from their package's page), and the
// migration guides of `apps/docs/guides/` (one page each, linked as the READMEs are). Nothing here
// is written twice: a page changes when its README (or its guide) does.
//
//   node apps/docs/scripts/generate.mjs [--out <dir>]   (default: apps/docs/content)
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { catalogue as errorCatalogue, notThrown, WHEN } from "../errors/index.mjs";
import { problems } from "../errors/problems.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const docsRoot = resolve(here, "..");
const root = resolve(docsRoot, "../..");
const outIndex = process.argv.indexOf("--out");
const out = outIndex === -1 ? join(docsRoot, "content") : resolve(process.argv[outIndex + 1]);
const repository = "https://github.com/svc-dev/svc/blob/main";

const read = (path) => readFileSync(join(root, path), "utf8");

/** The published packages, by folder: name, README, manifest. */
export function packages() {
  return readdirSync(join(root, "packages"))
    .filter((dir) => existsSync(join(root, "packages", dir, "README.md")))
    .map((dir) => {
      const manifest = JSON.parse(read(`packages/${dir}/package.json`));
      return {
        dir,
        name: manifest.name,
        private: manifest.private === true,
        readme: read(`packages/${dir}/README.md`),
      };
    })
    .filter((p) => !p.private);
}

/** The `## ` sections of a Markdown text (each up to the next `## ` or `# `), fenced code kept whole. */
function sections(markdown) {
  const found = [];
  let fence = false;
  let current;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    else if (!fence && line.startsWith("## ")) {
      current = { title: line.slice(3).trim(), lines: [] };
      found.push(current);
      continue;
    } else if (!fence && line.startsWith("# ")) current = undefined;
    current?.lines.push(line);
  }
  return found.map((s) => ({ title: s.title, body: s.lines.join("\n").trim() }));
}

/**
 * A README made a page: relative links to another package's README point at its page, to any
 * other file of the repository at that file on GitHub; the README's own `# title` stays the page's.
 */
function relink(markdown, from) {
  return markdown.replace(/\]\((?!https?:|mailto:|#|\/)([^)\s]+)\)/g, (_, target) => {
    const [path, hash] = target.split("#");
    const absolute = resolve(dirname(join(root, from)), path);
    const rel = relative(root, absolute);
    const pkg = rel.match(/^packages\/([^/]+)\/README\.md$/);
    if (pkg) return `](/packages/${pkg[1]}${hash ? `#${hash}` : ""})`;
    if (rel === "README.md") return `](/${hash ? `#${hash}` : ""})`;
    const guide = rel.match(/^apps\/docs\/guides\/([^/]+)\.md$/);
    if (guide) return `](/guides/${guide[1]}${hash ? `#${hash}` : ""})`;
    return `](${repository}/${rel}${hash ? `#${hash}` : ""})`;
  });
}

/**
 * The migration guides (`apps/docs/guides/<name>.md`): `{ name, path, title, text }`, by name. Each
 * guide's first line is its `# title`; its blocks are compiled with the READMEs'
 * (scripts/readme-examples.mjs).
 */
export function guides() {
  const dir = join(docsRoot, "guides");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => {
      const text = readFileSync(join(dir, f), "utf8");
      return {
        name: f.replace(/\.md$/, ""),
        path: relative(root, join(dir, f)),
        title: (text.match(/^# (.+)$/m)?.[1] ?? f).trim(),
        text,
      };
    });
}

/** A heading's anchor as the site makes it (`.vitepress/config.mts`) and GitHub does. */
const githubSlug = (text) =>
  text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

/** Markdown rendered as it is: Vue reads `{{ }}` and tags in a page as a template, a README means neither. */
const verbatim = (markdown) => `::: v-pre\n${markdown}\n:::\n`;

/** Markdown inline text as plain text: code, links, emphasis and HTML dropped, their words kept. */
function plainText(markdown) {
  return (
    markdown
      // HTML outside code spans (`<JWT>` in one is text).
      .split(/(`+[^`]*`+)/)
      .map((part, i) => (i % 2 === 1 ? part : part.replace(/<[^>]+>/g, "")))
      .join("")
      .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/`+([^`]*)`+/g, "$1")
      .replace(/(\*\*|__)(.+?)\1/g, "$2")
      .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/g, "$1$2")
      .replace(/\\([\\`*_[\]()|])/g, "$1")
      .replace(/\s+/g, " ")
      .trim()
  );
}

/**
 * A home page card's text: the README's first paragraph as plain text, cut after its first
 * sentence; a sentence longer than `max` is cut at the last clause (`: `, `; `, `, `) or word that
 * fits, outside parentheses, and ends with an ellipsis. Never a cut word, never Markdown.
 */
export function cardText(readme, max = 240) {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => l.trim() !== "" && !/^(#|\[|!\[|<|```|~~~|[-*|>] )/.test(l.trim()));
  if (start === -1) return "";
  const end = lines.findIndex((l, i) => i > start && l.trim() === "");
  const text = plainText(lines.slice(start, end === -1 ? undefined : end).join(" "));
  // The first sentence: up to a full stop (or ! ?) followed by a space, outside parentheses.
  let depth = 0;
  let sentence = text;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0 && /[.!?]/.test(c) && (i + 1 === text.length || text[i + 1] === " ")) {
      sentence = text.slice(0, i + 1);
      break;
    }
  }
  if (sentence.length <= max) return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
  // What the sentence says before its first colon is a statement of its own; else a clause or a
  // word that fits, and an ellipsis says the sentence goes on.
  let colon = -1;
  let clause = -1;
  let word = -1;
  depth = 0;
  for (let i = 0; i < max; i++) {
    const c = sentence[i];
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (c === " " && depth === 0) {
      word = i;
      if (/[;,]/.test(sentence[i - 1])) clause = i - 1;
      if (sentence[i - 1] === ":" && colon === -1) colon = i - 1;
    }
  }
  if (colon > 60) return `${sentence.slice(0, colon)}.`;
  const cut = clause > max / 2 ? clause : word > 0 ? word : sentence.lastIndexOf(" ", max);
  return `${sentence.slice(0, cut).replace(/[\s:;,]+$/, "")}…`;
}

/**
 * The options tables of a README (a table whose first header cell is "Option"), each with the
 * heading it is under: `[{ heading, table, options }]`, `options` the names of its first column
 * (a `name` in backticks, or the cell's text).
 */
export function optionsTables(readme) {
  const found = [];
  let fence = false;
  let heading = "";
  const lines = readme.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const title = /^#{2,6} (.+)$/.exec(line);
    if (title) heading = title[1].trim();
    if (!/^\|\s*options?\s*\|/i.test(line) || !/^\|[\s:|-]+\|?\s*$/.test(lines[i + 1] ?? "")) continue;
    let j = i + 2;
    while (j < lines.length && lines[j].trim().startsWith("|")) j++;
    const table = lines.slice(i, j);
    const options = tableRows(table.join("\n")).map((cells) => {
      const first = cells[0] ?? "";
      return /`([^`]+)`/.exec(first)?.[1] ?? plainText(first);
    });
    found.push({ heading, table: table.join("\n"), options });
    i = j - 1;
  }
  return found;
}

/**
 * A package's options reference page (`packages/<dir>/options`): every options table of its
 * README under the heading it is under there, linked back to that section.
 */
function optionsPage(p, tables) {
  const local = (markdown) =>
    relink(markdown, `packages/${p.dir}/README.md`).replace(/\]\(#/g, `](/packages/${p.dir}#`);
  const parts = tables.map(
    ({ heading, table }) =>
      `## ${heading}\n\n${local(table)}\n\nIn the README: [${plainText(heading).replace(/[[\]]/g, "")}](/packages/${p.dir}#${githubSlug(plainText(heading))})\n`,
  );
  return verbatim(
    `# ${p.name} options\n\nEvery option [${p.name}](/packages/${p.dir}) takes, one table per factory, as its README gives them. Each is checked when the middleware is built: a refused one throws a \`TypeError\` with a stable \`code\` ([error codes](/errors/)).\n\n${parts.join("\n")}`,
  );
}

/** A package page with a link to its options page under its title, when it has one. */
function withOptionsLink(markdown, p, tables) {
  if (tables.length === 0) return markdown;
  return markdown.replace(
    /^# .+\n/,
    (title) =>
      `${title}\n**[Options reference](/packages/${p.dir}/options)**: every option of ${tables.length === 1 ? "its factory" : `its ${tables.length} factories`}, on one page.\n`,
  );
}

function write(path, text) {
  const file = join(out, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

const FRAMEWORKS = [
  { id: "express", title: "Express 4 and 5", row: /^express/i },
  { id: "fastify", title: "Fastify 5", row: /^fastify/i },
  { id: "node", title: "node:http", row: /^`?node:http/i },
  { id: "fetch", title: "Fetch API and Hono", row: /^(fetch|hono)/i },
];

const RUNTIMES = [
  {
    id: "node",
    title: "Node.js 20, 22 and 24",
    row: /^Node\.js/,
    entry: "node.ts",
    text: "Every entry runs on Node.js from 20.19: the Express, Fastify and `node:http` entries, and the `./fetch` entries under `@hono/node-server`.",
  },
  {
    id: "bun",
    title: "Bun",
    row: /^Bun/,
    entry: "bun.ts",
    text: "The `./fetch` entries under `Bun.serve({ fetch })`. Bun hands its server to the handler as the second argument, which Hono gives the app as `c.env`; `honoConnection(c)` of `@svc/kernel/fetch` reads the client's address from it.",
  },
  {
    id: "deno",
    title: "Deno",
    row: /^Deno/,
    entry: "deno.ts",
    text: "The `./fetch` entries under `Deno.serve(handler)`. Deno hands the connection's `info` to the handler as the second argument, which Hono gives the app as `c.env`; `honoConnection(c)` of `@svc/kernel/fetch` reads the client's address from it.",
  },
  {
    id: "workerd",
    title: "Cloudflare Workers (workerd)",
    row: /^workerd/,
    entry: "workerd.ts",
    text: "The `./fetch` entries, the main entries and the `./durable-object` stores import no Node.js module, so a Worker needs no `nodejs_compat`. A Worker has no connection to read: tell every gate the client's address with `withConnection` of `@svc/kernel/fetch` from `CF-Connecting-IP`, which Cloudflare's edge sets. A SOAP contract is given in memory.",
  },
];

/** The rows of a Markdown table, cells trimmed; the header and its rule left out. */
function tableRows(body) {
  const lines = body.split("\n").filter((l) => l.trim().startsWith("|"));
  return lines.slice(2).map((l) =>
    l
      .trim()
      .replace(/^\||\|$/g, "")
      .split(/(?<!\\)\|/)
      .map((c) => c.trim()),
  );
}

/** Every `ERR_SVC_*` code the packages' sources, tests and READMEs name, prefixes left out. */
export function errorCodes(pkgs) {
  const codes = new Map();
  const scan = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist" || entry.name === "api") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) scan(path);
      else if (/\.(ts|md)$/.test(entry.name))
        for (const [code] of readFileSync(path, "utf8").matchAll(/\bERR_SVC_[A-Z0-9_]*[A-Z0-9]\b/g))
          if (!codes.has(code)) codes.set(code, relative(root, path));
    }
  };
  for (const p of pkgs) scan(join(root, "packages", p.dir));
  // A code no package owns is a test's made-up one (`checkOptionNames("x", ...)`), never thrown.
  return [...codes.keys()].filter((code) => packageOfCode(code, pkgs) !== undefined).sort();
}

/**
 * Snake-case literals of sources that build an `HttpError` but are not the `code` of an error
 * record: an OAuth parameter name, a log field.
 */
const NOT_RECORD_CODES = new Set(["access_token", "request_id"]);

/**
 * Every `code` of an error record the packages answer with (`rate_limited`, `not_acceptable`):
 * the snake-case string literals of their sources that build an `HttpError` (tests and comments
 * left out), but for {@link NOT_RECORD_CODES}, each with the packages whose sources hold it. A
 * source that builds none answers with no code: its literals are other things (the attribute
 * values of `@svc/otel`, SOAP fault fields, a table name). A new code gets its page without a
 * list to keep; a new literal that is no code goes into that set.
 */
export function recordCodes(pkgs) {
  const codes = new Map();
  const scan = (dir, p) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) scan(path, p);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
        const code = readFileSync(path, "utf8")
          .replace(/\/\*[\s\S]*?\*\//g, "")
          .replace(/(^|\s)\/\/.*$/gm, "$1");
        if (!/\bHttpError\b/.test(code)) continue;
        for (const [, literal] of code.matchAll(/["'`]([a-z][a-z0-9]*(?:_[a-z0-9]+)+)["'`]/g)) {
          if (NOT_RECORD_CODES.has(literal)) continue;
          if (!codes.has(literal)) codes.set(literal, new Set());
          codes.get(literal).add(p);
        }
      }
    }
  };
  for (const p of pkgs)
    if (existsSync(join(root, "packages", p.dir, "src"))) scan(join(root, "packages", p.dir, "src"), p);
  return new Map([...codes].sort(([a], [b]) => (a < b ? -1 : 1)).map(([code, set]) => [code, [...set]]));
}

/** The package a code belongs to: the longest package constant its name starts with. */
function packageOfCode(code, pkgs) {
  const owners = pkgs
    .map((p) => ({ p, constant: `ERR_SVC_${p.dir.replace(/[^a-z0-9]+/gi, "_").toUpperCase()}_` }))
    .filter((o) => code.startsWith(o.constant))
    .sort((a, b) => b.constant.length - a.constant.length);
  return owners[0];
}

/** The paragraphs (and table rows) of `markdown` that name `code`, code blocks left out. */
function mentions(markdown, code) {
  const found = [];
  let fence = false;
  let paragraph = [];
  const flush = () => {
    const text = paragraph.join("\n");
    if (new RegExp(`\\b${code}\\b`).test(text)) found.push(text);
    paragraph = [];
  };
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      flush();
      fence = !fence;
      continue;
    }
    if (fence) continue;
    if (line.trim() === "" || /^#{1,6} /.test(line)) flush();
    else if (line.trim().startsWith("|")) {
      flush();
      if (new RegExp(`\\b${code}\\b`).test(line)) found.push(line);
    } else paragraph.push(line);
  }
  flush();
  return found;
}

/** Prose of a catalogue entry as Markdown text: `<` and `>` outside code spans are text, not HTML (Vue would read `Promise<boolean>` as a tag). */
const prose = (text) =>
  text
    .split(/(`+[^`]*`+)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, "&lt;").replace(/>/g, "&gt;")))
    .join("");

/**
 * The page of an `ERR_SVC_*` code from its catalogue entry (`apps/docs/errors/`): what raised it
 * and when, why (what was refused, what is accepted, in the message's words), how to fix it, and
 * the wrong and right modules that `test/error-codes.test.ts` compiles and runs.
 */
function errorCodePage(code, entry, owner, elsewhere) {
  const fence = (source) => `\`\`\`ts\n${source.trim()}\n\`\`\``;
  return `# ${code}

A \`TypeError\` whose \`code\` is \`${code}\`${owner ? `, from [\`${owner.p.name}\`](/packages/${owner.p.dir})` : ""}. Match on \`err.code\`, never on the message.

## What raised it

${prose(entry.raiser)}, ${WHEN[entry.when]}.

## Why

${prose(entry.refused[0].toUpperCase() + entry.refused.slice(1))}. What is accepted, in the message's words (which add the value given): ${entry.accepted.includes("`") ? entry.accepted : `\`${entry.accepted}\``}.

## How to fix it

${prose(entry.fix)}

### Wrong

${fence(entry.wrong)}

This ${entry.when === "registration" ? "rejects" : "throws"} the \`TypeError\` \`${code}\`.${
    entry.wrong.includes('from "./greeter.mjs"')
      ? " (`./greeter.mjs` stands for your own contract and handlers: it exports the WSDL text, `wsdl`, and the operations' `handlers`.)"
      : ""
  }

### Right

${fence(entry.right)}

Both modules are compiled (strict TypeScript) and run in CI: the first throws \`${code}\`, the second does not.

${elsewhere.length > 0 ? `## Also named by\n\n${elsewhere.map((p) => `- [${p.name}](/packages/${p.dir})`).join("\n")}\n\n` : ""}## See also

${owner ? `- [${owner.p.name}](/packages/${owner.p.dir})\n` : ""}- [Every error code](/errors/)
`;
}

/** The page of a code that is named (by a README or a test) but never thrown: where to look instead. */
function notThrownPage(code, { instead, why }, owner) {
  return `# ${code}

No function of ${owner ? `[\`${owner.p.name}\`](/packages/${owner.p.dir})` : "the packages"} throws \`${code}\`. ${prose(why)}

## The codes thrown instead

${instead.map((c) => `- [\`${c}\`](/errors/${c})`).join("\n")}

## See also

- [Every error code](/errors/)
`;
}

/** The request an example sends, as HTTP/1.1 writes it (`apps/docs/errors/problems.mjs`). */
export function exampleRequest({ method = "GET", path, headers = {}, body }) {
  const fields = { host: "api.example", accept: "application/problem+json", ...headers };
  const lines = Object.entries(fields).map(
    ([name, value]) => `${name.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase())}: ${value}`,
  );
  return `${method} ${path} HTTP/1.1\n${lines.join("\n")}\n${body === undefined ? "" : `\n${body}\n`}`;
}

/**
 * The page of an error record code from its entry: the package that answers with it and when, the
 * status, what the client and the operator should do, and an example app with the request and
 * the response `test/error-codes.test.ts` receives from it.
 */
function problemPage(code, entry, pkgs) {
  const p = pkgs.find((q) => q.dir === entry.pkg);
  const name = p?.name ?? `@svc/${entry.pkg}`;
  const { status, response, requests, app } = entry;
  const head = Object.entries(response.headers ?? {})
    .map(
      ([n, v]) =>
        `${n === "www-authenticate" ? "WWW-Authenticate" : n.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase())}: ${v}`,
    )
    .join("\n");
  return `# ${code}

The \`code\` of an error answered by [\`${name}\`](/packages/${entry.pkg}) with status ${status}: ${status < 500 ? `\`"code": "${code}"\` in problem details (RFC 9457), whose` : "a 5xx leaves the `code` member out; problem details' (RFC 9457)"} \`type\` ends with it when the error handler is given a \`problemTypeBase\`. Match on the code, never on the message.

## When

${prose(entry.when[0].toUpperCase() + entry.when.slice(1))}.

## What the client should do

${prose(entry.client)}

## What the operator should do

${prose(entry.operator)}

## Example

The app (a Fetch handler; the same middleware exists for Express, Fastify and \`node:http\`):

\`\`\`ts
${app.trim()}
\`\`\`

${requests.length > 1 ? "The requests (the last one is answered with the code):" : "The request:"}

${requests.map((r) => `\`\`\`http\n${exampleRequest(r).replace(/\{(\w+)\}/g, "<$1>")}\`\`\``).join("\n\n")}

The response, as the docs test receives it (… marks a value that changes from run to run):

\`\`\`http
HTTP/1.1 ${status} ${response.body.title}
${head}

${JSON.stringify(response.body, null, 2)}
\`\`\`

## See also

- [${name}](/packages/${entry.pkg})
- [The error record](/packages/errors)
- [Every error record code](/problems/)
`;
}

export function generate() {
  rmSync(out, { recursive: true, force: true });
  // The site's own files (its icon), served as they are.
  cpSync(join(docsRoot, "public"), join(out, "public"), { recursive: true });
  const pkgs = packages();
  const rootReadme = read("README.md");

  // Home.
  const intro = rootReadme
    .split("\n## ")[0]
    .replace(/^# .*\n/, "")
    .trim();
  write(
    "index.md",
    `---
layout: home
hero:
  name: "@svc"
  text: HTTP protocol middleware
  tagline: Express, Fastify, node:http and Fetch servers, on Node.js, Bun, Deno and Cloudflare Workers
  actions:
    - theme: brand
      text: Packages
      link: /packages/
    - theme: alt
      text: Error codes
      link: /errors/
features:
${pkgs.map((p) => `  - title: "${p.name}"\n    details: ${JSON.stringify(cardText(p.readme))}\n    link: /packages/${p.dir}`).join("\n")}
---

${verbatim(relink(intro, "README.md"))}`,
  );

  // Packages.
  write(
    "packages/index.md",
    `# Packages\n\nEach package is published and versioned on its own; install only what you use.\n\n| package | page |\n| --- | --- |\n${pkgs.map((p) => `| \`${p.name}\` | [${p.dir}](/packages/${p.dir}) |`).join("\n")}\n`,
  );
  const records = recordCodes(pkgs);
  for (const p of pkgs) {
    const own = [...records].filter(([, owners]) => owners.includes(p)).map(([code]) => code);
    const codesSection =
      own.length > 0
        ? `\n## Error record codes\n\nThe \`code\` of each error record ${p.name} answers with, and what it means: ${own.map((c) => `[\`${c}\`](/problems/${c})`).join(", ")}.\n`
        : "";
    const options = optionsTables(p.readme);
    if (options.length > 0) write(`packages/${p.dir}/options.md`, optionsPage(p, options));
    write(
      `packages/${p.dir}.md`,
      `${verbatim(withOptionsLink(relink(p.readme, `packages/${p.dir}/README.md`), p, options))}${codesSection}`,
    );
  }

  // Guides: leaving a peer library for the @svc packages, one page each.
  const guideList = guides();
  // The READMEs' own "Coming from ..." sections, which the guides link to and do not repeat.
  const comingFrom = pkgs.flatMap((p) =>
    [...p.readme.matchAll(/^#{2,3} (Coming from .+)$/gm)].map((m) => ({ p, title: m[1].trim() })),
  );
  write(
    "guides/index.md",
    `# Guides\n\nMoving an existing service from a peer library to the @svc packages, on the framework it already runs on: what you had, what replaces it, option by option, and what behaves differently. Each guide's before and after code is compiled in CI, like the READMEs' examples.\n\n| guide | page |\n| --- | --- |\n${guideList.map((g) => `| ${g.title.replace(/\|/g, "\\|")} | [${g.name}](/guides/${g.name}) |`).join("\n")}\n\n## In the packages' READMEs\n\nEach package's README maps its peers' API in a section of its own:\n\n${comingFrom.map(({ p, title }) => `- [${p.name}: ${title}](/packages/${p.dir}#${githubSlug(title)})`).join("\n")}\n`,
  );
  for (const g of guideList) write(`guides/${g.name}.md`, verbatim(relink(g.text, g.path)));

  // Frameworks: every package's row of its "Frameworks" table, per framework.
  const frameworkTables = pkgs.map((p) => {
    const section = sections(p.readme).find((s) => s.title === "Frameworks");
    return {
      p,
      header: section?.body.split("\n").find((l) => l.trim().startsWith("|")),
      rows: section ? tableRows(section.body) : [],
    };
  });
  write(
    "frameworks/index.md",
    `# Frameworks\n\nEvery package decides in a framework-free core; each framework has an entry of its own that applies the decision. The pages below gather, per framework, each package's entry as its README gives it.\n\n${FRAMEWORKS.map((f) => `- [${f.title}](/frameworks/${f.id})`).join("\n")}\n`,
  );
  for (const f of FRAMEWORKS) {
    const parts = [
      `# ${f.title}\n`,
      `Each package's entry for ${f.title}, from the "Frameworks" section of its README.\n`,
    ];
    for (const { p, header, rows } of frameworkTables) {
      const row = rows.find((r) => f.row.test(r[0] ?? ""));
      if (!row || header === undefined) continue;
      const rule = header.replace(/[^|]+/g, " --- ");
      parts.push(
        `## ${p.name}\n\n${header}\n${rule}\n| ${row.join(" | ")} |\n\nMore: [${p.name}, Frameworks](/packages/${p.dir}#frameworks)\n`,
      );
    }
    write(`frameworks/${f.id}.md`, verbatim(relink(parts.join("\n"), "README.md")));
  }

  // Runtimes: the root README's row, and the conformance suite's entry for it.
  const runtimeSection = sections(rootReadme).find((s) => s.title === "Frameworks and runtimes");
  const runtimeRows = runtimeSection ? tableRows(runtimeSection.body) : [];
  const runtimeHeader = runtimeSection?.body.split("\n").find((l) => l.trim().startsWith("|"));
  write(
    "runtimes/index.md",
    `# Runtimes\n\n${RUNTIMES.map((r) => `- [${r.title}](/runtimes/${r.id})`).join("\n")}\n\nEvery runtime below runs the same conformance table against the packed packages in CI (\`apps/conformance\`).\n`,
  );
  for (const r of RUNTIMES) {
    const rows = runtimeRows.filter((row) => r.row.test(row[0] ?? ""));
    const entry = `apps/conformance/src/runtimes/${r.entry}`;
    const table =
      rows.length > 0 && runtimeHeader
        ? `${runtimeHeader}\n${runtimeHeader.replace(/[^|]+/g, " --- ")}\n${rows.map((row) => `| ${row.join(" | ")} |`).join("\n")}\n`
        : "";
    write(
      `runtimes/${r.id}.md`,
      verbatim(
        relink(
          `# ${r.title}\n\n${r.text}\n\n## Tested\n\n${table}\n## The conformance suite's entry\n\nHow CI serves the Hono composition of every package on this runtime ([\`${entry}\`](${repository}/${entry})):\n\n\`\`\`ts\n${read(entry).trim()}\n\`\`\`\n`,
          "README.md",
        ),
      ),
    );
  }

  // Observability: each package's "What it tells you".
  const told = pkgs
    .map((p) => ({ p, section: sections(p.readme).find((s) => s.title === "What it tells you") }))
    .filter((t) => t.section !== undefined);
  write(
    "observability.md",
    verbatim(
      `# What the packages tell you\n\nEvery decision a package takes is published on a diagnostics channel (\`subscribeDiagnostics\` of \`@svc/kernel\`); [\`@svc/otel\`](/packages/otel) turns them into OpenTelemetry metrics and span attributes.\n\n${told
        .map(
          ({ p, section }) =>
            `## ${p.name}\n\n${relink(section.body.replace(/^### /gm, "#### "), `packages/${p.dir}/README.md`)}\n`,
        )
        .join("\n")}`,
    ),
  );

  // Error record codes: one page per `code` (the problem `type`'s last segment).
  for (const [code, owners] of records) {
    if (problems[code] !== undefined) {
      write(`problems/${code}.md`, verbatim(problemPage(code, problems[code], pkgs)));
      continue;
    }
    const said = owners.flatMap((p) =>
      mentions(p.readme, code).map((m) =>
        relink(m, `packages/${p.dir}/README.md`).replace(/\]\(#/g, `](/packages/${p.dir}#`),
      ),
    );
    const elsewhere = pkgs.filter((p) => !owners.includes(p) && mentions(p.readme, code).length > 0);
    write(
      `problems/${code}.md`,
      verbatim(
        `# ${code}\n\nThe \`code\` of an error record answered by ${owners.map((p) => `[\`${p.name}\`](/packages/${p.dir})`).join(", ")}: in problem details (RFC 9457, \`Accept: application/problem+json\` or the handler's \`defaultFormat: "problem"\`) the member \`"code": "${code}"\` (for a 4xx) and the last segment of \`type\` when the error handler is given a \`problemTypeBase\` (else \`type\` is \`about:blank\`); the plain error record (\`application/json\`) carries no code. Match on the code, never on the message.\n\n${
          said.length > 0 ? `## What the README says\n\n${said.join("\n\n")}\n\n` : ""
        }${elsewhere.length > 0 ? `## Also named by\n\n${elsewhere.map((p) => `- [${p.name}](/packages/${p.dir})`).join("\n")}\n\n` : ""}## See also\n\n${owners.map((p) => `- [${p.name}](/packages/${p.dir})`).join("\n")}\n- [The error record](/packages/errors)\n- [Every error record code](/problems/)\n`,
      ),
    );
  }
  write(
    "problems/index.md",
    `# Error record codes\n\nAn error a package answers with carries a stable \`code\` in problem details (RFC 9457), rendered by [\`@svc/errors\`](/packages/errors): the member \`code\` (for a 4xx), and the last segment of \`type\` when the error handler has a \`problemTypeBase\` (without one, \`type\` is \`about:blank\`). The plain error record (\`{ timestamp, status, error, message, path }\`, \`application/json\`) carries no code: a client that matches on codes asks for \`application/problem+json\`. Each page says which package answers with the code and what its README says of it.\n\n| code | answered by |\n| --- | --- |\n${[...records].map(([code, owners]) => `| [\`${code}\`](/problems/${code}) | ${owners.map((p) => `[${p.name}](/packages/${p.dir})`).join(", ")} |`).join("\n")}\n`,
  );

  // Error codes.
  const codes = errorCodes(pkgs);
  const entries = errorCatalogue();
  const byPackage = new Map();
  for (const code of codes) {
    const owner = packageOfCode(code, pkgs);
    const key = owner?.p.name ?? "other";
    if (!byPackage.has(key)) byPackage.set(key, []);
    byPackage.get(key).push(code);
    const elsewhere = pkgs.filter((p) => p !== owner?.p && mentions(p.readme, code).length > 0);
    if (notThrown[code]) {
      write(`errors/${code}.md`, verbatim(notThrownPage(code, notThrown[code], owner)));
      continue;
    }
    const entry = entries.get(code);
    // A page that says less than the error is no page: a new code gets its entry first.
    if (entry === undefined)
      throw new Error(
        `${code}: no entry in apps/docs/errors/ (what raised it, why, the fix, a wrong and a right module)`,
      );
    write(`errors/${code}.md`, verbatim(errorCodePage(code, entry, owner, elsewhere)));
  }
  write(
    "errors/index.md",
    `# Error codes\n\nEvery \`ERR_SVC_*\` code is \`ERR_SVC_<PACKAGE>_<OPTION>\`: a refused option or argument of that package, thrown as a \`TypeError\`, most when the middleware is built. Each page says what raised it and when, why, and how to fix it, with a wrong and a right example that CI compiles and runs.\n\n${[
      ...byPackage,
    ]
      .map(([name, list]) => `## ${name}\n\n${list.map((c) => `- [\`${c}\`](/errors/${c})`).join("\n")}\n`)
      .join("\n")}`,
  );
  return { packages: pkgs.length, codes: codes.length, records: records.size, guides: guideList.length, out };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const made = generate();
  process.stdout.write(
    `docs: ${made.packages} packages, ${made.guides} guides, ${made.codes} error codes, ${made.records} error record codes, written to ${relative(process.cwd(), made.out) || "."}\n`,
  );
}
