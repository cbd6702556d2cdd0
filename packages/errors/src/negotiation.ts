import type { ServerResponse } from "node:http";
import type { MediaTypeMatch } from "@svc/kernel";

/**
 * The outcome of proactive content negotiation (RFC 9110 §12.1) for one request: what a
 * negotiation middleware (`@svc/negotiate`) puts on `res.negotiation`, and what other middleware
 * (`@svc/conditional`, to give a 304 or a HEAD the validators of the full response) reads there.
 * Declared here, in the kernel both depend on, so that neither reads the other by shape.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12
 */
export interface Negotiation {
  /** The `Accept` decision among the offered representations, `undefined` when none fits. */
  readonly mediaType: MediaTypeMatch | undefined;
  /** The chosen language (`undefined` when the app offers none). */
  readonly language: string | undefined;
  /** The chosen content coding (`identity` when the response is sent uncoded). */
  readonly encoding: string;
  /** Whether compression would touch a response of this media type. */
  compressible(contentType: string | undefined): boolean;
  /**
   * The content coding a response of this type and size gets: what conditional requests need to
   * give a 304 or a HEAD the same validators as the full response (RFC 9110 §8.8.3).
   */
  codingFor(contentType: string | undefined, length: number | undefined): string;
}

/**
 * The {@link Negotiation} a negotiation middleware in front (`@svc/negotiate`'s `negotiate()`) left
 * on `res.negotiation`, or `undefined` when none is mounted or something else took that name (its
 * `codingFor` and `compressible` are checked, not assumed).
 *
 * @example
 * const coded = negotiationOf(res)?.codingFor("application/json", body.length) ?? "identity";
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.3
 */
export function negotiationOf(res: ServerResponse): Negotiation | undefined {
  const n = (res as ServerResponse & { negotiation?: Partial<Negotiation> }).negotiation;
  return typeof n?.codingFor === "function" && typeof n.compressible === "function"
    ? (n as Negotiation)
    : undefined;
}
