import { HttpError, isToken, type RequestView } from "@svc/kernel";
import { refusedOption } from "@svc/kernel/internal";
import { requestPath } from "./record.js";

/** The path of a request-target for a message: no query, at most 200 characters. */
function shownPath(url: string | undefined): string {
  const path = requestPath(url ?? "/");
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/**
 * The 404 of a request no route matched, with the same message on every framework (`notFound()`
 * on Express, `notFoundHandler()` on Fetch, `errorPlugin`'s not-found handler on Fastify).
 * `request.url`: the request-target as received.
 *
 * @example throw notFoundError({ method: req.method, url: req.url });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5
 */
export function notFoundError(request: Pick<RequestView, "method" | "url">): HttpError {
  return HttpError.notFound(`No resource matches ${request.method ?? "GET"} ${shownPath(request.url)}`);
}

/**
 * `allowed` checked (a non-empty list of RFC 9110 §9.1 method tokens) and upper-cased, once, at
 * construction; a `TypeError` with code `ERR_SVC_ERRORS_ALLOWED` otherwise.
 *
 * @example const methods = allowedList(["get", "head"]); // ["GET", "HEAD"]
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-9.1
 */
export function allowedList(allowed: readonly string[], name = "methodNotAllowed"): string[] {
  if (
    !Array.isArray(allowed) ||
    allowed.length === 0 ||
    allowed.some((m) => typeof m !== "string" || !isToken(m))
  ) {
    throw refusedOption(
      "errors",
      "allowed",
      allowed,
      "a non-empty array of method names (RFC 9110 §9.1 tokens)",
      `${name}: allowed`,
    );
  }
  return allowed.map((m) => m.toUpperCase());
}

/**
 * The 405 of a method the resource does not support, with `Allow` (RFC 9110 §15.5.6: the
 * origin server MUST generate an Allow field listing the methods it does support), and the same
 * message on every framework. `methods`: a list {@link allowedList} checked.
 *
 * @example throw methodNotAllowedError({ method: "DELETE", url: "/employees" }, ["GET", "HEAD"]);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6
 */
export function methodNotAllowedError(
  request: Pick<RequestView, "method" | "url">,
  methods: readonly string[],
): HttpError {
  return HttpError.methodNotAllowed(
    methods,
    `Method ${request.method ?? ""} is not allowed on ${shownPath(request.url)}`,
  );
}
