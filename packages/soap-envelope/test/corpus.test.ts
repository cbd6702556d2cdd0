import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { SchemaCompileError } from "../src/schema.js";
import { loadContract } from "../src/wsdl.js";
import { CORPUS, wsdlFiles } from "./corpus-files.js";

describe("the corpus of real-world WSDLs", () => {
  const files = wsdlFiles(CORPUS);
  const outcomes = files.map((file) => {
    try {
      loadContract(file);
      return { file, loaded: true as const };
    } catch (err) {
      return { file, loaded: false as const, err };
    }
  });
  const loaded = outcomes.filter((o) => o.loaded);

  it("75 WSDLs from node-soap and python-zeep", () => {
    expect(files).toHaveLength(75);
  });

  it("each loads or is refused with a SchemaCompileError naming its file: never a crash", () => {
    for (const o of outcomes) {
      if (o.loaded) continue;
      expect(o.err, relative(CORPUS, o.file)).toBeInstanceOf(SchemaCompileError);
      const problems = (o.err as SchemaCompileError).problems;
      expect(problems.length, relative(CORPUS, o.file)).toBeGreaterThan(0);
      // Each problem says where it is: the WSDL's path, or the schema file and construct.
      for (const problem of problems) expect(problem).toMatch(/^\S+(?:\s+wsdl:types)?[: ]/);
    }
  });

  it("the fraction that loads, and why each of the rest does not (README: Real-world contracts)", () => {
    expect(loaded.map((o) => relative(CORPUS, o.file))).toEqual(LOADS);
    const refused = outcomes.filter((o) => !o.loaded).map((o) => relative(CORPUS, o.file));
    expect(refused).toEqual(Object.keys(WHY).sort());
    for (const o of outcomes) {
      if (o.loaded) continue;
      const file = relative(CORPUS, o.file);
      const reason = REASONS[WHY[file] as keyof typeof REASONS];
      // The first problem says why: the binding's before the types' (loadContract).
      expect((o.err as SchemaCompileError).problems[0], file).toMatch(reason);
    }
  });
});

/**
 * The 32 of 75 that load (30 SOAP 1.1 only, rpcexample.wsdl SOAP 1.2 only, self_referencing.wsdl
 * both versions); 5 of them rpc/encoded.
 */
const LOADS = [
  "node-soap/array_namespace_override.wsdl",
  "node-soap/complex/mixed-sequence.wsdl",
  "node-soap/complex/registration.wsdl",
  "node-soap/cross_schema.wsdl",
  "node-soap/default_namespace.wsdl",
  "node-soap/elementref/foo.wsdl",
  "node-soap/empty_body.wsdl",
  "node-soap/extended_recursive.wsdl",
  "node-soap/extensionBase/foo.wsdl",
  "node-soap/hello.wsdl",
  "node-soap/list_parameter.wsdl",
  "node-soap/multi-service.wsdl",
  "node-soap/non_identifier_chars_in_operation.wsdl",
  "node-soap/nsTypeConflict/main.wsdl",
  "node-soap/recursive.wsdl",
  "node-soap/recursive_with_ref.wsdl",
  "node-soap/recursive_with_ref2.wsdl",
  "node-soap/redefined-ns.wsdl",
  "node-soap/rpcexample.wsdl",
  "node-soap/self_referencing.wsdl",
  "node-soap/strict/CyberSourceTransaction_1.26.wsdl",
  "node-soap/strict/CyberSourceTransaction_1.26_2.wsdl",
  "node-soap/strict/EVacSyncService_SPClient.wsdl",
  "node-soap/strict/ip2tele.wsdl",
  "node-soap/strict/logincms.wsdl",
  "node-soap/strict/one-way.wsdl",
  "node-soap/wsdlImport/main.wsdl",
  "node-soap/wsdl_style_mix.wsdl",
  "node-soap/wsdl_with_restriction_attributes.wsdl",
  "zeep/claim.wsdl",
  "zeep/soap_header.wsdl",
  "zeep/soap_import_main.wsdl",
];

/** Why a contract is refused, as its first problem says it. */
const REASONS = {
  "not namespace-well-formed": /not well-formed XML/,
  "no SOAP port over HTTP":
    /no wsdl:service port with a soap12:binding or soap:binding|this node implements http/,
  "a binding named but not declared": /its binding is not declared/,
  "a type named but not declared": /type \S+ is not declared/,
  "soap:body parts= naming a part the message lacks": /body parts names "[^"]+", which message/,
  "two operations take one element and one action":
    /two operations take \S+ and their soapActions do not tell them apart/,
  "binding operation not in the port type": /is not in the port type/,
  "remote schemaLocation": /remote schemaLocation/,
  "schemaLocation outside the WSDL's folder": /outside the WSDL's directory/,
  "xs:include without schemaLocation": /xs:include without schemaLocation/,
  "XML Schema draft namespace": /2000\/10\/XMLSchema\}schema is not supported/,
  "a header part not declared": /soap:header names part/,
  "an undeclared prefix": /is missing or its prefix is undeclared/,
  "an undeclared message or element": /(message|element) \S+ is not declared/,
} as const;

/** Each refused contract and why (README: Real-world contracts). */
const WHY: Readonly<Record<string, keyof typeof REASONS>> = {
  // Not WSDLs a team could serve: an undeclared prefix (named with its line), a fragment that
  // another WSDL imports, a contract that names what it does not declare.
  "node-soap/attachments.wsdl": "not namespace-well-formed",
  "node-soap/connection/econnrefused.wsdl": "not namespace-well-formed",
  "node-soap/default_namespace_soap12.wsdl": "not namespace-well-formed",
  "node-soap/recursive/file.wsdl": "not namespace-well-formed",
  "node-soap/ws-policy.wsdl": "not namespace-well-formed",
  "node-soap/wsdl_with_attributes.wsdl": "not namespace-well-formed",
  "node-soap/fixedPath/netsuite.wsdl": "no SOAP port over HTTP",
  "node-soap/tnsImportConflict/bar.wsdl": "no SOAP port over HTTP",
  "node-soap/tnsImportConflict/foo.wsdl": "no SOAP port over HTTP",
  "node-soap/wsdlImport/overridden.wsdl": "no SOAP port over HTTP",
  "node-soap/wsdlImport/sub.wsdl": "no SOAP port over HTTP",
  "zeep/http.wsdl": "no SOAP port over HTTP",
  "zeep/soap_import_2.wsdl": "no SOAP port over HTTP",
  "zeep/soap_transport_err.wsdl": "no SOAP port over HTTP",
  "node-soap/Dummy.wsdl": "binding operation not in the port type",
  "node-soap/include_with_duplicated_namespace.wsdl": "binding operation not in the port type",
  "node-soap/schema_with_no_targetnamespace.wsdl": "binding operation not in the port type",
  "node-soap/binding-exception.wsdl": "an undeclared prefix",
  "node-soap/binding_document.wsdl": "an undeclared prefix",
  "node-soap/schemas_without_targetnamespace.wsdl": "an undeclared prefix",
  "node-soap/strict/npe.wsdl": "an undeclared prefix",
  "node-soap/complex/registration-common.wsdl": "an undeclared message or element",
  "node-soap/json_response.wsdl": "an undeclared message or element",
  "node-soap/mergeWithAttributes/main.wsdl": "not namespace-well-formed",
  "node-soap/tnsImportConflict/root.wsdl": "a binding named but not declared",
  "zeep/soap.wsdl": "two operations take one element and one action",
  "node-soap/missing_message_definition.wsdl": "an undeclared message or element",
  "node-soap/recursive2.wsdl": "a header part not declared",
  "node-soap/strict/stockquote.wsdl": "XML Schema draft namespace",
  // A type named but not declared (each named with what is declared under a near name): an
  // element's name as a type (extended_element, perf/order), a fragment cut short (marketo,
  // typeof_null_extend_check, xsdinclude: DummyList is declared in no schema they load), an
  // unprefixed name with no default namespace, which names no namespace (typeref/order).
  "node-soap/extended_element.wsdl": "a type named but not declared",
  "node-soap/marketo.wsdl": "a type named but not declared",
  "node-soap/perf/order.wsdl": "a type named but not declared",
  "node-soap/typeof_null_extend_check.wsdl": "a type named but not declared",
  "node-soap/typeref/order.wsdl": "a type named but not declared",
  "node-soap/xsdinclude/xsd_include.wsdl": "a type named but not declared",
  "node-soap/xsdinclude/xsd_include_inline_xmlns.wsdl": "a type named but not declared",
  // xs:include with location= where XML Schema Part 1 §4.2.1 requires schemaLocation.
  "node-soap/strict/CyberSourceTransaction_1.26_3.wsdl": "xs:include without schemaLocation",
  "node-soap/builtin_types.wsdl": "an undeclared message or element",
  "node-soap/ref_element_same_as_type.wsdl": "soap:body parts= naming a part the message lacks",
  // document/encoded, read as any encoded Body, but the XSD it imports uses the prefixes xsd: and
  // tns: without declaring them.
  "node-soap/strict/ImportSample.wsdl": "not namespace-well-formed",
  // Constructs not yet supported: the schema compiler's.
  "node-soap/strict/stockquote-url.wsdl": "remote schemaLocation",
  "node-soap/xsdinclude/xsd_include_http.wsdl": "remote schemaLocation",
  "node-soap/strict/Netsuite.wsdl": "schemaLocation outside the WSDL's folder",
};
