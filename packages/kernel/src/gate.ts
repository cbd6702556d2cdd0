import type { IncomingHttpHeaders } from "node:http";
import type { FieldValue, ResponseValue } from "./response.js";

/**
 * What the @svc cores read of a request, whatever framework received it: the method, the
 * request-target, the fields (lower-case names, as `node:http` gives them; a list for a repeated
 * field), the fields as received, and the connection's other end. The one shape of a request in
 * the packages: gates are given one, the pipeline's steps read one (`PipelineRequest.view`),
 * `requestFacts` reads one. A `node:http` request (and so an Express request, and Fastify's
 * `request.raw`) is one as it is; each adapter's view function (`nodeView`, `expressView`,
 * `fastifyView`, `fetchView`) hands one over and records it in the request's exchange
 * (`Exchange.view`).
 */
export interface RequestView {
  /** The method, as received (`GET`). */
  readonly method?: string | undefined;
  /** The request-target: the path and query as received (`/employees?page=2`). */
  readonly url?: string | undefined;
  /**
   * The whole request-target as received, where a framework routes on less of it: Express's
   * `req.originalUrl` (before a mount path is stripped), or the absolute-form target a Fetch
   * server told (`ConnectionInfo.target`). `requestFacts` reads an absolute-form target's
   * authority here before `url` (RFC 9112 §3.2.2).
   * @default `url`
   */
  readonly originalUrl?: string | undefined;
  /** The fields by lower-case name; a repeated field as a list (`set-cookie`) or joined. */
  readonly headers: IncomingHttpHeaders;
  /** Field names and values alternating, as received, for the fields whose repetition matters. */
  readonly rawHeaders?: readonly string[] | undefined;
  /** The connection: its other end's address, and whether it is TLS. */
  readonly socket?:
    | { readonly remoteAddress?: string | undefined; readonly encrypted?: boolean }
    | null
    | undefined;
}

/** A gate lets the request through, with the fields every response to it carries. */
export interface Passage {
  /**
   * Response fields by name (`RateLimit`, `Deprecation`): set on whatever answers the request; a
   * `null` one removed.
   */
  readonly fields?: Readonly<Record<string, FieldValue | null>> | undefined;
  /** Request fields the decision read, appended to the response's `Vary` (RFC 9110 §12.5.5). */
  readonly vary?: readonly string[] | undefined;
}

/** A gate answers the request itself (a CORS preflight's 204, a SOAP response). */
export interface Answer {
  readonly answer: ResponseValue;
}

/**
 * What a check in front of the routes decides about one request: let it through (`undefined`,
 * or a {@link Passage} with fields for its response), answer it ({@link Answer}), or refuse it by
 * throwing the `HttpError` to answer, which the framework's error handling renders
 * (`@svc/errors`). The framework adapters (`expressGate`, `nodeGate`, `fastifyGate`,
 * `fetchGate`) apply the decision; none of them decides anything.
 */
export type GateOutcome = Passage | Answer | undefined;

/** A check in front of the routes: a {@link RequestView} in, a {@link GateOutcome} out. */
export type Gate<Native = unknown> = (
  view: RequestView,
  native: Native,
) => GateOutcome | Promise<GateOutcome>;

/** Whether `outcome` answers the request itself. */
export function isAnswer(outcome: GateOutcome): outcome is Answer {
  return typeof outcome === "object" && outcome !== null && "answer" in outcome;
}
