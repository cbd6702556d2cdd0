import { absoluteFormOrigin } from "@svc/errors";

/**
 * The path of a request-target, without its query: an origin-form target (`/ws/customer?wsdl`) up
 * to its `?`; an absolute-form one (`http://host/ws/customer?wsdl`) from the `/` after its scheme
 * and authority (`/` when it names no path); any other form (`*`) up to its `?`, as it is.
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3.2.2 — a server MUST accept the
 *   absolute-form, which a client sends to a proxy and a proxy may pass on.
 */
export function targetPath(target: string): string {
  const origin = absoluteFormOrigin(target);
  const rest = target.slice(origin.length);
  const query = rest.indexOf("?");
  const path = query === -1 ? rest : rest.slice(0, query);
  return origin === "" || path.startsWith("/") ? path : `/${path}`;
}
