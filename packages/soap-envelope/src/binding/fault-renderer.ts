import type { ErrorRenderer, ErrorRendering } from "@svc/errors";
import type { HttpError, RequestView } from "@svc/kernel";
import { fault11ToXml, faultToXml } from "../envelope/fault.js";
import { checkObject, checkVersions, optionError } from "../options.js";
import { httpErrorToFault } from "../processor/faults.js";
import type { SoapVersion } from "../wsdl/contract.js";
import { parseMediaType } from "./media-type.js";
import { targetPath } from "./request-target.js";

/** Options of {@link soapFaults}. */
export interface SoapFaultsOptions {
  /**
   * The endpoints' paths (`"/ws/customer"`): a request whose target's path is one of them, with
   * or without a trailing slash and compared without regard to case (as Express routes by
   * default, so every spelling that reaches the endpoint gets a fault), gets its errors as faults.
   * A path below one (`/ws/customer/orders`) is no endpoint's and keeps the record.
   */
  path: string | readonly string[];
  /**
   * The SOAP versions the endpoints serve: a `text/xml` request gets a SOAP 1.1 fault only when
   * `"1.1"` is one of them, every other request a SOAP 1.2 fault (SOAP 1.2 Part 2 §7.1.4 binds it
   * to `application/soap+xml`).
   * @default ["1.1", "1.2"]
   */
  versions?: readonly SoapVersion[];
}

const SOAP11: ErrorRendering["contentType"] = "text/xml; charset=utf-8";
const SOAP12: ErrorRendering["contentType"] = "application/soap+xml; charset=utf-8";
const BY_CONTENT_TYPE: readonly string[] = ["Content-Type"];

/**
 * The SOAP faults of endpoints as a renderer of `@svc/errors` (the `renderers` option of
 * `errorHandler`, `errorResponder`, `errorPlugin`, `onError` and `withErrors`): an error of a
 * request to one of the endpoints' paths (a rate limit's 429, an authentication's 401, a body
 * limit's 413 in front of the endpoint, the endpoint's own refusals) is answered as a fault, since
 * the client reads envelopes, by the application's one error handler on every framework. The
 * status and the error's fields (`Retry-After`, `WWW-Authenticate`) stay the handler's; a 4xx is
 * an `env:Sender` fault with the error's message, a 5xx an `env:Receiver` fault without detail
 * (the handler logs the exception). The version follows the request's `Content-Type` (SOAP 1.1
 * for `text/xml` where `versions` has it), so `Vary: Content-Type` goes with it.
 *
 * @example
 * app.use(errorHandler({ renderers: [soapFaults({ path: "/ws/customer" })] }));
 * @see https://www.w3.org/TR/soap12-part2/#http-reqbindwaitstate — a refusal of the HTTP request keeps its status
 */
export function soapFaults(options: SoapFaultsOptions): ErrorRenderer {
  checkObject(options, "options", ["path", "versions"]);
  if (options === undefined)
    throw optionError("path", undefined, 'a path ("/ws/customer") or a list of them');
  const paths = typeof options.path === "string" ? [options.path] : options.path;
  if (
    !Array.isArray(paths) ||
    paths.length === 0 ||
    !paths.every((p: unknown) => typeof p === "string" && p.startsWith("/") && !/[?#\s]/.test(p))
  ) {
    throw optionError("path", options.path, 'a path ("/ws/customer") or a non-empty list of them');
  }
  const versions = checkVersions(options.versions);
  const bases = paths.map((p: string) =>
    (p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p).toLowerCase(),
  );
  const mine = (target: string) => {
    const path = target.toLowerCase();
    return bases.some((b) => path === b || (b !== "/" && path === `${b}/`));
  };
  const offers11 = versions.includes("1.1");
  const vary = offers11 && versions.includes("1.2") ? BY_CONTENT_TYPE : undefined;
  return {
    name: "soap-faults",
    render(error: HttpError, request: RequestView): ErrorRendering | undefined {
      if (!mine(targetPath(request.url ?? "/"))) return undefined;
      const contentType = request.headers["content-type"];
      const soap11 =
        offers11 &&
        parseMediaType(typeof contentType === "string" ? contentType : undefined)?.type === "text/xml";
      const fault = httpErrorToFault(error);
      return {
        contentType: soap11 ? SOAP11 : SOAP12,
        body: soap11 ? fault11ToXml(fault) : faultToXml(fault),
        ...(vary !== undefined && { vary }),
      };
    },
  };
}
