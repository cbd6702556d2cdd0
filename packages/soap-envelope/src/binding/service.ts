import type { HttpError } from "@svc/errors";
import { SOAP11_NS } from "../envelope/fault.js";
import {
  type MessageType,
  resolveServiceConfig,
  type ServiceConfig,
  SOAP11_MEDIA_TYPE,
  SOAP12_MEDIA_TYPE,
} from "../processor/config.js";
import { reportAnswer, soapChannel } from "../processor/diagnostics.js";
import { exchange, respondThrough } from "../processor/exchange.js";
import {
  answerVersion,
  errorResponse,
  faultResponse,
  parseFailure,
  refuse,
  unsupportedMediaType,
  versionMismatch,
} from "../processor/faults.js";
import type {
  MessageSink,
  SoapNode,
  SoapRequest,
  SoapResponse,
  SoapService,
  SoapServiceOptions,
} from "../processor/types.js";
import type { SoapVersion } from "../wsdl/contract.js";
import { type ParsedElement, parseXml, XmlError } from "../xml/reader.js";
import { cachedMessageType, checkTransport } from "./transport.js";

export { SOAP11_MEDIA_TYPE, SOAP12_MEDIA_TYPE } from "../processor/config.js";
export { httpErrorToFault } from "../processor/faults.js";
export {
  type MessageSink,
  type SoapAuthContext,
  type SoapContext,
  type SoapHandler,
  type SoapHandlers,
  type SoapLogger,
  type SoapNode,
  type SoapOperationTypes,
  type SoapRequest,
  type SoapResponse,
  SoapResultError,
  type SoapService,
  type SoapServiceOptions,
} from "../processor/types.js";

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
    unreadBody: config.unreadBody,
    answerTypes: answerTypes(config),
    logger: config.logger,
  };
}

/**
 * {@link SoapNode.answerTypes}: the version's media type (SOAP 1.2 Part 2 §7.1.4, SOAP 1.1
 * §6.1.1), which faults take too, and `multipart/related` (SOAP MTOM §3) where `mtom.respond`
 * sends an answer as an XOP package: always, or to a request that was one.
 */
function answerTypes(config: ServiceConfig): (contentType: string | undefined) => readonly string[] {
  const respond = config.mtom?.respond;
  const of = (version: SoapVersion, xop: boolean): readonly string[] => {
    const type = version === "1.1" ? SOAP11_MEDIA_TYPE : SOAP12_MEDIA_TYPE;
    const packaged = respond === "always" || (respond === "as-requested" && xop);
    return Object.freeze(packaged ? [type, "multipart/related"] : [type]);
  };
  const types = { "1.1": [of("1.1", false), of("1.1", true)], "1.2": [of("1.2", false), of("1.2", true)] };
  return (contentType) => {
    const type = cachedMessageType(contentType);
    return types[answerVersion(config, type)][type?.xop === true ? 1 : 0] as readonly string[];
  };
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

/** The answer to a message {@link checkTransport} refused, or to a SOAP 1.1 one a 1.2-only node got. */
function answerRefusal(
  config: ServiceConfig,
  request: SoapRequest,
  type: MessageType | undefined,
  refusal: HttpError | typeof SOAP11_MEDIA_TYPE,
): Promise<SoapResponse> {
  if (refusal === SOAP11_MEDIA_TYPE) {
    const answered = soap11Answer(config, request, type?.charset);
    if (!soapChannel.hasSubscribers) return answered;
    return answered.then((response) => {
      if (soapChannel.hasSubscribers) reportAnswer(request.native, response, undefined, "1.2");
      return response;
    });
  }
  const version = answerVersion(config, type);
  const response = refuse(config, refusal, version);
  if (soapChannel.hasSubscribers) reportAnswer(request.native, response, undefined, version);
  return Promise.resolve(response);
}

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
