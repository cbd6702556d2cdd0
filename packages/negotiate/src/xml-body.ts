import { UNBOUNDED_XML_RULES, XmlReadError, XmlReader, type XmlTag } from "@svc/kernel/internal";

/**
 * A parsed XML element: attributes as `@name` (namespace declarations left out), text as `#text`
 * when mixed, repeated children as arrays, an element that is `xsi:nil` (and nothing else) `null`.
 */
export type XmlValue = string | null | { [name: string]: XmlValue | XmlValue[] };

/** The XML Schema instance namespace, whose `nil` attribute says an element has no value. */
const XSI_NAMESPACE = "http://www.w3.org/2001/XMLSchema-instance";

interface Frame {
  name: string;
  obj: Record<string, XmlValue | XmlValue[]>;
  text: string;
  children: number;
  /** The prefixes this element binds (`xmlns:p`), unbound again when it closes. */
  declared: string[] | undefined;
  /** `xsi:nil` is true: the element must be empty, and is `null` when it has no other attribute. */
  nil: boolean;
  /** Attributes other than namespace declarations and `xsi:nil`. */
  attributes: number;
  /** Under `xml:space="preserve"` (XML 1.0 §2.10), its own or inherited: white space is kept. */
  preserve: boolean;
}

/**
 * A well-formed document (XML 1.0 §2.1) that breaks the xsi:nil rules of XML Schema Part 1
 * (§2.6.2, §3.3.4): not malformed, but not valid, so it is told apart from a well-formedness error.
 */
export class XmlNilError extends Error {
  override name = "XmlNilError";
}

/**
 * A well-formed document this parser refuses by policy, not by the grammar: a document type
 * declaration (XML 1.0 §2.8 allows one; it is refused to shut out entity expansion and external
 * entities), nesting deeper than the limit, or an XML declaration naming a version other than
 * 1.0. Not malformed, so told apart from a well-formedness error.
 */
export class XmlRefusedError extends Error {
  override name = "XmlRefusedError";
  /** Which rule refused it (`dtd`, `depth`, `version`, ...), as the kernel's reader names it. */
  readonly problem: string;
  constructor(message: string, problem = "refused") {
    super(message);
    this.problem = problem;
  }
}

/**
 * Builds plain objects from the shared reader's events (`@svc/kernel/internal`, which refuses what
 * is not well-formed, a DOCTYPE, nesting past the depth and a version other than 1.0). The first
 * xsi:nil rule broken is kept in `invalid`, reported only if the document is well-formed: XML 1.0
 * §1.2 makes a well-formedness error fatal whatever else was found.
 */
class XmlBuilder {
  readonly stack: Frame[] = [];
  /**
   * Namespaces in XML 1.0 §6.1: a declaration's scope is its element and everything inside it,
   * an inner one overriding; the URIs bound to each prefix, innermost last. Only prefixed
   * declarations: "Default namespace declarations do not apply directly to attribute names" (§6.2).
   */
  readonly bindings = new Map<string, string[]>();
  result: Record<string, XmlValue> | undefined;
  invalid: XmlNilError | undefined;

  constructor(
    /** Where the parser is, for a message: `line 1, column 9`. */
    private readonly where: () => string,
  ) {}

  /** An xsi:nil rule broken: reported only if the document turns out well-formed. */
  nilRule(message: string): void {
    this.invalid ??= new XmlNilError(message);
  }

  open(tag: XmlTag<false>): void {
    const { stack } = this;
    const obj: Record<string, XmlValue | XmlValue[]> = {};
    const parent = stack[stack.length - 1];
    const frame: Frame = {
      name: tag.name,
      obj,
      text: "",
      children: 0,
      declared: undefined,
      nil: false,
      attributes: 0,
      preserve: spaceHandling(tag.attributes["xml:space"], parent?.preserve ?? false),
    };
    const entries = Object.entries(tag.attributes);
    for (const [k, v] of entries) {
      // Namespaces in XML 1.0 §3: `xmlns` and `xmlns:p` are namespace declarations, "attributes"
      // only in the syntax of XML 1.0; they bind a prefix, they are not data, so they never
      // become `@xmlns` keys (the xsi declaration this package's own XML writes included).
      if (isDeclaration(k)) {
        // The element's own declarations are in scope for its attributes (§6.1).
        if (k.startsWith("xmlns:")) {
          const prefix = k.slice(6);
          const uris = this.bindings.get(prefix);
          if (uris) uris.push(String(v));
          else this.bindings.set(prefix, [String(v)]);
          if (frame.declared) frame.declared.push(prefix);
          else frame.declared = [prefix];
        }
      } else {
        obj[`@${k}`] = String(v);
      }
    }
    let nils = 0;
    for (const [k, v] of entries) {
      if (isDeclaration(k)) continue;
      const colon = k.indexOf(":");
      // §4: a prefixed attribute is in the namespace its prefix is bound to, compared as strings
      // (§2.3); an unbound prefix, or one bound elsewhere, is not the XML Schema instance.
      if (
        colon > 0 &&
        k.slice(colon + 1) === "nil" &&
        this.bindings.get(k.slice(0, colon))?.at(-1) === XSI_NAMESPACE
      ) {
        nils++;
        frame.nil = xsdBoolean(String(v), (message) => this.nilRule(`${message} (${this.where()})`));
      } else {
        frame.attributes++;
      }
    }
    // §6.3: no element may have two attributes with the same expanded name.
    if (nils > 1) this.nilRule(`two xsi:nil attributes on one element (${this.where()})`);
    if (parent) parent.children++;
    stack.push(frame);
  }

  text(t: string): void {
    const top = this.stack[this.stack.length - 1];
    if (top) top.text += t;
  }

  close(): void {
    const frame = this.stack.pop();
    if (!frame) return;
    if (frame.declared) for (const prefix of frame.declared) this.bindings.get(prefix)?.pop();
    let value: XmlValue;
    if (frame.nil) {
      // XML Schema Part 1 §2.6.2: "An element may be ·valid· without content if it has the
      // attribute xsi:nil with the value true. An element so labeled must be empty, but can carry
      // attributes if permitted by the corresponding complex type." Empty: no character or
      // element children (§3.3.4, Element Locally Valid (Element) clause 3.2.1), whitespace
      // included; a comment is neither. With no attribute of its own it is null; one that carries
      // attributes stays the object of them, as before, since null would drop them.
      if (frame.children > 0 || frame.text !== "") {
        this.nilRule(
          `an element with xsi:nil="true" has content (${this.where()}); a nil element must be empty`,
        );
      }
      value = frame.attributes === 0 ? null : frameValue(frame);
    } else {
      value = frameValue(frame);
    }
    const parent = this.stack[this.stack.length - 1];
    if (!parent) {
      this.result = { [frame.name]: value };
      return;
    }
    // Own properties only: an element named `constructor` or `toString` is not already there
    // (the function it would inherit is not a first value to append to), and one named
    // `__proto__` is a key like any other, as JSON.parse makes it, not the object's prototype.
    const existing = Object.hasOwn(parent.obj, frame.name) ? parent.obj[frame.name] : undefined;
    if (existing === undefined) setOwn(parent.obj, frame.name, value);
    else if (Array.isArray(existing)) existing.push(value);
    else setOwn(parent.obj, frame.name, [existing, value]);
  }
}

/**
 * The value of an `xsi:nil` attribute, of type boolean (XML Schema Part 1 §3.2.7): XML Schema
 * Part 2 §3.2.2.1 "{true, false, 1, 0}", its whitespace collapsed (§4.3.6), so leading and
 * trailing spaces, tabs and line breaks are dropped. Any other value is reported and read false.
 */
function xsdBoolean(raw: string, report: (message: string) => void): boolean {
  const value = trimXmlSpace(raw);
  if (value === "true" || value === "1") return true;
  if (value !== "false" && value !== "0") report("xsi:nil is not one of true, false, 1, 0");
  return false;
}

/**
 * Whether white space is kept in an element, from its `xml:space` attribute and its parent's
 * handling. XML 1.0 §2.10: "The value "default" signals that applications' default white-space
 * processing modes are acceptable for this element; the value "preserve" indicates the intent
 * that applications preserve all the white space. This declared intent is considered to apply
 * to all elements within the content of the element where it is specified, unless overridden
 * with another instance of the xml:space attribute." The `xml` prefix is bound by definition
 * (Namespaces in XML 1.0 §3), so the name as written is the attribute. Without a DTD the
 * attribute is undeclared (CDATA, never normalised), so only the exact values count; any other
 * value leaves the inherited handling.
 */
function spaceHandling(value: string | undefined, inherited: boolean): boolean {
  if (value === "preserve") return true;
  if (value === "default") return false;
  return inherited;
}

/**
 * A namespace declaration (Namespaces in XML 1.0 §3 `NSAttName`: `xmlns` or `xmlns:` and a
 * prefix). Names are case-sensitive (XML 1.0 §2.3): `XMLNS:p` is an attribute with a reserved
 * prefix, not a declaration.
 */
function isDeclaration(name: string): boolean {
  return name === "xmlns" || name.startsWith("xmlns:");
}

/** XML 1.0 §2.3 S: space, tab, carriage return, line feed. */
function isXmlSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}

/**
 * `text` without leading and trailing XML white space: XML 1.0 §2.3 `S ::= (#x20 | #x9 | #xD |
 * #xA)+`, and nothing else. Not `String.prototype.trim()`, which also strips U+00A0, U+3000,
 * U+FEFF, U+2028 and the other Unicode spaces: in XML those are character data (§2.4), a
 * client's no-break space as much as its letters.
 */
function trimXmlSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isXmlSpace(text.charCodeAt(start))) start++;
  while (end > start && isXmlSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function setOwn(
  obj: Record<string, XmlValue | XmlValue[]>,
  name: string,
  value: XmlValue | XmlValue[],
): void {
  if (name === "__proto__") {
    Object.defineProperty(obj, name, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[name] = value;
  }
}

/**
 * A text-only element is its text, as it is; otherwise its object, with `#text` when the content
 * is mixed. The XML white space around mixed content (the indentation between child elements) is
 * dropped, only XML white space (XML 1.0 §2.3 S), so `<a x="1">&#xA0;</a>` keeps its no-break space;
 * under `xml:space="preserve"` (XML 1.0 §2.10) none is, and `#text` is the text as sent.
 */
function frameValue(frame: Frame): XmlValue {
  const text = frame.preserve ? frame.text : trimXmlSpace(frame.text);
  if (frame.children === 0 && Object.keys(frame.obj).length === 0) return frame.text;
  return text === "" ? frame.obj : Object.assign(frame.obj, { "#text": text });
}

/**
 * Parses XML into plain objects with the shared XML reader (`@svc/kernel/internal`): elements become keys, repeated elements arrays,
 * attributes `@name`, text-only elements strings. Names are the qualified names the document
 * wrote (Namespaces in XML 1.0 §4), prefix included, for elements and attributes alike
 * (`<s:Body>` → `s:Body`, `p:id="1"` → `@p:id`); namespace declarations (`xmlns`, `xmlns:p`) are
 * not data and are left out. An element with `xsi:nil="true"` (the prefix bound to the XML
 * Schema instance namespace) and no other attribute is `null`; such an element with content,
 * or an `xsi:nil` that is not a boolean, is refused with an {@link XmlNilError} (a document that
 * is not well-formed as well gets the well-formedness error). A DOCTYPE is refused outright, which shuts out
 * entity-expansion and external-entity attacks before they start, and so are nesting deeper than
 * `maxDepth` and an XML declaration naming a version other than 1.0, each with an
 * {@link XmlRefusedError} (the document may be well-formed).
 *
 * @example parseXmlBody("<a x='1'><b>2</b><b>3</b></a>") // → { a: { "@x": "1", b: ["2", "3"] } }
 * @see https://www.w3.org/TR/xml/
 */
export function parseXmlBody(source: string, maxDepth = 32): Record<string, XmlValue> {
  const builder: XmlBuilder = new XmlBuilder(() => `line ${reader.line}, column ${reader.column}`);
  // Names as written (`s:Body`, `@p:id`): no namespace processing, so an undeclared prefix is
  // not refused. XML 1.1 (its §2.2, §2.11, §4.3.4) is another language: NEL and LINE SEPARATOR
  // are line ends, references to C0 controls are characters; reading it as 1.0 (XML 1.0 §2.8
  // lets a 1.0 processor try) would turn its NEL line ends into data, so it is refused.
  const reader: XmlReader<false> = new XmlReader({ namespaces: false, otherVersions: "refuse" }, builder);
  // XML 1.0 §2.6: processing instructions are for applications; a body's are read past.
  reader.rules = { ...UNBOUNDED_XML_RULES, maxDepth, instructions: "skip" };
  try {
    // XML 1.0 §1.2: after a fatal error the processor "MUST NOT continue normal processing"; the
    // reader throws at the first failure, well-formedness or policy refusal, so nothing later in
    // the source can change what is thrown, and the rest of a hostile body is not read.
    reader.write(source);
    reader.close();
  } catch (e) {
    throw refusal(e, () => `line ${reader.line}, column ${reader.column}`);
  }
  if (builder.invalid) throw builder.invalid;
  if (!builder.result) throw new Error("XML document has no root element");
  return builder.result;
}

/**
 * The reader's refusal in this package's words: a policy refusal (DOCTYPE, depth, version) as an
 * {@link XmlRefusedError}, a well-formedness error (XML 1.0 §2.1) with where it broke and the
 * parser's message, which can quote the document (`unclosed tag: <name>`), kept as the cause for
 * logs only.
 */
function refusal(e: unknown, where: () => string): Error {
  if (e instanceof XmlReadError) {
    if (e.problem === "dtd")
      return new XmlRefusedError("a document type declaration (DOCTYPE) is not accepted", "dtd");
    if (e.problem !== "malformed") return new XmlRefusedError(e.message, e.problem);
    return new Error(e.message, { cause: e.cause });
  }
  return new Error(`not well-formed XML (${where()})`, { cause: e });
}
