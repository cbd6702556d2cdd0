import { escapeXml } from "@svc/errors";
import { type HeaderBlock, isTargeted } from "../envelope/envelope.js";
import type { AddressingFault } from "../envelope/fault.js";
import type { XmlElement } from "../xml/reader.js";
import { trimXml } from "../xml/space.js";
import { invalidHeader, MAX_IRI_LENGTH, quoted } from "./faults.js";
import { WSA_ANONYMOUS, WSA_NONE, WSA_NS, WSA_REPLY } from "./names.js";

/** Most reference parameters an endpoint reference (`wsa:ReplyTo`, `wsa:FaultTo`) may carry. */
export const MAX_REFERENCE_PARAMETERS = 8;

/** Most characters of reference parameters, as written back, an endpoint reference may carry. */
export const MAX_REFERENCE_PARAMETER_CHARS = 4096;

/** Most `wsa:RelatesTo` headers a message may carry. */
export const MAX_RELATES_TO = 8;

/** Deepest nesting inside one reference parameter. */
const MAX_PARAMETER_DEPTH = 8;

/**
 * The message addressing properties of a request (WS-Addressing 1.0 Core §3.1), as the handlers
 * see them in `context.addressing`.
 */
export interface SoapAddressing {
  /** `wsa:Action`: the [action], which routed the message. */
  action: string;
  /** `wsa:MessageID`, which the reply's `wsa:RelatesTo` names. */
  messageId: string | undefined;
  /** `wsa:To`: the [destination]; the anonymous address when absent (Core §3.2). */
  to: string;
  /** `wsa:ReplyTo`'s address: anonymous (the HTTP response) or `none` (no reply). */
  replyTo: string;
  /** `wsa:FaultTo`'s address, when sent; faults otherwise follow `replyTo`. */
  faultTo: string | undefined;
  /** `wsa:From`'s address, when sent. */
  from: string | undefined;
  /** Each `wsa:RelatesTo`: the message id and its relationship (`.../addressing/reply` by default). */
  relatesTo: readonly { readonly id: string; readonly type: string }[];
}

/** An endpoint reference read from a request: its address and its reference parameters, written back. */
export interface ReadEndpoint {
  address: string;
  /** Each reference parameter as a header block of the reply (Core §3.3, SOAP Binding §3.4). */
  parameters: string;
}

/** What {@link readAddressing} found: the properties, and the first problem (thrown after mustUnderstand). */
export interface RequestAddressing {
  action: string | undefined;
  messageId: string | undefined;
  to: string | undefined;
  replyTo: ReadEndpoint | undefined;
  faultTo: ReadEndpoint | undefined;
  from: string | undefined;
  relatesTo: { id: string; type: string }[];
  /** The first header that could not be read, as its fault. */
  problem: AddressingFault | undefined;
}

/**
 * Reads the WS-Addressing 1.0 headers targeted at this node (SOAP Binding §3.2; a block for
 * another role, or for `none`, is not this node's). Each is read within its bounds; the first
 * problem is kept, not thrown, so what was read (the message id a fault relates to) still serves
 * the reply, and the MustUnderstand check (SOAP 1.2 Part 1 §2.6) runs first. Undefined when no
 * block of its namespace is targeted at this node.
 *
 * @see https://www.w3.org/TR/ws-addr-soap/#bindrefp
 */
export function readAddressing(
  headers: readonly HeaderBlock[],
  roles: ReadonlySet<string>,
): RequestAddressing | undefined {
  const found: RequestAddressing = {
    action: undefined,
    messageId: undefined,
    to: undefined,
    replyTo: undefined,
    faultTo: undefined,
    from: undefined,
    relatesTo: [],
    problem: undefined,
  };
  const seen = new Set<string>();
  let any = false;
  for (const block of headers) {
    const element = block.element;
    if (element.namespace !== WSA_NS || !isTargeted(block, roles)) continue;
    const local = element.localName;
    any = true;
    try {
      if (local === "RelatesTo") {
        if (found.relatesTo.length === MAX_RELATES_TO) {
          throw invalidHeader(local, `more than ${MAX_RELATES_TO} wsa:RelatesTo headers`);
        }
        const type = trimXml(element.attributes.RelationshipType ?? "") || WSA_REPLY;
        found.relatesTo.push({ id: iri(element, undefined), type });
        continue;
      }
      if (!Object.hasOwn(READERS, local)) continue;
      // §3.2.2: "A message MUST NOT contain more than one wsa:To, wsa:ReplyTo, wsa:FaultTo,
      // wsa:Action, or wsa:MessageID header targeted at a recipient".
      if (seen.has(local)) throw invalidHeader(local, `wsa:${local} appears twice`, "InvalidCardinality");
      seen.add(local);
      (READERS[local] as (found: RequestAddressing, element: XmlElement) => void)(found, element);
    } catch (err) {
      if (found.problem === undefined) found.problem = err as AddressingFault;
    }
  }
  // Blocks of its namespace for other roles only: the message does not use it with this node.
  return any ? found : undefined;
}

const READERS: Readonly<Record<string, (found: RequestAddressing, element: XmlElement) => void>> = {
  Action: (found, e) => {
    found.action = iri(e, undefined);
  },
  MessageID: (found, e) => {
    found.messageId = iri(e, undefined);
  },
  To: (found, e) => {
    found.to = iri(e, "InvalidAddress");
  },
  ReplyTo: (found, e) => {
    found.replyTo = endpoint(e);
  },
  FaultTo: (found, e) => {
    found.faultTo = endpoint(e);
  },
  From: (found, e) => {
    found.from = endpoint(e).address;
  },
};

/** RFC 3987 §2.2: an absolute IRI has a scheme, and no IRI holds white space. */
const ABSOLUTE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/;

/** An IRI reference: no white space. */
const IRI_REFERENCE = /^[^\s]+$/;

/**
 * The text of a header whose value is an IRI (Core §3.1: [action], [message id], [destination]).
 * An address (`subsubcode` InvalidAddress) must be absolute; an action or a message id is read as
 * sent when it holds no white space: contracts name actions by their `soapAction`, which is often
 * a bare name (`getCustomer`), and clients send such ids.
 */
function iri(element: XmlElement, subsubcode: string | undefined, header = element.localName): string {
  const local = element.localName;
  const name = local === header ? `wsa:${local}` : `wsa:${local} of wsa:${header}`;
  if (element.children.length > 0)
    throw invalidHeader(header, `${name} holds elements, not an IRI`, subsubcode);
  const value = trimXml(element.text);
  if (value.length > MAX_IRI_LENGTH) {
    throw invalidHeader(header, `${name} is longer than ${MAX_IRI_LENGTH} characters`, subsubcode);
  }
  if (!(subsubcode === "InvalidAddress" ? ABSOLUTE_IRI : IRI_REFERENCE).test(value)) {
    throw invalidHeader(
      header,
      value === ""
        ? `${name} is empty`
        : `${name} ${quoted(value)} is not an ${subsubcode === "InvalidAddress" ? "absolute IRI" : "IRI"}`,
      subsubcode,
    );
  }
  return value;
}

/** An endpoint reference (Core §2.2): one `wsa:Address`, at most one `wsa:ReferenceParameters`. */
function endpoint(element: XmlElement): ReadEndpoint {
  const header = element.localName;
  let address: XmlElement | undefined;
  let parameters: XmlElement | undefined;
  for (const child of element.children) {
    if (child.namespace !== WSA_NS) continue;
    if (child.localName === "Address") {
      if (address !== undefined)
        throw invalidHeader(header, `wsa:${header} holds two wsa:Address`, "InvalidEPR");
      address = child;
    } else if (child.localName === "ReferenceParameters") {
      if (parameters !== undefined) {
        throw invalidHeader(header, `wsa:${header} holds two wsa:ReferenceParameters`, "InvalidEPR");
      }
      parameters = child;
    }
  }
  if (address === undefined) {
    throw invalidHeader(header, `wsa:${header} has no wsa:Address`, "MissingAddressInEPR");
  }
  const value = iri(address, "InvalidAddress", header);
  return {
    address: value,
    parameters: parameters === undefined ? "" : referenceParameters(parameters, header),
  };
}

/**
 * Core §3.3, SOAP Binding §3.4: each reference parameter becomes a header block of the reply,
 * "annotated with a wsa:IsReferenceParameter attribute"; within {@link MAX_REFERENCE_PARAMETERS}
 * and {@link MAX_REFERENCE_PARAMETER_CHARS}.
 */
function referenceParameters(parameters: XmlElement, header: string): string {
  if (parameters.children.length > MAX_REFERENCE_PARAMETERS) {
    throw invalidHeader(
      header,
      `wsa:${header} carries more than ${MAX_REFERENCE_PARAMETERS} reference parameters`,
      "InvalidEPR",
    );
  }
  let out = "";
  for (const parameter of parameters.children) {
    if (!parameter.namespace) {
      // SOAP 1.2 Part 1 §5.2.1: a header block is namespace qualified.
      throw invalidHeader(
        header,
        `a reference parameter of wsa:${header} is not namespace qualified`,
        "InvalidEPR",
      );
    }
    out += writeElement(parameter, 0, true, header);
    if (out.length > MAX_REFERENCE_PARAMETER_CHARS) {
      throw invalidHeader(
        header,
        `the reference parameters of wsa:${header} are longer than ${MAX_REFERENCE_PARAMETER_CHARS} characters`,
        "InvalidEPR",
      );
    }
  }
  return out;
}

/** An element written back, each namespace declared where it is used. */
function writeElement(element: XmlElement, depth: number, top: boolean, header: string): string {
  if (depth > MAX_PARAMETER_DEPTH) {
    throw invalidHeader(header, `a reference parameter of wsa:${header} nests too deep`, "InvalidEPR");
  }
  const prefix = `p${depth}`;
  const name = element.namespace ? `${prefix}:${element.localName}` : element.localName;
  let start = element.namespace
    ? `<${name} xmlns:${prefix}="${escapeXml(element.namespace)}"`
    : `<${name} xmlns=""`;
  let n = 0;
  for (const [key, value] of Object.entries(element.attributes)) {
    const close = key.startsWith("{") ? key.indexOf("}") : -1;
    if (close === -1) start += ` ${key}="${escapeXml(value)}"`;
    else {
      const ns = key.slice(1, close);
      if (top && ns === WSA_NS && key.slice(close + 1) === "IsReferenceParameter") continue;
      start += ` a${depth}_${n}:${key.slice(close + 1)}="${escapeXml(value)}" xmlns:a${depth}_${n}="${escapeXml(ns)}"`;
      n++;
    }
  }
  if (top) start += ` wsa:IsReferenceParameter="true" xmlns:wsa="${WSA_NS}"`;
  if (element.children.length === 0) return `${start}>${escapeXml(element.text)}</${name}>`;
  let content = "";
  for (const child of element.children) content += writeElement(child, depth + 1, false, header);
  return `${start}>${content}</${name}>`;
}

/** Whether an address is one this node answers at: the anonymous one (the HTTP response). */
export function isAnonymous(address: string | undefined): boolean {
  return address === undefined || address === WSA_ANONYMOUS;
}

export function isNone(address: string | undefined): boolean {
  return address === WSA_NONE;
}
