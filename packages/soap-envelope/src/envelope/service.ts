import type { IncomingMessage } from "node:http";
import { evaluatePreconditions } from "@svc/conditional";
import { fallbackLogger, HttpError, isHttpError, type Logger } from "@svc/errors";
import { fieldLines, repeatsField } from "@svc/kernel";
import { optionError as codedOptionError, describeValue } from "@svc/kernel/internal";
import { hostRefusal } from "../binding/endpoint-address.js";
import { claimsEncoding, ENCODING_URI, readEncoded, writeEncoded } from "../encoding/soap-encoding.js";
import {
  checkFunction,
  checkLogger,
  checkLongAs,
  checkNameList,
  checkObject,
  checkSchemaLocations,
  optionError,
} from "../options.js";
import {
  type Contract,
  type ContractOperation,
  type LoadContractOptions,
  loadContract,
  type SoapVersion,
} from "../wsdl/contract.js";
import { credentialsFault, notAuthorizedFault } from "../wsse/credentials.js";
import { resolveWsSecurity, type WsSecurityOptions } from "../wsse/options.js";
import {
  processSecurity,
  type WsSecurityProcessor,
  type WsSecurityResult,
  wholeMessage,
  wsSecurityProcessor,
} from "../wsse/security.js";
import { interned } from "../xml/interned.js";
import {
  clark,
  type ParsedElement,
  parseXml,
  type ResolvedXmlLimits,
  readXml,
  resolveLimits,
  SUPPORTED_CHARSETS,
  shown,
  type XmlCheckpoint,
  type XmlElement,
  XmlError,
  type XmlLimits,
  type XmlParse,
  type XmlSource,
  XmlTemplates,
} from "../xml/reader.js";
import { trimXml } from "../xml/space.js";
import { EncodingStyleError } from "../xsd/errors.js";
import { SchemaValidationError, schemaComponents } from "../xsd/schema.js";
import {
  ATTR11_ENCODING_STYLE,
  checkEnvelopeBody,
  checkEnvelopeHead,
  checkSoap11EnvelopeBody,
  checkSoap11EnvelopeHead,
  type EnvelopeHead,
  envelopeCheckpoint,
  type HeaderBlock,
  isTargeted,
  ROLE_NONE,
  Soap11EnvelopeError,
  serializeEnvelope,
  serializeSoap11Envelope,
} from "./envelope.js";
import {
  fault11ToXml,
  faultToXml,
  notUnderstoodHeaders,
  type QName,
  SOAP11_NS,
  SOAP12_NS,
  SoapFault,
  senderFault,
  soap11VersionMismatchXml,
  upgradeHeader,
  WSSE_NS,
  writePlainDetail,
} from "./fault.js";
import { type MediaType, readMediaType } from "./media-type.js";

/** SOAP 1.2 Part 2 §7.1.4: the media type of SOAP 1.2 messages over HTTP (RFC 3902). */
export const SOAP12_MEDIA_TYPE = "application/soap+xml";
const RESPONSE_CONTENT_TYPE = "application/soap+xml; charset=utf-8";
/** SOAP 1.1 §6.1.1: "HTTP applications MUST use the media type "text/xml"". */
export const SOAP11_MEDIA_TYPE = "text/xml";
const RESPONSE11_CONTENT_TYPE = "text/xml; charset=utf-8";

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
  /** The WSDL 1.1 contract: a file path or the document's text. */
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
  body: string;
  /** Whether the request body was left unread (the connection should close). */
  unreadBody?: boolean;
  /**
   * Request fields, besides the method and target, the response was computed from, to append to
   * the response's `Vary` (RFC 9110 §12.5.5) rather than replace one set in front.
   */
  vary?: readonly string[];
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

/** An operation and the namespace and local name of its input element (`op.input`, split). */
interface Route {
  op: ContractOperation;
  namespace: string;
  localName: string;
  /**
   * The operations that take this Body element when there are several: the action tells them
   * apart (checked at load), a message without one of theirs is refused.
   */
  shared?: readonly ContractOperation[];
}

/** One binding's routes: operations by `action` / `SOAPAction` and by the qualified name of their input element. */
interface Routes {
  /** An action several operations share is left out (Part 2 §7.1.4, WS-I BP 1.1 R2710). */
  byAction: ReadonlyMap<string, Route>;
  byElement: ReadonlyMap<string, Route>;
}

/** The options of {@link createSoapService}, checked and resolved once. */
interface ServiceConfig {
  contract: Contract;
  handlers: Readonly<Record<string, SoapHandler>>;
  authenticate: SoapServiceOptions["authenticate"];
  authorize: SoapServiceOptions["authorize"];
  /** The `wsSecurity` option, resolved, with its replay cache. */
  wsSecurity: WsSecurityProcessor | undefined;
  /** The `logger` option; per message, the request's logger or the fallback stands in. */
  logger: SoapLogger | undefined;
  limits: ResolvedXmlLimits;
  /** The envelope's checkpoint: header blocks bounded; with `authenticate`, a stop before the Body's content. */
  checkpoint: XmlCheckpoint;
  /** The `bodyTimeoutMs` option, resolved. */
  bodyTimeoutMs: number;
  roles: ReadonlySet<string>;
  /** Whether a header block is understood (Part 1 §2.4). */
  understood: (element: XmlElement) => boolean;
  /** The SOAP 1.2 binding's routes; undefined when the contract has none. */
  soap12: Routes | undefined;
  /** The SOAP 1.1 binding's routes; undefined when the contract has none. */
  soap11: Routes | undefined;
  /** The contract's versions, 1.2 first. */
  versions: readonly SoapVersion[];
  /** The env:Upgrade block of a VersionMismatch fault (Part 1 §5.4.7). */
  upgrade: string;
  /** `Accept-Post` of a 415: the media types of the versions served. */
  acceptPost: string;
}

/**
 * Compiles a contract and its handlers into a transport-neutral SOAP 1.2 and SOAP 1.1 node (the
 * versions its bindings offer, {@link Contract.versions}). Misconfiguration
 * (a handler for an unknown operation, a missing handler, an unsupported schema construct) throws
 * at construction.
 *
 * @example
 * const service = createSoapService({ wsdl: "contracts/customer.wsdl", handlers: { getCustomer } });
 * const res = await service.handle({ method: "POST", contentType, contentLength, body: req });
 * @see https://www.w3.org/TR/soap12-part1/#msgexchngmdl
 */
export function createSoapService<Operations = never>(
  options: SoapServiceOptions<NoInfer<Operations>>,
): SoapService {
  return compileSoapService(options as SoapServiceOptions).service;
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
  /**
   * The SOAP version a refusal of a request with this `Content-Type` is answered in: the one the
   * node answers its messages in (1.1 for `text/xml` where a SOAP 1.1 binding is offered).
   */
  versionFor(contentType: string | undefined): SoapVersion;
  /** The `logger` option, when given. */
  logger: SoapLogger | undefined;
}

/** {@link createSoapService}, with the {@link SoapNode.deliver} entry `soapEndpoint` uses. */
export function compileSoapService(options: SoapServiceOptions): SoapNode {
  const config = resolveServiceConfig(options);
  return {
    service: {
      contract: config.contract,
      handle: (request) => handle(config, request),
      faultResponse: (fault, status, headers) =>
        faultResponse(config, fault, status, headers, undefined, config.versions[0] as SoapVersion),
      errorResponse: (err, contentType) =>
        errorResponse(config, err, answerVersion(config, cachedMessageType(contentType))),
    },
    deliver: (message, sink) => deliver(config, message, sink),
    maxBytes: config.limits.maxBytes,
    bodyTimeoutMs: config.bodyTimeoutMs,
    versionFor: (contentType) => answerVersion(config, cachedMessageType(contentType)),
    logger: config.logger,
  };
}

const SERVICE_OPTIONS = [
  "wsdl",
  "handlers",
  "authenticate",
  "authorize",
  "understoodHeaders",
  "authenticateHeaders",
  "roles",
  "limits",
  "bodyTimeoutMs",
  "logger",
  "validateResponses",
  "contract",
  "wsSecurity",
] as const;

function resolveServiceConfig(options: SoapServiceOptions): ServiceConfig {
  if (typeof options !== "object" || options === null) {
    throw optionError("options", options, "an object { wsdl, handlers, ... }");
  }
  checkObject(options, "options", SERVICE_OPTIONS);
  if (typeof options.wsdl !== "string" || options.wsdl.trim() === "") {
    throw optionError("wsdl", options.wsdl, "the path of a WSDL 1.1 file or its text");
  }
  const handlers: unknown = options.handlers;
  if (typeof handlers !== "object" || handlers === null || Array.isArray(handlers)) {
    throw optionError("handlers", handlers, "an object with one handler function per operation");
  }
  checkFunction(options.authenticate, "authenticate", "a function (headerBlocks, context) => principal");
  checkFunction(options.authorize, "authorize", "a function (context) => boolean | Promise<boolean>");
  const understoodHeaders = checkNameList(options.understoodHeaders, "understoodHeaders") ?? [];
  const authenticateHeaders = checkNameList(options.authenticateHeaders, "authenticateHeaders");
  if (authenticateHeaders !== undefined && options.authenticate === undefined) {
    // Without the hook nothing consumes these blocks: counting them as understood would be a lie.
    throw optionError("authenticateHeaders", authenticateHeaders, "given only with authenticate");
  }
  const roles = checkRoles(options.roles);
  checkObject(options.limits, "limits", [
    "maxBytes",
    "maxDepth",
    "maxAttributes",
    "maxElements",
    "maxNamespaces",
    "maxHeaderBlocks",
    "maxExpandedBytes",
  ]);
  const limits = resolveLimits(options.limits);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
  // Node's timers take at most 2^31 - 1 ms (a larger delay becomes 1 ms); 0 or Infinity would
  // mean no limit, which is what this option exists to prevent.
  if (!Number.isSafeInteger(bodyTimeoutMs) || bodyTimeoutMs < 1 || bodyTimeoutMs > 2_147_483_647) {
    throw optionError(
      "bodyTimeoutMs",
      options.bodyTimeoutMs,
      "a positive integer of milliseconds (at most 2147483647)",
    );
  }
  checkLogger(options.logger);
  if (options.validateResponses !== undefined && typeof options.validateResponses !== "boolean") {
    throw optionError("validateResponses", options.validateResponses, "true or false");
  }
  checkObject(options.contract, "contract", ["baseDir", "longAs", "importRoot", "schemaLocations"]);
  for (const key of ["baseDir", "importRoot"] as const) {
    const dir = options.contract?.[key];
    if (dir !== undefined && (typeof dir !== "string" || dir === "")) {
      throw optionError(`contract.${key}`, dir, "a directory path");
    }
  }
  checkLongAs(options.contract?.longAs, "contract.longAs");
  checkSchemaLocations(options.contract?.schemaLocations, "contract.schemaLocations");
  const wsSecurity = resolveWsSecurity(options.wsSecurity);
  const contract = loadContract(options.wsdl, options.contract ?? {});
  checkHandlers(contract, options.handlers);
  const versions = contract.versions;
  // The blocks this node processes; before credentials are decided, the others' content is not parsed.
  const understood = compileNameSet([
    ...understoodHeaders,
    ...(options.authenticate ? (authenticateHeaders ?? [`{${WSSE_NS}}Security`, "{*}Authentication"]) : []),
    ...(wsSecurity ? [`{${WSSE_NS}}Security`] : []),
  ]);
  return {
    contract,
    handlers: options.handlers,
    authenticate: options.authenticate,
    authorize: options.authorize,
    wsSecurity: wsSecurity && wsSecurityProcessor(wsSecurity),
    logger: options.logger,
    limits,
    checkpoint: envelopeCheckpoint(
      limits,
      options.authenticate !== undefined || wsSecurity !== undefined,
      new XmlTemplates(),
      understood,
    ),
    bodyTimeoutMs,
    roles: new Set(roles),
    understood,
    soap12: routesOf(contract.bindings["1.2"]),
    soap11: routesOf(contract.bindings["1.1"]),
    versions,
    upgrade: upgradeHeader(versions),
    acceptPost: versions.map((v) => (v === "1.2" ? SOAP12_MEDIA_TYPE : SOAP11_MEDIA_TYPE)).join(", "),
  };
}

/** A binding's operations as {@link Routes}; undefined without the binding. */
function routesOf(operations: readonly ContractOperation[] | undefined): Routes | undefined {
  if (operations === undefined) return undefined;
  const byAction = new Map<string, Route>();
  const byElement = new Map<string, Route>();
  // A soapAction need not be unique (WS-I Basic Profile 1.1 R2710 asks only that the operations'
  // wire signatures, their Body elements, differ): one several operations share names none of
  // them, and the Body element routes those messages.
  const sharedActions = new Set<string>();
  for (const op of operations) {
    // The Body's first child routes: the input element, the rpc wrapper, the first part; "" for
    // an empty Body.
    const first = op.inputBody[0] ?? "";
    const close = first.lastIndexOf("}");
    // Interned, as the parse's template names are: each message's Body element is compared with
    // these (checkBody).
    const routed: Route = {
      op,
      namespace: interned(first.startsWith("{") ? first.slice(1, close) : ""),
      localName: interned(first.startsWith("{") ? first.slice(close + 1) : first),
    };
    if (op.soapAction && byAction.has(op.soapAction)) sharedActions.add(op.soapAction);
    else if (op.soapAction) byAction.set(op.soapAction, routed);
    const before = byElement.get(first);
    // Operations that take one Body element are told apart by their actions (loadContract).
    if (before === undefined) byElement.set(first, routed);
    else if (before.shared === undefined) byElement.set(first, { ...before, shared: [before.op, op] });
    else (before.shared as ContractOperation[]).push(op);
  }
  for (const action of sharedActions) byAction.delete(action);
  return { byAction, byElement };
}

/**
 * SOAP 1.2 Part 1 §2.2: roles are URIs; `next` and `ultimateReceiver` are always played, and
 * "SOAP nodes MUST NOT act in" the `none` role.
 */
function checkRoles(value: unknown): readonly string[] {
  if (value === undefined) return [];
  const isRole = (r: unknown) =>
    typeof r === "string" && /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(r) && r !== ROLE_NONE;
  if (!Array.isArray(value) || !value.every(isRole)) {
    throw optionError(
      "roles",
      value,
      "a list of absolute role URIs, not the none role (SOAP 1.2 Part 1 §2.2)",
    );
  }
  return value;
}

/**
 * One handler per operation of the contract, and no handler for anything else: every handler
 * that matches no operation, and every operation without one, named in one error.
 */
function checkHandlers(contract: Contract, handlers: Readonly<Record<string, SoapHandler>>): void {
  const operations = contract.operations.map((o) => o.name);
  const unknown = Object.keys(handlers).filter((name) => !operations.includes(name));
  const missing = operations.filter((name) => !Object.hasOwn(handlers, name));
  const problems: string[] = [];
  for (const { operation, reason } of contract.notServed) {
    if (unknown.includes(operation)) {
      unknown.splice(unknown.indexOf(operation), 1);
      problems.push(`handler "${operation}" is for ${reason}, which this node does not serve`);
    }
  }
  if (unknown.length > 0) {
    problems.push(
      `${plural(unknown, "handler")} ${quoted(unknown)} ${unknown.length === 1 ? "matches" : "match"} no operation of the contract (${operations.join(", ")})`,
    );
  }
  if (missing.length > 0) problems.push(`no handler for ${plural(missing, "operation")} ${quoted(missing)}`);
  if (problems.length > 0) {
    throw codedOptionError("soap-envelope", "handlers", `@svc/soap-envelope: ${problems.join("; ")}`);
  }
  for (const name of Object.keys(handlers)) {
    if (typeof handlers[name] !== "function") {
      throw optionError(
        "handlers",
        handlers[name],
        "a function (payload, context) => result",
        `@svc/soap-envelope: handlers.${name}`,
      );
    }
  }
}

function plural(names: readonly string[], noun: string): string {
  return names.length === 1 ? noun : `${noun}s`;
}

function quoted(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(", ");
}

/**
 * Processes one message: the HTTP binding's checks on the request, then {@link exchange}. Not
 * `async`: a refusal costs no promise chain, and a message is one promise deep, as before.
 */
function handle(config: ServiceConfig, request: SoapRequest): Promise<SoapResponse> {
  const type = cachedMessageType(request.contentType);
  const refusal = checkTransport(config, request, type);
  if (refusal !== undefined) return answerRefusal(config, request, type, refusal);
  // Without a sink, exchange resolves to the response (or rejects).
  return exchange(config, request, type as MessageType, undefined) as Promise<SoapResponse>;
}

/** {@link handle} answering through a sink: the exchange calls `sink.respond` itself. */
function deliver<M extends SoapRequest>(config: ServiceConfig, message: M, sink: MessageSink<M>): void {
  const type = cachedMessageType(message.contentType);
  const refusal = checkTransport(config, message, type);
  if (refusal === undefined) {
    void exchange(config, message, type as MessageType, sink);
    return;
  }
  // A refusal or a SOAP 1.1 message: rare, through the promise. What `sink.respond` throws goes
  // to `sink.fail` as well (see respondThrough).
  answerRefusal(config, message, type, refusal).then(
    (response) => respondThrough(sink, message, response),
    (err: unknown) => sink.fail(message, err),
  );
}

/**
 * `sink.respond`, and what it throws (node:http refusing a header field a handler's `HttpError`
 * carried: a CR LF, `undefined` from JavaScript) to `sink.fail`: thrown from a promise nobody
 * awaits, it would be an unhandled rejection, which ends a Node process, and the client would
 * wait for an answer that never comes.
 */
function respondThrough<M extends SoapRequest>(
  sink: MessageSink<M>,
  message: M,
  response: SoapResponse,
): void {
  try {
    sink.respond(message, response);
  } catch (err) {
    sink.fail(message, err);
  }
}

/** The answer to a message {@link checkTransport} refused, or to a SOAP 1.1 one a 1.2-only node got. */
function answerRefusal(
  config: ServiceConfig,
  request: SoapRequest,
  type: MessageType | undefined,
  refusal: HttpError | typeof SOAP11_MEDIA_TYPE,
): Promise<SoapResponse> {
  if (refusal === SOAP11_MEDIA_TYPE) return soap11Answer(config, request, type?.charset);
  return Promise.resolve(refuse(config, refusal, answerVersion(config, type)));
}

/**
 * The SOAP version of a fault answered before (or without) reading the envelope: the request's
 * media type's (`text/xml` is SOAP 1.1's) when the contract has that version, else the contract's.
 */
function answerVersion(config: ServiceConfig, type: MessageType | undefined): SoapVersion {
  const soap11 = type?.soap11 === true ? config.soap11 !== undefined : config.soap12 === undefined;
  return soap11 ? "1.1" : "1.2";
}

/**
 * The checks SOAP 1.2 Part 2 §7.5.2.2 leaves to HTTP, made before any of the body is read: 400
 * for the request's `Host` (RFC 9112 §3.2, when `request.http` is given); 405 with `Allow: POST`
 * for any method but POST (RFC 9110 §15.5.6); 415 (RFC 9110
 * §15.5.16) names what is accepted in `Accept-Post`, or in `Accept-Encoding` for a content
 * coding; 413 (§15.5.14) is decided on `Content-Length`. `text/xml` for SOAP 1.1 at a node
 * without a SOAP 1.1 binding (its VersionMismatch, {@link soap11Answer}).
 */
function checkTransport(
  config: ServiceConfig,
  request: SoapRequest,
  type: MessageType | undefined,
): HttpError | typeof SOAP11_MEDIA_TYPE | undefined {
  const limits = config.limits;
  const http = request.http;
  if (request.host !== undefined || http !== undefined) {
    // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
    // request message that lacks a Host header field and to any request message that contains
    // more than one Host header field line or a Host header field with an invalid field value."
    // A message in such a request is not processed, whatever it holds; SOAP 1.2 Part 2
    // §7.5.2.2 leaves the refusal to HTTP (a Sender fault with the 400).
    const refusal =
      request.host !== undefined
        ? hostRefusal(request.host, request.httpVersion)
        : hostRefusal(fieldLines((http as IncomingMessage).rawHeaders, "host"), http?.httpVersion);
    if (refusal !== undefined) return refusal;
  }
  if (request.method !== "POST") {
    // SOAP 1.2 Part 2 §7.4: the request-response exchange this node serves is an HTTP POST (the
    // SOAP response MEP's GET carries no envelope to process). A transport that hands every
    // request to handle() must not get a GET, PUT or DELETE with an envelope processed as a POST:
    // GET is safe (RFC 9110 §9.2.1), and a method the resource does not support gets 405 with
    // Allow (§15.5.6). Methods are case-sensitive (§9.1): `post` is not POST.
    return HttpError.methodNotAllowed(
      ["POST"],
      `${shown(String(request.method), 40)} is not allowed: SOAP 1.2 messages are POSTed`,
    );
  }
  if (request.contentEncoding !== undefined) {
    const coding = request.contentEncoding.trim().toLowerCase();
    if (coding !== "" && coding !== "identity") {
      return HttpError.unsupportedMediaType(
        `Content-Encoding "${shown(coding, 40)}" is not supported; send the message uncoded`,
        { headers: { "Accept-Encoding": "identity" } },
      );
    }
  }
  if (!type) return unsupportedMediaType(config);
  if (type.repeated !== undefined) {
    // RFC 6838 §4.3: "It is an error for a specific parameter to be specified more than once."
    // Which of two `action`s or `charset`s counts is up to each reader: RFC 3902 §3 lets a
    // firewall filter on `action`, and one reading the last would pass a message this node routes
    // by the first. Refused as a media type this endpoint does not take (RFC 9110 §15.5.16).
    return unsupportedMediaType(
      config,
      `Content-Type names the ${shown(type.repeated, 40)} parameter more than once (RFC 6838 §4.3)`,
    );
  }
  const { media, charset } = type;
  const soap11 = type.soap11;
  if (!soap11 && media.type !== SOAP12_MEDIA_TYPE) return unsupportedMediaType(config);
  // SOAP 1.1 at a node that serves it is read as SOAP 1.2 is; at one that does not, only far
  // enough for its VersionMismatch.
  const served = !soap11 || config.soap11 !== undefined;
  if (served && charset !== undefined && !SUPPORTED_CHARSETS.has(charset)) {
    return unsupportedMediaType(config, `charset "${shown(charset, 40)}" is not supported`);
  }
  // RFC 9110 §15.5.14: a body larger than the server will process is a 413 whatever its media
  // type; a SOAP 1.1 message is read (for its VersionMismatch) only within the same limit.
  const declared = request.contentLength === undefined ? undefined : Number(request.contentLength);
  if (declared !== undefined && declared > limits.maxBytes) {
    return HttpError.contentTooLarge(`The message is larger than ${limits.maxBytes} bytes`);
  }
  if (!served) return SOAP11_MEDIA_TYPE;
  if (request.ifMatch !== undefined || request.ifNoneMatch !== undefined) return checkPreconditions(request);
  return undefined;
}

/**
 * RFC 9110 §13.1.1: "An origin server that receives an If-Match field MUST evaluate the condition
 * as per Section 13.2 prior to performing the method" (§13.1.2 the same of If-None-Match), here
 * before any of the message is read. The endpoint exists (`*` matches it) and has no entity tag
 * (no listed tag does): `If-Match: "x"` is false, 412 by §13.2.2 step 1; `If-None-Match: *` is
 * false, 412 for a POST by step 3. It has no modification date either, so If-Unmodified-Since is
 * ignored (§13.1.4: "A recipient MUST ignore the If-Unmodified-Since header field if the resource
 * does not have a modification date available"). Called after the 415 and 413 checks: §13.2.1
 * has preconditions ignored when the answer without them would not be a 2xx; a text/xml (SOAP
 * 1.1) message at a node without a SOAP 1.1 binding is never answered 2xx. SOAP 1.2 Part 2 §7.5.2.2 leaves such statuses to HTTP: the
 * 412 is a Sender fault, as every transport refusal.
 */
function checkPreconditions(request: SoapRequest): HttpError | undefined {
  const outcome = evaluatePreconditions(
    "POST",
    { "if-match": request.ifMatch, "if-none-match": request.ifNoneMatch },
    EXISTING_ENDPOINT,
  );
  if (outcome !== 412) return undefined;
  return HttpError.preconditionFailed(
    request.ifMatch !== undefined
      ? "If-Match names no current entity tag of this endpoint, which has none"
      : "If-None-Match: * is false: this endpoint exists",
  );
}

/** The endpoint as a target resource: it exists, with no entity tag and no modification date. */
const EXISTING_ENDPOINT = Object.freeze({});

/**
 * `text/xml` at a node without a SOAP 1.1 binding: a SOAP 1.1 envelope gets the SOAP/1.1
 * VersionMismatch fault of Part 1 Appendix A, anything else 415.
 */
async function soap11Answer(
  config: ServiceConfig,
  request: SoapRequest,
  charset: string | undefined,
): Promise<SoapResponse> {
  let root: ParsedElement | undefined;
  try {
    root = await parseXml(request.body, config.limits, charset, config.bodyTimeoutMs);
  } catch (err) {
    // A body that did not arrive in time is a 408, one past limits.maxBytes a 413 (RFC 9110
    // §15.5.9, §15.5.14), whatever its version.
    if (err instanceof XmlError && (err.kind === "timeout" || err.kind === "too-large")) {
      return parseFailure(config, err, "1.2");
    }
  }
  if (root && root.localName === "Envelope" && root.namespace === SOAP11_NS)
    return versionMismatch(config, "1.1");
  return errorResponse(
    config,
    unsupportedMediaType(config, `Content-Type must be ${SOAP12_MEDIA_TYPE} (SOAP 1.2)`),
    "1.2",
  );
}

/**
 * The SOAP processing of one message (Part 1 §2.6), as named steps: parse the envelope, route,
 * authenticate and process the header blocks, check the body, authorize, decode, invoke, encode;
 * whatever a step throws becomes a fault in {@link toFaultResponse}. With a sink, the response
 * (or what broke outside the steps) goes to it and the promise resolves to nothing; without one,
 * the promise resolves to the response.
 */
async function exchange<M extends SoapRequest>(
  config: ServiceConfig,
  request: M,
  type: MessageType,
  sink: MessageSink<M> | undefined,
): Promise<SoapResponse | undefined> {
  const logger = config.logger ?? request.logger ?? fallbackLogger;
  let response: SoapResponse;
  // The version faults are answered in until the envelope says (answerVersion).
  let version: SoapVersion = type.soap11 ? "1.1" : "1.2";
  if (version === "1.1" ? config.soap11 === undefined : config.soap12 === undefined) {
    version = answerVersion(config, type);
  }
  try {
    let parsed: XmlParse | undefined;
    let parseError: unknown;
    // WS-Security signatures are checked on the message's text, read whole first.
    let raw = "";
    try {
      let body = request.body;
      if (config.wsSecurity) ({ body, raw } = await wholeMessage(body, type.charset, config));
      parsed = await readXml(body, config.limits, type.charset, config.bodyTimeoutMs, config.checkpoint);
    } catch (err) {
      parseError = err;
    }
    if (parsed === undefined) response = parseFailure(config, parseError, version);
    else {
      let action = type.action;
      let op: ContractOperation | undefined;
      let bodyFault = false;
      try {
        const root = parsed.root;
        version = envelopeVersion(config, type, root);
        // With `authenticate`, the parse stopped before the Body's content (envelopeCheckpoint):
        // the header blocks are complete, the Body's first child is a start tag.
        let head: EnvelopeHead;
        let routes: Routes;
        if (version === "1.2") {
          head = checkEnvelopeHead(root);
          routes = config.soap12 as Routes;
        } else {
          action = soapAction(request);
          head = checkSoap11EnvelopeHead(root);
          routes = config.soap11 as Routes;
        }
        const routed = route(routes, action, head.body.children[0]);
        op = routed?.op;
        const blocks: XmlElement[] = [];
        for (const block of head.headers) blocks.push(block.element);
        const base: SoapAuthContext = {
          operation: op?.name ?? "",
          action,
          soapVersion: version,
          headers: blocks,
          correlationId: request.correlationId,
          logger,
          http: request.http,
          security: undefined,
        };
        let context: SoapContext;
        // Part 1 §2.6 step 3, before any header block is processed (the `authenticate` hook is
        // step 4): "If such a fault is generated, any further processing MUST NOT be done."
        checkMustUnderstand(config, head.headers);
        checkHeaderEncodings(config, head.headers);
        if (config.wsSecurity) {
          base.security = processSecurity(config.wsSecurity, {
            raw,
            envelopeNs: version === "1.2" ? SOAP12_NS : SOAP11_NS,
            blocks: head.headers.map((h) => ({ element: h.element, targeted: isTargeted(h, config.roles) })),
            maxDepth: config.limits.maxDepth,
          });
        }
        if (config.authenticate) {
          const own = targetedBlocks(config, head.headers, blocks);
          const principal = await authenticateStep(config.authenticate, own, base);
          // Refused credentials are the sender's fault; a hook that broke is this node's
          // (toFaultResponse). Either way the Body's content is never parsed.
          if (principal instanceof AuthenticationFailure) throw credentialsFault(principal.error);
          context = { ...base, principal };
        } else {
          // Without the hook nothing else saw `base`: it becomes the context (no copy per message).
          context = base as SoapContext;
          context.principal = undefined;
        }
        const whole = parsed.rest === undefined ? root : parseRest(parsed.rest);
        // SOAP 1.1 §4.4: from here on, a fault says the Body's content could not be processed.
        bodyFault = version === "1.1";
        const body = version === "1.2" ? checkEnvelopeBody(whole) : checkSoap11EnvelopeBody(whole);
        const target = checkBody(body, routed, action, version === "1.1" ? whole : undefined);
        // Authorization before decoding: a caller refused here costs no schema validation.
        if (config.authorize) await authorizeStep(config.authorize, context, target);
        const payload = decodeBody(config, target, body, version);
        const handler = config.handlers[target.name] as (payload: unknown, context: SoapContext) => unknown;
        response = encodeResult(config, target, await handler(payload, context), version);
      } catch (err) {
        response = toFaultResponse(config, err, op, request.correlationId, logger, version, bodyFault);
      }
    }
  } catch (err) {
    // What only a bug gets here (not XML, a throwing logger): the transport's error path.
    if (sink === undefined) throw err;
    sink.fail(request, err);
    return undefined;
  }
  if (sink !== undefined) respondThrough(sink, request, response);
  return response;
}

/** The rest of a stopped parse; what it finds wrong is the sender's fault, as in {@link parseFailure}. */
function parseRest(rest: () => ParsedElement): ParsedElement {
  try {
    return rest();
  } catch (err) {
    if (err instanceof XmlError) throw senderFault(err.message);
    throw err;
  }
}

/** A body that is not well-formed XML (or too large) is refused before any SOAP processing. */
function parseFailure(config: ServiceConfig, err: unknown, version: SoapVersion): SoapResponse {
  if (err instanceof XmlError && err.kind === "too-large") {
    return refuse(config, HttpError.contentTooLarge(err.message), version);
  }
  if (err instanceof XmlError && err.kind === "timeout") {
    // RFC 9110 §15.5.9: 408 when the server "did not receive a complete request message within
    // the time that it was prepared to wait"; it "SHOULD send the \"close\" connection option",
    // as it has decided to close the connection rather than continue waiting.
    return refuse(config, new HttpError(408, err.message, { headers: { Connection: "close" } }), version);
  }
  if (err instanceof XmlError) {
    return faultResponse(config, senderFault(err.message), undefined, {}, undefined, version);
  }
  throw err;
}

/** A response decided before the SOAP processing: thrown by a step, answered as it is. */
class Answer {
  constructor(readonly response: SoapResponse) {}
}

/**
 * The version a message is processed in: its envelope's, when the node serves it in the media
 * type it came in (`application/soap+xml` for 1.2, `text/xml` for 1.1). Otherwise a
 * VersionMismatch (thrown as an {@link Answer}): Part 1 §5.4.7 (with the env:Upgrade block naming
 * the versions served) for an envelope of no known version, in the version of the media type;
 * Part 1 Appendix A and SOAP 1.1 §4.4.1 (a SOAP 1.1 fault) for a 1.2 envelope at a SOAP 1.1 node
 * and a 1.1 envelope at a 1.2-only node. A 1.1 envelope sent as `application/soap+xml` to a node
 * that serves 1.1 is a 415: SOAP 1.1 §6.1.1 sends it as `text/xml`.
 */
function envelopeVersion(config: ServiceConfig, type: MessageType, root: ParsedElement): SoapVersion {
  if (root.localName === "Envelope") {
    if (root.namespace === SOAP12_NS) {
      if (!type.soap11 && config.soap12 !== undefined) return "1.2";
      if (config.soap11 !== undefined) throw new Answer(versionMismatch(config, "1.1"));
    } else if (root.namespace === SOAP11_NS) {
      if (config.soap11 === undefined) throw new Answer(versionMismatch(config, "1.1"));
      if (type.soap11) return "1.1";
      throw new Answer(
        errorResponse(
          config,
          unsupportedMediaType(
            config,
            `A SOAP 1.1 envelope is sent as ${SOAP11_MEDIA_TYPE} (SOAP 1.1 §6.1.1)`,
          ),
          "1.1",
        ),
      );
    }
  }
  throw new Answer(versionMismatch(config, answerVersion(config, type)));
}

/** A VersionMismatch fault in `version`, its env:Upgrade block naming the versions served. */
function versionMismatch(config: ServiceConfig, version: SoapVersion): SoapResponse {
  if (version === "1.1") {
    const names = config.versions.map((v) => `SOAP ${v}`);
    const supports = names.length === 1 ? `${names[0]} only` : names.join(" and ");
    // SOAP 1.1 §6.2: faults travel with 500 and text/xml.
    return {
      status: 500,
      headers: { "Content-Type": RESPONSE11_CONTENT_TYPE },
      body: soap11VersionMismatchXml(config.upgrade, supports),
    };
  }
  return faultResponse(
    config,
    new SoapFault({
      code: "VersionMismatch",
      reason: "The message is not a SOAP 1.2 envelope",
      headerXml: config.upgrade,
    }),
    500,
    {},
    undefined,
    "1.2",
  );
}

/**
 * SOAP 1.1 §6.1.1: the `SOAPAction` field's quoted URI; `""` says the intent is the request's
 * URI, and no field no intent. An unquoted value is read as it is (WS-I Basic Profile 1.1 R1119
 * lets a receiver refuse it; clients that send one are many). Two field lines are refused: which
 * one counts is up to each reader (a firewall filtering on it, §6.1.1, may take the other).
 */
function soapAction(request: SoapRequest): string | undefined {
  const raw = request.soapAction;
  if (raw === undefined) return undefined;
  if (request.http !== undefined && repeatsField(request.http.rawHeaders, "soapaction")) {
    throw senderFault("SOAPAction is given more than once");
  }
  const value = raw.trim();
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/**
 * Routing (Part 2 §7.1.4 action parameter, SOAP 1.1 §6.1.1 SOAPAction, then the body element's
 * qualified name). An action the binding does not name (node-soap sends `<tns>/<operation>` when
 * the WSDL has none) routes nothing: the body element does.
 */
function route(
  routes: Routes,
  action: string | undefined,
  bodyElement: ParsedElement | undefined,
): Route | undefined {
  const routed = action !== undefined ? routes.byAction.get(action) : undefined;
  if (routed !== undefined) return routed;
  return routes.byElement.get(bodyElement ? clark(bodyElement.namespace, bodyElement.localName) : "");
}

/** What the `authenticate` hook threw, turned into a fault by the step after it. */
class AuthenticationFailure {
  constructor(readonly error: unknown) {}
}

/**
 * Part 1 §2.2, §2.6 step 4: a node processes the header blocks targeted at a role it plays; one
 * for `none` is never processed, one for another role (a gateway's wsse:Security, WS-Security 1.1
 * §6: one per actor) belongs to that node. `all` (every block's element) when all are targeted.
 */
function targetedBlocks(
  config: ServiceConfig,
  headers: readonly HeaderBlock[],
  all: XmlElement[],
): readonly XmlElement[] {
  for (const h of headers) {
    if (!isTargeted(h, config.roles)) {
      return headers.filter((b) => isTargeted(b, config.roles)).map((b) => b.element);
    }
  }
  return all;
}

/** The principal `authenticate` returns, or what it threw as an {@link AuthenticationFailure}. */
async function authenticateStep(
  authenticate: NonNullable<SoapServiceOptions["authenticate"]>,
  headerBlocks: readonly XmlElement[],
  context: SoapAuthContext,
): Promise<unknown> {
  try {
    return await authenticate(headerBlocks, context);
  } catch (err) {
    // A block's content the hook read and the parser refused: the sender's fault, as any such.
    return new AuthenticationFailure(err instanceof XmlError ? senderFault(err.message) : err);
  }
}

/** Part 1 §2.6 step 3: a mandatory targeted block nobody understands stops processing. */
function checkMustUnderstand(config: ServiceConfig, headers: readonly HeaderBlock[]): void {
  if (headers.length === 0) return;
  const notUnderstood = headers.filter(
    (h) => h.mustUnderstand && isTargeted(h, config.roles) && !config.understood(h.element),
  );
  if (notUnderstood.length > 0) throw mustUnderstandFault(notUnderstood);
}

/** The body holds the one input element of the routed operation, in no data encoding (literal). */
function checkBody(
  body: readonly ParsedElement[],
  routed: Route | undefined,
  action: string | undefined,
  soap11Envelope: ParsedElement | undefined,
): ContractOperation {
  const bodyElement = body[0];
  if (routed?.shared !== undefined) {
    // SOAP 1.2 Part 2 §7.1.4 (the action parameter), SOAP 1.1 §6.1.1 (SOAPAction): the intent the
    // Body alone does not tell.
    const names = routed.shared.map((o) => `${o.name} ("${o.soapAction}")`).join(", ");
    const what = bodyElement ? shownName(bodyElement) : "an empty env:Body";
    throw senderFault(
      action === undefined
        ? `Operations ${names} take ${what}: the action must name one`
        : `The action "${shown(action)}" names none of the operations that take ${what}: ${names}`,
    );
  }
  if (routed !== undefined && !holdsInput(routed.op)) {
    // WSDL 1.1 §3.5: the Body holds the parts themselves (or nothing); the schema checks their
    // number and order as it decodes them, the first one (or none) is checked here.
    const first = routed.op.inputBody[0];
    if (first === undefined ? bodyElement !== undefined : !bodyElement) {
      throw senderFault(
        bodyElement
          ? `The action "${shown(action ?? "")}" takes an empty env:Body, not ${shownName(bodyElement)}`
          : `The action "${shown(action ?? "")}" does not take an empty env:Body`,
      );
    }
    if (
      bodyElement &&
      (bodyElement.namespace !== routed.namespace || bodyElement.localName !== routed.localName)
    ) {
      throw senderFault(`The action "${shown(action ?? "")}" does not take ${shownName(bodyElement)}`);
    }
    const encoded = routed.op.use === "encoded";
    for (const part of body) {
      if (soap11Envelope === undefined) checkEncodingStyle(part, encoded);
      else checkSoap11EncodingStyle(soap11Envelope, part, encoded);
    }
    return routed.op;
  }
  // SOAP 1.1 §5.4.1: an encoded Body may hold multi-reference values after the wrapper, which
  // the encoded reader tells from parts (encoding/soap-encoding.ts).
  const independent = routed?.op.use === "encoded" && soap11Envelope !== undefined;
  if (!bodyElement || (body.length !== 1 && !independent)) {
    throw senderFault(
      `env:Body must contain exactly one element (${routed?.op.style ?? "document"}/${routed?.op.use ?? "literal"})`,
    );
  }
  // The names and the action come from the message: a Reason shows them cut short.
  if (!routed) throw senderFault(`No operation takes ${shownName(bodyElement)}`);
  if (bodyElement.namespace !== routed.namespace || bodyElement.localName !== routed.localName) {
    throw senderFault(`The action "${shown(action ?? "")}" does not take ${shownName(bodyElement)}`);
  }
  const encoded = routed.op.use === "encoded";
  for (const part of independent ? body : [bodyElement]) {
    if (soap11Envelope === undefined) checkEncodingStyle(part, encoded);
    else checkSoap11EncodingStyle(soap11Envelope, part, encoded);
  }
  return routed.op;
}

/**
 * SOAP 1.1 §4.1.1: `SOAP-ENV:encodingStyle` "MAY appear on any element, and is scoped to that
 * element's contents and all child elements not themselves containing such an attribute": on the
 * body entry, else on the Body, else on the Envelope. A literal operation (`use="literal"`, WSDL
 * 1.1 §3.5) reads an empty value ("no claims") or none; an encoded one also the SOAP encoding
 * (§5), which the binding names whether the message does or not. Any other is a Client fault.
 * (Its descendants' are the schema's, or the encoded reader's, to refuse.)
 */
function checkSoap11EncodingStyle(
  envelope: ParsedElement,
  bodyElement: ParsedElement,
  encoded: boolean,
): void {
  const body = envelope.children.find((c) => c.namespace === SOAP11_NS && c.localName === "Body");
  const style =
    bodyElement.attributes[ATTR11_ENCODING_STYLE] ??
    body?.attributes[ATTR11_ENCODING_STYLE] ??
    envelope.attributes[ATTR11_ENCODING_STYLE] ??
    "";
  if (trimXml(style) === "" || (encoded && claimsEncoding(style, "1.1"))) return;
  throw senderFault(
    encoded
      ? `Encoding style "${shown(style, 200)}" is not supported (the SOAP encoding, ${ENCODING_URI["1.1"]}, only)`
      : `Encoding style "${shown(style, 200)}" is not supported (literal content only)`,
  );
}

/** An element's `{ns}local` for a Reason, its namespace and local name cut by {@link shown}. */
function shownName(element: XmlElement): string {
  return clark(shown(element.namespace), shown(element.localName));
}

/**
 * Part 1 §5.4.6, DataEncodingUnknown: "A header or body child element information item targeted
 * at the faulting SOAP node is scoped (see 5.1.1 SOAP encodingStyle Attribute) with a data
 * encoding that the faulting node does not support." This node supports literal content
 * (`encoding/none`, or an empty value, which makes no claims, §5.1.1) and, for an operation bound
 * `use="encoded"`, the SOAP encoding (Part 2 §3).
 */
function checkEncodingStyle(element: XmlElement, encoded = false): void {
  const style = element.attributes[ENCODING_STYLE] ?? "";
  const trimmed = trimXml(style);
  if (trimmed !== ENCODING_NONE && trimmed !== "" && !(encoded && claimsEncoding(style, "1.2"))) {
    throw new SoapFault({
      code: "DataEncodingUnknown",
      reason: `Encoding style "${shown(style, 200)}" is not supported`,
    });
  }
}

/**
 * Part 1 §2.6 step 4: the header blocks this node processes (targeted at it and understood) are
 * checked for their data encoding as the body child is; blocks it ignores (for other roles, or
 * optional and not understood) are not its to decode.
 */
function checkHeaderEncodings(config: ServiceConfig, headers: readonly HeaderBlock[]): void {
  for (const h of headers) {
    if (
      ENCODING_STYLE in h.element.attributes &&
      isTargeted(h, config.roles) &&
      config.understood(h.element)
    ) {
      checkEncodingStyle(h.element);
    }
  }
}

/**
 * The `authorize` hook: `true` goes on, `false` is a `wsse:FailedAuthentication` Sender fault,
 * anything else a bug of the hook (a logged Receiver fault); what it throws maps as for
 * `authenticate` ({@link credentialsFault}).
 */
async function authorizeStep(
  authorize: NonNullable<SoapServiceOptions["authorize"]>,
  context: SoapContext,
  op: ContractOperation,
): Promise<void> {
  let allowed: unknown;
  try {
    allowed = await authorize(context);
  } catch (err) {
    throw credentialsFault(err);
  }
  if (allowed === false) throw notAuthorizedFault(op.name);
  if (allowed !== true) {
    throw new TypeError(
      `The authorize hook returned ${describeValue(allowed)} for ${op.name}, not a boolean`,
    );
  }
}

/**
 * Whether the Body holds the operation's input element itself (document style with one element
 * part, or the rpc wrapper) rather than the parts of its content.
 */
function holdsInput(op: ContractOperation): boolean {
  return op.inputBody.length === 1 && op.inputBody[0] === op.input;
}

/**
 * The input's value, checked against the schema; a mismatch is the sender's fault. A Body of
 * several parts (or none) decodes as the content of the element the contract declares for it.
 */
function decodeBody(
  config: ServiceConfig,
  op: ContractOperation,
  body: readonly ParsedElement[],
  version: SoapVersion,
): unknown {
  const prefix = version === "1.2" ? SOAP12_PREFIX : SOAP11_PREFIX;
  try {
    if (op.use === "encoded") {
      const decl = schemaComponents(config.contract.schema)?.elements.get(op.input);
      if (decl === undefined) throw new Error(`${op.input} is not a global element of the schema`);
      const parts = body.map((part) => stripSoapAttributes(part, prefix));
      return config.contract.schema.decode(readEncoded(parts, decl, holdsInput(op), version, config.limits));
    }
    if (!holdsInput(op)) {
      const close = op.input.indexOf("}");
      const wrapper: ParsedElement = {
        namespace: op.input.slice(1, close),
        localName: op.input.slice(close + 1),
        attributes: {},
        children: body.map((part) => stripSoapAttributes(part, prefix)),
        text: "",
        scope: {},
        mixed: false,
      };
      return config.contract.schema.decode(wrapper);
    }
    return config.contract.schema.decode(stripSoapAttributes(body[0] as ParsedElement, prefix));
  } catch (err) {
    // Part 1 §5.4.6: a descendant scoped with an encoding this node does not decode.
    if (err instanceof EncodingStyleError) {
      throw new SoapFault({
        code: "DataEncodingUnknown",
        reason: `Encoding style "${shown(err.encodingStyle, 200)}" is not supported (${err.path})`,
      });
    }
    if (err instanceof SchemaValidationError) throw senderFault(`Invalid request: ${err.message}`);
    throw err;
  }
}

/** The handler's result as the output element in an envelope; a one-way operation's 202. */
function encodeResult(
  config: ServiceConfig,
  op: ContractOperation,
  result: unknown,
  version: SoapVersion,
): SoapResponse {
  if (op.output === undefined) {
    // SOAP 1.2 Part 2 §7.5.1: a one-way exchange completes with 202 and no SOAP envelope; so does
    // a SOAP 1.1 one (WS-I Basic Profile 1.2 R1143, R2714: no envelope in the response).
    return { status: 202, headers: {}, body: "" };
  }
  let bodyXml: string;
  try {
    bodyXml = config.contract.schema.encode(op.output, result);
  } catch (err) {
    throw new SoapResultError(op.name, err);
  }
  if (op.use === "encoded") {
    const decl = schemaComponents(config.contract.schema)?.elements.get(op.output);
    if (decl !== undefined) bodyXml = writeEncoded(bodyXml, decl, version);
  }
  if (op.outputBody?.length !== 1 || op.outputBody[0] !== op.output) {
    // The Body holds the parts themselves: the declared element's content, without its tags (it
    // has no attributes, so its start tag ends at the first `>`).
    const end = bodyXml.indexOf(">");
    bodyXml = bodyXml[end - 1] === "/" ? "" : bodyXml.slice(end + 1, bodyXml.lastIndexOf("</"));
  }
  if (version === "1.1") {
    return {
      status: 200,
      headers: { "Content-Type": RESPONSE11_CONTENT_TYPE },
      body: serializeSoap11Envelope(bodyXml),
    };
  }
  return {
    status: 200,
    headers: { "Content-Type": RESPONSE_CONTENT_TYPE },
    body: serializeEnvelope(bodyXml),
  };
}

/**
 * What a step threw, as the response: an {@link Answer} as it is; a VersionMismatch; a
 * {@link SoapFault} with its Part 2 §7.5.2.2 status; an `HttpError` with its status and headers,
 * 4xx as Sender, 5xx as Receiver; anything else a Receiver fault (500), logged. In SOAP 1.1 every
 * fault is a 500 (SOAP 1.1 §6.2: "In case of a SOAP error while processing the request, the SOAP
 * HTTP server MUST issue an HTTP 500"), with the `HttpError`'s header fields.
 */
function toFaultResponse(
  config: ServiceConfig,
  err: unknown,
  op: ContractOperation | undefined,
  correlationId: string | undefined,
  logger: SoapLogger,
  version: SoapVersion = "1.2",
  bodyFault = false,
): SoapResponse {
  if (err instanceof Answer) return err.response;
  if (err instanceof Soap11EnvelopeError) return versionMismatch(config, "1.1");
  const soap11 = version === "1.1";
  if (err instanceof SoapFault) {
    try {
      return faultResponse(config, err, soap11 ? 500 : err.httpStatus, {}, op, version, bodyFault);
    } catch (detailError) {
      return internalFault(config, logger, detailError, op, correlationId, 500, {}, version, bodyFault);
    }
  }
  if (isHttpError(err)) {
    if (err.status < 500) {
      return faultResponse(
        config,
        senderFault(err.expose ? err.message : err.reason),
        soap11 ? 500 : err.status,
        { ...err.headers },
        undefined,
        version,
        bodyFault,
      );
    }
    const status = soap11 ? 500 : err.status;
    return internalFault(
      config,
      logger,
      err,
      op,
      correlationId,
      status,
      { ...err.headers },
      version,
      bodyFault,
    );
  }
  return internalFault(config, logger, err, op, correlationId, 500, {}, version, bodyFault);
}

/** A failure of this node: logged with the correlation id, answered without internal detail. */
function internalFault(
  config: ServiceConfig,
  logger: SoapLogger,
  err: unknown,
  op: ContractOperation | undefined,
  correlationId: string | undefined,
  status = 500,
  headers: Record<string, string> = {},
  version: SoapVersion = "1.2",
  bodyFault = false,
): SoapResponse {
  logger.error({ err, operation: op?.name, correlationId }, "SOAP operation failed");
  return faultResponse(
    config,
    new SoapFault({ code: "Receiver", reason: "The service could not process the request" }),
    status,
    headers,
    undefined,
    version,
    bodyFault,
  );
}

/**
 * A fault as a response; its detail entries are encoded with the schema when it declares them.
 * In SOAP 1.1 (SOAP 1.1 §4.4), with 500 unless a transport refusal gives its own status.
 */
function faultResponse(
  config: ServiceConfig,
  fault: SoapFault,
  status: number | undefined,
  headers: Record<string, string> = {},
  op?: ContractOperation,
  version: SoapVersion = "1.2",
  bodyFault = false,
): SoapResponse {
  if (version === "1.1") {
    return {
      status: status ?? 500,
      headers: { ...headers, "Content-Type": RESPONSE11_CONTENT_TYPE },
      body: fault11ToXml(
        fault,
        config.contract.targetNamespace,
        (detail) => writeDetail(config, op, detail),
        bodyFault,
      ),
    };
  }
  return {
    status: status ?? fault.httpStatus,
    headers: { ...headers, "Content-Type": RESPONSE_CONTENT_TYPE },
    body: faultToXml(fault, config.contract.targetNamespace, (detail) => writeDetail(config, op, detail)),
  };
}

/** Detail entries as elements of the schema (an operation's declared faults first), else plain. */
function writeDetail(
  config: ServiceConfig,
  op: ContractOperation | undefined,
  detail: Readonly<Record<string, unknown>>,
): string {
  const schema = config.contract.schema;
  let out = "";
  for (const [key, value] of Object.entries(detail)) {
    const name = key.startsWith("{")
      ? key
      : (Object.values(op?.faults ?? {}).find((f) => f.endsWith(`}${key}`)) ??
        schema.elementNames.find((n) => n.endsWith(`}${key}`)));
    if (name && schema.hasElement(name)) out += schema.encode(name, value);
    else out += plainDetail(key, value);
  }
  return out;
}

/**
 * Any transport-level refusal as a fault with the error's status and headers: a refusal of the
 * HTTP request (405, 408, 413, 415) keeps its status in SOAP 1.1 too, which no SOAP processing
 * reached.
 */
function errorResponse(config: ServiceConfig, err: HttpError, version: SoapVersion = "1.2"): SoapResponse {
  return faultResponse(config, httpErrorToFault(err), err.status, { ...err.headers }, undefined, version);
}

/** A refusal before (all of) the body was read: the transport discards the rest. */
function refuse(config: ServiceConfig, err: HttpError, version: SoapVersion): SoapResponse {
  return { ...errorResponse(config, err, version), unreadBody: true };
}

/**
 * Part 1 §5.4.8: a MustUnderstand fault "SHOULD provide NotUnderstood SOAP header blocks" that
 * "detail the XML qualified names ... of the particular SOAP header block(s) which were not
 * understood": one per qualified name, however often it occurs. Each NotUnderstood block
 * declares its name's namespace, so the blocks are listed up to {@link NOT_UNDERSTOOD_BYTES} of
 * names (the first always) and the Reason names {@link REASON_NAMES} of them: a message that
 * declares a long namespace once for thousands of blocks (2,000 in a 100,000-character namespace,
 * 158 kB) was answered with a copy per block, a 400 MB fault.
 */
function mustUnderstandFault(blocks: readonly HeaderBlock[]): SoapFault {
  // Distinct names without building `{ns}local` strings, each a copy of a possibly long namespace.
  const seen = new Map<string, Set<string>>();
  const names: QName[] = [];
  for (const b of blocks) {
    const { namespace, localName } = b.element;
    let locals = seen.get(namespace);
    if (locals === undefined) {
      locals = new Set();
      seen.set(namespace, locals);
    }
    if (locals.has(localName)) continue;
    locals.add(localName);
    names.push({ namespace, localName });
  }
  const listed: QName[] = [];
  let bytes = 0;
  for (const n of names) {
    bytes += n.namespace.length + n.localName.length;
    if (listed.length > 0 && bytes > NOT_UNDERSTOOD_BYTES) break;
    listed.push(n);
  }
  const shown = names.slice(0, REASON_NAMES).map(reasonName).join(", ");
  const more = names.length > REASON_NAMES ? `, and ${names.length - REASON_NAMES} more` : "";
  return new SoapFault({
    code: "MustUnderstand",
    reason: `Header block${names.length > 1 ? "s" : ""} not understood: ${shown}${more}`,
    headerXml: notUnderstoodHeaders(listed),
  });
}

/** Characters of qualified names the NotUnderstood blocks of one fault list, beyond the first. */
const NOT_UNDERSTOOD_BYTES = 16 * 1024;
/** Names a MustUnderstand fault's Reason lists, each cut to {@link REASON_NAME_LENGTH}. */
const REASON_NAMES = 8;
const REASON_NAME_LENGTH = 200;

/** `{ns}local` for a Reason, a long namespace or local name cut short. */
function reasonName(n: QName): string {
  const half = REASON_NAME_LENGTH / 2;
  if (n.namespace.length + n.localName.length <= REASON_NAME_LENGTH) return `{${n.namespace}}${n.localName}`;
  return `{${shown(n.namespace, half)}}${shown(n.localName, half)}`;
}

const ENCODING_STYLE = `{${SOAP12_NS}}encodingStyle`;
const ENCODING_NONE = "http://www.w3.org/2003/05/soap-envelope/encoding/none";

/** env:* (SOAP-ENV:* in SOAP 1.1) attributes belong to the SOAP layer, not to the payload's schema. */
function stripSoapAttributes(element: ParsedElement, prefix: string): ParsedElement {
  let soap = false;
  for (const k in element.attributes) {
    if (k.startsWith(prefix)) {
      soap = true;
      break;
    }
  }
  if (!soap) return element;
  // Object.fromEntries defines own properties: an attribute named `__proto__` stays one.
  const attributes: Record<string, string> = Object.fromEntries(
    Object.entries(element.attributes).filter(([k]) => !k.startsWith(prefix)),
  );
  return { ...element, attributes };
}

/** How the Clark names of env:* attributes begin. */
const SOAP12_PREFIX = `{${SOAP12_NS}}`;
const SOAP11_PREFIX = `{${SOAP11_NS}}`;

/** A request's `Content-Type`, parsed, with what the exchange reads of it. */
interface MessageType {
  media: MediaType;
  /** The `charset` parameter, lower-cased. */
  charset: string | undefined;
  /** The `action` parameter (Part 2 §7.1.4). */
  action: string | undefined;
  /** Whether it is SOAP 1.1's `text/xml` (SOAP 1.1 §6.1.1). */
  soap11: boolean;
  /** A parameter name given more than once (RFC 6838 §4.3), lower-cased: the message is refused. */
  repeated: string | undefined;
}

const MESSAGE_TYPES = new Map<string, MessageType | null>();
const MESSAGE_TYPE_CACHE_SIZE = 256;

/**
 * {@link readMediaType} remembered per header value: clients repeat the same `Content-Type`
 * on every call. The cache is bounded (cleared when full) and its entries are frozen.
 */
function cachedMessageType(value: string | undefined): MessageType | undefined {
  if (value === undefined || value.length > 512) return messageType(value);
  const cached = MESSAGE_TYPES.get(value);
  if (cached !== undefined) return cached ?? undefined;
  const type = messageType(value);
  if (MESSAGE_TYPES.size >= MESSAGE_TYPE_CACHE_SIZE) MESSAGE_TYPES.clear();
  MESSAGE_TYPES.set(value, type ?? null);
  return type;
}

function messageType(value: string | undefined): MessageType | undefined {
  const read = readMediaType(value);
  if (read === undefined) return undefined;
  const media = read.media;
  Object.freeze(media.parameters);
  Object.freeze(media);
  return Object.freeze({
    media,
    charset: media.parameters.charset?.toLowerCase(),
    action: media.parameters.action,
    soap11: media.type === SOAP11_MEDIA_TYPE,
    repeated: read.repeated,
  });
}

function compileNameSet(names: readonly string[]): (element: XmlElement) => boolean {
  const exact = new Set<string>();
  const anyNs = new Set<string>();
  for (const n of names) {
    if (n.startsWith("{*}")) anyNs.add(n.slice(3));
    else exact.add(n);
  }
  return (element) => anyNs.has(element.localName) || exact.has(clark(element.namespace, element.localName));
}

function plainDetail(key: string, value: unknown): string {
  return writePlainDetail({ [key]: value });
}

/** 415 naming the media types this endpoint accepts (RFC 9110 §15.5.16, `Accept-Post`). */
function unsupportedMediaType(config: ServiceConfig, message?: string): HttpError {
  return HttpError.unsupportedMediaType(
    message ?? `Content-Type must be ${config.acceptPost.replace(", ", " or ")}`,
    {
      headers: { "Accept-Post": config.acceptPost },
    },
  );
}

/** The HTTP status of a {@link HttpError} turned into a SOAP fault (used by the error middleware). */
export function httpErrorToFault(err: HttpError): SoapFault {
  const code = err.status < 500 ? "Sender" : "Receiver";
  return new SoapFault({ code, reason: err.expose ? err.message : err.reason });
}
