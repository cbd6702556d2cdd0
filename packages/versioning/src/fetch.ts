/**
 * `@svc/versioning` on the Fetch API (Hono). The version is decided by `fetchAdapter(pipeline)` of
 * `@svc/kernel/fetch` (with `versions()` as the pipeline's `versioning` step): Hono routes on its
 * `getPath` (the `/v<N>` prefix stripped), its `middleware` sets the version's fields and throws the
 * refusal; handlers read the version from their context (`context.version`).
 */
import { targetPath } from "@svc/kernel";
import { fetchView } from "@svc/kernel/fetch";
import { routedPrefix, versionedPath as withPrefix } from "@svc/versioning";

/** The part of a Hono `Context` {@link versionedPath} reads: the request and the path Hono routed. */
export interface RoutedContext {
  readonly req: { readonly raw: Request; readonly path: string };
}

/**
 * Puts the request's `/v<N>` prefix back in front of `path` (the prefix the adapter's `getPath`
 * stripped: the request URL's path against `c.req.path`); unchanged with the header or media type
 * strategy.
 *
 * @example return c.json(employee, 201, { Location: versionedPath(c, `/employees/${id}`) });
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function versionedPath(c: RoutedContext, path: string): string {
  const routed = targetPath(fetchView(c.req.raw).url ?? "/");
  return withPrefix({ apiVersionPrefix: routedPrefix(routed, c.req.path) }, path);
}
