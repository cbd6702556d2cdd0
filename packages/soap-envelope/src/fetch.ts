/**
 * `@svc/soap-envelope/fetch`: the SOAP endpoint on the Fetch API (`Request` in, `Response` out),
 * for any Fetch server (Deno, Bun, workers, `@hono/node-server`) and as a Hono route handler. It
 * reads the request into the core's input ({@link createSoapEndpoint}) and turns the core's
 * response into a `Response`; it decides nothing.
 *
 * @packageDocumentation
 */
import { fieldLines, requestFacts } from "@svc/kernel";
import { type ConnectionInfo, fetchView, settleUnreadRequest, toResponse } from "@svc/kernel/fetch";
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
 * `withErrors(handler)` of `@svc/errors/fetch`), which answers the endpoint's errors as SOAP
 * faults with `soapFaults` of the main entry in its `renderers`.
 */
export interface FetchSoapHandler {
  (request: Request, info?: ConnectionInfo): Promise<Response>;
  /** The compiled service (contract and message processor). */
  service: SoapService;
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
 * app.use(rateLimit({ limit: 100, windowMs: 60_000 }));
 * app.all("/ws/customer", (c) => soap(c.req.raw, honoConnection(c)));
 * // a refusal in front (a rate limit's 429) as a fault
 * app.onError(onError({ renderers: [soapFaults({ path: "/ws/customer" })] }));
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
  return handler;
}

/**
 * The core's response as a `Response`, made by the kernel (`toResponse`): its fields, its `Vary`
 * appended, no content for a HEAD (RFC 9110 §9.3.2).
 */
function toFetchResponse(response: SoapResponse, method: string): Response {
  return toResponse(soapResponseValue(response), method);
}
