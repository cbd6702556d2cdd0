import { trimXml } from "../xml/space.js";
import { SOAP_ENC_NS, SOAP12_ENC_NS } from "../xsd/builtin-docs.js";
import { XS_NS } from "../xsd/model.js";

// SOAP encoding (SOAP 1.1 §5, SOAP 1.2 Part 2 §3) for operations bound with use="encoded". A
// request is read into the literal form the contract's compiled schema validates, and a result,
// written by the schema's encoder, gains what encoded readers expect. Nothing here runs for a
// literal operation.
//
// Read (readEncoded): multi-reference values (`href="#id"` to an element with `id`, SOAP 1.1
// §5.4.1; `enc:ref` to `enc:id`, SOAP 1.2 Part 2 §3.1.5) are copied into the accessors that
// refer to them, so the value is a tree: a reference back to an element it is inside of (a
// cycle) is refused, as is a copy past the message's element or depth limits. `xsi:type` naming
// the declared type (or `soapenc:X` for `xs:X`) is dropped; on an `xs:anyType` accessor it picks
// the type; naming a type derived from the declared one it is kept, for the schema to check. A
// SOAP-ENC array's members take the name the schema's restriction gives them, whatever the wire
// calls them (SOAP 1.1 §5.4.2), and are checked against the declared item type and size. The
// encoding's own attributes are then removed.
//
// Write (writeEncoded): each accessor of a named type gets `xsi:type`, an array its
// `SOAP-ENC:arrayType` (SOAP 1.2: `enc:itemType` and `enc:arraySize`), the wrapper the
// `encodingStyle` of the binding's encoding (SOAP 1.1 §4.1.1, SOAP 1.2 Part 1 §5.1.1).

/** The SOAP encoding in use: SOAP 1.1's or SOAP 1.2's. */
export type EncodingVersion = "1.1" | "1.2";

const SOAP11_ENV = "http://schemas.xmlsoap.org/soap/envelope/";

const SOAP12_ENV = "http://www.w3.org/2003/05/soap-envelope";

/** The encoding URI of each version (SOAP 1.1 §5, SOAP 1.2 Part 2 §3). */
export const ENCODING_URI: Readonly<Record<EncodingVersion, string>> = {
  "1.1": SOAP_ENC_NS,
  "1.2": SOAP12_ENC_NS,
};

/** The attribute names of one version's encoding. */
export interface Names {
  encoding: string;
  envelope: string;
  id: string;
  ref: string;
  /** The attributes the encoding gives any accessor, removed before validation. */
  own: ReadonlySet<string>;
  encodingStyle: string;
}

export const NAMES: Readonly<Record<EncodingVersion, Names>> = {
  "1.1": {
    encoding: SOAP_ENC_NS,
    envelope: SOAP11_ENV,
    // SOAP 1.1 §5.4.1: `id` and `href` are unqualified attributes.
    id: "id",
    ref: "href",
    own: new Set([
      "id",
      "href",
      ...["root", "arrayType", "offset", "position"].map((a) => `{${SOAP_ENC_NS}}${a}`),
    ]),
    encodingStyle: `{${SOAP11_ENV}}encodingStyle`,
  },
  "1.2": {
    encoding: SOAP12_ENC_NS,
    envelope: SOAP12_ENV,
    id: `{${SOAP12_ENC_NS}}id`,
    ref: `{${SOAP12_ENC_NS}}ref`,
    own: new Set(["id", "ref", "itemType", "arraySize", "nodeType"].map((a) => `{${SOAP12_ENC_NS}}${a}`)),
    encodingStyle: `{${SOAP12_ENV}}encodingStyle`,
  },
};

/** Whether an `encodingStyle` value (a list of URIs, most restrictive first) claims the encoding. */
export function claimsEncoding(value: string, version: EncodingVersion): boolean {
  return trimXml(value)
    .split(/[ \t\r\n]+/)
    .includes(ENCODING_URI[version]);
}

/** The SOAP-ENC simple types that are their XSD namesakes (SOAP 1.1 §5.2.1, SOAP 1.2 Part 2 §3.1). */
export function canonical(name: string): string {
  for (const ns of [SOAP_ENC_NS, SOAP12_ENC_NS]) {
    if (name.startsWith(`{${ns}}`)) {
      const local = name.slice(ns.length + 2);
      if (local === "Array" || local === "Struct") return name;
      return `{${XS_NS}}${local === "base64" ? "base64Binary" : local}`;
    }
  }
  return name;
}

export const ANY_TYPE = `{${XS_NS}}anyType`;
