import { isTimerDelay } from "@svc/kernel/internal";
import { expandTemplate, type TemplateVariables } from "./link.js";
import { optionError } from "./option-error.js";

/** Options of {@link crawlLinks}. */
export interface CrawlOptions {
  /**
   * Request headers of every request (`Accept: application/hal+json`, `Authorization`, a version).
   * @default {}
   */
  headers?: Readonly<Record<string, string>>;
  /**
   * The declared routes, as Express-style (`/employees/:id`) or URI Template-style
   * (`/employees/{id}`) path patterns, or regular expressions over the path. A link whose path
   * matches none is reported as undeclared and not followed. Without it every same-origin path counts
   * as declared.
   * @default undefined
   */
  allowedRoutes?: readonly (string | RegExp)[];
  /**
   * Values for the variables of templated links; a variable not listed gets `"1"`.
   * @default {}
   */
  sampleValues?: TemplateVariables;
  /**
   * Relations not followed: CURIE documentation is usually hosted elsewhere.
   * @default ["curies"]
   */
  skipRelations?: readonly string[];
  /**
   * Upper bound of requests, so a link generator that invents ever new URLs cannot loop forever: a
   * positive integer.
   * @default 500
   */
  maxRequests?: number;
  /**
   * Milliseconds one request may take, response body included; a link whose target takes longer
   * is reported as broken (`network`) and the crawl goes on.
   * @default 10000
   */
  timeoutMs?: number;
  /**
   * The fetch implementation.
   * @default globalThis.fetch
   */
  fetch?: typeof fetch;
}

/** One link the crawl found wanting. */
export interface CrawlProblem {
  /** The link as resolved (templates expanded). */
  href: string;
  /** The URL of the document that carried it. */
  from: string;
  /** Its relation. */
  rel: string;
  /** `status` (4xx/5xx), `network` (no response), `external` (other origin) or `undeclared` (no declared route). */
  reason: "status" | "network" | "external" | "undeclared" | "invalid";
  /** The response status, for `status`. */
  status?: number;
}

/** What {@link crawlLinks} found. */
export interface CrawlReport {
  /** Every URL fetched, in order. */
  visited: string[];
  /** Links that did not resolve to a 2xx/3xx response. */
  broken: CrawlProblem[];
  /** Links outside the service's origin or its declared routes. */
  undeclared: CrawlProblem[];
  /**
   * Representations with `_links` but no `self` link (draft-kelly-json-hal §4.1.1), as the document
   * URL and a JSON Pointer (RFC 6901) to the representation (`""` for the document itself).
   */
  missingSelf: { url: string; pointer: string }[];
  /** True when nothing is broken, undeclared or missing `self`, and the crawl was not cut short. */
  ok: boolean;
  /** True when `maxRequests` stopped the crawl. */
  truncated: boolean;
}

function routeMatcher(route: string | RegExp): (path: string) => boolean {
  if (route instanceof RegExp) return (path) => route.test(path);
  const pattern = route
    .split("/")
    .map((segment) => {
      if (segment === "*") return ".*";
      if (/^:[A-Za-z_]\w*$/.test(segment) || /^\{[A-Za-z_]\w*\}$/.test(segment)) return "[^/]+";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  const re = new RegExp(`^${pattern}/?$`);
  return (path) => re.test(path);
}

/** The variable names of an RFC 6570 template (§2.2 / §2.4: operators, explode, prefix). */
export function templateVariables(template: string): string[] {
  const names: string[] = [];
  for (const match of template.matchAll(/\{([+#./;?&=,!@|]?)([^}]*)\}/g)) {
    for (const spec of (match[2] ?? "").split(",")) {
      const name = spec.replace(/\*$/, "").replace(/:\d+$/, "").trim();
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

interface FoundLink {
  rel: string;
  href: string;
  templated: boolean;
}

function collectLinks(
  doc: unknown,
  out: FoundLink[],
  skip: ReadonlySet<string>,
  noSelf: string[],
  pointer = "",
  depth = 0,
): void {
  if (depth > 32 || doc === null || typeof doc !== "object") return;
  if (Array.isArray(doc)) {
    doc.forEach((item, i) => {
      collectLinks(item, out, skip, noSelf, `${pointer}/${i}`, depth + 1);
    });
    return;
  }
  const record = doc as Record<string, unknown>;
  const links = record._links;
  if (links !== null && typeof links === "object" && !Array.isArray(links)) {
    if (!("self" in links)) noSelf.push(pointer);
    for (const [rel, value] of Object.entries(links as Record<string, unknown>)) {
      if (skip.has(rel)) continue;
      for (const link of Array.isArray(value) ? value : [value]) {
        // a link is a URI string, or a Link Object with href (draft-kelly-json-hal §5)
        if (typeof link === "string") out.push({ rel, href: link, templated: false });
        else if (
          link !== null &&
          typeof link === "object" &&
          typeof (link as { href?: unknown }).href === "string"
        ) {
          const l = link as { href: string; templated?: unknown };
          out.push({ rel, href: l.href, templated: l.templated === true });
        }
      }
    }
  }
  for (const [key, value] of Object.entries(record)) {
    if (key !== "_links" && value !== null && typeof value === "object") {
      // RFC 6901 §3: "~" and "/" in a member name are escaped as "~0" and "~1"
      const token = key.replace(/~/g, "~0").replace(/\//g, "~1");
      collectLinks(value, out, skip, noSelf, `${pointer}/${token}`, depth + 1);
    }
  }
}

/** The options of {@link crawlLinks}, resolved once. */
interface CrawlConfig {
  base: URL;
  fetch: typeof fetch;
  headers: Readonly<Record<string, string>> | undefined;
  /** `undefined`: every same-origin path is declared. */
  matchers: ((path: string) => boolean)[] | undefined;
  skip: ReadonlySet<string>;
  maxRequests: number;
  timeoutMs: number;
  samples: TemplateVariables;
}

function resolveCrawlConfig(baseUrl: string, options: CrawlOptions): CrawlConfig {
  // A bound that is not a positive integer (NaN, Infinity, "10") compares false with every count
  // and would let the crawl run on without end: refused, as a timeout no timer can keep.
  const maxRequests = options.maxRequests ?? 500;
  if (!Number.isSafeInteger(maxRequests) || maxRequests < 1) {
    throw optionError("crawlLinks", "maxRequests", maxRequests, "a positive integer");
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (!isTimerDelay(timeoutMs)) {
    throw optionError("crawlLinks", "timeoutMs", timeoutMs, "milliseconds above 0, at most 2147483647");
  }
  return {
    base: new URL(baseUrl),
    fetch: options.fetch ?? globalThis.fetch,
    headers: options.headers,
    matchers: options.allowedRoutes?.map(routeMatcher),
    skip: new Set(options.skipRelations ?? ["curies"]),
    maxRequests,
    timeoutMs,
    samples: options.sampleValues ?? {},
  };
}

/** A URL waiting to be fetched: where it was found, and by which relation. */
interface Pending {
  url: string;
  from: string;
  rel: string;
}

/** A crawl in progress: the queue, the URLs already queued or reported, and the report. */
interface Crawl {
  config: CrawlConfig;
  queue: Pending[];
  seen: Set<string>;
  report: CrawlReport;
}

/**
 * Fetches one queued URL: its JSON document with the URL it came from (after redirects), or
 * `undefined` when it failed (reported as broken) or is not JSON (nothing to follow).
 */
async function fetchDocument(
  crawl: Crawl,
  { url, from, rel }: Pending,
): Promise<{ doc: unknown; docUrl: string } | undefined> {
  const { report } = crawl;
  // One deadline for the response and its body: a target that never answers, or answers and
  // then stalls, is a broken link, not a crawl that never ends.
  const signal = AbortSignal.timeout(crawl.config.timeoutMs);
  let response: Response;
  try {
    response = await crawl.config.fetch(url, { headers: { ...crawl.config.headers }, signal });
  } catch {
    report.broken.push({ href: url, from, rel, reason: "network" });
    return undefined;
  }
  if (response.status >= 400) {
    report.broken.push({ href: url, from, rel, reason: "status", status: response.status });
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  const type = response.headers.get("content-type") ?? "";
  if (!/^application\/(?:[\w.-]+\+)?json\b/i.test(type)) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  try {
    return { doc: await response.json(), docUrl: response.url || url };
  } catch {
    if (signal.aborted) report.broken.push({ href: url, from, rel, reason: "network" });
    return undefined;
  }
}

/** A link's target: templates expanded with the sample values, resolved against the document. */
function linkTarget(
  link: FoundLink,
  docUrl: string,
  samples: TemplateVariables,
): { href: string; target?: URL } {
  let href = link.href;
  try {
    if (link.templated) {
      const vars: Record<string, TemplateVariables[string]> = {};
      for (const name of templateVariables(link.href)) vars[name] = samples[name] ?? "1";
      href = expandTemplate(link.href, vars);
    }
    // RFC 3986 §5: relative references resolve against the document's URL.
    return { href, target: new URL(href, docUrl) };
  } catch {
    return { href };
  }
}

/**
 * Reports the document's representations without `self`, then queues each link not seen yet,
 * unless it is invalid (broken), leaves the origin (external) or matches no declared route
 * (undeclared).
 */
function followLinks(crawl: Crawl, url: string, doc: unknown, docUrl: string): void {
  const { config, report, seen } = crawl;
  const found: FoundLink[] = [];
  const noSelf: string[] = [];
  collectLinks(doc, found, config.skip, noSelf);
  for (const pointer of noSelf) report.missingSelf.push({ url, pointer });
  for (const link of found) {
    const { href, target } = linkTarget(link, docUrl, config.samples);
    if (target === undefined) {
      report.broken.push({ href, from: url, rel: link.rel, reason: "invalid" });
      continue;
    }
    target.hash = "";
    const key = target.href;
    if (seen.has(key)) continue;
    seen.add(key);
    if (target.origin !== config.base.origin) {
      report.undeclared.push({ href: key, from: url, rel: link.rel, reason: "external" });
    } else if (config.matchers && !config.matchers.some((m) => m(target.pathname))) {
      report.undeclared.push({ href: key, from: url, rel: link.rel, reason: "undeclared" });
    } else {
      crawl.queue.push({ url: key, from: url, rel: link.rel });
    }
  }
}

/**
 * A test helper: crawls a running service from `startPath`, follows every `href` in `_links`
 * (top level and embedded, templates expanded with sample values) and reports every link that does
 * not resolve, every one that leaves the service's origin or its declared routes, and every
 * representation with links but no `self` (draft-kelly-json-hal §4.1.1 says a resource SHOULD
 * link to itself); run it in an integration test against a seeded app.
 *
 * @example
 * const report = await crawlLinks(url, "/employees", {
 *   headers: { Accept: "application/hal+json" },
 *   allowedRoutes: ["/employees", "/employees/:id", "/departments/:id"],
 * });
 * expect(report.broken).toEqual([]);
 * expect(report.undeclared).toEqual([]);
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-5.1
 */
export async function crawlLinks(
  baseUrl: string,
  startPath: string,
  options: CrawlOptions = {},
): Promise<CrawlReport> {
  const config = resolveCrawlConfig(baseUrl, options);
  const start = new URL(startPath, config.base).href;
  const report: CrawlReport = {
    visited: [],
    broken: [],
    undeclared: [],
    missingSelf: [],
    ok: false,
    truncated: false,
  };
  const crawl: Crawl = {
    config,
    queue: [{ url: start, from: start, rel: "start" }],
    seen: new Set([start]),
    report,
  };
  while (crawl.queue.length > 0) {
    if (report.visited.length >= config.maxRequests) {
      report.truncated = true;
      break;
    }
    const pending = crawl.queue.shift() as Pending;
    report.visited.push(pending.url);
    const fetched = await fetchDocument(crawl, pending);
    if (fetched !== undefined) followLinks(crawl, pending.url, fetched.doc, fetched.docUrl);
  }
  report.ok =
    report.broken.length === 0 &&
    report.undeclared.length === 0 &&
    report.missingSelf.length === 0 &&
    !report.truncated;
  return report;
}
