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
export const base = "/svc/";

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
    search: { provider: "local" },
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
      "/packages/": [{ text: "Packages", link: "/packages/", items: pages("packages") }],
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
