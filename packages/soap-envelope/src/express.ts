/**
 * `@svc/soap-envelope/express`: the SOAP endpoint as Express 4 and 5 middleware (`soapEndpoint`),
 * on the main entry's transport-neutral endpoint (`createSoapEndpoint`). Its errors go to the
 * application's error handler (`errorHandler` of `@svc/errors/express`, with `soapFaults` of the
 * main entry in its `renderers` to answer them as SOAP faults).
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, type NextFunction } from "@svc/errors";
import { type ForwardedHeaders, fieldLines, requestFacts, type UnreadBodyBounds } from "@svc/kernel";
import { expressView } from "@svc/kernel/express";
import { checkForwardedHeaders } from "@svc/kernel/internal";
import { settleUnreadBody, writeValue } from "@svc/kernel/node";
import {
  createSoapEndpoint,
  type SoapEndpointOptions,
  type SoapHttpInput,
  type SoapLogger,
  type SoapResponse,
  type SoapRoute,
  type SoapService,
  soapResponseValue,
  type XmlSource,
} from "@svc/soap-envelope";
import { targetPath } from "./binding/request-target.js";

/** @deprecated Use `NextFunction` from `@svc/errors` (the same type). */
export type { NextFunction as SoapNextFunction } from "@svc/errors";
export type { SoapEndpointOptions } from "@svc/soap-envelope";

/** The parts of an Express (or plain `node:http`) request the endpoint reads. */
export interface SoapHttpRequest extends IncomingMessage {
  /** Express: `http` or `https`, honouring `trust proxy`. */
  protocol?: string;
  /** Express 5: host (with port), honouring `trust proxy` (not read: Express 4's drops the port). */
  host?: string;
  /** Express: the URL before mount-path stripping. */
  originalUrl?: string;
  /** pino-http's per-request logger. */
  log?: SoapLogger;
}

/** The Express handler {@link soapEndpoint} returns, with the compiled service attached. */
export interface SoapEndpointHandler {
  (req: SoapHttpRequest, res: ServerResponse, next: NextFunction): void;
  /** The compiled service (contract and transport-neutral processor). */
  service: SoapService;
}

/**
 * A SOAP 1.2 and SOAP 1.1 endpoint for Express 5 (or `node:http`): POSTed `application/soap+xml`
 * (SOAP 1.2) and `text/xml` (SOAP 1.1, routed by `SOAPAction`) messages go to the contract's
 * handlers, in the versions its bindings offer; `GET ?wsdl` serves the WSDL with its port
 * addresses (`soap12:address`, `soap:address`) rewritten to
 * the externally visible URL (`Host`, or behind a peer the app's `trust proxy` trusts the
 * `X-Forwarded-Proto` / `X-Forwarded-Host` value the trusted chain appended, on Express 4 and 5
 * alike; a host that is no RFC 3986 authority, or two `Host` lines, is a 400, RFC 9112 §3.2) and
 * `GET ?xsd=<path>` the schemas it imports, each with a strong `ETag` of the bytes sent and conditional GET/HEAD
 * (`If-None-Match` → 304, `If-Match` → 412, RFC 9110 §13.1). Other methods get 405 with `Allow`, other media types
 * 415, oversized bodies 413, bodies that do not arrive within `bodyTimeoutMs` 408 (RFC 9110
 * §15.5.9, with `Connection: close`), each as a SOAP fault (1.1 for a `text/xml` request). Mount it with `app.use(path, ...)`
 * (the mount point is the endpoint; paths below it are passed on) or on a route
 * (`app.post(path, ...)`, `app.all(path, ...)`).
 *
 * @example
 * app.use("/ws/customer", soapEndpoint({
 *   wsdl: "contracts/customer.wsdl",
 *   handlers: { getCustomer: async ({ customerId }) => ({ customer: await repo.get(customerId) }), ... },
 * }));
 * @see https://www.w3.org/TR/soap12-part2/#soapinhttp
 * @see https://www.w3.org/TR/2000/NOTE-SOAP-20000508/#_Toc478383526 (SOAP 1.1 in HTTP)
 */
export function soapEndpoint<Operations = never>(
  options: SoapEndpointOptions<NoInfer<Operations>> & {
    /**
     * The one family of forwarded fields the WSDL's address is read from behind a peer the app's
     * `trust proxy` trusts: `"x-forwarded"` (`X-Forwarded-Proto` / `-Host`, as Express reads) or
     * `"forwarded"` (RFC 7239 `Forwarded`), the one the proxy sets. Never a mix.
     * @default "x-forwarded"
     */
    forwardedHeaders?: ForwardedHeaders;
  },
): SoapEndpointHandler {
  // The adapter's own option apart; what is left is the service's, which refuses an unknown name.
  let service: unknown = options;
  let family: ForwardedHeaders = "x-forwarded";
  if (typeof options === "object" && options !== null) {
    const { forwardedHeaders, ...rest } = options;
    family = checkForwardedHeaders(forwardedHeaders, "soap-envelope");
    service = rest;
  }
  const endpoint = createSoapEndpoint(service as SoapEndpointOptions<Operations>);
  const handler = function svcSoapEndpoint(
    req: SoapHttpRequest,
    res: ServerResponse,
    next: NextFunction,
  ): void {
    const path = targetPath(req.url ?? "/");
    // Mounted with app.use(path, ...): only the mount point itself is the endpoint. On a route
    // (app.post(path, ...), app.all), Express leaves the whole path in req.url and the route has
    // already matched it: the request is the endpoint's whatever its path.
    if (path !== "/" && path !== "" && !dispatchedByRoute(req, handler)) {
      next();
      return;
    }
    const body = bodyOf(req);
    const input = expressInput(req, body, correlationOf(res), family);
    let routed: SoapRoute;
    try {
      routed = endpoint.route(input);
    } catch (err) {
      next(err);
      return;
    }
    if (routed.message !== undefined && body === undefined) {
      next(
        new HttpError(
          500,
          "The request body was consumed by middleware in front of the SOAP endpoint without leaving it as a Buffer or string in req.body",
          { expose: false },
        ),
      );
      return;
    }
    // Responses are written back; what broke outside the SOAP processing goes to `next`, the
    // write's own failure too (a field node:http refuses): never an unhandled rejection.
    endpoint
      .respond(input, routed)
      .then((response) => send(req, res, response, next, endpoint.unreadBody))
      .catch(next);
  } as SoapEndpointHandler;
  handler.service = endpoint.service;
  return handler;
}

/**
 * Whether an Express route (`app.post(path, endpoint)`, `app.all`, `router.route(path)`) is
 * dispatching the request to `handler`: Express 4 and 5 set `req.route` to the matched route,
 * whose layers hold its handlers. Checked against the handler itself, so a route that matched
 * earlier and passed the request on does not count.
 */
function dispatchedByRoute(req: SoapHttpRequest, handler: unknown): boolean {
  const stack = (req as { route?: { stack?: unknown } }).route?.stack;
  if (!Array.isArray(stack)) return false;
  for (const layer of stack) if ((layer as { handle?: unknown } | null)?.handle === handler) return true;
  return false;
}

/**
 * The body as Express has it: the request stream, or, when a body parser in front (node-soap's
 * setup: `bodyParser.raw({ type: () => true })`) has read the whole message already, its Buffer
 * or string (reading the ended stream would wait for data that never comes, then blame the
 * client with a 408). Undefined when the parser left neither.
 */
function bodyOf(req: SoapHttpRequest): XmlSource | undefined {
  if (!req.readableEnded) return req;
  const parsed = (req as { body?: unknown }).body;
  return typeof parsed === "string" || parsed instanceof Uint8Array ? parsed : undefined;
}

/** The correlation id middleware in front assigned (`res.locals.correlationId`). */
function correlationOf(res: ServerResponse): string | undefined {
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  return typeof locals?.correlationId === "string" ? locals.correlationId : undefined;
}

/**
 * The core's input from an Express request: the target before mount-path stripping
 * (`originalUrl`), the facts under the app's `trust proxy` (recorded by `expressView`).
 */
function expressInput(
  req: SoapHttpRequest,
  body: XmlSource | undefined,
  correlationId: string | undefined,
  family: ForwardedHeaders,
): SoapHttpInput {
  const headers = req.headers;
  return {
    method: req.method ?? "GET",
    target: req.originalUrl ?? req.url ?? "/",
    // RFC 9110 §8.4: Content-Encoding names the codings applied to the content as sent. Body
    // parsers remove them (body-parser's `inflate`, on by default, decodes gzip and deflate, and br
    // from version 2, and refuses other codings itself) and leave the field: req.body is not coded.
    headers: body === req ? headers : { ...headers, "content-encoding": undefined },
    host: fieldLines(req.rawHeaders, "host"),
    httpVersion: req.httpVersion,
    encrypted: (req.socket as { encrypted?: boolean }).encrypted === true,
    facts: requestFacts(expressView(req), undefined, family),
    body,
    http: req,
    native: req,
    logger: req.log,
    correlationId,
  };
}

/**
 * The core's response, written by the kernel: its status, its fields over those set in front,
 * its `Vary` appended, its content in one write (at once: no promise for whole bytes). A message
 * refused before it was read whole follows the kernel's refused-body policy, with the endpoint's
 * `unreadBody` bounds.
 */
function send(
  req: IncomingMessage,
  res: ServerResponse,
  response: SoapResponse,
  next: NextFunction,
  unreadBody: UnreadBodyBounds,
): void {
  if (res.headersSent) return;
  settleUnreadBody(req, res, unreadBody);
  writeValue(res, soapResponseValue(response), req.method ?? "GET")?.catch(next);
}
