import { externalFacts } from "@svc/hal/express";
import { appendVary, requestState } from "@svc/kernel";
import type { Request } from "express";
import type { Href, RequestView } from "./view.js";

export type { Href };

/**
 * Links to `path` on the origin the client used, under the `/v<N>` prefix it named (spec part 9,
 * URI strategy): every link of a `/v2/...` response stays on `/v2`, so a client never reaches
 * version 1 employees by following links from version 2, not even through a version-neutral
 * resource (`/v2/` → departments → a department's employees). `href("")` is the bare origin.
 *
 * Behind a trusted proxy the origin comes from the forwarded fields, which the response's `Vary`
 * then names (RFC 9110 §12.5.5), so a shared cache never gives links to one forwarded host to a
 * request forwarded for another.
 */
export function hrefs(req: RequestView): Href {
  return req.hrefs();
}

/**
 * {@link hrefs} from the external origin and the `/v<N>` prefix the request was routed under
 * (`requestState(req).route.versionPrefix` of @svc/kernel; `""` for none).
 */
export function linksOn(origin: string, prefix: string): Href {
  return (path) => {
    if (path === "") return origin;
    if (!path.startsWith("/")) throw new TypeError(`href: path must start with "/", got ${path}`);
    return `${origin}${prefix}${path}`;
  };
}

/** {@link hrefs} of an Express request: its app's `trust proxy`, the version prefix it was routed under. */
export function expressHrefs(req: Request): Href {
  const facts = externalFacts(req);
  // The origin first: reading it is what records the forwarded fields it depended on.
  const origin = facts.origin;
  if (facts.vary.length > 0 && !req.res?.headersSent && req.res) appendVary(req.res, ...facts.vary);
  return linksOn(origin, requestState(req).route.versionPrefix);
}
