/**
 * The key under which data names its own, more specific media type: a HAL resource of `@svc/hal`
 * answers `application/hal+json` there, and the representation step of `@svc/negotiate` sends
 * the JSON of such data with that `Content-Type` when the client accepts it. One symbol, exported
 * here and imported by both, so no package learns what another meant from a registered name.
 *
 * @example
 * class Problem implements MediaTyped {
 *   get [MEDIA_TYPE]() { return "application/problem+json"; }
 * }
 * @see https://www.rfc-editor.org/rfc/rfc6838#section-4.2.8
 */
export const MEDIA_TYPE: unique symbol = Symbol("@svc/kernel media type");

/** Data that names its own structured-suffix media type under {@link MEDIA_TYPE}. */
export interface MediaTyped {
  /** A `type/name+suffix` media type (RFC 6838 §4.2.8), such as `application/hal+json`. */
  readonly [MEDIA_TYPE]: string;
}
