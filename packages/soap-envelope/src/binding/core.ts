import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import {
  type Coder,
  type Fields,
  type Pipeline,
  type RequestFacts,
  type RequestRule,
  type ResponseValue,
  refuseRequest,
  type UnreadBodyBounds,
} from "@svc/kernel";
import { reportAnswer, soapChannel } from "../processor/diagnostics.js";
import { utf8Bytes, utf8Length } from "../xml/bytes.js";
import { readBytes, XmlError, type XmlSource } from "../xml/reader.js";
import { refuseUnacceptable } from "./accept.js";
import { checkCoder, coded, messagePipeline, pipelineRequest } from "./coding.js";
import { documentPipeline, renderDocument, type SoapDocument, serveDocument } from "./documents.js";
import { targetPath } from "./request-target.js";
import {
  compileSoapService,
  type SoapLogger,
  type SoapNode,
  type SoapRequest,
  type SoapResponse,
  type SoapService,
  type SoapServiceOptions,
} from "./service.js";

/**
 * One HTTP request to a SOAP endpoint, as any framework receives it: header strings and plain
 * values, and the body as the transport has it. What {@link SoapEndpoint.answer} decides on.
 */
export interface SoapHttpInput {
  /** The method, as received (`POST`; case-sensitive, RFC 9110 §9.1). */
  method: string;
  /**
   * The request-target as the client sent it, path and query (`/ws/customer?wsdl`), before any
   * mount-path stripping: its path is the endpoint's address written into the WSDL. In
   * absolute-form (`http://shop.example/ws/customer?wsdl`), or a Fetch `Request`'s URL, its
   * authority is the address's host instead of `Host` (RFC 9112 §3.2.2).
   */
  target: string;
  /** The fields by lower-case name (a `node:http` request's `headers`). */
  headers: IncomingHttpHeaders;
  /** Every `Host` field line as received (RFC 9112 §3.2: two of them are refused). */
  host: readonly string[];
  /** The HTTP version (`"1.1"`): an HTTP/1.1 request must name a host. */
  httpVersion: string | undefined;
  /** Whether the connection is TLS. */
  encrypted: boolean;
  /**
   * The request's facts (`requestFacts` / `resolveFacts` of `@svc/kernel`): behind a trusted
   * peer, the scheme and host it forwarded, which the WSDL's address is written with.
   */
  facts: Pick<RequestFacts, "trusted" | "forwarded" | "vary">;
  /**
   * The body: a stream (a `node:http` request, a Fetch `ReadableStream`), read within the
   * size limit and `bodyTimeoutMs`; bytes a framework already read; an {@link XmlError} a
   * framework's read failed with ({@link SoapEndpoint.readBody}); or undefined when there is none.
   */
  body: XmlSource | XmlError | undefined;
  /** The `node:http` request, when there is one: the handlers' `context.http`. */
  http?: IncomingMessage | undefined;
  /**
   * The framework's own request (Express's `req`, Fastify's `request`, a Fetch `Request`): what
   * `svc:soap` names as a message's `request`.
   */
  native?: object | undefined;
  /** A request-scoped logger (pino-http's `req.log`, Fastify's `request.log`). */
  logger?: SoapLogger | undefined;
  /**
   * The request's correlation id, when the application assigned one; else the `X-Correlation-ID`
   * field (up to 200 characters), else a random UUID.
   */
  correlationId?: string | undefined;
}

/**
 * What {@link SoapEndpoint.route} decided: an answer already made (a 405), a WSDL or schema
 * document to serve (through the kernel's pipeline: its validators, preconditions and coding), or
 * a POSTed message for the service to process. {@link SoapEndpoint.respond} makes each the
 * response to write.
 */
export type SoapRoute =
  | { response: SoapResponse; document?: undefined; message?: undefined }
  | { response?: undefined; document: SoapDocument; message?: undefined }
  | { response?: undefined; document?: undefined; message: SoapRequest };

/**
 * A SOAP endpoint over HTTP, framework-free: the service plus the decisions of the HTTP binding
 * that are not the message's (which URIs serve the WSDL and schemas, with what validators,
 * `Vary` and caching; which methods each URI allows). Every framework adapter reads the
 * request into a {@link SoapHttpInput}, calls {@link SoapEndpoint.answer} and writes the
 * {@link SoapResponse} (status, `headers`, `vary` appended, `body`) as it is.
 */
export interface SoapEndpoint {
  /** The compiled service (contract and message processor). */
  readonly service: SoapService;
  /** The largest body read, in bytes (`limits.maxBytes`): a framework's own body limit. */
  readonly maxBytes: number;
  /** How long a body may take to arrive, in milliseconds (`bodyTimeoutMs`). */
  readonly bodyTimeoutMs: number;
  /** The bounds of the refused-body policy (`unreadBody`), for the adapter that writes a response. */
  readonly unreadBody: UnreadBodyBounds;
  /**
   * Reads a body whole within {@link maxBytes} and {@link bodyTimeoutMs}, for a framework that
   * hands its handlers bytes (Fastify's content-type parsers): the bytes, or the {@link XmlError}
   * why not (`"too-large"`, `"timeout"`), which {@link answer} turns into the 413 or 408 fault.
   * A `contentLength` over the limit is that error at once, nothing read (RFC 9110 §15.5.14).
   */
  readBody(source: Exclude<XmlSource, string>, contentLength?: string): Promise<Uint8Array | XmlError>;
  /**
   * Decides one request up to the SOAP processing: `GET`/`HEAD` `?wsdl` and `?xsd=` are a
   * document (or refused by a thrown `HttpError`: 400 for the host, 404, the coding's 406), other
   * methods but POST get 405 with `Allow`, a POST is a message for {@link SoapService.handle}.
   */
  route(input: SoapHttpInput): SoapRoute;
  /**
   * What {@link route} decided for `input`, made the response to write: the document through the
   * kernel's pipeline (rejecting with its 412), the message processed ({@link SoapService.handle},
   * then {@link complete}), and the content coding applied.
   */
  respond(input: SoapHttpInput, routed: SoapRoute): Promise<SoapResponse>;
  /**
   * {@link route}, then {@link respond}: the response to write. Rejects with an `HttpError` for
   * the refusals the application's error handling renders (the error handlers of `@svc/errors`,
   * with `soapFaults` in their `renderers`).
   */
  answer(input: SoapHttpInput): Promise<SoapResponse>;
  /**
   * The response fields every answer to a message carries besides the service's: `Cache-Control:
   * no-store` (RFC 9111 §5.2.2.5: an answer to one message is never reused) and its
   * `Content-Length` (RFC 9110 §8.6).
   */
  complete(response: SoapResponse): SoapResponse;
}

/** Options of {@link createSoapEndpoint}: those of the service, and the responses' content coding. */
export type SoapEndpointOptions<Operations = never> = SoapServiceOptions<Operations> & {
  /**
   * Content coding of the responses (RFC 9110 §8.4): the pipeline's coding step,
   * `compression()` of `@svc/negotiate`. The WSDL, its schemas and the answers to messages are
   * sent in the coding the client's `Accept-Encoding` prefers, from the step's `threshold` bytes,
   * with `Vary: Accept-Encoding`; a coded document's `ETag` is weak (§8.8.3), so its 304 still
   * answers `If-None-Match`. A request refusing every coding, `identity` included, is refused with
   * the 406 before its message is read.
   * @default undefined (every response identity-coded)
   */
  coding?: Coder | undefined;
};

/**
 * The framework-free SOAP endpoint every adapter (`soapEndpoint` of `@svc/soap-envelope/express`,
 * `/node`, `/fastify`, `/fetch`) is a thin layer over. Misconfiguration throws at construction.
 *
 * @example
 * const endpoint = createSoapEndpoint({ wsdl: "contracts/customer.wsdl", handlers });
 * const response = await endpoint.answer({ method, target, headers, host, httpVersion, encrypted, facts, body });
 * @see https://www.w3.org/TR/soap12-part2/#soapinhttp — the SOAP HTTP binding
 */
export function createSoapEndpoint<Operations = never>(
  options: SoapEndpointOptions<NoInfer<Operations>>,
): SoapEndpoint {
  if (typeof options !== "object" || options === null || !("coding" in options)) {
    return compileSoapEndpoint(compileSoapService(options as SoapServiceOptions));
  }
  const { coding, ...service } = options;
  const coder = checkCoder(coding);
  return compileSoapEndpoint(compileSoapService(service as SoapServiceOptions), coder);
}

/** {@link createSoapEndpoint} over a compiled node (`soapEndpoint` keeps its `deliver`). */
export function compileSoapEndpoint(node: SoapNode, coder?: Coder): SoapEndpoint {
  const service = node.service;
  const { maxBytes, bodyTimeoutMs, unreadBody } = node;
  const documents = documentPipeline(coder);
  const messages = coder === undefined ? undefined : messagePipeline(coder);
  const respond = (input: SoapHttpInput, routed: SoapRoute): Promise<SoapResponse> => {
    if (routed.response !== undefined) return Promise.resolve(routed.response);
    if (routed.document !== undefined) return serveDocument(documents, input, routed.document);
    const answered = service.handle(routed.message).then(complete);
    return messages === undefined ? answered : answered.then((response) => coded(messages, input, response));
  };
  const endpoint: SoapEndpoint = {
    service,
    maxBytes,
    bodyTimeoutMs,
    unreadBody,
    readBody: (source, contentLength) =>
      contentLength !== undefined && Number(contentLength) > maxBytes
        ? Promise.resolve(new XmlError("too-large", `The message is larger than ${maxBytes} bytes`))
        : readBytes(source, maxBytes, bodyTimeoutMs).catch((err: unknown) => {
            if (err instanceof XmlError) return err;
            throw err;
          }),
    route: (input) => route(service, input, coder, documents, node.answerTypes),
    respond,
    answer: (input) => {
      let routed: SoapRoute;
      try {
        routed = route(service, input, coder, documents, node.answerTypes);
      } catch (err) {
        return Promise.reject(err);
      }
      return respond(input, routed);
    },
    complete,
  };
  return endpoint;
}

function route(
  service: SoapService,
  input: SoapHttpInput,
  coder: Coder | undefined,
  documents: Pipeline,
  answerTypes: SoapNode["answerTypes"],
): SoapRoute {
  const target = input.target;
  const q = target.indexOf("?");
  const method = input.method;
  // Only the WSDL and XSD URIs carry a query this endpoint reads.
  const query = q === -1 ? undefined : new URLSearchParams(target.slice(q + 1));
  const describes = query !== undefined && (query.has("wsdl") || query.has("WSDL") || query.has("xsd"));
  if (describes && (method === "GET" || method === "HEAD")) {
    const path = targetPath(target);
    const document = renderDocument(service.contract, input, path, query.get("xsd"));
    // RFC 9110 §12.5.3: a client refusing every coding, identity included, gets the pipeline's 406.
    const refusal = documents.prepare(pipelineRequest(input, path), target).refusal;
    if (refusal !== undefined) throw refusal;
    return { document };
  }
  // RFC 9110 §15.5.6: a 405 MUST carry Allow, the methods the target resource supports: the
  // endpoint URI takes POST only; its ?wsdl / ?xsd URIs also GET and HEAD. Decided as the kernel
  // decides it for any route, before the message is read.
  const refused = refuseRequest(input, describes ? DESCRIBED : POSTED);
  if (refused !== undefined) {
    const refusal = service.errorResponse(refused, header(input.headers["content-type"]));
    if (soapChannel.hasSubscribers) reportAnswer(input.native, refusal, undefined, "1.2");
    return { response: complete({ ...refusal, unreadBody: true }) };
  }
  // RFC 9110 §12.5.3 and §15.5.7: a client refusing every coding (identity included), or every
  // media type the answer can take, is refused before its message is read and processed, not
  // after the operation ran: the order the kernel's pipeline decides them in for a write.
  coder?.preflight(pipelineRequest(input));
  const headers = input.headers;
  const accept = headers.accept;
  if (accept !== undefined) refuseUnacceptable(accept, answerTypes(header(headers["content-type"])));
  const body = input.body;
  return {
    message: {
      method,
      contentType: header(headers["content-type"]),
      contentLength: header(headers["content-length"]),
      soapAction: header(headers.soapaction),
      contentEncoding: header(headers["content-encoding"]),
      ifMatch: header(headers["if-match"]),
      ifNoneMatch: header(headers["if-none-match"]),
      body: body instanceof XmlError ? failedRead(body) : (body ?? EMPTY),
      http: input.http,
      native: input.native,
      host: input.host,
      httpVersion: input.httpVersion,
      correlationId: input.correlationId ?? correlationId(headers),
      logger: input.logger,
    },
  };
}

/** The methods of the endpoint URI, and of its `?wsdl` and `?xsd=` URIs. */
const POSTED: RequestRule = Object.freeze({ methods: Object.freeze(["POST"]) });
const DESCRIBED: RequestRule = Object.freeze({ methods: Object.freeze(["GET", "HEAD", "POST"]) });

const EMPTY = new Uint8Array(0);

/** A body whose read failed, as a source that fails the same way when the service reads it. */
function failedRead(err: XmlError): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(err) }),
  };
}

/**
 * A field's one value: node joins the lines of a field it does not know with ", ", and a list
 * (a field it keeps as lines) is the first line's, as the service refuses repeated media types.
 */
function header(value: string | string[] | undefined): string | undefined {
  return typeof value === "string" || value === undefined ? value : value.join(", ");
}

function correlationId(headers: IncomingHttpHeaders): string {
  const given = headers["x-correlation-id"];
  return typeof given === "string" && given.length <= 200 ? given : globalThis.crypto.randomUUID();
}

function complete(response: SoapResponse): SoapResponse {
  const given = response.headers;
  // Most answers carry `Content-Type` alone (every envelope, every refusal without fields of its
  // own): their fields are made without the case-insensitive merge below.
  let only: string | undefined;
  for (const name in given) {
    if (only !== undefined || name !== "Content-Type") {
      only = undefined;
      break;
    }
    only = given[name];
  }
  if (only !== undefined) {
    return {
      ...response,
      headers: {
        "Content-Type": only,
        "Cache-Control": "no-store",
        "Content-Length": String(bodyLength(response.body)),
      },
    };
  }
  const headers: Record<string, string> = {};
  // Field names are case-insensitive (RFC 9110 §5.1): of an error's own `content-type` and the
  // fault's `Content-Type` the later stands, and `cache-control` and `content-length` are these.
  const spelled = new Map<string, string>([
    ["cache-control", "Cache-Control"],
    ["content-length", "Content-Length"],
  ]);
  for (const name in response.headers) {
    const lower = name.toLowerCase();
    const before = spelled.get(lower);
    if (before === "Cache-Control" || before === "Content-Length") continue;
    if (before !== undefined) delete headers[before];
    spelled.set(lower, name);
    headers[name] = response.headers[name] as string;
  }
  headers["Cache-Control"] = "no-store";
  // An empty body (a one-way message's 202) says so, rather than being framed as chunked.
  headers["Content-Length"] = String(bodyLength(response.body));
  return { ...response, headers };
}

/** The octets a response's content is sent as. */
function bodyLength(body: string | Uint8Array): number {
  return typeof body === "string" ? utf8Length(body) : body.byteLength;
}

/**
 * A {@link SoapResponse} as the kernel's response value, which the kernel's writer of each
 * framework puts on the wire (`writeResponse` of `@svc/kernel/node`, `sendValue` of
 * `/fastify`, `toResponse` of `/fetch`): its fields by lower-case name over those set in front,
 * its `vary` appended, its content as bytes (none when empty: a HEAD, a 304, a one-way 202).
 */
export function soapResponseValue(response: SoapResponse): ResponseValue {
  const fields: Fields = {};
  const headers = response.headers;
  for (const name in headers) {
    const lower = name.toLowerCase();
    // The writer sets Content-Length from the bytes; a HEAD's (no bytes) is the GET's, kept.
    if (lower !== "content-length" || response.body.length === 0) fields[lower] = headers[name] as string;
  }
  const body = response.body;
  return {
    status: response.status,
    fields,
    vary: response.vary === undefined ? [] : [...response.vary],
    body: body.length === 0 ? undefined : typeof body === "string" ? utf8Bytes(body) : body,
  };
}
