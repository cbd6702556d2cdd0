import { validators } from "@svc/conditional";
import { halJson, isPage, pageItems } from "@svc/hal";
import {
  type CurrentState,
  createPipeline,
  type ExpressPipeline,
  expressAdapter,
  type RouteOptions,
  type Validators,
} from "@svc/kernel";
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
import { versions } from "@svc/versioning";

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

/**
 * `step` comparing a write's `If-Match` with the tag of the selected representation only: RFC 9110
 * §13.1.1, "the condition is true if any of the listed tags match the entity tag of the selected
 * representation", the one a GET with the write's own header fields would be sent (§3.2), which is
 * the first of the current state's variants. A client holding the JSON tag does not pass the
 * precondition of a write that negotiates HAL+JSON: it has not seen that representation.
 */
function selectedOnly(step: Validators): Validators {
  return {
    validate: (request, value, coding, lastModified) => step.validate(request, value, coding, lastModified),
    evaluate: (request, value) => step.evaluate(request, value),
    notModified: (request, value) => step.notModified(request, value),
    failed: (value) => step.failed(value),
    beforeWrite(request, current, creates) {
      const selected: CurrentState | undefined =
        current === undefined ? undefined : { ...current, variants: first(current.variants) };
      return step.beforeWrite(request, selected, creates);
    },
  };
}

async function* first<T>(items: AsyncIterable<T>): AsyncIterable<T> {
  for await (const item of items) {
    yield item;
    return;
  }
}

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
  return expressAdapter(
    createPipeline({
      versioning: versions({
        versions: [1, 2],
        defaultVersion: 1,
        mediaType: { vendor: "svc" },
        neutral: NEUTRAL,
      }),
      representations: representations({ offers: [json, halJson, xml, pageCsv, text, html] }),
      coding: compression(),
      validators: selectedOnly(validators()),
    }),
  );
}
