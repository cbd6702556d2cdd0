/**
 * `@svc/versioning` on Fastify 5. The version is decided by `fastifyAdapter(pipeline)` of
 * `@svc/kernel/fastify` (with `versions()` as the pipeline's `versioning` step): `rewriteUrl`
 * strips the `/v<N>` prefix before routing and its plugin sets the version's fields and throws the
 * refusal; handlers read the version from their context (`context.version`).
 */
import { targetPath } from "@svc/kernel";
import { routedPrefix, versionedPath as withPrefix } from "@svc/versioning";
import type { FastifyRequest } from "fastify";

/**
 * Puts the request's `/v<N>` prefix back in front of `path` (the prefix Fastify's `rewriteUrl`
 * stripped: `request.originalUrl` against `request.url`); unchanged with the header or media type
 * strategy.
 *
 * @example reply.header("Location", versionedPath(request, `/employees/${id}`))
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function versionedPath(request: FastifyRequest, path: string): string {
  // RFC 9112 §3.2.2: the prefix is read off the paths, an absolute-form target's (of any scheme)
  // after its scheme and authority, which Fastify keeps in `originalUrl` and, for `http(s)`, `url`.
  const prefix = routedPrefix(targetPath(request.originalUrl), targetPath(request.url));
  return withPrefix({ apiVersionPrefix: prefix }, path);
}
