import { createHash, type KeyObject, timingSafeEqual, verify, type X509Certificate } from "node:crypto";
import { WSU_NS } from "@svc/errors";
import { DOMParser } from "@xmldom/xmldom";
import { ExclusiveCanonicalization } from "xml-crypto";
import { WSSE_NS } from "../envelope/fault.js";
import type { XmlElement } from "../xml/reader.js";
import { base64, certificate, type KnownCertificate, knownOf, trust } from "./certificates.js";
import { cutAtHeader } from "./cut.js";
import type { Attr, Document, Element, Node } from "./dom.js";
import { wsseFault } from "./faults.js";
import type { ResolvedSignature } from "./resolved.js";

// XML-DSig (XML Signature Syntax and Processing 1.1) as WS-Security 1.1 §8 profiles it, with the
// X.509 Token Profile 1.1 for the key. The checks run in the order of their cost, so a sender
// without a trusted key's signature costs the header blocks (already parsed) and one
// canonicalization of ds:SignedInfo, never a digest of the Body:
//  1. on the parsed header blocks: the algorithms, the bounds, the key and its trust (readSignature);
//  2. the SignatureValue over ds:SignedInfo, read from the header alone (XML-DSig §3.2.2 asks for
//     the references first; any order gives the same answer, this one costs an attacker more);
//  3. the whole message: one Body, unique IDs, each reference's digest, and the parts that must
//     be signed being the very elements the node processes (signature wrapping, below).
// A service keeps what it learnt of the last certificates it was sent (the parsed certificate,
// its key, whether a trusted certificate issued it), so a partner's certificate is parsed and its
// issuer's signature checked once, not on every message; its validity dates are checked on each.
// @see https://www.w3.org/TR/xmldsig-core1/#sec-CoreValidation
// @see https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-x509TokenProfile-v1.1.1-os.html

const DS_NS = "http://www.w3.org/2000/09/xmldsig#";
const EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";
const ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
const SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256";
const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
const ECDSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256";
const X509_PROFILE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0";
const X509V3 = `${X509_PROFILE}#X509v3`;
const THUMBPRINT_SHA1 = "http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#ThumbprintSHA1";
const XML_NS = "http://www.w3.org/XML/1998/namespace";
/** XML-DSig §4.4.3.3: a same-document reference `#id`; anything else is outside the envelope. */
const ID_REFERENCE = /^#([A-Za-z_][\w.-]*)$/;

/** What the signature check established. */
export interface WsSignature {
  /** The signing certificate, trusted. */
  certificate: X509Certificate;
  /** Whether the envelope's env:Body is signed. */
  body: boolean;
  /** Whether the processed wsu:Timestamp is signed. */
  timestamp: boolean;
  /** The header blocks signed (as the handlers see them in `context.headers`). */
  headers: readonly XmlElement[];
}

interface Reference {
  id: string;
  digest: Buffer;
  /** Prefixes of an InclusiveNamespaces PrefixList of the exclusive C14N transform. */
  prefixes: string[];
}

/** A signature read from the parsed header, its key trusted, nothing verified yet. */
export interface SignaturePlan {
  /** The position of ds:Signature among the wsse:Security block's child elements. */
  index: number;
  method: typeof RSA_SHA256 | typeof ECDSA_SHA256;
  value: Buffer;
  references: Reference[];
  certificate: X509Certificate;
  /** The certificate's public key. */
  key: KeyObject;
}

const named = (e: XmlElement, ns: string, local: string) => e.namespace === ns && e.localName === local;

/**
 * Step 1: the ds:Signature of `security` read and bounded, its algorithms allowed, its key found
 * and trusted. Undefined when there is none (refused when one is required).
 */
export function readSignature(
  security: XmlElement | undefined,
  options: ResolvedSignature,
  now: number,
): SignaturePlan | undefined {
  const children = security?.children ?? [];
  const found = children.filter((c) => named(c, DS_NS, "Signature"));
  if (found.length > 1) throw wsseFault("InvalidSecurity", "more than one ds:Signature");
  const signature = found[0];
  if (signature === undefined) {
    if (options.required) throw wsseFault("InvalidSecurity", "the message must be signed");
    return undefined;
  }
  const [signedInfo, signatureValue, keyInfo] = signature.children;
  if (
    signedInfo === undefined ||
    !named(signedInfo, DS_NS, "SignedInfo") ||
    signatureValue === undefined ||
    !named(signatureValue, DS_NS, "SignatureValue")
  ) {
    throw wsseFault("InvalidSecurity", "ds:Signature must hold ds:SignedInfo, then ds:SignatureValue");
  }
  const [c14n, method, ...refs] = signedInfo.children;
  if (
    c14n === undefined ||
    !named(c14n, DS_NS, "CanonicalizationMethod") ||
    c14n.attributes.Algorithm !== EXC_C14N
  ) {
    throw wsseFault("UnsupportedAlgorithm", "ds:CanonicalizationMethod must be exclusive C14N");
  }
  const algorithm = method?.attributes.Algorithm;
  if (
    method === undefined ||
    !named(method, DS_NS, "SignatureMethod") ||
    (algorithm !== RSA_SHA256 && algorithm !== ECDSA_SHA256)
  ) {
    throw wsseFault("UnsupportedAlgorithm", "ds:SignatureMethod must be rsa-sha256 or ecdsa-sha256");
  }
  if (refs.length === 0 || refs.length > options.maxReferences) {
    throw wsseFault("InvalidSecurity", `ds:SignedInfo must hold 1 to ${options.maxReferences} ds:Reference`);
  }
  const references = refs.map((r) => readReference(r, options));
  const value = base64(signatureValue.text, options.maxSignatureBytes, "ds:SignatureValue");
  const signer = signingCertificate(keyInfo, children, options);
  trust(signer, now);
  const { certificate, key } = signer;
  const type = key.asymmetricKeyType;
  if ((algorithm === RSA_SHA256) !== (type === "rsa") || (algorithm === ECDSA_SHA256) !== (type === "ec")) {
    throw wsseFault("UnsupportedAlgorithm", `ds:SignatureMethod does not fit the certificate's ${type} key`);
  }
  return { index: children.indexOf(signature), method: algorithm, value, references, certificate, key };
}

function readReference(ref: XmlElement, options: ResolvedSignature): Reference {
  if (!named(ref, DS_NS, "Reference"))
    throw wsseFault("InvalidSecurity", "ds:SignedInfo holds other than ds:Reference");
  const uri = ref.attributes.URI ?? "";
  const id = ID_REFERENCE.exec(uri)?.[1];
  // XSW: a reference to another document, an XPointer or the whole document names no element
  // this node can tell is the one it processes.
  if (id === undefined)
    throw wsseFault("InvalidSecurity", "a ds:Reference URI must be #id, in this envelope");
  let transforms: XmlElement[] = [];
  let digestMethod: XmlElement | undefined;
  let digestValue: XmlElement | undefined;
  for (const child of ref.children) {
    if (named(child, DS_NS, "Transforms") && digestMethod === undefined) transforms = child.children;
    else if (named(child, DS_NS, "DigestMethod") && digestMethod === undefined) digestMethod = child;
    else if (named(child, DS_NS, "DigestValue") && digestMethod !== undefined) digestValue = child;
    else throw wsseFault("InvalidSecurity", "ds:Reference holds an unexpected element");
  }
  if (transforms.length > options.maxTransforms) {
    throw wsseFault("InvalidSecurity", `a ds:Reference has more than ${options.maxTransforms} ds:Transform`);
  }
  let prefixes: string[] = [];
  let c14n = false;
  for (const t of transforms) {
    const algorithm = named(t, DS_NS, "Transform") ? t.attributes.Algorithm : undefined;
    if (algorithm === EXC_C14N) {
      c14n = true;
      const inclusive = t.children.find(
        (c) => c.localName === "InclusiveNamespaces" && c.namespace === EXC_C14N,
      );
      prefixes = (inclusive?.attributes.PrefixList ?? "")
        .split(/\s+/)
        .filter((p) => p !== "" && p !== "#default");
    } else if (algorithm !== ENVELOPED) {
      // ENVELOPED is accepted where it changes nothing: a signed element that holds the
      // signature is refused in step 3.
      throw wsseFault("UnsupportedAlgorithm", "a ds:Transform must be exclusive C14N");
    }
  }
  if (!c14n && transforms.length > 0)
    throw wsseFault("UnsupportedAlgorithm", "a ds:Reference must use exclusive C14N");
  if (digestMethod?.attributes.Algorithm !== SHA256 || digestValue === undefined) {
    throw wsseFault("UnsupportedAlgorithm", "ds:DigestMethod must be sha256");
  }
  return { id, digest: base64(digestValue.text, 32, "ds:DigestValue"), prefixes };
}

/**
 * X.509 Token Profile 1.1 §3.2: the key is named by a wsse:SecurityTokenReference to a
 * wsse:BinarySecurityToken of this header (§3.2.1, `#id`), or by a key identifier, the SHA-1
 * thumbprint of a trusted certificate (§3.2.3, WS-Security 1.1); a ds:X509Data certificate too.
 */
function signingCertificate(
  keyInfo: XmlElement | undefined,
  security: readonly XmlElement[],
  options: ResolvedSignature,
): KnownCertificate {
  const [holder] = keyInfo !== undefined && named(keyInfo, DS_NS, "KeyInfo") ? keyInfo.children : [];
  if (holder === undefined) throw wsseFault("SecurityTokenUnavailable", "ds:KeyInfo names no key");
  if (named(holder, DS_NS, "X509Data")) {
    const cert = holder.children.find((c) => named(c, DS_NS, "X509Certificate"));
    if (cert !== undefined) return certificate(cert.text, options);
  }
  const [ref] = named(holder, WSSE_NS, "SecurityTokenReference") ? holder.children : [];
  if (ref !== undefined && named(ref, WSSE_NS, "Reference")) {
    const id = /^#(.+)$/.exec(ref.attributes.URI ?? "")?.[1];
    const tokens = security.filter(
      (c) => named(c, WSSE_NS, "BinarySecurityToken") && c.attributes[`{${WSU_NS}}Id`] === id,
    );
    if (id === undefined || tokens.length !== 1) {
      throw wsseFault(
        "SecurityTokenUnavailable",
        "the wsse:Reference names no one wsse:BinarySecurityToken of this header",
      );
    }
    const token = tokens[0] as XmlElement;
    if ((token.attributes.ValueType ?? X509V3) !== X509V3) {
      throw wsseFault(
        "UnsupportedSecurityToken",
        "the wsse:BinarySecurityToken is not an X509v3 certificate",
      );
    }
    return certificate(token.text, options);
  }
  if (
    ref !== undefined &&
    named(ref, WSSE_NS, "KeyIdentifier") &&
    ref.attributes.ValueType === THUMBPRINT_SHA1
  ) {
    const thumbprint = base64(ref.text, 20, "wsse:KeyIdentifier").toString("hex");
    const match = knownOf(options).trusted.find(
      (c) => c.certificate.fingerprint.replaceAll(":", "").toLowerCase() === thumbprint,
    );
    if (match === undefined)
      throw wsseFault("SecurityTokenUnavailable", "no trusted certificate has that thumbprint");
    return match;
  }
  throw wsseFault(
    "UnsupportedSecurityToken",
    "the key must be a wsse:BinarySecurityToken, a thumbprint or ds:X509Data",
  );
}

/** What step 3 needs of the message beside the plan. */
export interface SignedMessage {
  /** The message's text. */
  raw: string;
  /** The SOAP envelope namespace of the message. */
  envelopeNs: string;
  /** The position of the processed wsse:Security block among the header blocks. */
  securityIndex: number;
  /** The header blocks, as parsed; `mustSign` those whose signature `signedParts` asks. */
  blocks: readonly XmlElement[];
  mustSign: (index: number) => boolean;
  maxDepth: number;
  /** Given {@link VerifiedSignature.signedInfo} before the value is verified; throws on a replay. */
  checkReplay: ((signedInfo: string) => void) | undefined;
}

/** What steps 2 and 3 established, and the SHA-256 (base64) of the canonical ds:SignedInfo. */
export interface VerifiedSignature {
  signature: WsSignature;
  signedInfo: string;
}

/** Steps 2 and 3: the SignatureValue, then the references and what they must cover. */
export function verifySignature(
  plan: SignaturePlan,
  message: SignedMessage,
  options: ResolvedSignature,
): VerifiedSignature {
  // Step 2 on the header alone, then step 3 on the rest of the envelope: the message parsed once,
  // in two parts. Should it not cut there (an unusual serialization), the whole message is
  // parsed at once after the header alone.
  const cut = cutAtHeader(message.raw);
  const head = cut === undefined ? undefined : headerPart(cut.head, message, plan);
  let located: Located;
  let roots: [Element, number][];
  let signedInfo: string;
  if (cut !== undefined && head !== undefined) {
    signedInfo = checkSignatureValue(plan, head.signedInfo, message);
    const rest = parse(cut.rest).documentElement as Element;
    const parts = children(rest);
    const { header, body } = envelopeParts(parts, message.envelopeNs);
    if (header !== undefined) throw wsseFault("InvalidSecurity", "the envelope has more than one env:Header");
    located = { ...head, body: body ?? rest };
    // The rest's envelope is the head's (whose Id is the head's): its children are its own.
    roots = [[head.envelope, 1], ...parts.map((p): [Element, number] => [p, 2])];
  } else {
    const doc = parse(message.raw);
    const whole = locate(doc, message, plan);
    if (whole === undefined) throw wsseFault("InvalidSecurity", "the ds:Signature is not where it was read");
    signedInfo = checkSignatureValue(plan, whole.signedInfo, message);
    located = whole;
    roots = [[doc.documentElement as Element, 1]];
  }
  const ids = identifiers(roots, message.maxDepth);
  const signed = new Set<Element>();
  for (const ref of plan.references) {
    const target = ids.get(ref.id);
    if (target === undefined) throw wsseFault("InvalidSecurity", `no element has the Id "${ref.id}"`);
    if (contains(target, located.signature) || contains(located.signature, target)) {
      throw wsseFault("InvalidSecurity", `#${ref.id} holds or is inside the ds:Signature`);
    }
    const digest = createHash("sha256").update(canonical(target, ref.prefixes)).digest();
    if (!timingSafeEqual(digest, ref.digest))
      throw wsseFault("FailedCheck", `the digest of #${ref.id} does not match`);
    signed.add(target);
  }
  const timestamp = children(located.security).find(
    (c) => c.namespaceURI === WSU_NS && c.localName === "Timestamp",
  );
  const body = signed.has(located.body);
  const stamped = timestamp !== undefined && signed.has(timestamp);
  // XSW: the signature must cover the Body this node decodes and the Timestamp it checked, not
  // a copy of either moved elsewhere in the envelope.
  if (options.body && !body) throw wsseFault("FailedCheck", "the env:Body is not signed");
  if (options.timestamp && timestamp !== undefined && !stamped) {
    throw wsseFault("FailedCheck", "the wsu:Timestamp is not signed");
  }
  const headers: XmlElement[] = [];
  located.blocks.forEach((block, i) => {
    if (signed.has(block)) headers.push(message.blocks[i] as XmlElement);
    else if (message.mustSign(i)) {
      throw wsseFault(
        "FailedCheck",
        `the header block {${block.namespaceURI ?? ""}}${block.localName} is not signed`,
      );
    }
  });
  return { signature: { certificate: plan.certificate, body, timestamp: stamped, headers }, signedInfo };
}

/**
 * The SignatureValue verified over the canonical ds:SignedInfo, whose digest it returns once
 * `checkReplay` has seen it: a message is known by what its signature covers, not by the value,
 * of which ECDSA has two for one text, (r, s) and (r, n − s).
 * @see https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-SOAPMessageSecurity-v1.1.1-os.html (§13)
 */
function checkSignatureValue(plan: SignaturePlan, signedInfo: Element, message: SignedMessage): string {
  const canon = canonical(signedInfo, prefixList(signedInfo));
  const covered = createHash("sha256").update(canon).digest("base64");
  message.checkReplay?.(covered);
  const { key } = plan;
  const ok =
    plan.method === ECDSA_SHA256
      ? // XML-DSig 1.1 §6.4.3: the ECDSA value is r and s concatenated, not DER.
        verify("sha256", Buffer.from(canon), { key, dsaEncoding: "ieee-p1363" }, plan.value)
      : verify("sha256", Buffer.from(canon), key, plan.value);
  if (!ok) throw wsseFault("FailedCheck", "the ds:SignatureValue does not verify");
  return covered;
}

function prefixList(signedInfo: Element): string[] {
  const method = children(signedInfo)[0];
  const inclusive =
    method === undefined ? undefined : children(method).find((c) => c.localName === "InclusiveNamespaces");
  return (inclusive?.getAttribute("PrefixList") ?? "")
    .split(/\s+/)
    .filter((p) => p !== "" && p !== "#default");
}

/** Exclusive C14N (without comments) of `element`, by xml-crypto's canonicalizer. */
function canonical(element: Element, prefixes: string[]): string {
  const ancestorNamespaces: { prefix: string; namespaceURI: string }[] = [];
  const seen = new Set<string>();
  for (let n = element.parentNode; n !== null && n.nodeType === 1; n = n.parentNode) {
    const attrs = (n as Element).attributes;
    for (let i = 0; i < attrs.length; i++) {
      const a = attrs.item(i) as Attr;
      if (a.prefix === "xmlns" && !seen.has(a.localName)) {
        seen.add(a.localName);
        ancestorNamespaces.push({ prefix: a.localName, namespaceURI: a.value });
      }
    }
  }
  // The canonicalizer declares the listed prefixes of the ancestors on the element it is given,
  // which would change the digest of a signed element around it: then it is given a copy.
  const declares = prefixes.some((p) => seen.has(p));
  const target = declares ? (element.cloneNode(true) as Element) : element;
  // xml-crypto declares the browser DOM types; xmldom's nodes are what it reads.
  return new ExclusiveCanonicalization().process(target as never, {
    inclusiveNamespacesPrefixList: prefixes,
    ancestorNamespaces,
  });
}

interface Located {
  security: Element;
  signature: Element;
  signedInfo: Element;
  body: Element;
  blocks: Element[];
}

/** The processed wsse:Security block's ds:Signature in a DOM of the message, and the Body. */
function locate(doc: Document, message: SignedMessage, plan: SignaturePlan): Located | undefined {
  const envelope = doc.documentElement;
  if (envelope === null) return undefined;
  const { header, body } = envelopeParts(children(envelope), message.envelopeNs);
  const blocks = header === undefined ? [] : children(header);
  const security = blocks[message.securityIndex];
  if (security === undefined || security.namespaceURI !== WSSE_NS || security.localName !== "Security")
    return undefined;
  const signature = children(security)[plan.index];
  const signedInfo = signature === undefined ? undefined : children(signature)[0];
  if (signature?.namespaceURI !== DS_NS || signedInfo?.localName !== "SignedInfo") return undefined;
  // The header alone (step 2) has no Body: its own stand-in.
  return { security, signature, signedInfo, body: body ?? envelope, blocks };
}

/** The envelope's (first) Header and its one Body among its child elements `parts`. */
function envelopeParts(
  parts: readonly Element[],
  envelopeNs: string,
): { header: Element | undefined; body: Element | undefined } {
  const isPart = (e: Element, local: string) => e.namespaceURI === envelopeNs && e.localName === local;
  const bodies = parts.filter((p) => isPart(p, "Body"));
  // XSW: a second Body, one of which would be verified and the other decoded.
  if (bodies.length > 1) throw wsseFault("InvalidSecurity", "the envelope has more than one env:Body");
  return { header: parts.find((p) => isPart(p, "Header")), body: bodies[0] };
}

/**
 * Every element by ID, below the `[element, depth]` pairs `stack` starts with: wsu:Id (WS-Security 1.1 §4), xml:id and the unqualified `Id`, `ID` and
 * `id` signers use. XSW: an ID held by two elements is refused, whichever a reference would find.
 */
function identifiers(stack: [Element, number][], maxDepth: number): Map<string, Element> {
  const ids = new Map<string, Element>();
  while (stack.length > 0) {
    const [element, depth] = stack.pop() as [Element, number];
    if (depth > maxDepth)
      throw wsseFault("InvalidSecurity", `the message nests deeper than ${maxDepth} elements`);
    const attrs = element.attributes;
    for (let i = 0; i < attrs.length; i++) {
      const a = attrs.item(i) as Attr;
      const ns = a.namespaceURI ?? "";
      const isId =
        (ns === WSU_NS && a.localName === "Id") ||
        (ns === XML_NS && a.localName === "id") ||
        (ns === "" && (a.localName === "Id" || a.localName === "ID" || a.localName === "id"));
      if (!isId) continue;
      if (ids.has(a.value) && ids.get(a.value) !== element) {
        throw wsseFault("InvalidSecurity", `two elements have the Id "${a.value.slice(0, 64)}"`);
      }
      ids.set(a.value, element);
    }
    for (const child of children(element)) stack.push([child, depth + 1]);
  }
  return ids;
}

function children(element: Element): Element[] {
  const out: Element[] = [];
  for (let n = element.firstChild; n !== null; n = n.nextSibling)
    if (n.nodeType === 1) out.push(n as Element);
  return out;
}

function contains(ancestor: Node, node: Node): boolean {
  for (let n: Node | null = node; n !== null; n = n.parentNode) if (n === ancestor) return true;
  return false;
}

/** A DOM of text this node's own parser already accepted (no DTD, no processing instruction). */
function parse(text: string): Document {
  const fail = (msg: unknown) => {
    throw wsseFault(
      "InvalidSecurity",
      `the message cannot be read for its signature (${String(msg).slice(0, 80)})`,
    );
  };
  // A variable, not a literal: the option is xmldom's (0.8), missing from its own declarations.
  const options = {
    errorHandler: { warning: () => {}, error: fail, fatalError: fail },
    normalizeLineEndings: xml10LineEnds,
  };
  return new DOMParser(options).parseFromString(text, "text/xml") as unknown as Document;
}

/**
 * XML 1.0 §2.11: CR LF and a lone CR are read as LF. xmldom's default also reads U+0085 and
 * U+2028 as LF, which only XML 1.1 does: a signed text holding either would not digest as signed.
 * @see https://www.w3.org/TR/xml/#sec-line-ends
 */
function xml10LineEnds(text: string): string {
  return text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
}

/**
 * The signature's place in `head`: an envelope whose one child element is the Header. Undefined
 * when `head` does not parse or is not that.
 */
function headerPart(
  head: string,
  message: SignedMessage,
  plan: SignaturePlan,
): (Omit<Located, "body"> & { envelope: Element }) | undefined {
  let doc: Document;
  try {
    doc = parse(head);
  } catch {
    return undefined;
  }
  const envelope = doc.documentElement;
  if (envelope === null || children(envelope).length !== 1) return undefined;
  const located = locate(doc, message, plan);
  return located === undefined ? undefined : { ...located, envelope };
}
