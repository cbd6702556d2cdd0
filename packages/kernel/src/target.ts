/** `%` followed by anything but two hex digits. */
const STRAY_PERCENT = /%(?![0-9A-Fa-f]{2})/g;

/** The path of a request-target: what comes before its query (`?`) or fragment (`#`). */
function pathEnd(target: string): number {
  const query = target.indexOf("?");
  const hash = target.indexOf("#");
  if (hash !== -1 && (query === -1 || hash < query)) return hash;
  return query === -1 ? target.length : query;
}

/**
 * Whether the path of `target` holds a `%` that begins no percent-encoding: RFC 3986 §2.1,
 * `pct-encoded = "%" HEXDIG HEXDIG`, so such a target is no URI. The query is left to whoever
 * reads it (a malformed query parameter is that parameter's 400).
 *
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-2.1
 */
export function malformedEscape(target: string): boolean {
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
