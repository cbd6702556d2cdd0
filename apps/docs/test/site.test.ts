import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const exec = promisify(execFile);
const docs = resolve(import.meta.dirname, "..");
const root = resolve(docs, "../..");
const repository = "https://github.com/svc-dev/svc/blob/main/";
/** The site's base (`defaultBase` of .vitepress/config.mts): GitHub Pages serves it under `/svc/`. */
const siteBase =
  /export const defaultBase = "([^"]+)"/.exec(
    readFileSync(join(docs, ".vitepress/config.mts"), "utf8"),
  )?.[1] ?? "/";
/** The environment of a build: no `DOCS_BASE` of the shell's, unless given. */
const buildEnv = (docsBase?: string) => {
  const { DOCS_BASE: _, ...env } = process.env;
  return docsBase === undefined ? env : { ...env, DOCS_BASE: docsBase };
};

/** The published packages' folders. */
function publishedDirs(): string[] {
  return readdirSync(join(root, "packages")).filter((dir) => {
    const manifest = join(root, "packages", dir, "package.json");
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).private !== true;
  });
}

/**
 * The option names of a README's options tables (a table whose first header cell is "Option"), as
 * a reader finds them: the first cell of each row, its name in backticks.
 */
function readmeOptions(readme: string): string[] {
  const lines = readme.split("\n");
  const names: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\|\s*options?\s*\|/i.test(lines[i] as string) || !/^\|[\s:|-]+$/.test((lines[i + 1] ?? "").trim()))
      continue;
    for (let j = i + 2; j < lines.length && (lines[j] as string).trim().startsWith("|"); j++) {
      const first =
        (lines[j] as string)
          .trim()
          .slice(1)
          .split(/(?<!\\)\|/)[0]
          ?.trim() ?? "";
      names.push(/`([^`]+)`/.exec(first)?.[1] ?? first);
    }
  }
  return names;
}

/** HTML text as a reader sees it. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, "")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");
/** Where GitHub Pages serves the site: the address the refusal messages link to. */
const siteUrl = `https://svc-dev.github.io${siteBase}`;

/** Debian's chromium; CHROMIUM_PATH points elsewhere. */
const chromiumPath = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => typeof p === "string" && existsSync(p),
);
if (!chromiumPath) {
  if (process.env.CI) throw new Error("chromium is not installed: CI checks the docs site in a browser");
  console.warn(
    "[skip] chromium is not installed: the docs site is built and its links checked, not opened in a browser",
  );
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
  ".png": "image/png",
};

/** Every file under `dir`, relative to it. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => extname(f) !== "");
}

/** The `id`s of a page, for its anchors. */
function ids(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => decodeURIComponent(m[1] as string)));
}

/**
 * The pages the browser opens: every page written by hand or generated from a README (packages,
 * guides, frameworks, runtimes, the indexes), and every tenth of the pages generated one per code
 * from a single template (`errors/`, `problems/`; some 420 of the site's 460), whose links and
 * anchors the static checks read on every page. Loading each of those in chromium took five of
 * CI's minutes and checked that one template over and over.
 */
function opened(pages: readonly string[]): string[] {
  const perCode = (p: string) => /^(?:errors|problems)\/(?!index\.html$)/.test(p);
  const codes = pages.filter(perCode).sort();
  return [...pages.filter((p) => !perCode(p)), ...codes.filter((_, i) => i % 10 === 0)];
}

/**
 * The site as a reader gets it: generated from the READMEs and built with VitePress (into a folder
 * of its own, so a `dist/` left by `npm run docs:build` plays no part), served over HTTP, opened in
 * headless chromium.
 */
describe("the docs site", () => {
  let out: string;
  let server: Server;
  let base: string;
  let pages: string[];

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), "svc-docs-"));
    await exec(process.execPath, [join(docs, "scripts/generate.mjs")], { cwd: docs });
    await exec(
      process.execPath,
      [join(root, "node_modules/vitepress/bin/vitepress.js"), "build", "--outDir", out],
      {
        cwd: docs,
        env: buildEnv(),
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    pages = files(out).filter((f) => f.endsWith(".html") && f !== "404.html");
    // Served as GitHub Pages serves it: under the base, nothing outside it. The hashed assets are
    // immutable, so each tab downloads the theme's scripts once rather than once per page.
    const served = new Map<string, Buffer>();
    server = createServer((req, res) => {
      const url = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
      if (!url.startsWith(siteBase)) {
        res.writeHead(404).end();
        return;
      }
      const path = `/${url.slice(siteBase.length)}`;
      let file = join(out, path.endsWith("/") ? `${path}index.html` : path);
      if (!existsSync(file) && existsSync(`${file}.html`)) file = `${file}.html`;
      if (!file.startsWith(out) || !existsSync(file)) {
        res.writeHead(404).end();
        return;
      }
      let body = served.get(file);
      if (!body) {
        body = readFileSync(file);
        served.set(file, body);
      }
      res.writeHead(200, {
        "content-type": TYPES[extname(file)] ?? "application/octet-stream",
        ...(path.startsWith("/assets/") ? { "cache-control": "public, max-age=31536000, immutable" } : {}),
      });
      res.end(body);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${siteBase.replace(/\/$/, "")}`;
  }, 600_000);

  afterAll(async () => {
    server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it("has a page per package, guide, framework, runtime and ERR_SVC_* code", () => {
    const published = readdirSync(join(root, "packages")).filter((dir) => {
      const manifest = join(root, "packages", dir, "package.json");
      return existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).private !== true;
    });
    for (const dir of published) expect(pages).toContain(`packages/${dir}.html`);
    for (const id of ["express", "fastify", "node", "fetch"])
      expect(pages).toContain(`frameworks/${id}.html`);
    for (const id of ["node", "bun", "deno", "workerd"]) expect(pages).toContain(`runtimes/${id}.html`);
    expect(pages).toContain("observability.html");
    // A migration guide per file of apps/docs/guides, and their index.
    const guides = readdirSync(join(docs, "guides")).filter((f) => f.endsWith(".md"));
    expect(guides.length).toBeGreaterThan(0);
    expect(pages).toContain("guides/index.html");
    for (const guide of guides) expect(pages).toContain(`guides/${guide.replace(/\.md$/, ".html")}`);
    // A code a package throws and its README names: its page, and the README's words on it.
    const page = readFileSync(join(out, "errors/ERR_SVC_KERNEL_TRUST_PROXY.html"), "utf8");
    expect(page).toContain("@svc/kernel");
    expect(pages.filter((p) => p.startsWith("errors/ERR_SVC_")).length).toBeGreaterThan(200);
  });

  it("has a page per error record code, linked from the page of each package that answers with it", () => {
    const codes = pages.filter((p) => p.startsWith("problems/") && p !== "problems/index.html");
    expect(codes.length).toBeGreaterThan(25);
    for (const code of ["rate_limited", "not_acceptable", "idempotency_key_reused", "insufficient_scope"])
      expect(codes).toContain(`problems/${code}.html`);
    expect(readFileSync(join(out, "problems/rate_limited.html"), "utf8")).toContain("@svc/ratelimit");
    const packagePages = pages
      .filter((p) => p.startsWith("packages/"))
      .map((p) => readFileSync(join(out, p), "utf8"));
    for (const page of codes) {
      const href = `href="${siteBase}${page}"`;
      expect(
        packagePages.some((html) => html.includes(href)),
        `no package page links to ${page}`,
      ).toBe(true);
    }
  });

  it("has each ERR_SVC_* code's page at the stable address errors/<code>.html under the site's base", () => {
    // Every ERR_SVC_* code the packages' sources, tests and READMEs name, as the generator collects
    // them: the address a refusal can link to is the site's address, `errors/`, the code, `.html`.
    const codes = new Set<string>();
    const scan = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (["node_modules", "dist", "api"].includes(entry.name)) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) scan(path);
        else if (/\.(ts|md)$/.test(entry.name))
          for (const [code] of readFileSync(path, "utf8").matchAll(/\bERR_SVC_[A-Z0-9_]*[A-Z0-9]\b/g))
            codes.add(code);
      }
    };
    scan(join(root, "packages"));
    expect(codes.size).toBeGreaterThan(200);
    // A code no package's name starts (`ERR_SVC_X_OPTIONS` of a test of checkOptionNames) is made up.
    const owned = readdirSync(join(root, "packages")).map(
      (dir) => `ERR_SVC_${dir.replace(/[^a-z0-9]+/gi, "_").toUpperCase()}_`,
    );
    for (const code of codes) if (!owned.some((prefix) => code.startsWith(prefix))) codes.delete(code);
    expect(siteUrl).toBe("https://svc-dev.github.io/svc/");
    expect([...codes].filter((code) => !pages.includes(`errors/${code}.html`))).toEqual([]);
  });

  it("has no broken internal link or anchor, and every link into the repository names a file it holds", () => {
    const broken: string[] = [];
    const idsOf = new Map<string, Set<string>>();
    const anchorsOf = (file: string) => {
      let found = idsOf.get(file);
      if (!found) {
        found = ids(readFileSync(join(out, file), "utf8"));
        idsOf.set(file, found);
      }
      return found;
    };
    for (const page of pages) {
      const html = readFileSync(join(out, page), "utf8");
      for (const [, href] of html.matchAll(/\shref="([^"]+)"/g)) {
        const link = (href as string).replaceAll("&amp;", "&");
        if (link.startsWith(repository)) {
          const path = decodeURIComponent(link.slice(repository.length).split("#")[0] as string);
          if (!existsSync(join(root, path))) broken.push(`${page}: ${link} (no such file in the repository)`);
          continue;
        }
        if (/^[a-z]+:/.test(link) || link.startsWith("//")) continue;
        const [path, hash] = link.split("#") as [string, string | undefined];
        // A link from the root of the host, not of the base, leaves the site on GitHub Pages.
        if (path.startsWith("/") && !path.startsWith(siteBase)) {
          broken.push(`${page}: ${link} (outside ${siteBase})`);
          continue;
        }
        let target = path === "" ? page : relative(out, resolve(join(out, page, ".."), path));
        if (path.startsWith("/")) target = path.slice(siteBase.length);
        if (target === "" || target.endsWith("/")) target = `${target}index.html`;
        if (!target.includes(".")) target = `${target}.html`;
        if (!existsSync(join(out, target))) {
          broken.push(`${page}: ${link}`);
          continue;
        }
        if (hash && target.endsWith(".html") && !anchorsOf(target).has(decodeURIComponent(hash)))
          broken.push(`${page}: ${link} (no such anchor)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("has a card per package on the home page, each a complete sentence or words of one, without Markdown", () => {
    const home = readFileSync(join(out, "index.html"), "utf8");
    const cards = [...home.matchAll(/<p class="details"[^>]*>([\s\S]*?)<\/p>/g)].map((m) =>
      textOf(m[1] as string).trim(),
    );
    expect(cards.length).toBe(publishedDirs().length);
    for (const card of cards) {
      expect(card, card).not.toContain("`");
      expect(card, card).not.toMatch(/\]\(|\*\*/);
      // A full stop ends the sentence; an ellipsis follows a whole word of the README's.
      expect(card, card).toMatch(/[.!?)]$|\p{L}…$/u);
      if (card.endsWith("…")) {
        const last = /(\p{L}+)…$/u.exec(card)?.[1] as string;
        const readmes = publishedDirs().map((dir) =>
          readFileSync(join(root, "packages", dir, "README.md"), "utf8"),
        );
        expect(
          readmes.some((readme) => new RegExp(`(^|[^\\p{L}])${last}([^\\p{L}]|$)`, "u").test(readme)),
          `${card}: "${last}" is no whole word of a README`,
        ).toBe(true);
      }
    }
  });

  it("has an options page per package with options tables, listing each option they list, linked from its page and sidebar", () => {
    let withOptions = 0;
    for (const dir of publishedDirs()) {
      const options = readmeOptions(readFileSync(join(root, "packages", dir, "README.md"), "utf8"));
      const page = `packages/${dir}/options.html`;
      if (options.length === 0) {
        expect(pages).not.toContain(page);
        continue;
      }
      withOptions++;
      expect(pages).toContain(page);
      const html = readFileSync(join(out, page), "utf8");
      const listed = new Set(
        [...html.matchAll(/<tr>\s*<td>([\s\S]*?)<\/td>/g)].map((m) => {
          const cell = m[1] as string;
          return textOf(/<code>([\s\S]*?)<\/code>/.exec(cell)?.[1] ?? cell).trim();
        }),
      );
      expect(options.filter((name) => !listed.has(name.replaceAll("\\|", "|")))).toEqual([]);
      const href = `href="${siteBase}${page}"`;
      expect(readFileSync(join(out, `packages/${dir}.html`), "utf8")).toContain(href);
      // The sidebar of every package page lists it.
      expect(readFileSync(join(out, "packages/index.html"), "utf8")).toContain(href);
    }
    expect(withOptions).toBeGreaterThan(5);
  });

  it("keeps the search index small, and says it is loading while it loads", () => {
    const chunks = join(out, "assets/chunks");
    const index = readdirSync(chunks).filter((f) => f.startsWith("@localSearchIndex"));
    expect(index.length).toBe(1);
    // 1.2 MB when it indexed every code block and every per-code page whole; the first search waits for it.
    const size = readFileSync(join(chunks, index[0] as string)).length;
    expect(size).toBeLessThan(900_000);
    // Still found by its search: a code's page by its title.
    expect(readFileSync(join(chunks, index[0] as string), "utf8")).toContain("ERR_SVC_KERNEL_TRUST_PROXY");
    for (const page of ["index.html", "packages/ratelimit.html"]) {
      const html = readFileSync(join(out, page), "utf8");
      expect(html).toMatch(
        /<div class="svc-search-status" role="status" aria-live="polite" style="display:none;?">Loading the search index…<\/div>/,
      );
    }
  });

  describe.skipIf(!chromiumPath)("in headless chromium", () => {
    // One browser for both tests.
    let browser: Browser;
    beforeAll(async () => {
      const { chromium } = await import("playwright-core");
      browser = await chromium.launch({ executablePath: chromiumPath as string, args: ["--no-sandbox"] });
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
    });

    // Chromium on two cores beside the rest of the suite: limits that fail only a page that never loads.
    it("opens every written page and every tenth generated code page without a console error or a failed request", {
      timeout: 900_000,
    }, async () => {
      const problems: string[] = [];
      const queue = opened(pages);
      expect(queue.length).toBeLessThan(pages.length / 3);
      // Four tabs at once, each a context of its own whose cache keeps the theme's scripts: a page
      // waits mostly on its scripts, not on the two cores.
      const tab = async () => {
        const page = await browser.newPage();
        let current = "";
        page.on("console", (m) => {
          if (m.type() === "error")
            problems.push(`${current}: console: ${m.text()} ${JSON.stringify(m.location())}`);
        });
        page.on("pageerror", (e) => problems.push(`${current}: ${e.message}`));
        page.on("response", (r) => {
          if (r.status() >= 400) problems.push(`${current}: ${r.status()} ${r.url()}`);
        });
        try {
          for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
            current = file;
            // The HTML is parsed and the module scripts have run at DOMContentLoaded; the page is
            // hydrated once Vue has mounted the app (it loads the page's own chunk first), which is
            // when a script error or a hydration mismatch would have been logged. Images and fonts
            // (the `load` event) are not waited for: a missing one is still a failed response.
            await page.goto(`${base}/${file}`, { waitUntil: "domcontentloaded", timeout: 60_000 });
            // One round trip: the heading read in the same call that sees the app mounted.
            const title = (await (
              await page.waitForFunction(
                `document.querySelector("#app")?.__vue_app__ !== undefined && { h1: document.querySelector("h1")?.textContent ?? "" }`,
                undefined,
                { timeout: 60_000 },
              )
            ).jsonValue()) as { h1: string } | undefined;
            if (!title?.h1.trim()) problems.push(`${file}: no heading`);
          }
        } finally {
          await page.close();
        }
      };
      await Promise.all([tab(), tab(), tab(), tab()]);
      expect(problems).toEqual([]);
    });

    it("shows the loading state while the search index loads, then the results", {
      timeout: 300_000,
    }, async () => {
      // The index is held back until the box has been seen loading: the idle prefetch's request
      // and the box's are one and the same (one module), so holding it holds both.
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      let release = () => {};
      const held = new Promise<void>((done) => {
        release = done;
      });
      const requested: string[] = [];
      try {
        await page.route(/@localSearchIndex/, async (route) => {
          requested.push(route.request().url());
          await held;
          await route.continue();
        });
        await page.goto(`${base}/index.html`, { waitUntil: "load" });
        // The default theme's search button wears DocSearch's class names, whichever the provider
        // (`VPNavBarSearchButton` is its component's name, not a class).
        await page.locator(".VPNavBarSearch .DocSearch-Button").first().click();
        const status = page.locator(".svc-search-status");
        await status.waitFor({ state: "visible", timeout: 30_000 });
        expect(await status.textContent()).toBe("Loading the search index…");
        await page.locator("#localsearch-input").fill("ERR_SVC_KERNEL_TRUST_PROXY");
        release();
        await page
          .locator(".result")
          .filter({ hasText: "ERR_SVC_KERNEL_TRUST_PROXY" })
          .first()
          .waitFor({ timeout: 60_000 });
        expect(await status.isVisible()).toBe(false);
        // Prefetched or not, the index is downloaded once.
        expect(requested).toHaveLength(1);
      } finally {
        release();
        await context.close();
      }
    });

    it("finds an error code with its search, and keeps screenshots of the home page and that code's page", {
      timeout: 300_000,
    }, async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      try {
        await page.goto(`${base}/index.html`, { waitUntil: "load" });
        const artifacts = join(docs, "artifacts");
        mkdirSync(artifacts, { recursive: true });
        await page.screenshot({ path: join(artifacts, "home.png") });
        await page.locator(".DocSearch-Button, .VPNavBarSearchButton").first().click();
        await page
          .locator("input.search-input, #localsearch-input")
          .first()
          .fill("ERR_SVC_KERNEL_TRUST_PROXY");
        const hit = page
          .locator(".result a, a.result, .results li a")
          .filter({ hasText: "ERR_SVC_KERNEL_TRUST_PROXY" });
        await hit.first().waitFor({ timeout: 60_000 });
        await hit.first().click();
        await page.waitForURL(/ERR_SVC_KERNEL_TRUST_PROXY/, { timeout: 60_000 });
        expect(await page.locator("h1").first().textContent()).toContain("ERR_SVC_KERNEL_TRUST_PROXY");
        await page.screenshot({ path: join(artifacts, "error-code.png") });
      } finally {
        await page.close();
      }
    });
  });
});

/**
 * Serving the built site from a plain static server (README, "docs:build"): built with
 * `DOCS_BASE=/`, its pages and assets are addressed from the root of `dist/`, so a server that maps
 * each path to the file of that name (`npx serve dist`) serves it.
 */
describe("the docs site built with DOCS_BASE=/", () => {
  let out: string;
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), "svc-docs-root-"));
    await exec(process.execPath, [join(docs, "scripts/generate.mjs")], { cwd: docs });
    await exec(
      process.execPath,
      [join(root, "node_modules/vitepress/bin/vitepress.js"), "build", "--outDir", out],
      { cwd: docs, env: buildEnv("/"), maxBuffer: 64 * 1024 * 1024 },
    );
    // A static server with no notion of a base: the path is the file, `/` the index.
    server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
      const file = join(out, path.endsWith("/") ? `${path}index.html` : path);
      if (!file.startsWith(out) || !existsSync(file)) {
        res.writeHead(404).end();
        return;
      }
      res
        .writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" })
        .end(readFileSync(file));
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 600_000);

  afterAll(async () => {
    server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it("serves the home page, a package page and every asset and page they name from the root", async () => {
    for (const page of ["/", "/packages/ratelimit.html"]) {
      const response = await fetch(`${origin}${page}`);
      expect(response.status, page).toBe(200);
      const html = await response.text();
      expect(html).not.toContain(`"${siteBase}`);
      const named = [...html.matchAll(/\s(?:href|src)="(\/[^"#]*)"/g)].map((m) => m[1] as string);
      expect(named.some((path) => path.startsWith("/assets/") && path.endsWith(".js"))).toBe(true);
      if (page !== "/") expect(named).toContain("/packages/ratelimit/options.html");
      const failed: string[] = [];
      for (const path of new Set(named)) {
        const r = await fetch(`${origin}${path}`);
        if (r.status !== 200) failed.push(`${page}: ${path} ${r.status}`);
      }
      expect(failed).toEqual([]);
    }
  });
});
