import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { evaluatePreconditions, strongEtag } from "@svc/conditional";
import { fallbackLogger, HttpError, type NextFunction, toHttpError } from "@svc/errors";
import { appendVary, fieldLines, requestFacts } from "@svc/kernel";
import { type EndpointAddress, endpointAddress } from "./endpoint-address.js";
import { fault11ToXml, faultToXml } from "./fault.js";
import { parseMediaType } from "./media-type.js";
import { checkLogger, checkObject, optionError } from "./options.js";
import {
  compileSoapService,
  httpErrorToFault,
  type MessageSink,
  type SoapLogger,
  type SoapNode,
  type SoapRequest,
  type SoapResponse,
  type SoapService,
  type SoapServiceOptions,
} from "./service.js";
import { shown } from "./shown.js";
import type { SoapVersion } from "./wsdl.js";

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

/** Options of {@link soapEndpoint}: those of the service (`Operations` types the handlers). */
export type SoapEndpointOptions<Operations = never> = SoapServiceOptions<Operations>;

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
  options: SoapEndpointOptions<NoInfer<Operations>>,
): SoapEndpointHandler {
  const node = compileSoapService(options as SoapServiceOptions);
  const service = node.service;
  const handler = function svcSoapEndpoint(
    req: SoapHttpRequest,
    res: ServerResponse,
    next: NextFunction,
  ): void {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    // Mounted with app.use(path, ...): only the mount point itself is the endpoint. On a route
    // (app.post(path, ...), app.all), Express leaves the whole path in req.url and the route has
    // already matched it: the request is the endpoint's whatever its path.
    if (path !== "/" && path !== "" && !dispatchedByRoute(req, handler)) {
      next();
      return;
    }
    const method = req.method ?? "GET";
    // Only the WSDL and XSD URIs carry a query this endpoint reads.
    const query = q === -1 ? undefined : new URLSearchParams(url.slice(q + 1));
    const describes = query !== undefined && (query.has("wsdl") || query.has("WSDL") || query.has("xsd"));
    if (describes && (method === "GET" || method === "HEAD")) {
      serveDescription(service, req, res, next, query.get("xsd") ?? undefined);
    } else if (method !== "POST") {
      // RFC 9110 §15.5.6: a 405 MUST carry Allow, the methods the target resource supports: the
      // endpoint URI takes POST only; its ?wsdl / ?xsd URIs also GET and HEAD.
      const allowed = describes ? ["GET", "HEAD", "POST"] : ["POST"];
      send(
        res,
        service.errorResponse(
          HttpError.methodNotAllowed(allowed, `${method} is not allowed here`),
          req.headers["content-type"],
        ),
        req,
      );
    } else {
      processMessage(node, req, res, next);
    }
  } as SoapEndpointHandler;
  handler.service = service;
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

/** GET / HEAD `?wsdl` or `?xsd=<path>`: the rendered WSDL or schema, with conditional requests. */
function serveDescription(
  service: SoapService,
  req: SoapHttpRequest,
  res: ServerResponse,
  next: NextFunction,
  xsd: string | undefined,
): void {
  const method = req.method ?? "GET";
  let address: EndpointAddress;
  try {
    address = externalUrl(req);
  } catch (err) {
    // A Host (or trusted X-Forwarded-Host) that is no authority: 400 (RFC 9112 §3.2).
    next(err);
    return;
  }
  // RFC 9110 §12.5.5: the address in the document was read from these fields too (behind a
  // trusted proxy), so a shared cache must not serve it to a request forwarded for another host;
  // a 304 carries the Vary a 200 would (§15.4.5).
  if (address.vary.length > 0) appendVary(res, ...address.vary);
  const doc = service.contract.render(address.url, xsd);
  if (doc === undefined) {
    next(HttpError.notFound(`No schema "${shown(String(xsd))}" belongs to this contract`));
    return;
  }
  const contentType =
    xsd === undefined || xsd.endsWith(".wsdl")
      ? "application/wsdl+xml; charset=utf-8"
      : "application/xml; charset=utf-8";
  const length = Buffer.byteLength(doc);
  // RFC 9110 §8.8.3: a strong tag of the exact bytes served (the rendered address is part of
  // them), so clients and caches can revalidate; `no-cache` makes them do so before each reuse
  // (RFC 9111 §5.2.2.4), as a redeployed contract must be picked up at once. The document is
  // sent as these bytes, uncoded, so the tag the preconditions compare is the one the 200 carries.
  const etag = strongEtag(doc);
  // RFC 9110 §13.1 and §13.2.2, evaluated by @svc/conditional: If-None-Match with the current
  // tag or `*` → 304 with the validator headers (§15.4.5), If-Match without it → 412.
  const outcome = evaluatePreconditions(method, req.headers, { etag });
  if (outcome === 412) {
    next(
      HttpError.preconditionFailed("The document has changed since the precondition was computed", {
        headers: { ETag: etag },
      }),
    );
    return;
  }
  res.setHeader("ETag", etag);
  res.setHeader("Cache-Control", "no-cache");
  if (outcome === 304) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.statusCode = 200;
  res.setHeader("Content-Type", contentType);
  res.setHeader("Content-Length", length);
  res.end(method === "HEAD" ? undefined : doc);
}

/** A POSTed message with the response and `next` it is answered through. */
interface EndpointMessage extends SoapRequest {
  http: SoapHttpRequest;
  res: ServerResponse;
  next: NextFunction;
}

/** Responses are written back; what broke outside the SOAP processing goes to `next`. */
const ENDPOINT_SINK: MessageSink<EndpointMessage> = {
  respond: (message, response) => send(message.res, response, message.http),
  fail: (message, err) => message.next(err),
};

/** POST: the message goes to the transport-neutral service; its response is written back. */
function processMessage(node: SoapNode, req: SoapHttpRequest, res: ServerResponse, next: NextFunction): void {
  const headers = req.headers;
  let body: SoapRequest["body"] = req;
  let contentEncoding = headers["content-encoding"];
  if (req.readableEnded) {
    // A body parser in front (node-soap's setup: `bodyParser.raw({ type: () => true })`) has read
    // the whole message already: reading the ended stream would wait for data that never comes,
    // then blame the client with a 408. Its Buffer or string is the message, under the same limits.
    const parsed = (req as { body?: unknown }).body;
    if (typeof parsed === "string" || parsed instanceof Uint8Array) {
      body = parsed;
      // RFC 9110 §8.4: Content-Encoding names the codings applied to the content as sent. Body
      // parsers remove them (body-parser's `inflate`, on by default, decodes gzip and deflate, and br
      // from version 2, and refuses other codings itself) and leave the field: req.body is not coded.
      contentEncoding = undefined;
    } else {
      next(
        new HttpError(
          500,
          "The request body was consumed by middleware in front of the SOAP endpoint without leaving it as a Buffer or string in req.body",
          { expose: false },
        ),
      );
      return;
    }
  }
  node.deliver<EndpointMessage>(
    {
      method: "POST",
      contentType: headers["content-type"],
      contentLength: headers["content-length"],
      // Node joins the lines of a field it does not know with ", ": a string (the service refuses two).
      soapAction: headers.soapaction as string | undefined,
      contentEncoding,
      ifMatch: headers["if-match"],
      ifNoneMatch: headers["if-none-match"],
      body,
      http: req,
      correlationId: readCorrelationId(req, res),
      logger: req.log,
      res,
      next,
    },
    ENDPOINT_SINK,
  );
}

function send(res: ServerResponse, response: SoapResponse, req: IncomingMessage): void {
  if (res.headersSent) return;
  if (!req.complete) {
    // The body was refused before all of it arrived (RFC 9112 §9.3: a server may answer before
    // the request is complete). Discard the rest rather than close at once: closing a socket
    // with unread data resets the connection and the client loses the response. A client that
    // keeps sending is cut off a few seconds later.
    req.resume();
    res.once("finish", () => {
      setTimeout(() => {
        if (!req.complete) req.socket.destroy();
      }, 5000).unref();
    });
  }
  const body = response.body;
  const fields = wireFields(response.headers, body);
  if (fields !== undefined) {
    // One writeHead with every field: header fields other middleware set before stay (node
    // merges them, these replacing a field of the same name, as setHeader would).
    res.writeHead(response.status, fields);
  } else {
    res.statusCode = response.status;
    for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
    res.setHeader("Cache-Control", "no-store");
    if (body) res.setHeader("Content-Length", Buffer.byteLength(body));
  }
  res.end(body || undefined);
}

/**
 * The header fields of a response with a body whose only field is `Content-Type` (every answer
 * but a few refusals), plus `Cache-Control: no-store` (RFC 9111 §5.2.2.5: an answer to one
 * message is never reused) and its `Content-Length` (RFC 9110 §8.6), in the order the setHeader
 * path writes them. Undefined otherwise: other fields may differ from these only in case, which
 * setHeader folds, and an empty body leaves `Content-Length: 0` to node, which adds it at `end()`.
 */
function wireFields(
  headers: Readonly<Record<string, string>>,
  body: string,
): Record<string, string | number> | undefined {
  if (body === "") return undefined;
  let contentType: string | undefined;
  for (const name in headers) {
    if (name !== "Content-Type") return undefined;
    contentType = headers[name];
  }
  if (contentType === undefined) return undefined;
  return {
    "Content-Type": contentType,
    "Cache-Control": "no-store",
    "Content-Length": Buffer.byteLength(body),
  };
}

function readCorrelationId(req: IncomingMessage, res: ServerResponse): string {
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  if (typeof locals?.correlationId === "string") return locals.correlationId;
  const header = req.headers["x-correlation-id"];
  return typeof header === "string" && header.length <= 200 ? header : randomUUID();
}

/** The URL clients use to reach this endpoint ({@link endpointAddress} over the request's fields). */
function externalUrl(req: SoapHttpRequest): EndpointAddress {
  const original = req.originalUrl ?? req.url ?? "/";
  const q = original.indexOf("?");
  return endpointAddress({
    host: fieldLines(req.rawHeaders, "host"),
    httpVersion: req.httpVersion,
    // Behind a peer the app's `trust proxy` setting trusts (Express 4 and 5).
    facts: requestFacts(req),
    encrypted: (req.socket as { encrypted?: boolean }).encrypted === true,
    path: q === -1 ? original : original.slice(0, q),
  });
}

/**
 * Express error middleware that renders an error (an `HttpError` from rate limiting, auth or
 * body parsing middleware in front of the endpoint) as a SOAP fault (1.1 for a `text/xml` request
 * when `versions` includes 1.1, else 1.2) with the same HTTP status
 * and headers (`Retry-After`, `WWW-Authenticate`, ...): 4xx as `env:Sender`, 5xx as
 * `env:Receiver` without internal detail. A 5xx is logged with `options.logger`, else the
 * request's `req.log`, else `fallbackLogger` from `@svc/errors` (one JSON line on stderr).
 *
 * @example
 * app.use("/ws/customer", rateLimit(...), soapEndpoint(...), soapErrorHandler());
 * @see https://www.w3.org/TR/soap12-part2/#http-reqbindwaitstate
 */
export function soapErrorHandler(
  options: {
    logger?: SoapLogger;
    /**
     * The SOAP versions the endpoints behind it serve: a `text/xml` request gets a SOAP 1.1 fault
     * only when `"1.1"` is one of them. An endpoint that serves 1.2 alone answers a 1.2 fault to
     * every request (SOAP 1.2 Part 2 §7.1.4 binds it to `application/soap+xml`); a 1.1 fault from
     * its error handler would tell the client a version the endpoint does not speak.
     * @default ["1.1", "1.2"]
     */
    versions?: readonly SoapVersion[];
  } = {},
) {
  checkObject(options, "options", ["logger", "versions"]);
  checkLogger(options.logger, "logger", "soapErrorHandler: logger");
  const versions = options.versions ?? ["1.1", "1.2"];
  if (
    !Array.isArray(versions) ||
    versions.length === 0 ||
    !versions.every((v: unknown) => v === "1.1" || v === "1.2")
  ) {
    throw optionError("versions", versions, 'a non-empty list of "1.1" and "1.2"');
  }
  const speaks11 = versions.includes("1.1");
  return function svcSoapErrorHandler(
    err: unknown,
    req: SoapHttpRequest,
    res: ServerResponse,
    next: NextFunction,
  ): void {
    const httpError = toHttpError(err);
    if (httpError.status >= 500) {
      // As the service's own failures: the logger option, else the request's, else one JSON line
      // on stderr. A 5xx this handler renders never reaches Express's final handler, which would
      // have printed it: without a fallback it would be recorded nowhere.
      (options.logger ?? req.log ?? fallbackLogger).error(
        { err: (httpError as { cause?: unknown }).cause ?? httpError, status: httpError.status },
        "SOAP request failed",
      );
    }
    if (res.headersSent) {
      next(err);
      return;
    }
    // A text/xml request is SOAP 1.1's (SOAP 1.1 §6.1.1): its client reads SOAP 1.1 faults only.
    const soap11 = speaks11 && parseMediaType(req.headers["content-type"])?.type === "text/xml";
    const fault = httpErrorToFault(httpError);
    const body = soap11 ? fault11ToXml(fault) : faultToXml(fault);
    res.statusCode = httpError.status;
    for (const [name, value] of Object.entries(httpError.headers)) res.setHeader(name, value);
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("Content-Type", soap11 ? "text/xml; charset=utf-8" : "application/soap+xml; charset=utf-8");
    res.setHeader("Content-Length", Buffer.byteLength(body));
    res.end(req.method === "HEAD" ? undefined : body);
  };
}
