import { repeatsField } from "@svc/kernel";
import { SOAP11_NS, SOAP12_NS, senderFault } from "../envelope/fault.js";
import { checkEncodingStyle, checkSoap11EncodingStyle } from "../envelope/processing-model.js";
import type { ContractOperation, SoapVersion } from "../wsdl/contract.js";
import { clark, type ParsedElement, shown, type XmlElement, XmlError } from "../xml/reader.js";
import {
  type MessageType,
  type Route,
  type Routes,
  type ServiceConfig,
  SOAP11_MEDIA_TYPE,
} from "./config.js";
import { Answer, answerVersion, errorResponse, unsupportedMediaType, versionMismatch } from "./faults.js";
import type { SoapRequest } from "./types.js";

/** The rest of a stopped parse; what it finds wrong is the sender's fault, as in {@link parseFailure}. */
export function parseRest(rest: () => ParsedElement): ParsedElement {
  try {
    return rest();
  } catch (err) {
    if (err instanceof XmlError) throw senderFault(err.message);
    throw err;
  }
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
export function envelopeVersion(config: ServiceConfig, type: MessageType, root: ParsedElement): SoapVersion {
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

/**
 * Routing (Part 2 §7.1.4 action parameter, SOAP 1.1 §6.1.1 SOAPAction, then the body element's
 * qualified name). An action the binding does not name (node-soap sends `<tns>/<operation>` when
 * the WSDL has none) routes nothing: the body element does.
 */
export function route(
  routes: Routes,
  action: string | undefined,
  bodyElement: ParsedElement | undefined,
): Route | undefined {
  const routed = action !== undefined ? routes.byAction.get(action) : undefined;
  if (routed !== undefined) return routed;
  return routes.byElement.get(bodyElement ? clark(bodyElement.namespace, bodyElement.localName) : "");
}

/** The body holds the one input element of the routed operation, in no data encoding (literal). */
export function checkBody(
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

/** An element's `{ns}local` for a Reason, its namespace and local name cut by {@link shown}. */
function shownName(element: XmlElement): string {
  return clark(shown(element.namespace), shown(element.localName));
}

/**
 * Whether the Body holds the operation's input element itself (document style with one element
 * part, or the rpc wrapper) rather than the parts of its content.
 */
export function holdsInput(op: ContractOperation): boolean {
  return op.inputBody.length === 1 && op.inputBody[0] === op.input;
}

/** env:* (SOAP-ENV:* in SOAP 1.1) attributes belong to the SOAP layer, not to the payload's schema. */
export function stripSoapAttributes(element: ParsedElement, prefix: string): ParsedElement {
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
export const SOAP12_PREFIX = `{${SOAP12_NS}}`;

export const SOAP11_PREFIX = `{${SOAP11_NS}}`;

/**
 * SOAP 1.1 §6.1.1: the `SOAPAction` field's quoted URI; `""` says the intent is the request's
 * URI, and no field no intent. An unquoted value is read as it is (WS-I Basic Profile 1.1 R1119
 * lets a receiver refuse it; clients that send one are many). Two field lines are refused: which
 * one counts is up to each reader (a firewall filtering on it, §6.1.1, may take the other).
 */
export function soapAction(request: SoapRequest): string | undefined {
  const raw = request.soapAction;
  if (raw === undefined) return undefined;
  if (request.http !== undefined && repeatsField(request.http.rawHeaders, "soapaction")) {
    throw senderFault("SOAPAction is given more than once");
  }
  const value = raw.trim();
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}
