import { validators } from "@svc/conditional";
import { halJson, isPage, pageItems } from "@svc/hal";
import { createPipeline, type Pipeline, type RouteOptions } from "@svc/kernel";
import { type ExpressPipeline, expressAdapter } from "@svc/kernel/express";
import {
  compression,
  csv,
  html,
  json,
  type Representation,
  representations,
  text,
  xml,
} from "@svc/negotiate";
import { type ApiVersioningOptions, versions } from "@svc/versioning";

/** The app's response pipeline, as its routes use it (`svc.handle`, `svc.preconditions`). */
export type Svc = ExpressPipeline;

/** The options of a write route (its Idempotency-Key step), by the route's path and method. */
export type Keys = (path: string, method: "post" | "put" | "patch" | "delete") => RouteOptions;

/** No Idempotency-Key step on any route. */
export const NO_KEYS: Keys = () => ({});

/** A page model as CSV: one row per embedded item, without its links. */
const pageCsv: Representation = {
  mediaType: "text/csv",
  canRepresent: isPage,
  serialize: (data, context) => csv.serialize(pageItems(data), context),
};

/** Requests and routes outside the resource API: no version, no authentication. */
export const NEUTRAL = ["/health", "/ready", "/openapi.json", "/docs", "/.well-known", "/auth"];

/**
 * The one response pipeline of every route but the SOAP endpoints: the version before routing
 * (spec part 9: `/v<N>`, `API-Version`, `application/vnd.svc.v<N>+json`), the representation the
 * client negotiated (JSON, HAL+JSON, XML, CSV for pages, text, HTML) serialised once, its content
 * coding, a strong ETag per representation (weak when coded) with the request's preconditions
 * evaluated on it, then one write. Handlers return data; the same step that tags a GET gives a
 * write's `If-Match` its current tag (`svc.preconditions`).
 */
export function servicePipeline(): Svc {
  return expressAdapter(pipeline());
}

/** The pipeline {@link servicePipeline} adapts, for a framework's own adapter. */
/** The API versions (spec part 9), for `versions()` and for the OpenAPI document's fragment. */
export const VERSIONING = {
  versions: [1, 2],
  defaultVersion: 1,
  mediaType: { vendor: "svc" },
  neutral: NEUTRAL,
} satisfies ApiVersioningOptions;

export function pipeline(): Pipeline {
  return createPipeline({
    versioning: versions(VERSIONING),
    representations: representations({ offers: [json, halJson, xml, pageCsv, text, html] }),
    coding: compression(),
    validators: validators({ writeMatch: "selected" }),
  });
}
