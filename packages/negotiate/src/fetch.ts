/**
 * `@svc/negotiate/fetch`: the package on the Fetch API (`Request` in, `Response` out), as Hono
 * middleware and in any Fetch server. The pipeline steps (`representations`, `compression`) run in
 * `fetchAdapter` of `@svc/kernel/fetch`; the decisions are the main entry's (`bodyReader`,
 * `crossOriginGate`).
 *
 * @packageDocumentation
 */
import { exchangeOf } from "@svc/kernel";
import { type ConnectionInfo, type FetchMiddleware, fetchGate, fetchView } from "@svc/kernel/fetch";
import { bodyReader, type CrossOriginOptions, crossOriginGate, type ParseBodyOptions } from "@svc/negotiate";

export type { CrossOriginOptions, ParseBodyOptions, XmlBodySchema } from "@svc/negotiate";

/**
 * The body of a `Request`, read from `request.body` and parsed by `bodyReader(options)`: resolves
 * to the parsed value (`undefined` without content, or for a type outside `types`, left unread),
 * rejects with the `HttpError` to answer (415, 413, 400, 408), for Hono's `app.onError` or
 * `withErrors` of `@svc/errors/fetch`. A refused body is cancelled. `xml.schema` is given the
 * request's view (`fetchView`). `info`: what the server knows of the connection (the fields as
 * received, for a repeated `Content-Type`).
 *
 * @example
 * const readBody = parseBody({ limit: "64kb" });
 * app.post("/orders", async (c) => c.json({ got: await readBody(c.req.raw) }, 201));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.16
 */
export function parseBody(
  options: ParseBodyOptions = {},
): (request: Request, info?: ConnectionInfo) => Promise<unknown> {
  const read = bodyReader(options);
  return async function readFetchBody(request, info) {
    const value = await read(
      fetchView(request, info),
      request.body as AsyncIterable<Uint8Array> | null,
      request,
    );
    // For the steps after this one (the pipeline's idempotency fingerprint).
    if (value !== undefined) exchangeOf(request).body = { value };
    return value;
  };
}

/**
 * CORS on the Fetch API: `crossOriginGate`'s decision as Hono middleware
 * (`app.use(crossOrigin(options))`), or around any Fetch handler
 * (`crossOrigin(options).wrap(handler)`). A preflight is answered 204; any other request gets its
 * CORS fields on the route's response, an error's included.
 *
 * @example app.use(crossOrigin({ origins: ["https://app.example"], maxAge: 600 }));
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 */
export function crossOrigin(options: CrossOriginOptions): FetchMiddleware {
  return fetchGate(crossOriginGate(options));
}
