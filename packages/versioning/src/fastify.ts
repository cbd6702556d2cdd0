/**
 * `@svc/versioning` on Fastify 5. The version is decided by `fastifyAdapter(pipeline)` of
 * `@svc/kernel/fastify` (with `versions()` as the pipeline's `versioning` step): `rewriteUrl`
 * strips the `/v<N>` prefix before routing and its plugin sets the version's fields and throws the
 * refusal; handlers read the version from their context (`context.version`).
 */
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
  const prefix = routedPrefix(originForm(request.originalUrl), originForm(request.url));
  return withPrefix({ apiVersionPrefix: prefix }, path);
}

// RFC 9112 §3.2.2 absolute-form; the scheme is case-insensitive (RFC 3986 §3.1).
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * The target without the scheme and authority of an absolute-form one (`http://api.example/v2/x`
 * → `/v2/x`): Fastify keeps them in `url` and `originalUrl` alike, and the prefix is read off the
 * paths (RFC 9112 §3.2.2).
 */
function originForm(target: string): string {
  if (target.startsWith("/")) return target;
  const authority = ABSOLUTE_FORM.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  return rest.startsWith("/") ? rest : `/${rest}`;
}
