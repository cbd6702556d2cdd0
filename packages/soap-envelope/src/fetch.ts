/**
 * `@svc/soap-envelope/fetch`: the SOAP endpoint on the Fetch API (`Request` in, `Response` out),
 * for any Fetch server (Deno, Bun, workers, `@hono/node-server`) and as a Hono route handler. It
 * reads the request into the core's input ({@link createSoapEndpoint}) and turns the core's
 * response into a `Response`; it decides nothing.
 *
 * @packageDocumentation
 */
import { fieldLines, requestFacts } from "@svc/kernel";
import {
  type ConnectionInfo,
  fetchView,
  type HonoMiddleware,
  settleUnreadRequest,
  toResponse,
  withPassages,
} from "@svc/kernel/fetch";
import {
  createSoapEndpoint,
  type SoapEndpointOptions,
  type SoapResponse,
  type SoapService,
  soapResponseValue,
} from "@svc/soap-envelope";
import { type AdapterOptions, splitOptions } from "./binding/adapter-options.js";

/** Options of the Fetch {@link soapEndpoint}: the endpoint's and `trustProxy`. */
export type FetchSoapOptions<Operations = never> = SoapEndpointOptions<Operations> & AdapterOptions;

/**
 * The endpoint as a Fetch handler. `info` is what the server knows of the connection (on
 * `@hono/node-server`, `honoConnection(c)` of `@svc/kernel/fetch`: the `Host` lines as received,
 * TLS). Rejects with an `HttpError` (a `Host` that is no authority on `?wsdl`, an unknown `?xsd=`,
 * a failed `If-Match`) for the application's error handling (Hono's `app.onError(onError())`,
 * `withErrors(handler)` of `@svc/errors/fetch`).
 */
export interface FetchSoapHandler {
  (request: Request, info?: ConnectionInfo): Promise<Response>;
  /** The compiled service (contract and message processor). */
  service: SoapService;
  /**
   * The answer to `err`, an error a request to the endpoint failed with (what the handler
   * rejected with, or what a gate in front threw: a rate limit's 429, an authentication's 401), as
   * a SOAP fault, as `soapErrorHandler` does on Express (see `SoapEndpoint.refusal`): the status
   * and the error's fields kept, with the fields the gates recorded for the request (`RateLimit`).
   * For a Fetch server without Hono: `catch (err) { return soap.fault(err, request); }` around the
   * gates and the endpoint.
   */
  fault(err: unknown, request: Request): Response;
  /**
   * Hono middleware for the endpoint's route, mounted before the gates in front of it
   * (`app.use("/ws/customer", soap.faults)`): what is thrown after it for the route's requests
   * (by the gates, the endpoint) is answered with {@link fault} instead of `app.onError`. An
   * `Error` Hono has already given to `app.onError` (which logs it) is not logged again.
   */
  faults: HonoMiddleware;
}

/**
 * A SOAP 1.2 and 1.1 endpoint as a Fetch handler: POSTed messages to the contract's handlers
 * (the body streamed within the size limit and `bodyTimeoutMs`, never buffered unbounded), `GET
 * ?wsdl` and `?xsd=` the contract with its address rewritten to the request's host, every other
 * method 405. The request's path is the endpoint's: route it (`app.all("/ws/customer", ...)` on
 * Hono) or call it for that path only.
 *
 * @example
 * const soap = soapEndpoint({ wsdl: "contracts/customer.wsdl", handlers });
 * app.use("/ws/customer", soap.faults); // a refusal in front (a rate limit's 429) as a fault
 * app.use(rateLimit({ limit: 100, windowMs: 60_000 }));
 * app.all("/ws/customer", (c) => soap(c.req.raw, honoConnection(c)));
 * @see https://www.w3.org/TR/soap12-part2/#soapinhttp
 */
export function soapEndpoint<Operations = never>(
  options: FetchSoapOptions<NoInfer<Operations>>,
): FetchSoapHandler {
  const { soap, trust, family } = splitOptions(options, []);
  const endpoint = createSoapEndpoint(soap);
  const handler = async function svcSoapEndpoint(request: Request, info?: ConnectionInfo): Promise<Response> {
    const view = fetchView(request, info);
    const method = view.method ?? "GET";
    const response = await endpoint.answer({
      method: request.method,
      // The request-target as received when the server told it (`honoConnection`): an
      // absolute-form one names the host instead of Host (RFC 9112 §3.2.2), an origin-form one
      // leaves Host to name it as the client wrote it. Else the URL the server built: a worker's
      // Request carries the target URI (§3.3) only there.
      target: view.originalUrl ?? request.url,
      headers: view.headers,
      // Checked as received (two lines are a 400); the address's host is the URL's (`target`).
      host: fieldLines(view.rawHeaders ?? [], "host"),
      httpVersion: undefined,
      encrypted: view.socket?.encrypted === true,
      facts: requestFacts(view, trust, family),
      // A ReadableStream is an async iterable of its chunks: read as it arrives, within the limits.
      body: (request.body ?? undefined) as AsyncIterable<Uint8Array> | undefined,
      native: request,
    });
    return settleUnreadRequest(request, toFetchResponse(response, method), endpoint.unreadBody);
  } as FetchSoapHandler;
  handler.service = endpoint.service;
  /** The fault answering `err`, with the gates' fields (a rate limit's) where it has none of the same name. */
  const faultOf = (err: unknown, request: Request, logged: boolean): Response => {
    const method = request.method.toUpperCase();
    const response = endpoint.refusal(err, {
      method,
      contentType: request.headers.get("content-type") ?? undefined,
      logged,
    });
    return settleUnreadRequest(
      request,
      withPassages(toFetchResponse(response, method), request),
      endpoint.unreadBody,
    );
  };
  handler.fault = function svcSoapFault(err: unknown, request: Request): Response {
    return faultOf(err, request, false);
  };
  handler.faults = async function svcSoapFaults(c, next) {
    let error: unknown;
    // Hono answers an `Error` with `app.onError` at the step that threw (its default handler logs
    // it too) and leaves it here; anything else thrown comes up unanswered and unlogged.
    let logged = false;
    try {
      await next();
      error = (c as { error?: unknown }).error;
      if (error === undefined) return undefined;
      logged = true;
    } catch (err) {
      error = err;
    }
    // Hono merges the fields of the response it replaces into the new one (the error record's
    // Content-Length among them): the fault replaces it whole, its fields the gates' and its own.
    (c as { res: Response | undefined }).res = undefined;
    c.res = faultOf(error, c.req.raw, logged);
    return undefined;
  };
  return handler;
}

/**
 * The core's response as a `Response`, made by the kernel (`toResponse`): its fields, its `Vary`
 * appended, no content for a HEAD (RFC 9110 §9.3.2).
 */
function toFetchResponse(response: SoapResponse, method: string): Response {
  return toResponse(soapResponseValue(response), method);
}
