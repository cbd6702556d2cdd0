import { exchangeIfAny } from "@svc/kernel";

/**
 * Puts the request's `/v<N>` prefix back in front of a path, so links in a response to
 * `/v2/employees` point at `/v2/...` and the client stays in its version; with the header or media
 * type strategy the path is returned unchanged (the version lives outside the URL). Compose it with
 * `hrefFor` of @svc/hal. Takes a request the pipeline's `prepare` has seen, on any framework
 * (Express's `req`, Fastify's `request`, Hono's `c.req` or a Fetch `Request`: the decision is in
 * its exchange, read as `routeOf(req).versionPrefix` of `@svc/kernel`), or a decision's `prefix`
 * as `{ apiVersionPrefix }` (an object no pipeline has prepared).
 *
 * @example hrefFor(req, versionedPath(req, `/employees/${id}`)) // ".../v2/employees/7" for /v2 requests
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function versionedPath(req: object, path: string): string {
  if (typeof path !== "string" || !path.startsWith("/")) {
    throw new TypeError(`versionedPath: path must start with "/", got ${String(path)}`);
  }
  const decided = exchangeIfAny(req)?.version;
  const prefix =
    decided === undefined ? (req as { apiVersionPrefix?: unknown }).apiVersionPrefix : decided.prefix;
  return typeof prefix === "string" ? `${prefix}${path}` : path;
}

/**
 * The version prefix a router's rewrite stripped, from the path as sent and the path as routed
 * (`/v2/employees/7` and `/employees/7` → `/v2`); `""` when nothing was stripped. For an adapter
 * whose framework keeps both paths (Fastify's `originalUrl` and `url`, Hono's request URL and
 * `c.req.path`), the decision itself being the pipeline's.
 *
 * @example routedPrefix("/v2/employees/7", "/employees/7") // "/v2"
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function routedPrefix(sent: string, routed: string): string {
  const path = (target: string) => {
    const end = target.search(/[?#]/);
    return end === -1 ? target : target.slice(0, end);
  };
  const whole = path(sent);
  const rest = path(routed);
  if (whole === rest) return "";
  if (whole.endsWith(rest)) return whole.slice(0, whole.length - rest.length);
  // A prefix alone (`/v2`) is routed as `/`.
  return rest === "/" ? whole.replace(/\/$/, "") : "";
}
