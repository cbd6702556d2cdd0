import type { ParsedElement, ResolvedXmlLimits } from "./xml.js";

// A fast path for the documents SOAP clients send: an optional XML declaration and elements with
// ASCII names, quoted attributes and plain text, nothing else. It builds the same tree saxes
// would, and returns undefined as soon as the document holds anything beyond that subset
// (a comment, a CDATA section, an entity or character reference, a DOCTYPE, a processing
// instruction, a carriage return, a control or non-BMP character, a non-ASCII name, a broken tag,
// a limit reached): saxes then parses the whole document and decides, so every error and every
// refusal is still saxes' (XML 1.0 §2, Namespaces in XML 1.0 §3-§6). The subset is chosen so
// that everything it accepts is well-formed and namespace-well-formed.

const XMLNS_URI = "http://www.w3.org/2000/xmlns/";
const XML_URI = "http://www.w3.org/XML/1998/namespace";

/** XML 1.0 §2.8 XMLDecl with version 1.0, an EncName (§4.3.3) and SDDecl (§2.9), at offset 0. */
const XML_DECL =
  /^<\?xml[ \t\n]+version[ \t\n]*=[ \t\n]*(?:"1\.0"|'1\.0')(?:[ \t\n]+encoding[ \t\n]*=[ \t\n]*(?:"[A-Za-z][A-Za-z0-9._-]*"|'[A-Za-z][A-Za-z0-9._-]*'))?(?:[ \t\n]+standalone[ \t\n]*=[ \t\n]*(?:"(?:yes|no)"|'(?:yes|no)'))?[ \t\n]*\?>/;

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const EQ = 0x3d;
const COLON = 0x3a;
const QUOT = 0x22;
const APOS = 0x27;

/**
 * NCName characters (Namespaces §3), restricted to ASCII: bit 1 marks those that may start a
 * name (letters, `_`), bit 2 those that may follow (also digits, `-`, `.`). One table lookup.
 */
const NAME_CHARS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const letter = (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
  const other = (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e;
  NAME_CHARS[c] = letter ? 3 : other ? 2 : 0;
}

function isNameStart(c: number): boolean {
  return ((NAME_CHARS[c] as number) & 1) !== 0;
}

function isNameChar(c: number): boolean {
  return ((NAME_CHARS[c] as number) & 2) !== 0;
}

/** In an attribute value: `<`, references, any white space but #x20 (§3.3.3), controls, surrogates and above. */
const NOT_PLAIN_IN_VALUE = /[^\x20-\x25\x27-\x3b\x3d-\ud7ff]/;
/** In text: references, controls but tab and line feed, surrogates and above; `]]>` separately. */
const NOT_PLAIN_IN_TEXT = /[^\t\n\x20-\x25\x27-\ud7ff]/;
const NOT_BLANK = /[^ \t\n]/;

/** XML 1.0 §2.3 S without #xD (a carriage return goes to saxes for line-end handling, §2.11). */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09;
}

/** The parse of one document; its fields are the cursor and the open elements. */
class FastParse {
  pos = 0;
  elements = 0;
  root: ParsedElement | undefined;
  readonly stack: ParsedElement[] = [];
  readonly names: string[] = [];
  constructor(
    readonly s: string,
    readonly limits: ResolvedXmlLimits,
    readonly baseScope: Readonly<Record<string, string>>,
  ) {}

  /** The end of the QName (`prefix:local` or `local`) at `pos`, or -1. */
  nameEnd(): number {
    const s = this.s;
    let i = this.pos;
    if (!isNameStart(s.charCodeAt(i))) return -1;
    i++;
    while (isNameChar(s.charCodeAt(i))) i++;
    if (s.charCodeAt(i) === COLON) {
      i++;
      if (!isNameStart(s.charCodeAt(i))) return -1;
      i++;
      while (isNameChar(s.charCodeAt(i))) i++;
    }
    return i;
  }

  skipSpace(): number {
    const start = this.pos;
    while (isSpace(this.s.charCodeAt(this.pos))) this.pos++;
    return this.pos - start;
  }

  /** Text up to the next `<`, appended as saxes' text event would be; false to give up. */
  text(): boolean {
    const s = this.s;
    const start = this.pos;
    let i = s.indexOf("<", start);
    if (i === -1) i = s.length;
    const text = s.slice(start, i);
    if (NOT_PLAIN_IN_TEXT.test(text)) return false;
    const blank = !NOT_BLANK.test(text);
    const top = this.stack[this.stack.length - 1];
    this.pos = i;
    if (top === undefined) return blank; // outside the root only white space
    if (i === s.length) return false; // an element left open
    if (!blank && text.includes("]]>")) return false; // §2.4
    top.text += text;
    if (!blank && top.children.length > 0) top.mixed = true;
    return true;
  }

  /** A start tag at `pos` (just after `<`); false to give up. */
  startTag(): boolean {
    const s = this.s;
    const end = this.nameEnd();
    if (end === -1) return false;
    const qname = s.slice(this.pos, end);
    this.pos = end;
    this.elements++;
    if (this.elements > this.limits.maxElements || this.stack.length >= this.limits.maxDepth) return false;
    const raw: string[] = [];
    let selfClosing = false;
    for (;;) {
      const spaced = this.skipSpace() > 0;
      const c = s.charCodeAt(this.pos);
      if (c === GT) {
        this.pos++;
        break;
      }
      if (c === SLASH && s.charCodeAt(this.pos + 1) === GT) {
        this.pos += 2;
        selfClosing = true;
        break;
      }
      if (!spaced || !this.attribute(raw)) return false;
      if (raw.length / 2 > this.limits.maxAttributes) return false;
    }
    const element = this.element(qname, raw);
    if (element === undefined) return false;
    const parent = this.stack[this.stack.length - 1];
    if (parent) {
      if (parent.text.length > 0 && /\S/.test(parent.text)) parent.mixed = true;
      parent.children.push(element);
    } else if (this.root === undefined) {
      this.root = element;
    } else {
      return false; // a second root element
    }
    if (!selfClosing) {
      this.stack.push(element);
      this.names.push(qname);
    }
    return true;
  }

  /** One `name="value"` pair into `raw`; false to give up. */
  attribute(raw: string[]): boolean {
    const s = this.s;
    const end = this.nameEnd();
    if (end === -1) return false;
    const name = s.slice(this.pos, end);
    this.pos = end;
    this.skipSpace();
    if (s.charCodeAt(this.pos) !== EQ) return false;
    this.pos++;
    this.skipSpace();
    const quote = s.charCodeAt(this.pos);
    if (quote !== QUOT && quote !== APOS) return false;
    const start = this.pos + 1;
    const i = s.indexOf(quote === QUOT ? '"' : "'", start);
    if (i === -1) return false;
    const value = s.slice(start, i);
    // §3.3.3: no references and no white space but #x20, so the value needs no normalisation.
    if (NOT_PLAIN_IN_VALUE.test(value)) return false;
    for (let k = 0; k < raw.length; k += 2) if (raw[k] === name) return false;
    raw.push(name, value);
    this.pos = i + 1;
    return true;
  }

  /** The element with its namespace scope and expanded attributes; undefined to give up. */
  element(qname: string, raw: readonly string[]): ParsedElement | undefined {
    const parentScope = this.stack[this.stack.length - 1]?.scope ?? this.baseScope;
    let scope = parentScope;
    for (let k = 0; k < raw.length; k += 2) {
      const name = raw[k] as string;
      const value = raw[k + 1] as string;
      const prefix = name === "xmlns" ? "" : name.startsWith("xmlns:") ? name.slice(6) : undefined;
      if (prefix === undefined) continue;
      // Namespaces §3: no undeclaring a prefix in 1.0, `xml` and `xmlns` are reserved.
      if (value !== value.trim() || (prefix !== "" && value === "")) return undefined;
      if (prefix === "xml" || prefix === "xmlns" || value === XML_URI || value === XMLNS_URI)
        return undefined;
      if (scope === parentScope) scope = Object.create(parentScope) as Record<string, string>;
      (scope as Record<string, string>)[prefix] = value;
    }
    const colon = qname.indexOf(":");
    const prefix = colon === -1 ? "" : qname.slice(0, colon);
    if (prefix === "xml" || prefix === "xmlns") return undefined;
    const namespace = scope[prefix];
    if (namespace === undefined && prefix !== "") return undefined;
    const attributes: Record<string, string> = {};
    for (let k = 0; k < raw.length; k += 2) {
      const name = raw[k] as string;
      if (name === "xmlns" || name.startsWith("xmlns:")) continue;
      const c = name.indexOf(":");
      let key = name;
      if (c !== -1) {
        const p = name.slice(0, c);
        const uri = p === "xml" ? undefined : scope[p];
        if (uri === undefined) return undefined;
        key = `{${uri}}${name.slice(c + 1)}`;
      }
      if (Object.hasOwn(attributes, key)) return undefined; // §6.3: unique expanded names
      attributes[key] = raw[k + 1] as string;
    }
    return {
      namespace: namespace ?? "",
      localName: colon === -1 ? qname : qname.slice(colon + 1),
      attributes,
      children: [],
      text: "",
      scope,
      mixed: false,
    };
  }

  /** An end tag at `pos` (just after `</`); false to give up. */
  endTag(): boolean {
    const end = this.nameEnd();
    if (end === -1 || this.s.slice(this.pos, end) !== this.names[this.names.length - 1]) return false;
    this.pos = end;
    this.skipSpace();
    if (this.s.charCodeAt(this.pos) !== GT) return false;
    this.pos++;
    this.names.pop();
    this.stack.pop();
    return true;
  }
}

/**
 * The document's root element when the whole document lies in the plain subset described above,
 * else undefined (saxes parses it then).
 */
export function parseSimpleXml(
  s: string,
  limits: ResolvedXmlLimits,
  baseScope: Readonly<Record<string, string>>,
): ParsedElement | undefined {
  const p = new FastParse(s, limits, baseScope);
  if (s.startsWith("<?xml")) {
    const decl = XML_DECL.exec(s);
    if (decl === null) return undefined;
    p.pos = decl[0].length;
  }
  while (p.pos < s.length) {
    if (s.charCodeAt(p.pos) !== LT) {
      if (!p.text()) return undefined;
      continue;
    }
    p.pos++;
    if (s.charCodeAt(p.pos) === SLASH) {
      p.pos++;
      if (p.names.length === 0 || !p.endTag()) return undefined;
    } else if (!p.startTag()) {
      return undefined;
    }
  }
  return p.stack.length === 0 ? p.root : undefined;
}
