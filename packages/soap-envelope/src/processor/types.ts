import type { IncomingMessage } from "node:http";
import type { HttpError, Logger } from "@svc/errors";
import type { UnreadBodyBounds, UnreadBodyOptions } from "@svc/kernel";
import type { SoapAddressing } from "../addressing/headers.js";
import type { SoapFault } from "../envelope/fault.js";
import type { MtomOptions } from "../mtom/options.js";
import type { Contract, LoadContractOptions, SoapVersion } from "../wsdl/contract.js";
import type { WsSecurityOptions } from "../wsse/options.js";
import type { WsSecurityResult } from "../wsse/security.js";
import type { XmlElement, XmlLimits, XmlSource } from "../xml/reader.js";
import { SchemaValidationError } from "../xsd/schema.js";

/** The part of a `Logger` (from `@svc/errors`) this package calls; pino loggers fit. */
export type SoapLogger = Pick<Logger, "error">;

/** What a handler (and the `authenticate` and `authorize` hooks) learns about the request. */
export interface SoapContext {
  /** The operation being invoked. */
  operation: string;
  /**
   * The `action` parameter of the request's media type (SOAP 1.2), or the `SOAPAction` field's
   * URI without its quotes (SOAP 1.1 §6.1.1), when sent.
   */
  action: string | undefined;
  /** The SOAP version of the request's envelope, which the response's follows. */
  soapVersion: SoapVersion;
  /** Every header block of the envelope, in document order. */
  headers: readonly XmlElement[];
  /** What `authenticate` returned; undefined without the hook. */
  principal: unknown;
  /** What the `wsSecurity` checks established (timestamp, signature); undefined without the option. */
  security: WsSecurityResult | undefined;
  /**
   * The request's WS-Addressing 1.0 headers (`wsa:Action`, `wsa:MessageID`, `wsa:To`,
   * `wsa:ReplyTo`, ...), read and checked; undefined for a message without them, or with the
   * `addressing` option `false`.
   */
  addressing: SoapAddressing | undefined;
  /** The request's correlation id. */
  correlationId: string | undefined;
  /** The logger. */
  logger: SoapLogger;
  /**
   * The HTTP request the message arrived in: with {@link soapEndpoint} under Express, Express's
   * `req`, so what middleware in front of the endpoint attached (a principal from the
   * `Authorization` header, `req.ip`, `res.locals` through `req.res`) is at hand. Undefined when
   * the service is driven without HTTP. Read it; the body has already been consumed.
   */
  http: IncomingMessage | undefined;
}

/** Context of the `authenticate` hook: a {@link SoapContext} before the principal is known. */
export type SoapAuthContext = Omit<SoapContext, "principal">;

/** An operation handler: the decoded input element in, the output element's value out. */
export type SoapHandler = (payload: never, context: SoapContext) => Promise<unknown> | unknown;

/**
 * The payload and result types of one operation, as `svc-soap-types` / {@link generateTypes}
 * writes them: `input` is what the handler receives, `output` what it may return (none for a
 * one-way operation).
 */
export interface SoapOperationTypes {
  input: unknown;
  /** Absent for a one-way operation (WSDL 1.1 §2.4.1), whose handler returns nothing. */
  output?: unknown;
}

/**
 * The handlers of a contract whose operation types are `Operations` (a generated
 * `<Name>Operations`): one handler per operation, its payload and result checked against the
 * schema by the compiler.
 *
 * @example
 * const handlers = {
 *   getCustomer: async ({ customerId }) => ({ customer: await repo.get(customerId) }),
 * } satisfies CustomerServiceHandlers; // generated: SoapHandlers<CustomerServiceOperations>
 */
export type SoapHandlers<Operations> = {
  readonly [Name in keyof Operations]: Operations[Name] extends { input: infer Input; output: infer Output }
    ? (payload: Input, context: SoapContext) => Output | Promise<Output>
    : Operations[Name] extends { input: infer Input }
      ? (payload: Input, context: SoapContext) => void | Promise<void>
      : never;
};

/**
 * Options of {@link createSoapService}. `Operations` (a generated `<Name>Operations` type) types
 * the handlers; without it, handlers are checked at start-up only.
 */
export interface SoapServiceOptions<Operations = never> {
  /** The WSDL 1.1 contract: a file path, the name of one of `contract.documents`, or the document's text. */
  wsdl: string;
  /**
   * One handler per operation of the contract's SOAP bindings (1.2 and 1.1), by operation name. Typed by
   * `Operations` when given (`createSoapService<CustomerServiceOperations>(...)`).
   */
  handlers: [Operations] extends [never] ? Readonly<Record<string, SoapHandler>> : SoapHandlers<Operations>;
  /**
   * Checks the credentials in the header blocks (and, through `context.http`, the HTTP request)
   * and returns the principal. `headerBlocks` are the blocks targeted at this node (Part 1 §2.2:
   * no `env:role`, `next`, `ultimateReceiver` or one of `roles`); a block for `none` or another
   * role is not this node's to process (`context.headers` still lists every block). The content
   * of a block this node does not process (in neither `authenticateHeaders` nor
   * `understoodHeaders`) is parsed when the hook first reads its `children` or `text`, not
   * before: a sender without credentials does not get it parsed. It is not called for a message
   * with a mandatory header block this node does not understand (that MustUnderstand fault comes
   * first, Part 1 §2.6 step 3). What it throws decides the fault:
   * - a {@link SoapFault}: sent as it is;
   * - an {@link SoapAuthenticationError}, an error whose `code` is a WS-Security 1.0 §12 fault
   *   code (`FailedAuthentication`, `InvalidSecurityToken`, ...), or an `HttpError` 401/403: the
   *   credentials were refused, a Sender fault (400) with subcode `wsse:<code>`
   *   (`wsse:FailedAuthentication` by default);
   * - any other `HttpError`: its status and headers (a 503 with `Retry-After` stays a 503 with
   *   `Retry-After`), 4xx as Sender, 5xx as Receiver;
   * - an `XmlError` (reading a block's content that is not well-formed or breaks a limit): a
   *   Sender fault naming why;
   * - anything else: the hook itself broke (a user store down): a Receiver fault (500), logged,
   *   without detail.
   * @default undefined (no authentication)
   */
  authenticate?: (headerBlocks: readonly XmlElement[], context: SoapAuthContext) => Promise<unknown>;
  /**
   * Decides whether `context.principal` may invoke `context.operation`. It runs after the
   * header blocks were processed (`authenticate`, `mustUnderstand`) and the operation was
   * routed, and **before the Body is decoded or validated against the schema**: a caller that may
   * not invoke an operation never gets its payload parsed into values, checked against pattern
   * facets or handed to a handler, whatever it holds.
   *
   * Resolve `true` to allow and `false` to refuse (a Sender fault, 400, subcode
   * `wsse:FailedAuthentication`, WS-Security 1.0 §12: "could not be authenticated or
   * authorized"). Anything else it resolves to is a bug of the hook: a Receiver fault (500),
   * logged, so a hook that forgets to return never lets a call through. What it throws becomes a
   * fault as for `authenticate`: a {@link SoapFault} as it is (your own subcode), a
   * {@link SoapAuthenticationError} / WS-Security code / `HttpError` 401 or 403 a Sender fault
   * with a `wsse` subcode, another `HttpError` its status, anything else a logged Receiver fault.
   *
   * @example
   * authorize: ({ operation, principal }) =>
   *   operation === "getCustomer" || (principal as User).scopes.includes("write"),
   * @default undefined (every authenticated caller may invoke every operation)
   */
  authorize?: (context: SoapContext) => boolean | Promise<boolean>;
  /**
   * Header blocks this node understands (Part 1 §2.4), as Clark names `{ns}local`; `{*}local`
   * matches any namespace. With `authenticate`, the WS-Security `Security` block and any
   * `Authentication` block count as understood.
   * @default []
   */
  understoodHeaders?: readonly string[];
  /**
   * Header blocks the `authenticate` hook consumes (counted as understood when it is set).
   * @default ["{<wsse>}Security", "{*}Authentication"]
   */
  authenticateHeaders?: readonly string[];
  /**
   * Extra roles (URIs) this node acts in besides `next` and `ultimateReceiver` (Part 1 §2.2).
   * @default []
   */
  roles?: readonly string[];
  /**
   * Size and shape limits of request messages.
   * @default { maxBytes: 1 MiB, maxDepth: 64, maxAttributes: 64, maxElements: 100000, maxNamespaces: 128, maxHeaderBlocks: 64, maxExpandedBytes: 4 × maxBytes }
   */
  limits?: XmlLimits;
  /**
   * How long, in milliseconds, a request body may take to arrive once its processing starts. A
   * client that sends the header section and then trickles the body (or stops) would otherwise
   * hold the connection, the buffered part of the message and a pending read until the server's
   * own `requestTimeout`, which many deployments turn off. A body not ended in time gets 408
   * Request Timeout (RFC 9110 §15.5.9) as a Sender fault with `Connection: close`; the rest is
   * not read and the handler never runs. A positive integer (at most 2147483647, the largest
   * delay Node's timers take); expiry is checked in steps of a tenth of the limit (at most 1 s).
   * @default 30_000
   */
  bodyTimeoutMs?: number;
  /**
   * The bounds of the refused-body policy, for a message refused before it was read whole (413,
   * 415, 405, a 401 in front, an early fault): a remainder of at most `maxBytes` is read and
   * discarded within `timeoutMs` to keep the connection; a larger or chunked one closes it
   * (`Connection: close`). See `UnreadBodyOptions` of `@svc/kernel`.
   * @default { maxBytes: 65536, timeoutMs: 1000 }
   */
  unreadBody?: UnreadBodyOptions;
  /**
   * Where handler exceptions are logged (with the correlation id).
   * @default one JSON line on stderr
   */
  logger?: SoapLogger;
  /**
   * Handler results are always checked against the schema, as they are serialized: a result that
   * does not match is a Receiver fault, logged as a {@link SoapResultError} naming the field.
   * @deprecated `false` never skipped that check (an invalid value cannot be serialized) and
   * changes nothing; kept so existing options still construct. Only `true` or `false` is accepted.
   * @default true
   */
  validateResponses?: boolean;
  /** Options of the contract loader (`baseDir`, `longAs`, `importRoot`, `schemaLocations`). */
  contract?: LoadContractOptions;
  /**
   * WS-Security processing of the `wsse:Security` block: `wsu:Timestamp` (with replay detection)
   * and X.509 signatures, checked before `authenticate` and before the Body is parsed; what they
   * established is `context.security`. See {@link WsSecurityOptions}.
   * @default undefined (the block is left to `authenticate`)
   */
  wsSecurity?: WsSecurityOptions;
  /**
   * SOAP MTOM: requests sent as a multipart/related XOP package are read within these bounds, each
   * `xop:Include` becoming its part's octets as the `xs:base64Binary` value the handler receives.
   * `false` refuses them with 415. See {@link MtomOptions}.
   * @default { maxParts: 16, maxPartBytes: limits.maxBytes, maxHeaderBytes: 4096 }
   */
  mtom?: false | MtomOptions;
  /**
   * WS-Addressing 1.0 (Core, SOAP Binding, Metadata): the `wsa:` headers of the
   * `http://www.w3.org/2005/08/addressing` namespace are understood (a `mustUnderstand` on them
   * does not fault), a message that carries them is routed by its `wsa:Action` (the WSDL's
   * `wsam:Action` / `wsaw:Action`, else the `soapAction`, else the default action pattern) and
   * its reply carries `wsa:Action`, `wsa:MessageID` and `wsa:RelatesTo`; its faults are those of
   * the SOAP Binding §6.4 (README "WS-Addressing"). A binding that declares it required
   * (`wsaw:UsingAddressing wsdl:required="true"`, a `wsam:Addressing` policy assertion) refuses a
   * message without it. `false`: the headers are not understood, as any other block nobody
   * processes (a mandatory one gets the MustUnderstand fault).
   * @default true
   */
  addressing?: boolean;
}

/**
 * A handler's result that does not match the output element of its operation. The client gets a
 * Receiver fault without detail (the mismatch is this node's bug, not the sender's); the log gets
 * this error, whose message and `path` name the field: `The result of getCustomer does not match
 * the schema: GetCustomerResponse.customer.email: expected xs:string, got the number 5`.
 */
export class SoapResultError extends Error {
  /** The operation whose handler returned the result. */
  readonly operation: string;
  /** Where in the result, as a property path (`GetCustomerResponse.customer.email`), when known. */
  readonly path: string | undefined;
  constructor(operation: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`The result of ${operation} does not match the schema: ${detail}`, { cause });
    this.name = "SoapResultError";
    this.operation = operation;
    this.path = cause instanceof SchemaValidationError ? cause.path : undefined;
  }
}

/** A transport-neutral request. */
export interface SoapRequest {
  /**
   * HTTP method. Anything but `POST` (case-sensitive, RFC 9110 §9.1) is answered 405 with
   * `Allow: POST`, an `env:Sender` fault, the body unread.
   */
  method: string;
  /** `Content-Type` header. */
  contentType: string | undefined;
  /** `Content-Length` header. */
  contentLength: string | undefined;
  /**
   * `SOAPAction` header (SOAP 1.1 §6.1.1), as received: `"urn:getCustomer"`, `""` or absent. It
   * routes a SOAP 1.1 message when it names one operation of the binding.
   */
  soapAction?: string | undefined;
  /** The body. */
  body: XmlSource;
  /** Correlation id for logs and handlers. */
  correlationId?: string | undefined;
  /** A request-scoped logger (pino-http's `req.log`). */
  logger?: SoapLogger | undefined;
  /** `Content-Encoding` header; anything but `identity` is refused with 415. */
  contentEncoding?: string | undefined;
  /**
   * The HTTP request, handed to the `authenticate` hook and the handlers as `context.http`. Its
   * `Host` field lines are checked before anything else (RFC 9112 §3.2): two of them, a value
   * that is no RFC 3986 authority (`x"y`, `a b`, `evil@shop.example`) or none (or an empty one)
   * on HTTP/1.1 → 400 `env:Sender`, the message unread.
   */
  http?: IncomingMessage | undefined;
  /**
   * The framework's own request (Express's `req`, Fastify's `request`, a Fetch `Request`, a
   * `node:http` request): named as `request` in what the endpoint publishes on `svc:soap`.
   * The `soapEndpoint` of each framework's entry sets it.
   */
  native?: object | undefined;
  /**
   * Every `Host` field line the request carried, checked as those of `http` are (RFC 9112 §3.2),
   * for a transport without a `node:http` request (a Fetch `Request`). Read instead of `http`'s.
   */
  host?: readonly string[] | undefined;
  /** The request's HTTP version (`"1.1"`), with `host`: an HTTP/1.1 request must name a host. */
  httpVersion?: string | undefined;
  /**
   * `If-Match` header, evaluated before the message is read (RFC 9110 §13.1.1): the endpoint
   * exists but has no entity tag, so `*` is true and any listed tag false (412).
   */
  ifMatch?: string | undefined;
  /** `If-None-Match` header (RFC 9110 §13.1.2): `*` is false for the existing endpoint (412). */
  ifNoneMatch?: string | undefined;
}

/** A transport-neutral response. */
export interface SoapResponse {
  status: number;
  headers: Record<string, string>;
  /**
   * The content: an envelope or a document as text, or the bytes of an MTOM package
   * (`multipart/related`), which are binary. `""` for none.
   */
  body: string | Uint8Array;
  /** Whether the request body was left unread (the connection should close). */
  unreadBody?: boolean;
  /**
   * Request fields, besides the method and target, the response was computed from, to append to
   * the response's `Vary` (RFC 9110 §12.5.5) rather than replace one set in front.
   */
  vary?: readonly string[];
  /**
   * For a fault: its code as the wire names it (`Sender`, `Client`, `wsse:FailedCheck`, ...) and
   * the SOAP version it is answered in, as `svc:soap` reports it; absent for any other answer.
   */
  fault?: { readonly code: string; readonly version: SoapVersion };
  /**
   * For an answer sent as an XOP package (the `mtom` option's `respond`): the parts it took out of
   * the envelope and their octets; absent for a plain envelope.
   */
  attachments?: { readonly count: number; readonly bytes: number };
}

/** A compiled SOAP service (1.2, 1.1 or both): the contract plus a request processor. */
export interface SoapService {
  contract: Contract;
  /**
   * Processes one POSTed message (SOAP 1.2 Part 2 §7, the request-response and one-way MEPs;
   * SOAP 1.1 §6 for `text/xml`); a request with another method gets 405 with `Allow: POST`.
   */
  handle(request: SoapRequest): Promise<SoapResponse>;
  /**
   * Renders a fault as a response with the Part 2 §7.5.2.2 status, in the contract's first SOAP
   * version (1.2 when it has a SOAP 1.2 binding; a SOAP 1.1 fault with 500 otherwise).
   */
  faultResponse(fault: SoapFault, status?: number, headers?: Record<string, string>): SoapResponse;
  /**
   * Renders an `HttpError` (405, 413, 415, 429, 503, ...) as a SOAP fault with the error's status
   * and headers (`Allow`, `Accept-Post`, `Retry-After`): 4xx as Sender, 5xx as Receiver without
   * internal detail. The one path every transport-level refusal takes. `contentType`, the
   * request's, chooses the SOAP version of the fault (`text/xml`: SOAP 1.1, when the contract has
   * it); without it, the contract's first.
   */
  errorResponse(err: HttpError, contentType?: string): SoapResponse;
}

/**
 * Where a transport takes the messages it hands to {@link SoapNode.deliver}: `respond` gets the
 * response, `fail` what broke outside the SOAP processing (what `handle()` rejects with). Plain
 * functions of the message, so a message costs no closure.
 */
export interface MessageSink<M extends SoapRequest> {
  respond(message: M, response: SoapResponse): void;
  fail(message: M, err: unknown): void;
}

/** A compiled service and the transport entry that answers through a {@link MessageSink}. */
export interface SoapNode {
  service: SoapService;
  /**
   * {@link SoapService.handle} for a transport: the response goes to `sink.respond` from the step
   * that made it, not through one more promise.
   */
  deliver<M extends SoapRequest>(message: M, sink: MessageSink<M>): void;
  /** The largest message read, in bytes (`limits.maxBytes`, resolved). */
  maxBytes: number;
  /** The `bodyTimeoutMs` option, resolved. */
  bodyTimeoutMs: number;
  /** The `unreadBody` option, resolved. */
  unreadBody: UnreadBodyBounds;
  /**
   * The media types the answer to a message with this `Content-Type` can be sent as: its SOAP
   * version's (`text/xml` for SOAP 1.1 where a SOAP 1.1 binding is offered, else
   * `application/soap+xml`), and `multipart/related` where the `mtom` option may answer with an
   * XOP package.
   */
  answerTypes(contentType: string | undefined): readonly string[];
  /** The `logger` option, when given. */
  logger: SoapLogger | undefined;
}
