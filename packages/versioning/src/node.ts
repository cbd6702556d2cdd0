/**
 * `@svc/versioning` on plain `node:http`. The version is decided by `nodeAdapter(pipeline).prepare`
 * of `@svc/kernel/node` (with `versions()` as the pipeline's `versioning` step): it strips the
 * `/v<N>` prefix, sets the version's fields and rejects with the refusal; handlers read the version
 * from their context (`context.version`).
 */
import type { Prepared } from "@svc/kernel";
import { versionedPath as withPrefix } from "@svc/versioning";

/**
 * Puts the request's `/v<N>` prefix back in front of `path`, from what `svc.prepare(req, res)`
 * resolved to; unchanged with the header or media type strategy.
 *
 * @example
 * const ready = await svc.prepare(req, res);
 * const self = versionedPath(ready, `/employees/${id}`); // "/v2/employees/7" for /v2 requests
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function versionedPath(ready: { readonly prepared: Prepared }, path: string): string {
  return withPrefix({ apiVersionPrefix: ready.prepared.version?.prefix }, path);
}
