/**
 * The request-target forms a router of paths meets, read once for every adapter (RFC 9112 §3.2):
 * the origin-form (`/employees/1?x`), the absolute-form (`http://api.example/employees/1`), the
 * asterisk-form (`*`) and the authority-form (`api.example:443`, CONNECT's). Each is routed as
 * Express's router routes it, so a target gets the same answer on every framework.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3.2
 */

/** `%` followed by anything but two hex digits. */
const STRAY_PERCENT = /%(?![0-9A-Fa-f]{2})/g;

/**
 * RFC 9112 §3.2.2 absolute-form as Node's parser passes it on: a scheme (RFC 3986 §3.1, any case),
 * `://` and an authority. Any scheme, as Express's router reads the path of any such target:
 * `scheme:` without `//` (`urn:x`) never reaches an application, Node's parser refuses it. Linear:
 * no nested repetition.
 */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** The absolute-form Fastify's router reads itself: `http://` and `https://`, in lower case. */
const ROUTER_ABSOLUTE = /^https?:\/\//;

/**
 * A target no route has, for a router that takes only paths: `//` is no path a route is written
 * for, and Express's router leaves the asterisk-form unrouted.
 */
const NO_ROUTE = "//";

/** The path of a request-target: what comes before its query (`?`) or fragment (`#`). */
function pathEnd(target: string): number {
  const query = target.indexOf("?");
  const hash = target.indexOf("#");
  if (hash !== -1 && (query === -1 || hash < query)) return hash;
  return query === -1 ? target.length : query;
}

/**
 * The scheme and authority of an absolute-form target, of any scheme (`ftp://api.example/x` →
 * `ftp://api.example`); `""` for any other form (the origin-form, `*`, the authority-form).
 * Linear: no nested repetition.
 *
 * @example absoluteOrigin("http://api.example/v2/employees") // "http://api.example"
 * @example absoluteOrigin("/v2/employees") // ""
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3.2.2
 */
export function absoluteOrigin(target: string): string {
  if (target.charCodeAt(0) === 47) return ""; // "/"
  return ABSOLUTE_FORM.exec(target)?.[0] ?? "";
}

/**
 * The target in origin-form: an absolute-form target's path and query after its scheme and
 * authority, an empty path being `/` (RFC 9112 §3.2.2: a server MUST accept the absolute-form,
 * and Express routes its path whatever the scheme); any other target as it is.
 */
export function originForm(target: string): string {
  const origin = absoluteOrigin(target);
  if (origin === "") return target;
  const rest = target.slice(origin.length);
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
}

/**
 * The path a request is dispatched on: no query, no fragment (RFC 9112 §3.2: a request-target has
 * none, a broken client may send one, and every router ends the path there), and of an
 * absolute-form target of any scheme its path, an empty one being `/`. The asterisk-form (`*`,
 * RFC 9112 §3.2.4) and the authority-form stay what they are: no route's path.
 *
 * @example targetPath("ftp://api.example/employees/7?x=1") // "/employees/7"
 * @example targetPath("*") // "*"
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3.2
 */
export function targetPath(target: string): string {
  const routed = originForm(target);
  return routed.slice(0, pathEnd(routed));
}

/**
 * Whether the path of `target` holds a `%` that begins no percent-encoding: RFC 3986 §2.1,
 * `pct-encoded = "%" HEXDIG HEXDIG`, so such a target is no URI. The query is left to whoever
 * reads it (a malformed query parameter is that parameter's 400).
 *
 * @example malformedEscape("/employees/%ZZ") // true
 * @example malformedEscape("/employees/7?q=%ZZ") // false
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-2.1
 */
export function malformedEscape(target: string): boolean {
  if (!target.includes("%")) return false;
  const path = target.slice(0, pathEnd(target));
  STRAY_PERCENT.lastIndex = 0;
  return STRAY_PERCENT.test(path);
}

/**
 * `target` with each stray `%` of its path written `%25`: a target a router that decodes paths
 * before any hook (Fastify's) can route, so that the pipeline's first step refuses the original
 * as it does on every framework.
 */
export function escapeStrayPercent(target: string): string {
  const end = pathEnd(target);
  return target.slice(0, end).replace(STRAY_PERCENT, "%25") + target.slice(end);
}

/**
 * The target a router of paths that routes before any hook (Fastify's) is given, so that it
 * routes what Express's router routes:
 * - an absolute-form target of any scheme by its path (RFC 9112 §3.2.2): Fastify's router strips
 *   an `http://` or `https://` authority itself (kept, so `request.url` names it as before); any
 *   other scheme, or one not in lower case, is given in origin-form;
 * - the asterisk-form (RFC 9112 §3.2.4) and the authority-form to no route, where Express's
 *   router leaves them (Fastify's would route `*` as `/`);
 * - a `%` of the path that begins no percent-encoding (RFC 3986 §2.1) escaped (`/%ZZ` →
 *   `/%25ZZ`), so that the router matches the path as Express's does instead of refusing the
 *   request before any hook runs. {@link malformedEscape} of the original tells a route's
 *   handler that its parameter cannot be decoded (Express's 400).
 *
 * @example routerTarget("ftp://api.example/employees/7") // "/employees/7"
 * @example routerTarget("/employees/%ZZ") // "/employees/%25ZZ"
 * @example routerTarget("*") // "//"
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3.2
 */
export function routerTarget(target: string): string {
  let routed = target;
  if (target.charCodeAt(0) !== 47) {
    if (absoluteOrigin(target) === "") return NO_ROUTE;
    if (!ROUTER_ABSOLUTE.test(target)) routed = originForm(target);
  }
  return malformedEscape(routed) ? escapeStrayPercent(routed) : routed;
}
