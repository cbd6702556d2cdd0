import { escapeXml, WSSE_NS, WSU_NS } from "@svc/errors";
import { WSA_NS } from "../addressing/names.js";
import { hasMembers, optionError } from "../options.js";

/** The SOAP 1.2 envelope namespace. */
export const SOAP12_NS = "http://www.w3.org/2003/05/soap-envelope";
/** The SOAP 1.1 envelope namespace (SOAP 1.1 §4.1.2). */
export const SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/";
/** WS-Security 1.0 secext namespace, for the `wsse:FailedAuthentication` subcode (one definition, in `@svc/errors`). */
export { WSSE_NS };

/** SOAP 1.2 Part 1 §5.4.6: the fault code values. */
export type FaultCode = "VersionMismatch" | "MustUnderstand" | "DataEncodingUnknown" | "Sender" | "Receiver";

const FAULT_CODES: ReadonlySet<string> = new Set([
  "VersionMismatch",
  "MustUnderstand",
  "DataEncodingUnknown",
  "Sender",
  "Receiver",
]);

/** A namespace-qualified name. */
export interface QName {
  namespace: string;
  localName: string;
}

/** One `env:Reason/env:Text`, in a language. */
export interface FaultReasonText {
  /** `xml:lang` of the text. */
  lang: string;
  text: string;
}

/** Options of {@link SoapFault}. */
export interface SoapFaultInit {
  /** `env:Code/env:Value` (Part 1 §5.4.6). */
  code: FaultCode;
  /**
   * `env:Subcode/env:Value`s, outermost first: a {@link QName}, a Clark name `{ns}local`, or a
   * bare local name (qualified with the service's target namespace when rendered by an endpoint).
   * @default []
   */
  subcode?: string | QName | ReadonlyArray<string | QName>;
  /** `env:Reason`: one text (`xml:lang="en"`) or several languages, each once (Part 1 §5.4.2). */
  reason: string | readonly FaultReasonText[];
  /**
   * `env:Node`: the URI of the node that faulted.
   * @default omitted
   */
  node?: string;
  /**
   * `env:Role`: the role the node was acting in.
   * @default omitted
   */
  role?: string;
  /**
   * `env:Detail` content: element name → value. Names of global elements of the service's schema
   * (`"CustomerNotFound"` or `"{ns}CustomerNotFound"`) are serialized and validated by it; other
   * plain values are written as unqualified elements.
   * @default omitted
   */
  detail?: Readonly<Record<string, unknown>>;
  /** Extra header blocks as already-serialized XML (NotUnderstood, Upgrade). Internal use. */
  headerXml?: string;
  /** The cause, logged, never sent. */
  cause?: unknown;
}

/**
 * A SOAP 1.2 fault (Part 1 §5.4). Throw one from a handler to answer with a declared business
 * fault; the endpoint renders it with HTTP 400 for `Sender` and 500 otherwise (Part 2 §7.5.2.2).
 *
 * @example
 * throw new SoapFault({
 *   code: "Sender",
 *   subcode: "CustomerNotFound",
 *   reason: "Customer 42 does not exist",
 *   detail: { CustomerNotFound: { customerId: 42n } },
 * });
 * @see https://www.w3.org/TR/soap12-part1/#soapfault
 */
export class SoapFault extends Error {
  readonly code: FaultCode;
  readonly subcodes: readonly (string | QName)[];
  readonly reasons: readonly FaultReasonText[];
  readonly node: string | undefined;
  readonly role: string | undefined;
  readonly detail: Readonly<Record<string, unknown>> | undefined;
  readonly headerXml: string | undefined;

  /**
   * @throws {TypeError} with a stable `code` (`ERR_SVC_SOAP_ENVELOPE_FAULT_CODE`, `..._FAULT_REASON`,
   *   `..._FAULT_SUBCODE`, `..._FAULT_NODE`, `..._FAULT_ROLE`, `..._FAULT_DETAIL`, or
   *   `..._FAULT` when `init` is not an object) naming what was given and what is accepted
   */
  constructor(init: SoapFaultInit) {
    if (typeof init !== "object" || init === null || Array.isArray(init)) {
      throw faultInitError("fault", init, "an object with code and reason", "SoapFault");
    }
    if (!FAULT_CODES.has(init.code)) {
      throw faultInitError("fault_code", init.code, `one of ${[...FAULT_CODES].join(", ")}`);
    }
    const reasons = checkReasons(init.reason);
    const subcodes = checkSubcodes(init.subcode);
    checkOptionalString(init.node, "fault_node", "SoapFault: node");
    checkOptionalString(init.role, "fault_role", "SoapFault: role");
    const detail: unknown = init.detail;
    if (detail !== undefined && (typeof detail !== "object" || detail === null || Array.isArray(detail))) {
      throw faultInitError("fault_detail", detail, "an object of element name → value");
    }
    super(reasons[0]?.text, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "SoapFault";
    this.code = init.code;
    this.subcodes = subcodes;
    this.reasons = reasons;
    this.node = init.node;
    this.role = init.role;
    this.detail = init.detail;
    this.headerXml = init.headerXml;
  }

  /** Part 2 §7.5.2.2: env:Sender → 400 Bad Request, every other code → 500. */
  get httpStatus(): number {
    return this.code === "Sender" ? 400 : 500;
  }
}

/**
 * A fault WS-Addressing 1.0 defines (SOAP Binding §6.4): `env:Sender`, its [Subcode] and
 * [Subsubcode] in the WS-Addressing namespace, its [Details] already serialized (a
 * `wsa:ProblemHeaderQName`, a `wsa:ProblemAction`). SOAP 1.2 carries them in `env:Detail`; SOAP
 * 1.1 (§6.2) names the most specific code in `faultcode` and carries the [Details] in a
 * `wsa:FaultDetail` header block.
 * @see https://www.w3.org/TR/ws-addr-soap/#faults
 */
export class AddressingFault extends SoapFault {
  /** The [Details], serialized, each element declaring the namespaces it uses. */
  readonly detailXml: string;
  constructor(subcodes: readonly string[], reason: string, detailXml: string) {
    super({ code: "Sender", subcode: subcodes.map((s) => `{${WSA_NS}}${s}`), reason });
    this.name = "AddressingFault";
    this.detailXml = detailXml;
  }
}

/** A refused {@link SoapFaultInit} field: a `TypeError` coded `ERR_SVC_SOAP_ENVELOPE_<FIELD>`. */
function faultInitError(field: string, given: unknown, accepted: string, label?: string): TypeError {
  return optionError(field, given, accepted, label ?? `SoapFault: ${field.slice("fault_".length)}`);
}

/**
 * Namespaces in XML 1.0 §3 NCName: an XML 1.0 (Fifth Edition) §2.3 Name without colons. A
 * subcode is an `xs:QName` (SOAP 1.2 Part 1 §5.4.6.1), so its local name must be one.
 */
const NCNAME =
  /^[A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\u{10000}-\u{EFFFF}][-.0-9A-Z_a-z\u00B7\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u037D\u037F-\u1FFF\u200C-\u200D\u203F\u2040\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\u{10000}-\u{EFFFF}]*$/u;

/**
 * XML Schema 1.0 Part 2 §3.3.3 `xs:language`: `[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*`. SOAP 1.2
 * Part 1 §5.4.2.1 requires `xml:lang` on each `env:Text`, whose type (the XML namespace schema)
 * is `xs:language` or the empty string (XML 1.0 §2.12: no language information).
 */
const LANGUAGE = /^(?:[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)?$/;

function checkReasons(reason: unknown): FaultReasonText[] {
  const accepted =
    'a string, or a non-empty list of { lang, text } strings, each lang a different xs:language ("en", "de-CH") or ""';
  if (typeof reason === "string") return [{ lang: "en", text: reason }];
  if (!Array.isArray(reason) || reason.length === 0) throw faultInitError("fault_reason", reason, accepted);
  // SOAP 1.2 Part 1 §5.4.2: "Each child env:Text element information item SHOULD have a different
  // value for its xml:lang attribute information item": a client picks the text in its language,
  // and two for one leave it to guess. Language tags compare case-insensitively (XML 1.0 §2.12,
  // BCP 47 §2.1.1): "en-GB" and "EN-gb" are one language.
  const langs = new Set<string>();
  return reason.map((item: unknown) => {
    if (
      !hasMembers(item, { lang: "string", text: "string" }) ||
      !LANGUAGE.test(item.lang) ||
      langs.has(item.lang.toLowerCase())
    ) {
      throw faultInitError("fault_reason", item, accepted);
    }
    langs.add(item.lang.toLowerCase());
    return { lang: item.lang, text: item.text };
  });
}

function checkSubcodes(subcode: unknown): (string | QName)[] {
  if (subcode === undefined) return [];
  const list: unknown[] = Array.isArray(subcode) ? subcode : [subcode];
  const accepted =
    'a name, "{namespace}name" or { namespace, localName }, or a list of them, each name an XML NCName';
  return list.map((item) => {
    if (typeof item === "string") {
      // The name as the fault will be rendered: a bare name, `wsse:name` or `{namespace}name`.
      if (!NCNAME.test(toQName(item, "").localName)) throw faultInitError("fault_subcode", item, accepted);
      return item;
    }
    if (!hasMembers(item, { namespace: "string", localName: "string" }) || !NCNAME.test(item.localName))
      throw faultInitError("fault_subcode", item, accepted);
    return { namespace: item.namespace, localName: item.localName };
  });
}

function checkOptionalString(value: unknown, field: string, label: string): void {
  if (value !== undefined && typeof value !== "string") throw faultInitError(field, value, "a string", label);
}

/** True for a {@link SoapFault}. */
export function isSoapFault(value: unknown): value is SoapFault {
  return value instanceof SoapFault;
}

/** Turns a subcode into a QName; bare names take `defaultNamespace`. */
export function toQName(value: string | QName, defaultNamespace: string): QName {
  if (typeof value !== "string") return value;
  const m = /^\{([^}]*)\}(.+)$/.exec(value);
  if (m) return { namespace: m[1] ?? "", localName: m[2] ?? "" };
  if (value.startsWith("wsse:")) return { namespace: WSSE_NS, localName: value.slice(5) };
  return { namespace: defaultNamespace, localName: value };
}

/** Serializes the fault's `env:Detail` children; supplied by the endpoint that knows the schema. */
export type DetailWriter = (detail: Readonly<Record<string, unknown>>) => string;

/**
 * Serializes a fault as a SOAP 1.2 envelope, children in the order Part 1 §5.4 requires:
 * Code, Reason, Node, Role, Detail.
 *
 * @example res.end(faultToXml(new SoapFault({ code: "Receiver", reason: "Try later" })));
 * @see https://www.w3.org/TR/soap12-part1/#faultcodeelement
 */
export function faultToXml(fault: SoapFault, defaultNamespace = "", writeDetail?: DetailWriter): string {
  let code = `<env:Code><env:Value>env:${fault.code}</env:Value>`;
  let close = "";
  fault.subcodes.forEach((s, i) => {
    const q = toQName(s, defaultNamespace);
    const value = q.namespace
      ? `<env:Value xmlns:s${i}="${escapeXml(q.namespace)}">s${i}:${escapeXml(q.localName)}</env:Value>`
      : `<env:Value>${escapeXml(q.localName)}</env:Value>`;
    code += `<env:Subcode>${value}`;
    close = `</env:Subcode>${close}`;
  });
  code += `${close}</env:Code>`;
  const reason = `<env:Reason>${fault.reasons
    .map((r) => `<env:Text xml:lang="${escapeXml(r.lang)}">${escapeXml(r.text)}</env:Text>`)
    .join("")}</env:Reason>`;
  const node = fault.node === undefined ? "" : `<env:Node>${escapeXml(fault.node)}</env:Node>`;
  const role = fault.role === undefined ? "" : `<env:Role>${escapeXml(fault.role)}</env:Role>`;
  let detail = "";
  if (fault instanceof AddressingFault) detail = `<env:Detail>${fault.detailXml}</env:Detail>`;
  else if (fault.detail !== undefined) {
    detail = `<env:Detail>${(writeDetail ?? writePlainDetail)(fault.detail)}</env:Detail>`;
  }
  const header = fault.headerXml ? `<env:Header>${fault.headerXml}</env:Header>` : "";
  return `<?xml version="1.0" encoding="utf-8"?><env:Envelope xmlns:env="${SOAP12_NS}">${header}<env:Body><env:Fault>${code}${reason}${node}${role}${detail}</env:Fault></env:Body></env:Envelope>`;
}

/** Writes detail values as unqualified elements (objects nest, arrays repeat). */
export function writePlainDetail(detail: Readonly<Record<string, unknown>>): string {
  let out = "";
  for (const [name, value] of Object.entries(detail)) out += plainElement(name, value, 0);
  return out;
}

function plainElement(name: string, value: unknown, depth: number): string {
  if (depth > 32) return "";
  const m = /^\{([^}]*)\}(.+)$/.exec(name);
  const local = m ? (m[2] ?? name) : name;
  if (!/^[A-Za-z_][\w.-]*$/.test(local)) return "";
  const ns = m ? ` xmlns="${escapeXml(m[1] ?? "")}"` : "";
  if (Array.isArray(value)) return value.map((v) => plainElement(name, v, depth + 1)).join("");
  if (value === null || value === undefined) return `<${local}${ns}/>`;
  if (typeof value === "object" && !(value instanceof Date)) {
    let inner = "";
    for (const [k, v] of Object.entries(value)) inner += plainElement(k, v, depth + 1);
    return `<${local}${ns}>${inner}</${local}>`;
  }
  const text = value instanceof Date ? value.toISOString() : String(value);
  return `<${local}${ns}>${escapeXml(text)}</${local}>`;
}

/** Part 1 §5.4.8: one `env:NotUnderstood` header block per mandatory block nobody understood. */
export function notUnderstoodHeaders(blocks: readonly QName[]): string {
  return blocks
    .map(
      (b, i) =>
        `<env:NotUnderstood qname="n${i}:${escapeXml(b.localName)}" xmlns:n${i}="${escapeXml(b.namespace)}"/>`,
    )
    .join("");
}

/** Part 1 §5.4.7: the `env:Upgrade` header block listing the envelope versions this node supports. */
export const UPGRADE_HEADER = `<env:Upgrade xmlns:env="${SOAP12_NS}"><env:SupportedEnvelope qname="env:Envelope"/></env:Upgrade>`;

/**
 * Part 1 §5.4.7: the `env:Upgrade` block for a node that supports `versions`, "in order of
 * preference" (1.2 first); Example 6 there lists a SOAP 1.1 envelope beside the 1.2 one.
 */
export function upgradeHeader(versions: readonly ("1.1" | "1.2")[]): string {
  if (versions.length === 1 && versions[0] === "1.2") return UPGRADE_HEADER;
  const supported = versions
    .map((v) =>
      v === "1.2"
        ? `<env:SupportedEnvelope qname="env:Envelope"/>`
        : `<env:SupportedEnvelope qname="ns11:Envelope" xmlns:ns11="${SOAP11_NS}"/>`,
    )
    .join("");
  return `<env:Upgrade xmlns:env="${SOAP12_NS}">${supported}</env:Upgrade>`;
}

/**
 * Part 1 Appendix A: a SOAP 1.2 node answers a SOAP/1.1 message with a SOAP/1.1 VersionMismatch
 * fault that carries the SOAP 1.2 `env:Upgrade` header block. A SOAP 1.1 node answers an envelope
 * of another namespace with the same fault (SOAP 1.1 §4.4.1: "The processing party found an
 * invalid namespace for the SOAP Envelope element"), here with the Upgrade block naming the
 * versions it does support.
 */
export function soap11VersionMismatchXml(upgrade = UPGRADE_HEADER, supports = "SOAP 1.2 only"): string {
  return `<?xml version="1.0" encoding="utf-8"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="${SOAP11_NS}"><SOAP-ENV:Header>${upgrade}</SOAP-ENV:Header><SOAP-ENV:Body><SOAP-ENV:Fault><faultcode>SOAP-ENV:VersionMismatch</faultcode><faultstring>Version Mismatch: this node supports ${supports}</faultstring></SOAP-ENV:Fault></SOAP-ENV:Body></SOAP-ENV:Envelope>`;
}

/**
 * SOAP 1.1 §4.4.1: the fault codes of the Note for SOAP 1.2's (Part 1 §5.4.6). `Sender` is
 * `Client` ("the message was incorrectly formed or did not contain the appropriate information"),
 * `Receiver` is `Server`; DataEncodingUnknown, which the Note lacks, is the sender's: `Client`.
 */
const SOAP11_CODES: Readonly<Record<FaultCode, string>> = {
  VersionMismatch: "VersionMismatch",
  MustUnderstand: "MustUnderstand",
  DataEncodingUnknown: "Client",
  Sender: "Client",
  Receiver: "Server",
};

/**
 * Serializes a fault as a SOAP 1.1 envelope (SOAP 1.1 §4.4): `faultcode`, `faultstring`,
 * `faultactor` (the fault's `node`), `detail`. The code is the Note's (`SOAP-ENV:Client`,
 * `Server`, `MustUnderstand`, `VersionMismatch`); a WS-Security subcode (`wsse:`, `wsu:`) is the
 * faultcode itself, as WS-Security 1.0 §12 has it for SOAP 1.1. Other subcodes have no SOAP 1.1
 * place (the detail carries a declared fault). `bodyFault`: §4.4 "The detail element MUST be
 * present if the contents of the Body element could not be successfully processed": an empty one
 * when the fault has no detail.
 *
 * @example res.status(500).end(fault11ToXml(new SoapFault({ code: "Sender", reason: "Bad input" })));
 * @see https://www.w3.org/TR/2000/NOTE-SOAP-20000508/#_Toc478383507
 */
export function fault11ToXml(
  fault: SoapFault,
  defaultNamespace = "",
  writeDetail?: DetailWriter,
  bodyFault = false,
): string {
  let code = `SOAP-ENV:${SOAP11_CODES[fault.code]}`;
  let codeNs = "";
  const first = fault.subcodes[0];
  if (first !== undefined) {
    const q = toQName(first, defaultNamespace);
    if (q.namespace === WSSE_NS || q.namespace === WSU_NS) {
      code = `s0:${escapeXml(q.localName)}`;
      codeNs = ` xmlns:s0="${escapeXml(q.namespace)}"`;
    } else if (q.namespace === WSA_NS) {
      // WS-Addressing SOAP Binding §6.2: the most specific of its codes is the faultcode.
      code = `s0:${escapeXml(mostSpecific(fault).localName)}`;
      codeNs = ` xmlns:s0="${WSA_NS}"`;
    }
  }
  // §6.2: "the value of the [Details] property is bound as the value of a new wsa:FaultDetail
  // SOAP header block" (SOAP 1.1's detail is for the Body's faults only, §4.4).
  const header =
    fault instanceof AddressingFault
      ? `<SOAP-ENV:Header><wsa:FaultDetail xmlns:wsa="${WSA_NS}">${fault.detailXml}</wsa:FaultDetail></SOAP-ENV:Header>`
      : "";
  const text = fault.reasons.find((r) => r.lang.toLowerCase().startsWith("en")) ?? fault.reasons[0];
  const actor = fault.node === undefined ? "" : `<faultactor>${escapeXml(fault.node)}</faultactor>`;
  let detail = bodyFault ? "<detail/>" : "";
  if (fault.detail !== undefined) {
    detail = `<detail>${(writeDetail ?? writePlainDetail)(fault.detail)}</detail>`;
  }
  return `<?xml version="1.0" encoding="utf-8"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="${SOAP11_NS}">${header}<SOAP-ENV:Body><SOAP-ENV:Fault><faultcode${codeNs}>${code}</faultcode><faultstring>${escapeXml(text?.text ?? "")}</faultstring>${actor}${detail}</SOAP-ENV:Fault></SOAP-ENV:Body></SOAP-ENV:Envelope>`;
}

/** Shorthand for a Sender fault. */
export function senderFault(reason: string, subcode?: string | QName): SoapFault {
  return new SoapFault(
    subcode === undefined ? { code: "Sender", reason } : { code: "Sender", reason, subcode },
  );
}

/**
 * The code a fault is answered with, as the wire names it: SOAP 1.2's `env:Code` (`Sender`,
 * `Receiver`, `MustUnderstand`, `VersionMismatch`, `DataEncodingUnknown`), SOAP 1.1's
 * `faultcode` (`Client`, `Server`, ...); a WS-Security fault's own code either way
 * (`wsse:FailedAuthentication`, `wsu:MessageExpired`), which SOAP 1.2 carries as the subcode; a
 * WS-Addressing fault's most specific code either way (`wsa:ActionNotSupported`,
 * `wsa:InvalidCardinality`), which SOAP 1.1 sends as its faultcode.
 */
export function faultCodeOf(fault: SoapFault, version: "1.1" | "1.2"): string {
  const first = fault.subcodes[0];
  if (first !== undefined) {
    const q = toQName(first, "");
    if (q.namespace === WSSE_NS) return `wsse:${q.localName}`;
    if (q.namespace === WSU_NS) return `wsu:${q.localName}`;
    if (q.namespace === WSA_NS) return `wsa:${mostSpecific(fault).localName}`;
  }
  return version === "1.1" ? SOAP11_CODES[fault.code] : fault.code;
}

/** A WS-Addressing fault's most specific code: its [Subsubcode] when it has one, else its [Subcode]. */
function mostSpecific(fault: SoapFault): QName {
  return toQName(fault.subcodes[fault.subcodes.length - 1] as string | QName, "");
}
