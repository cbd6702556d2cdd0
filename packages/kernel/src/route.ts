import { exchangeIfAny, exchangeOf, type RoutingRules } from "./exchange.js";
import type { VersionDecision } from "./steps.js";
import { targetPath } from "./target.js";

/**
 * The route a request was routed to, as every package that keeps or labels something per route
 * reads it (the `Idempotency-Key` scope and its `required` routes, a per-route limit, `http.route`):
 * one identity whatever the client spelled, the same on every framework.
 */
export interface RouteRecord {
  /**
   * The path as routed, the mount included: the version prefix the versioning step removed is
   * gone, and the path is in {@link canonicalPath}'s one spelling under the router's rules
   * (`/V1/Orders/` → `/orders` on Express's defaults).
   */
  readonly path: string;
  /**
   * The template of the route the router matched, its mount in front (`/api/orders/:id`), once the
   * router has matched one; `undefined` before routing, and where no router records one.
   */
  readonly template: string | undefined;
  /** The path the router that routed it is mounted at (Express's `req.baseUrl`), or `""`. */
  readonly mount: string;
  /** The `/v<N>` prefix the versioning step removed, as sent (`/v1`), or `""`. */
  readonly versionPrefix: string;
}

/** RFC 3986 §3.3 `pchar` minus `%`: the characters a path segment may carry unencoded. */
const PCHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;
const PERCENT = /%([0-9A-Fa-f]{2})/g;

/**
 * One spelling for every path the router would send to the same handler, so whatever is kept or
 * counted by it cannot be split, or joined, by spelling the path another way:
 *
 * - percent-encoded octets that a segment may carry unencoded are decoded, and the hex digits of
 *   the others upper-cased (RFC 3986 §6.2.2.1 and §6.2.2.2): routers decode route parameters, so
 *   `/orders/a%62c` and `/orders/abc` run the same handler with the same `id`;
 * - without `caseSensitive`, the path is lower-cased (Express matches case-insensitively);
 * - without `strict`, one trailing slash is dropped (Express 4 and 5 match `/orders/` to
 *   `/orders`, but not `/orders//`).
 *
 * Repeated slashes and dot segments are kept: Express routes neither `//orders` nor `/./orders`
 * to `/orders`. Folding parameters' case too (`/orders/ABC` and `/orders/abc`) only ever joins
 * spellings, which errs on the side of one key for one resource.
 *
 * @example canonicalPath("/Transfers/", { caseSensitive: false, strict: false }) // "/transfers"
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-6.2.2
 * @see https://expressjs.com/en/api.html#app.settings.table
 */
export function canonicalPath(path: string, rules: RoutingRules): string {
  let out = path.includes("%")
    ? path.replace(PERCENT, (_, hex: string) => {
        const char = String.fromCharCode(Number.parseInt(hex, 16));
        return PCHAR.test(char) ? char : `%${hex.toUpperCase()}`;
      })
    : path;
  if (!rules.caseSensitive) out = out.toLowerCase();
  if (!rules.strict && out.length > 1 && out.endsWith("/")) out = out.slice(0, -1);
  return out;
}

/**
 * `path` (the target's path as sent) without the `/v<N>` prefix the versioning step removed before
 * routing, so `/v1/transfers` and `/transfers` (version 1 by default) are one route, as the router
 * ran them. The prefix is removed where it stands, before the path the router was given
 * (`/api/v1/transfers` → `/api/transfers` under a mount); a path that does not end so is the
 * router's own target.
 *
 * @example routedPath("/v1/transfers", { target: "/transfers", prefix: "/v1" }) // "/transfers"
 */
export function routedPath(
  path: string,
  version: Pick<VersionDecision, "target" | "prefix"> | undefined,
): string {
  if (version === undefined || version.prefix === "") return path;
  const rest = targetPath(version.target);
  const tail = version.prefix + rest;
  if (path.endsWith(tail)) return path.slice(0, path.length - tail.length) + rest;
  if (rest === "/" && path.endsWith(version.prefix))
    return `${path.slice(0, path.length - version.prefix.length)}/`;
  return rest;
}

/** A router that tells one path from every other spelling of it (`node:http`, Hono): nothing folds. */
const EXACT: RoutingRules = Object.freeze({ caseSensitive: true, strict: true });

/** What the framework's own request says of its route, read where the kernel's views left it. */
interface RoutedRequest {
  /** Express: the matched route (`req.route.path`), under `req.baseUrl`. */
  readonly route?: { readonly path?: unknown } | undefined;
  readonly baseUrl?: unknown;
  /** Fastify 4.10+ and 5: the matched route's options (`url`, its prefix included). */
  readonly routeOptions?: { readonly url?: unknown } | undefined;
}

function frameworkTemplate(request: object, mount: string): string | undefined {
  const routed = request as RoutedRequest;
  const fastify = routed.routeOptions?.url;
  if (typeof fastify === "string") return fastify;
  const express = routed.route?.path;
  if (typeof express === "string") return `${mount}${express}`;
  return undefined;
}

/**
 * Records the template of the route `request` was matched to (`/orders/:id`, its mount in front),
 * for an adapter whose framework leaves it nowhere the kernel reads (Hono's `c.req.routePath`).
 * Express's `req.route` and Fastify's `routeOptions` are read without it.
 *
 * @example app.get("/orders/:id", (c) => { recordRouteTemplate(c.req.raw, c.req.routePath); … });
 */
export function recordRouteTemplate(request: object, template: string): void {
  exchangeOf(request).routeTemplate = template;
}

/**
 * The route `request` was routed to ({@link RouteRecord}), from what its steps recorded in the
 * exchange: the target as received (the adapter's view), the versioning decision's prefix, the
 * router's rules (`rules` when given, else Express's settings as its view recorded them, else
 * exact matching) and the router's template once it has matched.
 *
 * @example
 * const { path, template } = routeOf(req); // "/transfers", "/transfers" for POST /V1/Transfers/
 */
export function routeOf(request: object, rules?: RoutingRules): RouteRecord {
  const exchange = exchangeIfAny(request);
  const view = (exchange?.view ?? request) as { originalUrl?: unknown; url?: unknown; baseUrl?: unknown };
  const sent =
    typeof view.originalUrl === "string" ? view.originalUrl : typeof view.url === "string" ? view.url : "/";
  const folding = rules ?? exchange?.routing ?? EXACT;
  const version = exchange?.version;
  const baseUrl = (request as RoutedRequest).baseUrl;
  const mount =
    typeof baseUrl === "string" && baseUrl !== "" ? canonicalPath(baseUrl, { ...folding, strict: true }) : "";
  return {
    path: canonicalPath(routedPath(targetPath(sent), version), folding),
    template: exchange?.routeTemplate ?? frameworkTemplate(request, mount),
    mount,
    versionPrefix: version?.prefix ?? "",
  };
}
