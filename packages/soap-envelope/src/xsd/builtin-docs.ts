// Schema documents a WSDL may `xs:import` by namespace alone (no schemaLocation), because every
// SOAP toolkit knows them: the attributes of the XML namespace (XML 1.0 §2.12, §2.10; xml:base,
// xml:id), the SOAP 1.1 encoding types that SOAP-ENC arrays restrict, `wsdl:arrayType`, and the
// SOAP 1.2 encoding's attributes. Only the parts schemas
// refer to are written here; they are compiled like any other source when a schema imports
// their namespace and no document of the contract declares it.

export const XML_NS = "http://www.w3.org/XML/1998/namespace";
export const SOAP_ENC_NS = "http://schemas.xmlsoap.org/soap/encoding/";
/** WSDL 1.1 §5: `wsdl:arrayType` annotates the attribute of a SOAP-ENC array restriction. */
export const WSDL_NS = "http://schemas.xmlsoap.org/wsdl/";
/** SOAP 1.2 Part 2 §3: the SOAP 1.2 encoding's attributes. */
export const SOAP12_ENC_NS = "http://www.w3.org/2003/05/soap-encoding";

const WSDL_SCHEMA = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="${WSDL_NS}">
  <xs:attribute name="arrayType" type="xs:string"/>
</xs:schema>`;

/** Content of any elements, each validated where a declaration of its name is known (`lax`). */
const ANY_ELEMENTS =
  '<xs:sequence><xs:any namespace="##any" minOccurs="0" maxOccurs="unbounded" processContents="lax"/></xs:sequence>';

/** Both encodings' `Struct`: any elements, and the encoding's `commonAttributes` (`tns:`). */
const STRUCT = `<xs:complexType name="Struct">
    ${ANY_ELEMENTS}
    <xs:attributeGroup ref="tns:commonAttributes"/>
  </xs:complexType>`;

/**
 * SOAP 1.2 Part 2 §3.1: the encoding's attributes (`enc:id`, `enc:ref`, `enc:itemType`,
 * `enc:arraySize`, `enc:nodeType`), its `Array` and `Struct`, and its simple types as SOAP 1.1's
 * (below). `arrayType` is no SOAP 1.2 name: gSOAP writes SOAP 1.1's `arrayType` in the SOAP 1.2
 * namespace in the WSDLs it generates (`<attribute ref="SOAP-ENC:arrayType" wsdl:arrayType=..>`),
 * so it is declared for those contracts to load; it is never read on the wire.
 */
const SOAP12_ENC_SCHEMA =
  () => `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="${SOAP12_ENC_NS}" targetNamespace="${SOAP12_ENC_NS}">
  <xs:attribute name="id" type="xs:ID"/>
  <xs:attribute name="ref" type="xs:IDREF"/>
  <xs:attribute name="nodeType" type="xs:NCName"/>
  <xs:attribute name="itemType" type="xs:QName"/>
  <xs:attribute name="arraySize" type="xs:string"/>
  <xs:attribute name="arrayType" type="xs:string"/>
  <xs:attributeGroup name="commonAttributes">
    <xs:attribute ref="tns:id"/><xs:attribute ref="tns:ref"/>
    <xs:anyAttribute namespace="##other" processContents="lax"/>
  </xs:attributeGroup>
  <xs:complexType name="Array">
    ${ANY_ELEMENTS}
    <xs:attribute ref="tns:arraySize"/><xs:attribute ref="tns:itemType"/>
    <xs:attributeGroup ref="tns:commonAttributes"/>
  </xs:complexType>
  ${STRUCT}
  ${simpleTypes()}
</xs:schema>`;

const XML_SCHEMA = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="${XML_NS}">
  <xs:attribute name="lang" type="xs:language"/>
  <xs:attribute name="space"><xs:simpleType><xs:restriction base="xs:NCName">
    <xs:enumeration value="default"/><xs:enumeration value="preserve"/>
  </xs:restriction></xs:simpleType></xs:attribute>
  <xs:attribute name="base" type="xs:anyURI"/>
  <xs:attribute name="id" type="xs:ID"/>
</xs:schema>`;

/**
 * SOAP 1.1 §5.2.1: the encoding's simple types (`soapenc:string` ...) are the XSD built-ins of
 * the same name, as the SOAP 1.2 encoding's are; here each is that built-in, restricted by
 * nothing, so a value of one is the value of its XSD counterpart. (Their schema documents give
 * them the `id`/`href` attributes of §5.4.1, which only multi-reference values carry: the encoded
 * reader resolves those before it validates, encoding/soap-encoding.ts.)
 */
const SIMPLE = [
  "string",
  "boolean",
  "float",
  "double",
  "decimal",
  "integer",
  "long",
  "int",
  "short",
  "byte",
  "unsignedLong",
  "unsignedInt",
  "unsignedShort",
  "unsignedByte",
  "dateTime",
  "date",
  "time",
  "base64Binary",
  "hexBinary",
  "anyURI",
  "QName",
  "normalizedString",
  "token",
  "language",
  "Name",
  "NCName",
  "ID",
  "IDREF",
  "duration",
  "gYearMonth",
  "gYear",
  "gMonthDay",
  "gDay",
  "gMonth",
  "positiveInteger",
  "nonPositiveInteger",
  "negativeInteger",
  "nonNegativeInteger",
];

/** The simple types, and SOAP 1.1 §5.2.3's `base64` (a `base64Binary`). */
function simpleTypes(): string {
  return [...SIMPLE.map((t) => [t, t]), ["base64", "base64Binary"]]
    .map(
      ([name, base]) => `<xs:simpleType name="${name}"><xs:restriction base="xs:${base}"/></xs:simpleType>`,
    )
    .join("\n  ");
}

const SOAP_ENC_SCHEMA =
  () => `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="${SOAP_ENC_NS}" targetNamespace="${SOAP_ENC_NS}">
  <xs:attributeGroup name="commonAttributes">
    <xs:attribute name="id" type="xs:ID"/><xs:attribute name="href" type="xs:anyURI"/>
    <xs:anyAttribute namespace="##other" processContents="lax"/>
  </xs:attributeGroup>
  <xs:attribute name="root"><xs:simpleType><xs:restriction base="xs:boolean">
    <xs:pattern value="0|1"/></xs:restriction></xs:simpleType></xs:attribute>
  <xs:attribute name="arrayType" type="xs:string"/>
  <xs:attribute name="offset" type="xs:string"/>
  <xs:attribute name="position" type="xs:string"/>
  <xs:attributeGroup name="arrayAttributes">
    <xs:attribute ref="tns:arrayType"/><xs:attribute ref="tns:offset"/>
  </xs:attributeGroup>
  <xs:complexType name="Array">
    ${ANY_ELEMENTS}
    <xs:attributeGroup ref="tns:arrayAttributes"/><xs:attributeGroup ref="tns:commonAttributes"/>
  </xs:complexType>
  ${STRUCT}
  ${simpleTypes()}
</xs:schema>`;

/** The built-in schema document of a namespace, when there is one. */
export function builtinSchemaText(namespace: string): string | undefined {
  if (namespace === XML_NS) return XML_SCHEMA;
  if (namespace === SOAP_ENC_NS) return SOAP_ENC_SCHEMA();
  if (namespace === WSDL_NS) return WSDL_SCHEMA;
  if (namespace === SOAP12_ENC_NS) return SOAP12_ENC_SCHEMA();
  return undefined;
}

/**
 * The namespaces of the built-in documents, added to every schema set that declares none of its
 * own for them: many contracts refer to `soapenc:Array` or `xml:lang` without importing them.
 */
export const BUILTIN_NAMESPACES = [XML_NS, SOAP_ENC_NS, WSDL_NS, SOAP12_ENC_NS];
