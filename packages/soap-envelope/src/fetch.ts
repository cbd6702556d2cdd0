/**
 * `@svc/soap-envelope/fetch`: the SOAP endpoint on the Fetch API (`Request` in, `Response` out),
 * for any Fetch server (Deno, Bun, workers, `@hono/node-server`) and as a Hono route handler. It
 * reads the request into the core's input ({@link createSoapEndpoint}) and turns the core's
 * response into a `Response`; it decides nothing.
 *
 * @packageDocumentation
 */
import { fieldLines, requestFacts } from "@svc/kernel";
import { type ConnectionInfo, fetchView } from "@svc/kernel/fetch";
import { createSoapEndpoint, type SoapEndpointOptions, type SoapService } from "@svc/soap-envelope";
import { type AdapterOptions, splitOptions } from "./adapter-options.js";

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
 * app.all("/ws/customer", (c) => soap(c.req.raw, honoConnection(c)));
 * @see https://www.w3.org/TR/soap12-part2/#soapinhttp
 */
export function soapEndpoint<Operations = never>(
  options: FetchSoapOptions<NoInfer<Operations>>,
): FetchSoapHandler {
  const { soap, trust } = splitOptions(options, []);
  const endpoint = createSoapEndpoint(soap);
  const handler = async function svcSoapEndpoint(request: Request, info?: ConnectionInfo): Promise<Response> {
    const view = fetchView(request, info);
    const method = view.method ?? "GET";
    const response = await endpoint.answer({
      method: request.method,
      target: view.url ?? "/",
      headers: view.headers,
      host: hostLines(view.rawHeaders ?? [], request.url),
      httpVersion: undefined,
      encrypted: view.socket?.encrypted === true,
      facts: requestFacts(view, trust),
      // A ReadableStream is an async iterable of its chunks: read as it arrives, within the limits.
      body: (request.body ?? undefined) as AsyncIterable<Uint8Array> | undefined,
    });
    const headers = new Headers(response.headers);
    for (const field of response.vary ?? []) headers.append("Vary", field);
    // RFC 9110 §9.3.2 and §15.4.5: a HEAD and a 304 carry the fields, no content.
    const empty = response.body === "" || method === "HEAD" || response.status === 304;
    return new Response(empty ? null : response.body, { status: response.status, headers });
  } as FetchSoapHandler;
  handler.service = endpoint.service;
  return handler;
}

/**
 * The `Host` lines as received; a `Request` whose fields do not carry them (a worker's) has the
 * target URI's authority in its URL (RFC 9110 §7.2: Host is that authority).
 */
function hostLines(rawHeaders: readonly string[], url: string): readonly string[] {
  const lines = fieldLines(rawHeaders, "host");
  return lines.length > 0 ? lines : [new URL(url).host];
}
