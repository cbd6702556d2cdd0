import { HttpError } from "@svc/errors";
import { matchMediaType } from "@svc/kernel";

/**
 * The 406 of a POSTed message none of whose answer's media types `Accept` takes, decided as the
 * kernel's pipeline decides it for any write (`Representer.preflight`, with the types the route
 * `produces`): before the message is read and processed, since an operation that ran for an
 * answer the client then refuses would have had its effect for nothing. The media-range rules
 * are the kernel's `matchMediaType`, the one selection every package makes; no `Accept`, or none
 * with a valid member, accepts anything.
 *
 * @example refuseUnacceptable("application/json", ["application/soap+xml"]) // throws the 406
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.7 — 406 Not Acceptable
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.1 — the media ranges of Accept
 */
export function refuseUnacceptable(accept: string | undefined, types: readonly string[]): void {
  if (accept === undefined || matchMediaType(accept, types) !== undefined) return;
  throw HttpError.notAcceptable(`The answer is sent as ${types.join(" or ")}, which Accept does not take`, {
    code: "not_acceptable",
  });
}
