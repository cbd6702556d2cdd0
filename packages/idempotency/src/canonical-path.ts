/**
 * How the router compares paths: Express's `case sensitive routing` and `strict routing` app
 * settings (both off by default, in Express 4 and 5).
 */
export interface RoutingRules {
  /** `/Orders` and `/orders` are different routes. @default false */
  caseSensitive: boolean;
  /** `/orders/` and `/orders` are different routes. @default false */
  strict: boolean;
}

/** What {@link routedPath} reads of the pipeline's versioning decision (`@svc/kernel`'s `VersionDecision`). */
export interface VersionPrefix {
  /** The request-target the router was given, the prefix removed. */
  readonly target: string;
  /** The `/v<N>` prefix removed, as sent, or `""`. */
  readonly prefix: string;
}

/** RFC 3986 §3.3 `pchar` minus `%`: the characters a path segment may carry unencoded. */
const PCHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;
const PERCENT = /%([0-9A-Fa-f]{2})/g;

/**
 * The path of a request target as the router sees it: the absolute form (`http://host/a`) reduced
 * to its path (RFC 9112 §3.2.2), query and fragment dropped.
 */
export function targetPath(target: string): string {
  if (target.startsWith("/")) {
    const end = target.search(/[?#]/);
    return end === -1 ? target : target.slice(0, end);
  }
  try {
    return new URL(target).pathname || "/";
  } catch {
    return target.replace(/[?#].*$/s, "");
  }
}

/**
 * One spelling for every path the router would send to the same handler, so an idempotency key
 * scoped by it cannot be replayed past, or run twice, by spelling the path another way:
 *
 * - percent-encoded octets that a segment may carry unencoded are decoded, and the hex digits of
 *   the others upper-cased (RFC 3986 §6.2.2.1 and §6.2.2.2): the router decodes route parameters,
 *   so `/orders/a%62c` and `/orders/abc` run the same handler with the same `id`;
 * - without `caseSensitive`, the path is lower-cased (Express matches case-insensitively);
 * - without `strict`, one trailing slash is dropped (Express 4 and 5 match `/orders/` to
 *   `/orders`, but not `/orders//`).
 *
 * Repeated slashes and dot segments are kept: Express routes neither `//orders` nor
 * `/./orders` to `/orders`. Folding parameters' case too (`/orders/ABC` and `/orders/abc`) only
 * ever joins spellings into one key, which errs on the side of running a handler once.
 *
 * @example canonicalPath("/Transfers/", { caseSensitive: false, strict: false }) // "/transfers"
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-6.2.2
 * @see https://expressjs.com/en/api.html#app.settings.table
 */
export function canonicalPath(path: string, rules: RoutingRules): string {
  let out = path.replace(PERCENT, (_, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return PCHAR.test(char) ? char : `%${hex.toUpperCase()}`;
  });
  if (!rules.caseSensitive) out = out.toLowerCase();
  if (!rules.strict && out.length > 1 && out.endsWith("/")) out = out.slice(0, -1);
  return out;
}

/**
 * The path as routed: `path` (the target's path as sent) without the `/v<N>` prefix the pipeline's
 * versioning step removed before routing, so `/v1/transfers` and `/transfers` (version 1 by
 * default) are one route, as the router ran them. The prefix is removed where it stands, before
 * the path the router was given (`/api/v1/transfers` → `/api/transfers` under a mount); a path
 * that does not end so is the router's own target.
 *
 * @example routedPath("/v1/transfers", { target: "/transfers", prefix: "/v1" }) // "/transfers"
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2 a key is unique to one resource's operation
 */
export function routedPath(path: string, version: VersionPrefix | undefined): string {
  if (version === undefined || version.prefix === "") return path;
  const rest = targetPath(version.target);
  const tail = version.prefix + rest;
  if (path.endsWith(tail)) return path.slice(0, path.length - tail.length) + rest;
  if (rest === "/" && path.endsWith(version.prefix))
    return `${path.slice(0, path.length - version.prefix.length)}/`;
  return rest;
}
