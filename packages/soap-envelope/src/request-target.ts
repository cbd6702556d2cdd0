/**
 * The path of a request-target, without its query: an origin-form target (`/ws/customer?wsdl`) up
 * to its `?`; an absolute-form one (`http://host/ws/customer?wsdl`) from the `/` after its scheme
 * and authority (`/` when it names no path); any other form (`*`) up to its `?`, as it is.
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3.2.2 — a server MUST accept the
 *   absolute-form, which a client sends to a proxy and a proxy may pass on.
 */
export function targetPath(target: string): string {
  const query = target.indexOf("?");
  const end = query === -1 ? target.length : query;
  if (target.startsWith("/")) return target.slice(0, end);
  const scheme = target.indexOf("://");
  if (scheme === -1 || scheme > end) return target.slice(0, end);
  const slash = target.indexOf("/", scheme + 3);
  return slash === -1 || slash > end ? "/" : target.slice(slash, end);
}
