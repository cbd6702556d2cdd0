import { WSA_NS, WSA_SUBMISSION_NS } from "../addressing/names.js";
import { claimsEncoding, ENCODING_URI } from "../encoding/soap-encoding.js";
import { type ParsedElement, shown, type XmlElement } from "../xml/reader.js";
import { trimXml } from "../xml/space.js";
import { ATTR11_ENCODING_STYLE, type HeaderBlock, isTargeted } from "./envelope.js";
import { notUnderstoodHeaders, type QName, SOAP11_NS, SOAP12_NS, SoapFault, senderFault } from "./fault.js";

// SOAP 1.2 Part 1 §2 (the processing model) over the header blocks of an envelope, and the data
// encodings (§5.1.1, SOAP 1.1 §4.1.1) a node reads: rules of the envelope alone, whatever carried it.

/** Whether a node understands a header block (Part 1 §2.4), by its qualified name. */
export type Understood = (element: XmlElement) => boolean;

/**
 * Part 1 §2.2, §2.6 step 4: a node processes the header blocks targeted at a role it plays; one
 * for `none` is never processed, one for another role (a gateway's wsse:Security, WS-Security 1.1
 * §6: one per actor) belongs to that node. `all` (every block's element) when all are targeted.
 */
export function targetedBlocks(
  headers: readonly HeaderBlock[],
  roles: ReadonlySet<string>,
  all: XmlElement[],
): readonly XmlElement[] {
  for (const h of headers) {
    if (!isTargeted(h, roles)) return headers.filter((b) => isTargeted(b, roles)).map((b) => b.element);
  }
  return all;
}

/** Part 1 §2.6 step 3: a mandatory targeted block nobody understands stops processing. */
export function checkMustUnderstand(
  headers: readonly HeaderBlock[],
  roles: ReadonlySet<string>,
  understood: Understood,
): void {
  if (headers.length === 0) return;
  const notUnderstood = headers.filter(
    (h) => h.mustUnderstand && isTargeted(h, roles) && !understood(h.element),
  );
  if (notUnderstood.length > 0) throw mustUnderstandFault(notUnderstood);
}

/**
 * Part 1 §2.6 step 4: the header blocks this node processes (targeted at it and understood) are
 * checked for their data encoding as the body child is; blocks it ignores (for other roles, or
 * optional and not understood) are not its to decode.
 */
export function checkHeaderEncodings(
  headers: readonly HeaderBlock[],
  roles: ReadonlySet<string>,
  understood: Understood,
): void {
  for (const h of headers) {
    if (ENCODING_STYLE in h.element.attributes && isTargeted(h, roles) && understood(h.element)) {
      checkEncodingStyle(h.element);
    }
  }
}

/**
 * Part 1 §5.4.6, DataEncodingUnknown: "A header or body child element information item targeted
 * at the faulting SOAP node is scoped (see 5.1.1 SOAP encodingStyle Attribute) with a data
 * encoding that the faulting node does not support." This node supports literal content
 * (`encoding/none`, or an empty value, which makes no claims, §5.1.1) and, for an operation bound
 * `use="encoded"`, the SOAP encoding (Part 2 §3).
 */
export function checkEncodingStyle(element: XmlElement, encoded = false): void {
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
 * SOAP 1.1 §4.1.1: `SOAP-ENV:encodingStyle` "MAY appear on any element, and is scoped to that
 * element's contents and all child elements not themselves containing such an attribute": on the
 * body entry, else on the Body, else on the Envelope. A literal operation (`use="literal"`, WSDL
 * 1.1 §3.5) reads an empty value ("no claims") or none; an encoded one also the SOAP encoding
 * (§5), which the binding names whether the message does or not. Any other is a Client fault.
 * (Its descendants' are the schema's, or the encoded reader's, to refuse.)
 */
export function checkSoap11EncodingStyle(
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

const ENCODING_STYLE = `{${SOAP12_NS}}encodingStyle`;

const ENCODING_NONE = "http://www.w3.org/2003/05/soap-envelope/encoding/none";

/**
 * Part 1 §5.4.8: a MustUnderstand fault "SHOULD provide NotUnderstood SOAP header blocks" that
 * "detail the XML qualified names ... of the particular SOAP header block(s) which were not
 * understood": one per qualified name, however often it occurs. Each NotUnderstood block
 * declares its name's namespace, so the blocks are listed up to {@link NOT_UNDERSTOOD_BYTES} of
 * names (the first always) and the Reason names {@link REASON_NAMES} of them: a message that
 * declares a long namespace once for thousands of blocks (2,000 in a 100,000-character namespace,
 * 158 kB) was answered with a copy per block, a 400 MB fault.
 */
export function mustUnderstandFault(blocks: readonly HeaderBlock[]): SoapFault {
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
  const shownNames = names.slice(0, REASON_NAMES).map(reasonName).join(", ");
  const more = names.length > REASON_NAMES ? `, and ${names.length - REASON_NAMES} more` : "";
  // The Member Submission's headers look like WS-Addressing 1.0's: the Reason says which this node reads.
  const submission = names.some((n) => n.namespace === WSA_SUBMISSION_NS)
    ? ` (WS-Addressing of the 2004/08 Member Submission; this node reads WS-Addressing 1.0, ${WSA_NS})`
    : "";
  return new SoapFault({
    code: "MustUnderstand",
    reason: `Header block${names.length > 1 ? "s" : ""} not understood: ${shownNames}${more}${submission}`,
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
