import { externalOrigin } from "@svc/hal";
import type { Request } from "express";

/** Builds absolute hrefs from the URL the client used (proxy-aware through @svc/hal). */
export type Href = (path: string) => string;

export function hrefs(req: Request): Href {
  const origin = externalOrigin(req);
  return (path) => `${origin}${path}`;
}
