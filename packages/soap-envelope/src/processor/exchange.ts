import { fallbackLogger } from "@svc/errors";
import { describeValue } from "@svc/kernel/internal";
import { headerRequired } from "../addressing/faults.js";
import { type RequestAddressing, readAddressing } from "../addressing/headers.js";
import { WSA_NS } from "../addressing/names.js";
import {
  type ActionRoute,
  addressingView,
  checkAddressing,
  faultAction,
  repliesToNone,
  replyHeaders,
  routeByAction,
  withHeaders,
} from "../addressing/process.js";
import { readEncoded, writeEncoded } from "../encoding/soap-encoding.js";
import {
  checkEnvelopeBody,
  checkEnvelopeHead,
  checkSoap11EnvelopeBody,
  checkSoap11EnvelopeHead,
  type EnvelopeHead,
  isTargeted,
  serializeEnvelope,
  serializeSoap11Envelope,
} from "../envelope/envelope.js";
import { AddressingFault, SOAP11_NS, SOAP12_NS, SoapFault, senderFault } from "../envelope/fault.js";
import { checkHeaderEncodings, checkMustUnderstand, targetedBlocks } from "../envelope/processing-model.js";
import { encodeOptimized } from "../mtom/optimize.js";
import { type ResolvedMtom, readXopPackage, type XopMessage } from "../mtom/xop.js";
import type { ContractOperation, SoapVersion } from "../wsdl/contract.js";
import { credentialsFault, notAuthorizedFault } from "../wsse/credentials.js";
import { processSecurity, wholeMessage } from "../wsse/security.js";
import {
  type ParsedElement,
  readXml,
  shown,
  type XmlElement,
  XmlError,
  type XmlParse,
} from "../xml/reader.js";
import { EncodingStyleError } from "../xsd/errors.js";
import { SchemaValidationError, schemaComponents } from "../xsd/schema.js";
import {
  checkBody,
  envelopeVersion,
  holdsInput,
  parseRest,
  route,
  SOAP11_PREFIX,
  SOAP12_PREFIX,
  soapAction,
  stripSoapAttributes,
} from "./checks.js";
import {
  type MessageType,
  RESPONSE_CONTENT_TYPE,
  RESPONSE11_CONTENT_TYPE,
  type Routes,
  type ServiceConfig,
} from "./config.js";
import { reportAnswer, soapChannel } from "./diagnostics.js";
import { AuthenticationFailure, answerVersion, parseFailure, toFaultResponse } from "./faults.js";
import {
  type MessageSink,
  type SoapAuthContext,
  type SoapContext,
  type SoapRequest,
  type SoapResponse,
  SoapResultError,
  type SoapServiceOptions,
} from "./types.js";

/**
 * `sink.respond`, and what it throws (node:http refusing a header field a handler's `HttpError`
 * carried: a CR LF, `undefined` from JavaScript) to `sink.fail`: thrown from a promise nobody
 * awaits, it would be an unhandled rejection, which ends a Node process, and the client would
 * wait for an answer that never comes.
 */
export function respondThrough<M extends SoapRequest>(
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

/**
 * The SOAP processing of one message (Part 1 §2.6), as named steps: parse the envelope, route,
 * authenticate and process the header blocks, check the body, authorize, decode, invoke, encode;
 * whatever a step throws becomes a fault in {@link toFaultResponse}. With a sink, the response
 * (or what broke outside the steps) goes to it and the promise resolves to nothing; without one,
 * the promise resolves to the response.
 */
export async function exchange<M extends SoapRequest>(
  config: ServiceConfig,
  request: M,
  type: MessageType,
  sink: MessageSink<M> | undefined,
): Promise<SoapResponse | undefined> {
  const logger = config.logger ?? request.logger ?? fallbackLogger;
  let response: SoapResponse;
  let op: ContractOperation | undefined;
  // The attachments of a message sent as an XOP package (SOAP MTOM), for svc:soap.
  let xop: XopMessage | undefined;
  // The WS-Addressing headers of a message that carries them.
  let wsa: RequestAddressing | undefined;
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
      let limits = config.limits;
      if (type.xop) {
        // SOAP MTOM §3 / XOP 1.0 §3.2: the package is read whole, within its bounds, and the
        // envelope reconstructed with each attachment's octets in place.
        xop = await readXopPackage(
          body,
          type.media.parameters,
          config.limits,
          config.mtom as ResolvedMtom,
          config.bodyTimeoutMs,
        );
        body = xop.text;
        limits = config.xopLimits;
      }
      if (config.wsSecurity) ({ body, raw } = await wholeMessage(body, type.charset, config));
      parsed = await readXml(body, limits, type.charset, config.bodyTimeoutMs, config.checkpoint);
    } catch (err) {
      parseError = err;
    }
    if (parsed === undefined) response = parseFailure(config, parseError, version);
    else {
      let action = type.action;
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
        const blocks: XmlElement[] = [];
        let addressed = false;
        for (const block of head.headers) {
          blocks.push(block.element);
          if (block.element.namespace === WSA_NS) addressed = true;
        }
        // WS-Addressing 1.0: read only when the message carries its headers.
        let byAction: ActionRoute | undefined;
        if (addressed && config.addressing !== undefined) {
          wsa = readAddressing(head.headers, config.roles);
          if (wsa !== undefined && wsa.problem === undefined && wsa.action !== undefined) {
            byAction = routeByAction(config.addressing.of(version), wsa.action);
          }
        }
        let routed =
          byAction?.kind === "operation"
            ? routes.byName.get(byAction.op.name)
            : byAction?.kind === "unknown"
              ? undefined
              : route(routes, byAction === undefined ? action : undefined, head.body.children[0]);
        // An action operations share routes by the Body among those operations only.
        if (byAction?.kind === "shared" && routed !== undefined && !byAction.ops.includes(routed.op)) {
          routed = undefined;
        }
        op = routed?.op;
        const base: SoapAuthContext = {
          operation: op?.name ?? "",
          action,
          soapVersion: version,
          headers: blocks,
          addressing: wsa && addressingView(wsa),
          correlationId: request.correlationId,
          logger,
          http: request.http,
          security: undefined,
        };
        let context: SoapContext;
        // Part 1 §2.6 step 3, before any header block is processed (the `authenticate` hook is
        // step 4): "If such a fault is generated, any further processing MUST NOT be done."
        checkMustUnderstand(head.headers, config.roles, config.understood);
        checkHeaderEncodings(head.headers, config.roles, config.understood);
        if (config.wsSecurity) {
          base.security = processSecurity(config.wsSecurity, {
            raw,
            envelopeNs: version === "1.2" ? SOAP12_NS : SOAP11_NS,
            blocks: head.headers.map((h) => ({ element: h.element, targeted: isTargeted(h, config.roles) })),
            maxDepth: config.limits.maxDepth,
          });
        }
        // WS-Addressing's checks on headers whose signature, when required, has been verified.
        if (wsa !== undefined) checkAddressing(wsa, version, action, byAction, op);
        else if (config.addressing?.required[version]) {
          throw headerRequired("Action", "the contract requires WS-Addressing");
        }
        if (config.authenticate) {
          const own = targetedBlocks(head.headers, config.roles, blocks);
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
        const target = checkBody(body, routed, wsa?.action ?? action, version === "1.1" ? whole : undefined);
        // Authorization before decoding: a caller refused here costs no schema validation.
        if (config.authorize) await authorizeStep(config.authorize, context, target);
        const payload = decodeBody(config, target, body, version);
        const handler = config.handlers[target.name] as (payload: unknown, context: SoapContext) => unknown;
        const result = await handler(payload, context);
        if (wsa === undefined) response = encodeResult(config, target, result, version, xop !== undefined);
        else response = addressedResult(config, wsa, target, result, version, xop !== undefined);
      } catch (err) {
        response = toFaultResponse(config, err, op, request.correlationId, logger, version, bodyFault);
        if (wsa !== undefined) response = addressedFault(config, wsa, err, op, response, version);
      }
    }
  } catch (err) {
    // What only a bug gets here (not XML, a throwing logger): the transport's error path.
    if (sink === undefined) throw err;
    sink.fail(request, err);
    return undefined;
  }
  if (soapChannel.hasSubscribers) reportAnswer(request.native, response, op, version, xop);
  if (sink !== undefined) respondThrough(sink, request, response);
  return response;
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

/**
 * The handler's result as the output element in an envelope, or in an XOP package (SOAP MTOM)
 * when the `mtom` option's `respond` says so for this request; a one-way operation's 202.
 */
function encodeResult(
  config: ServiceConfig,
  op: ContractOperation,
  result: unknown,
  version: SoapVersion,
  xopRequest: boolean,
  headerXml = "",
): SoapResponse {
  if (op.output === undefined) {
    // SOAP 1.2 Part 2 §7.5.1: a one-way exchange completes with 202 and no SOAP envelope; so does
    // a SOAP 1.1 one (WS-I Basic Profile 1.2 R1143, R2714: no envelope in the response).
    return { status: 202, headers: {}, body: "" };
  }
  const output = op.output;
  const encode = (): string => {
    let bodyXml: string;
    try {
      bodyXml = config.contract.schema.encode(output, result);
    } catch (err) {
      throw new SoapResultError(op.name, err);
    }
    if (op.use === "encoded") {
      const decl = schemaComponents(config.contract.schema)?.elements.get(output);
      if (decl !== undefined) bodyXml = writeEncoded(bodyXml, decl, version);
    }
    if (op.outputBody?.length !== 1 || op.outputBody[0] !== output) {
      // The Body holds the parts themselves: the declared element's content, without its tags (it
      // has no attributes, so its start tag ends at the first `>`).
      const end = bodyXml.indexOf(">");
      bodyXml = bodyXml[end - 1] === "/" ? "" : bodyXml.slice(end + 1, bodyXml.lastIndexOf("</"));
    }
    return bodyXml;
  };
  const serialize = version === "1.1" ? serializeSoap11Envelope : serializeEnvelope;
  const wrap = headerXml === "" ? serialize : (bodyXml: string) => serialize(bodyXml, headerXml);
  const contentType = version === "1.1" ? RESPONSE11_CONTENT_TYPE : RESPONSE_CONTENT_TYPE;
  const mtom = config.mtom;
  if (mtom !== undefined && (mtom.respond === "always" || (mtom.respond === "as-requested" && xopRequest))) {
    const soapType = version === "1.1" ? "text/xml" : "application/soap+xml";
    const optimized = encodeOptimized(encode, wrap, mtom.threshold, soapType);
    if (optimized.package !== undefined) {
      const sent = optimized.package;
      const response: SoapResponse = {
        status: 200,
        headers: { "Content-Type": sent.contentType },
        body: sent.body,
        attachments: { count: sent.attachments, bytes: sent.attachmentBytes },
      };
      return response;
    }
    return { status: 200, headers: { "Content-Type": contentType }, body: optimized.text };
  }
  return { status: 200, headers: { "Content-Type": contentType }, body: wrap(encode()) };
}

/**
 * The answer to a message that used WS-Addressing (Core §3.4): the reply's headers in its
 * envelope, its [action] the output's; none, a 202, when the reply endpoint is `none`.
 */
function addressedResult(
  config: ServiceConfig,
  wsa: RequestAddressing,
  op: ContractOperation,
  result: unknown,
  version: SoapVersion,
  xopRequest: boolean,
): SoapResponse {
  if (op.output === undefined) return encodeResult(config, op, result, version, xopRequest);
  if (repliesToNone(wsa, false)) {
    // Core §2.1: a message to the none address "MUST be discarded (i.e. not sent)"; the result is
    // still checked against the schema, as any answer is.
    encodeResult(config, op, result, version, false);
    return { status: 202, headers: {}, body: "" };
  }
  const action = config.addressing?.of(version)?.byOperation.get(op.name)?.output ?? "";
  return encodeResult(config, op, result, version, xopRequest, replyHeaders(wsa, action, false));
}

/** A fault to a message that used WS-Addressing, with the reply's headers; a 202 for a `none` fault endpoint. */
function addressedFault(
  config: ServiceConfig,
  wsa: RequestAddressing,
  err: unknown,
  op: ContractOperation | undefined,
  response: SoapResponse,
  version: SoapVersion,
): SoapResponse {
  if (typeof response.body !== "string" || response.fault === undefined) return response;
  // A fault about the addressing headers themselves goes back on the connection: the endpoint
  // they name is what could not be read.
  if (wsa.problem === undefined && !(err instanceof AddressingFault) && repliesToNone(wsa, true)) {
    return { status: 202, headers: {}, body: "", fault: response.fault };
  }
  const action = faultAction(err, config.addressing?.of(version), op);
  return { ...response, body: withHeaders(response.body, version, replyHeaders(wsa, action, true)) };
}
