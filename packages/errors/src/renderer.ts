import { type HttpError, isToken, type RequestView } from "@svc/kernel";

/**
 * What an {@link ErrorRenderer} makes of an error: the content and its media type. The status,
 * the error's own fields, `Cache-Control: no-store` and the removal of a failed handler's
 * representation fields stay the error handler's, the same for every rendering.
 */
export interface ErrorRendering {
  /** The `Content-Type` of `body` (`application/soap+xml; charset=utf-8`). */
  readonly contentType: string;
  /** The content: a string is sent as UTF-8. */
  readonly body: string | Uint8Array;
  /**
   * The request fields the rendering was chosen by (`["Content-Type"]` where the SOAP version
   * follows it), sent in `Vary` (RFC 9110 §12.5.5).
   * @default none
   */
  readonly vary?: readonly string[];
}

/**
 * A rendering of errors that a package adds to the error handlers (`renderers` of
 * `errorHandler`, `errorResponder`, `errorPlugin`, `onError`, `withErrors`): the SOAP faults of an
 * endpoint (`soapFaults` of `@svc/soap-envelope`), whose clients read envelopes and not the error
 * record. The first renderer that answers a request renders its errors; the record renders the
 * rest. `render` is called once per failed request, synchronously, with the `HttpError` the
 * handler made of what was thrown; it returns `undefined` for a request that is not its own. One
 * that throws or returns anything else is logged, and the request gets the record.
 *
 * @example
 * const csv: ErrorRenderer = {
 *   name: "csv",
 *   render: (error, request) =>
 *     request.url?.startsWith("/reports/") ? { contentType: "text/csv", body: `status\n${error.status}\n` } : undefined,
 * };
 * app.use(errorHandler({ renderers: [csv] }));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15 — the status stays the error's, whatever the content
 */
export interface ErrorRenderer {
  /** Names the renderer in the `svc:errors` message and in a log line about it. */
  readonly name: string;
  /** The content for `error`, or `undefined` where the request is not this renderer's. */
  render(error: HttpError, request: RequestView): ErrorRendering | undefined;
}

/** A media type as `Content-Type` takes it: `type/subtype` and parameters, no line break. */
const MEDIA_TYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*;[^\r\n\0]*)?$/;

/** Whether `value` is a rendering a renderer may return; a string says what is wrong with it. */
export function checkRendering(value: unknown): ErrorRendering | string {
  if (typeof value !== "object" || value === null) return "not an object";
  const { contentType, body, vary } = value as Partial<ErrorRendering>;
  if (typeof contentType !== "string" || !MEDIA_TYPE.test(contentType))
    return "its contentType is not a media type";
  if (typeof body !== "string" && !(body instanceof Uint8Array))
    return "its body is neither a string nor bytes";
  if (vary !== undefined && (!Array.isArray(vary) || !vary.every((v) => typeof v === "string" && isToken(v))))
    return "its vary is not a list of field names";
  return value as ErrorRendering;
}

/** The `renderers` option as a list, or `undefined` when it is not one renderer or a list of them. */
export function rendererList(value: unknown): readonly ErrorRenderer[] | undefined {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  const valid = list.every(
    (r: unknown) =>
      typeof r === "object" &&
      r !== null &&
      typeof (r as ErrorRenderer).name === "string" &&
      (r as ErrorRenderer).name !== "" &&
      typeof (r as ErrorRenderer).render === "function",
  );
  return valid ? Object.freeze([...(list as ErrorRenderer[])]) : undefined;
}
