import type { XmlTemplates } from "../xml/reader.js";
import {
  type ParsedElement,
  type ResolvedXmlLimits,
  readXml,
  resolveLimits,
  shown,
  type XmlCheckpoint,
  XmlError,
  type XmlLimits,
  type XmlSource,
} from "../xml/reader.js";
import { trimXml, XML_NON_WHITESPACE } from "../xml/space.js";
import { SOAP11_NS, SOAP12_NS, SoapFault, senderFault, UPGRADE_HEADER } from "./fault.js";

/** SOAP 1.2 Part 1 §5.2.2: the roles every SOAP node acts in, plus `none`, which it never acts in. */
export const ROLE_NEXT = "http://www.w3.org/2003/05/soap-envelope/role/next";
export const ROLE_NONE = "http://www.w3.org/2003/05/soap-envelope/role/none";
export const ROLE_ULTIMATE_RECEIVER = "http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver";

/** SOAP 1.1 §4.2.2: the `actor` URI of "the first SOAP application that processes the message". */
export const ACTOR_NEXT = "http://schemas.xmlsoap.org/soap/actor/next";

/** One header block of a received envelope. */
export interface HeaderBlock {
  /** The block's element. */
  element: ParsedElement;
  /**
   * `env:role`, `ultimateReceiver` when absent (Part 1 §5.2.2). In a SOAP 1.1 envelope, the
   * `actor` (SOAP 1.1 §4.2.2): its next actor as {@link ROLE_NEXT}, none as `ultimateReceiver`
   * ("the ultimate recipient"), any other URI as it is.
   */
  role: string;
  /** `env:mustUnderstand` (in SOAP 1.1, `SOAP-ENV:mustUnderstand="1"`) as a boolean. */
  mustUnderstand: boolean;
  /** `env:relay` as a boolean; SOAP 1.1 has no relay: false. */
  relay: boolean;
}

/** A received SOAP 1.2 envelope that passed the structural checks of Part 1 §5. */
export interface ParsedEnvelope {
  /** Every header block, in document order. */
  headers: HeaderBlock[];
  /** The element children of `env:Body`. */
  body: ParsedElement[];
}

/** Options of {@link parseEnvelope}. */
export interface ParseEnvelopeOptions {
  /** Size and shape limits. */
  limits?: XmlLimits | ResolvedXmlLimits;
  /** The `charset` parameter of the transport's media type, when there was one. */
  charset?: string;
}

const ATTR_MUST_UNDERSTAND = `{${SOAP12_NS}}mustUnderstand`;
const ATTR_ROLE = `{${SOAP12_NS}}role`;
const ATTR_RELAY = `{${SOAP12_NS}}relay`;
const ATTR_ENCODING_STYLE = `{${SOAP12_NS}}encodingStyle`;
const ATTR11_MUST_UNDERSTAND = `{${SOAP11_NS}}mustUnderstand`;
const ATTR11_ACTOR = `{${SOAP11_NS}}actor`;
/** SOAP 1.1 §4.1.1: `SOAP-ENV:encodingStyle`, scoped to the element it is on and its descendants. */
export const ATTR11_ENCODING_STYLE = `{${SOAP11_NS}}encodingStyle`;

/**
 * Thrown for a SOAP/1.1 envelope: Part 1 Appendix A requires the answer to be a SOAP/1.1
 * VersionMismatch fault, which only the transport layer can render.
 */
export class Soap11EnvelopeError extends Error {
  constructor() {
    super("SOAP 1.1 envelope");
    this.name = "Soap11EnvelopeError";
  }
}

/**
 * Parses a SOAP 1.2 envelope (streaming, limited) and applies the structural rules of Part 1 §5.
 * Every violation becomes a {@link SoapFault}; a SOAP/1.1 envelope throws
 * {@link Soap11EnvelopeError}; a size limit throws an `XmlError` of kind `"too-large"`.
 *
 * @example
 * const { headers, body } = await parseEnvelope(req, { limits: { maxBytes: 65536 } });
 * @see https://www.w3.org/TR/soap12-part1/#soapenvelope
 */
export async function parseEnvelope(
  source: XmlSource,
  options: ParseEnvelopeOptions = {},
): Promise<ParsedEnvelope> {
  const limits = resolveLimits(options.limits);
  let root: ParsedElement;
  try {
    root = (await readXml(source, limits, options.charset, undefined, envelopeCheckpoint(limits, false)))
      .root;
  } catch (err) {
    if (err instanceof XmlError && err.kind !== "too-large") {
      throw new SoapFault({ code: "Sender", reason: err.message, cause: err });
    }
    throw err;
  }
  return checkEnvelope(root);
}

/** Part 1 §5 structure checks over an already parsed document. */
export function checkEnvelope(root: ParsedElement): ParsedEnvelope {
  const { headers } = checkEnvelopeHead(root);
  return { headers, body: checkEnvelopeBody(root) };
}

/** What {@link checkEnvelopeHead} found: the header blocks and the `env:Body` element (perhaps partial). */
export interface EnvelopeHead {
  headers: HeaderBlock[];
  body: ParsedElement;
}

/**
 * The structure checks that need only the envelope's start, up to the Body's start tag (what a
 * parse stopped by {@link envelopeCheckpoint} holds): the version, the Envelope's attributes, the
 * Header and its blocks, where the Body is and its attributes.
 */
export function checkEnvelopeHead(root: ParsedElement): EnvelopeHead {
  if (root.localName === "Envelope" && root.namespace === SOAP11_NS) throw new Soap11EnvelopeError();
  // Part 1 §5.4.6, VersionMismatch: "The faulting node found an invalid element information item
  // instead of the expected Envelope element information item. The namespace, local name or both
  // did not match" (an envelope in an unknown namespace, or env:Body as the document element),
  // answered with the versions this node supports (§5.4.7).
  if (root.namespace !== SOAP12_NS || root.localName !== "Envelope") {
    throw new SoapFault({
      code: "VersionMismatch",
      reason: "The message is not a SOAP 1.2 envelope",
      headerXml: UPGRADE_HEADER,
    });
  }
  checkQualifiedAttributes(root, "Envelope");
  // Part 1 §5.1.1: encodingStyle MUST NOT appear on Envelope, Header or Body.
  if (ATTR_ENCODING_STYLE in root.attributes)
    throw senderFault("env:encodingStyle is not allowed on env:Envelope");
  if (hasCharacterData(root.text)) throw senderFault("env:Envelope must not contain character data");

  const first = root.children[0];
  const header = first !== undefined && isHeader(first) ? first : undefined;
  const body = root.children[header === undefined ? 0 : 1];
  if (!body || body.namespace !== SOAP12_NS || body.localName !== "Body") {
    throw senderFault("env:Body is missing or not where Part 1 §5 puts it");
  }
  checkQualifiedAttributes(body, "Body");
  if (ATTR_ENCODING_STYLE in body.attributes)
    throw senderFault("env:encodingStyle is not allowed on env:Body");

  const headers: HeaderBlock[] = [];
  if (header) {
    checkQualifiedAttributes(header, "Header");
    if (ATTR_ENCODING_STYLE in header.attributes) {
      throw senderFault("env:encodingStyle is not allowed on env:Header");
    }
    if (hasCharacterData(header.text)) throw senderFault("env:Header must not contain character data");
    for (const element of header.children) {
      // Part 1 §5.2.1: "Each SOAP header block element information item MUST be namespace qualified."
      if (!element.namespace)
        throw senderFault(`Header block "${shown(element.localName)}" is not namespace qualified`);
      headers.push({
        element,
        role: trimXml(element.attributes[ATTR_ROLE] ?? ROLE_ULTIMATE_RECEIVER) || ROLE_ULTIMATE_RECEIVER,
        mustUnderstand: xsBoolean(element.attributes[ATTR_MUST_UNDERSTAND], "mustUnderstand"),
        relay: xsBoolean(element.attributes[ATTR_RELAY], "relay"),
      });
    }
  }
  return { headers, body };
}

/**
 * The checks that need the whole envelope, after {@link checkEnvelopeHead}: nothing after the
 * Body, no character data in the Envelope or the Body. Returns the Body's element children.
 */
export function checkEnvelopeBody(root: ParsedElement): ParsedElement[] {
  const first = root.children[0];
  const index = first !== undefined && isHeader(first) ? 1 : 0;
  const body = root.children[index] as ParsedElement;
  // Part 1 §5: "The Envelope element information item has ... one or two element children"
  if (root.children.length > index + 1) throw senderFault("Elements after env:Body are not allowed");
  if (hasCharacterData(root.text)) throw senderFault("env:Envelope must not contain character data");
  if (hasCharacterData(body.text)) throw senderFault("env:Body must not contain character data");
  // Body children are not required to be namespace qualified: Part 1 §5.3.1 says they "SHOULD"
  // be, and the envelope schema's Body takes `xs:any namespace="##any"`. A contract whose schema
  // has no target namespace defines unqualified operations; routing decides what is known.
  return body.children;
}

function isHeader(element: ParsedElement): boolean {
  return element.namespace === SOAP12_NS && element.localName === "Header";
}

/** A Header or Body of either version: the checkpoint runs before the version is decided. */
function isEnvelopePart(element: ParsedElement, localName: string): boolean {
  return (
    element.localName === localName && (element.namespace === SOAP12_NS || element.namespace === SOAP11_NS)
  );
}

/**
 * The parse's checkpoint for a SOAP 1.2 (or 1.1) envelope: at most `limits.maxHeaderBlocks` children of
 * the Header, refused as the one past the limit opens; with `stops`, the parse stops before the
 * content of the Body's first child (its start tag read, so the operation is known) or of any
 * element where Part 1 §5 has none (a second Header, an element instead of or after the Body).
 * What stops there is everything a node needs to decide on the header blocks (Part 1 §2.6 steps
 * 1 to 4: mustUnderstand, then the blocks it processes, credentials among them) before it parses
 * a Body that may be a megabyte of nested elements from a sender it will refuse. With `templates`,
 * a message whose markup repeats an earlier one's (xml/templates.ts) is built whole without a stop: it
 * holds no more than that one did, and only its text is read. With `processes` as well, the
 * content of a header block it does not name is held unparsed (xml/skip.ts): Part 1 §2.6 step 3
 * needs only the start tags of the blocks nobody processes (their name, `mustUnderstand`, role),
 * and no processing needs more; its elements still count against the limits.
 */
export function envelopeCheckpoint(
  limits: ResolvedXmlLimits,
  stops: boolean,
  templates?: XmlTemplates,
  processes?: (block: ParsedElement) => boolean,
): XmlCheckpoint {
  const maxHeaderBlocks = limits.maxHeaderBlocks;
  return {
    ...(processes !== undefined && {
      skipContent: (element: ParsedElement, parent: ParsedElement) =>
        isEnvelopePart(parent, "Header") && !processes(element),
    }),
    stops,
    templates,
    stopBefore(element, parent, depth) {
      if (depth === 2) return !isEnvelopePart(parent, "Header");
      const index = parent.children.length - 1;
      if (index === 0 && isEnvelopePart(element, "Header")) return false;
      const previous = parent.children[index - 1];
      const inPlace =
        isEnvelopePart(element, "Body") &&
        (index === 0 || (index === 1 && previous !== undefined && isEnvelopePart(previous, "Header")));
      return !inPlace;
    },
    maxChildren: (element, index) =>
      index === 0 && isEnvelopePart(element, "Header") ? maxHeaderBlocks : Number.POSITIVE_INFINITY,
    tooManyChildren: (_element, limit) =>
      `The message has more than ${limit} header blocks (limits.maxHeaderBlocks)`,
  };
}

/**
 * {@link checkEnvelopeHead} for a SOAP 1.1 envelope (SOAP 1.1 §4), the root already known to be
 * its `SOAP-ENV:Envelope`: attributes of Envelope, Header and Body namespace-qualified (§4.1), the
 * Header first when present, then the Body (§4.1, §4.3), header entries namespace-qualified with
 * `mustUnderstand` "1" or "0" (§4.2.3) and an `actor` (§4.2.2).
 */
export function checkSoap11EnvelopeHead(root: ParsedElement): EnvelopeHead {
  checkQualifiedAttributes(root, "Envelope");
  if (hasCharacterData(root.text)) throw senderFault("SOAP-ENV:Envelope must not contain character data");
  const first = root.children[0];
  const header = first !== undefined && isSoap11(first, "Header") ? first : undefined;
  const body = root.children[header === undefined ? 0 : 1];
  // §4.1: "The Header element MUST be the first immediate child ... The Body element MUST be an
  // immediate child element of a SOAP Envelope ... immediately follow the SOAP Header element".
  if (!body || !isSoap11(body, "Body")) {
    throw senderFault("SOAP-ENV:Body is missing or not where SOAP 1.1 §4.1 puts it");
  }
  checkQualifiedAttributes(body, "Body");
  const headers: HeaderBlock[] = [];
  if (header) {
    checkQualifiedAttributes(header, "Header");
    if (hasCharacterData(header.text)) throw senderFault("SOAP-ENV:Header must not contain character data");
    for (const element of header.children) {
      // §4.2: "All immediate child elements of the SOAP Header element MUST be namespace-qualified."
      if (!element.namespace)
        throw senderFault(`Header entry "${shown(element.localName)}" is not namespace qualified`);
      const actor = trimXml(element.attributes[ATTR11_ACTOR] ?? "");
      headers.push({
        element,
        role: actor === ACTOR_NEXT ? ROLE_NEXT : actor || ROLE_ULTIMATE_RECEIVER,
        mustUnderstand: soap11MustUnderstand(element.attributes[ATTR11_MUST_UNDERSTAND]),
        relay: false,
      });
    }
  }
  return { headers, body };
}

/**
 * {@link checkEnvelopeBody} for SOAP 1.1: §4.1 lets the Envelope hold "additional sub elements",
 * which "MUST be namespace-qualified and MUST follow the SOAP Body element"; they are not this
 * node's to process. Returns the Body's element children.
 */
export function checkSoap11EnvelopeBody(root: ParsedElement): ParsedElement[] {
  const first = root.children[0];
  const index = first !== undefined && isSoap11(first, "Header") ? 1 : 0;
  const body = root.children[index] as ParsedElement;
  for (let i = index + 1; i < root.children.length; i++) {
    const after = root.children[i] as ParsedElement;
    if (!after.namespace) {
      throw senderFault(`Element "${shown(after.localName)}" after SOAP-ENV:Body is not namespace qualified`);
    }
  }
  if (hasCharacterData(root.text)) throw senderFault("SOAP-ENV:Envelope must not contain character data");
  if (hasCharacterData(body.text)) throw senderFault("SOAP-ENV:Body must not contain character data");
  return body.children;
}

function isSoap11(element: ParsedElement, localName: string): boolean {
  return element.namespace === SOAP11_NS && element.localName === localName;
}

/**
 * SOAP 1.1 §4.2.3: "The value of the mustUnderstand attribute is either "1" or "0". The absence
 * of the SOAP mustUnderstand attribute is semantically equivalent to its presence with the value
 * "0"." Anything else (`true`, SOAP 1.2's spelling) is the sender's error, a Client fault: read
 * as "0" it would let a mandatory block (credentials) be ignored, read as "1" it would accept
 * what the Note does not define.
 */
function soap11MustUnderstand(value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = trimXml(value);
  if (v === "1") return true;
  if (v === "0") return false;
  throw senderFault(`SOAP-ENV:mustUnderstand="${shown(value, 40)}" is not "1" or "0" (SOAP 1.1 §4.2.3)`);
}

/**
 * Part 1 §5.1, §5.2, §5.3: Envelope, Header and Body each have "Zero or more namespace-qualified
 * attribute information items in its [attributes] property"; an unqualified one is a Sender fault.
 */
function checkQualifiedAttributes(element: ParsedElement, name: string): void {
  for (const key in element.attributes) {
    // Qualified attributes are keyed `{ns}local`, unqualified ones by their local name.
    if (key.charCodeAt(0) !== 0x7b) {
      const prefix = element.namespace === SOAP11_NS ? "SOAP-ENV" : "env";
      throw senderFault(`Unqualified attribute "${shown(key)}" on ${prefix}:${name}`);
    }
  }
}

/**
 * Part 1 §5.1, §5.2, §5.3: Envelope, Header and Body hold element children only, with white space
 * between them; most messages have none at all, which needs no pattern.
 */
function hasCharacterData(text: string): boolean {
  return text !== "" && XML_NON_WHITESPACE.test(text);
}

/** Part 1 §5.2.3: mustUnderstand and relay are xs:boolean ("true", "1", "false", "0"). */
function xsBoolean(value: string | undefined, name: string): boolean {
  if (value === undefined) return false;
  const v = trimXml(value);
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  throw senderFault(`env:${name}="${shown(value, 40)}" is not an xs:boolean`);
}

/**
 * Whether this node must process a header block (Part 1 §2.2, §5.2.2): blocks without a role,
 * for `next` or `ultimateReceiver`, or for one of the node's own roles; never `role/none`.
 */
export function isTargeted(block: HeaderBlock, roles: ReadonlySet<string>): boolean {
  if (block.role === ROLE_NONE) return false;
  return block.role === ROLE_ULTIMATE_RECEIVER || block.role === ROLE_NEXT || roles.has(block.role);
}

// The fixed parts of every envelope, joined once.
/** How every envelope this node writes begins, up to its Header or Body (SOAP 1.2). */
export const ENVELOPE_START = `<?xml version="1.0" encoding="utf-8"?><env:Envelope xmlns:env="${SOAP12_NS}">`;
const ENVELOPE_BODY_START = `${ENVELOPE_START}<env:Body>`;
const ENVELOPE_END = "</env:Body></env:Envelope>";
/** How every SOAP 1.1 envelope this node writes begins, up to its Header or Body. */
export const ENVELOPE11_START = `<?xml version="1.0" encoding="utf-8"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="${SOAP11_NS}">`;
const ENVELOPE11_BODY_START = `${ENVELOPE11_START}<SOAP-ENV:Body>`;
const ENVELOPE11_END = "</SOAP-ENV:Body></SOAP-ENV:Envelope>";

/** A SOAP 1.1 response envelope (SOAP 1.1 §4) around already-serialized body content. */
export function serializeSoap11Envelope(bodyXml: string, headerXml = ""): string {
  if (!headerXml) return `${ENVELOPE11_BODY_START}${bodyXml}${ENVELOPE11_END}`;
  return `${ENVELOPE11_START}<SOAP-ENV:Header>${headerXml}</SOAP-ENV:Header><SOAP-ENV:Body>${bodyXml}${ENVELOPE11_END}`;
}

/**
 * Serializes a SOAP 1.2 response envelope around already-serialized body content.
 *
 * @example serializeEnvelope('<r xmlns="urn:x">ok</r>')
 * @see https://www.w3.org/TR/soap12-part1/#soapenvelope
 */
export function serializeEnvelope(bodyXml: string, headerXml = ""): string {
  if (!headerXml) return `${ENVELOPE_BODY_START}${bodyXml}${ENVELOPE_END}`;
  return `${ENVELOPE_START}<env:Header>${headerXml}</env:Header><env:Body>${bodyXml}${ENVELOPE_END}`;
}
