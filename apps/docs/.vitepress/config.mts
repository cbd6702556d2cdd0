import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitepress";

/**
 * VitePress over the pages `scripts/generate.mjs` writes into `content/`. Chosen over Starlight:
 * Markdown in, static HTML out, and a local full-text search (MiniSearch, built into the theme)
 * with no service and no native binary, which a docs site of READMEs needs and no more.
 */
const content = join(import.meta.dirname, "..", "content");

/** The pages of one folder of `content/`, for the sidebar (its index first). */
function pages(folder: string): { text: string; link: string }[] {
  const dir = join(content, folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".md") && f !== "index.md")
    .sort()
    .map((f) => ({ text: f.replace(/\.md$/, ""), link: `/${folder}/${f.replace(/\.md$/, "")}` }));
}

/**
 * Heading anchors as GitHub makes them (lower case, punctuation dropped, each space a hyphen), so
 * that a README's links to its own sections work on GitHub, on npm and here alike.
 */
function githubSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/**
 * Where the site is served: GitHub Pages of github.com/svc-dev/svc (the packages' `homepage`), so
 * under `/svc/`, each `ERR_SVC_*` code at `https://svc-dev.github.io/svc/errors/<code>.html` (the
 * site test checks that address).
 */
export const defaultBase = "/svc/";

/**
 * The base the site is built for: `DOCS_BASE` when set (`DOCS_BASE=/` for a static server at the
 * root of `dist/`, such as `npx serve dist`), else {@link defaultBase}. Every link and asset
 * of the built pages starts with it, so a server must serve `dist/` at that path.
 */
export function siteBase(given: string | undefined): string {
  if (given === undefined || given.trim() === "") return defaultBase;
  const path = given.trim().replace(/^\/+|\/+$/g, "");
  return path === "" ? "/" : `/${path}/`;
}

export const base = siteBase(process.env.DOCS_BASE);

/** The package pages, each with its options page (`packages/<name>/options.md`) below it. */
function packagePages(): {
  text: string;
  link: string;
  collapsed?: boolean;
  items?: { text: string; link: string }[];
}[] {
  return pages("packages").map((page) =>
    existsSync(join(content, `${page.link}/options.md`))
      ? { ...page, collapsed: true, items: [{ text: "options", link: `${page.link}/options` }] }
      : page,
  );
}

/**
 * What the local search indexes of a page (it loads the whole index at the first search, so its
 * size is the wait): no code blocks; of the per-code pages (`errors/`, `problems/`, some 420
 * pages of one template each, whose README words the package pages carry already) the title and
 * what precedes their first section; of the options pages (the READMEs' own tables) the headings.
 */
function searchedHtml(html: string, relativePath: string): string {
  const text = html.replace(/<pre[\s\S]*?<\/pre>/g, "");
  if (/^(?:errors|problems)\/(?!index\.md$)/.test(relativePath)) return text.split(/<h2[\s>]/)[0] ?? "";
  if (/^packages\/[^/]+\/options\.md$/.test(relativePath))
    return [...text.matchAll(/<h[12][\s>][\s\S]*?<\/h[12]>/g)].map((m) => m[0]).join("\n");
  return text;
}

export default defineConfig({
  title: "@svc",
  base,
  description: "HTTP protocol middleware for Express, Fastify, node:http and Fetch servers",
  srcDir: "content",
  outDir: "dist",
  cacheDir: ".vitepress/cache",
  // The pages link to the repository's files on GitHub; a dead link inside the site fails the build.
  ignoreDeadLinks: false,
  lastUpdated: false,
  head: [["link", { rel: "icon", type: "image/svg+xml", href: `${base}favicon.svg` }]],
  markdown: { anchor: { slugify: githubSlug } },
  themeConfig: {
    search: {
      provider: "local",
      options: {
        _render(src, env, md) {
          const html = md.render(src, env);
          return env.frontmatter?.search === false ? "" : searchedHtml(html, env.relativePath);
        },
      },
    },
    nav: [
      { text: "Packages", link: "/packages/" },
      { text: "Guides", link: "/guides/" },
      { text: "Frameworks", link: "/frameworks/" },
      { text: "Runtimes", link: "/runtimes/" },
      { text: "Observability", link: "/observability" },
      { text: "Error codes", link: "/errors/" },
      { text: "Record codes", link: "/problems/" },
    ],
    sidebar: {
      "/packages/": [{ text: "Packages", link: "/packages/", items: packagePages() }],
      "/guides/": [{ text: "Guides", link: "/guides/", items: pages("guides") }],
      "/frameworks/": [{ text: "Frameworks", link: "/frameworks/", items: pages("frameworks") }],
      "/runtimes/": [{ text: "Runtimes", link: "/runtimes/", items: pages("runtimes") }],
      // Some 350 codes: the sidebar names the index, which lists them by package (a sidebar of every
      // code would be written into each of their pages).
      "/errors/": [{ text: "Error codes", link: "/errors/" }],
      "/problems/": [{ text: "Error record codes", link: "/problems/", items: pages("problems") }],
    },
    socialLinks: [{ icon: "github", link: "https://github.com/svc-dev/svc" }],
  },
});
