import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { loadContract } from "../src/wsdl/contract.js";
import { SchemaCompileError } from "../src/xsd/schema.js";
import { CORPUS, contractOptions, wsdlFiles } from "./corpus-files.js";

describe("the corpus of real-world WSDLs", () => {
  const files = wsdlFiles(CORPUS);
  const outcomes = files.map((file) => {
    try {
      loadContract(file, contractOptions(file));
      return { file, loaded: true as const };
    } catch (err) {
      return { file, loaded: false as const, err };
    }
  });
  const loaded = outcomes.filter((o) => o.loaded);

  it("142 WSDLs from node-soap and python-zeep", () => {
    expect(files).toHaveLength(142);
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
    expect(loaded.map((o) => relative(CORPUS, o.file)).sort()).toEqual([...LOADS].sort());
    const refused = outcomes.filter((o) => !o.loaded).map((o) => relative(CORPUS, o.file));
    expect(refused.sort()).toEqual(Object.keys(WHY).sort());
    for (const o of outcomes) {
      if (o.loaded) continue;
      const file = relative(CORPUS, o.file);
      const reason = REASONS[WHY[file] as keyof typeof REASONS];
      // The first problem says why: the binding's before the types' (loadContract).
      expect((o.err as SchemaCompileError).problems[0], file).toMatch(reason);
    }
  });
});

/** The 66 of 142 that load; 12 of them with use="encoded". */
const LOADS = [
  "node-soap-samples/DefaultNamespace__no_xmlns_prefix_used_for_default_namespace/soap.wsdl",
  "node-soap-samples/Dummy__should_deserialize_basic_types/soap.wsdl",
  "node-soap-samples/Dummy__should_handle_datetime_transformation/soap.wsdl",
  "node-soap-samples/Dummy__should_handle_empty_string_with_pattern_restriction/soap.wsdl",
  "node-soap-samples/Dummy__should_handle_inline_types/soap.wsdl",
  "node-soap-samples/Dummy__should_handle_minOccurs_and_maxOccurs/soap.wsdl",
  "node-soap-samples/GET_ALL_STORE_NUMBERS__should_work_with_more_deeply_nested_XML_messages_and_security/soap.wsdl",
  "node-soap-samples/GetAccountXml__non_xmlns_attributes_should_be_returned/soap.wsdl",
  "node-soap-samples/GetItemInformation__should_ignore_default_namespace_from_schema/soap.wsdl",
  "node-soap-samples/GetNodes__complex_self_referencing/soap.wsdl",
  "node-soap-samples/IndienenBericht__should_work_with_deeply_nested_XML_messages/soap.wsdl",
  "node-soap-samples/Login__unsupported_response_name_returned_and_local_xs_schema_missed/soap.wsdl",
  "node-soap-samples/Message__Messages_suffixed_with_In_Out/soap.wsdl",
  "node-soap-samples/Message__Messages_suffixed_with_Input_Output/soap.wsdl",
  "node-soap-samples/Message__Messages_suffixed_with_Request_Response/soap.wsdl",
  "node-soap-samples/Message__overriding_namespace_prefix/soap.wsdl",
  "node-soap-samples/OneWay__should_handle_one_way_operation/soap.wsdl",
  "node-soap-samples/RequestHeaders__omit_element_when_empty/soap.wsdl",
  "node-soap-samples/ResponseHeaders__return_soap_headers/soap.wsdl",
  "node-soap-samples/RetrieveCustomerDetails__returning_a_date_should_parse_the_date/soap.wsdl",
  "node-soap-samples/SendCDATA__cdata_is_handled_correctly/soap.wsdl",
  "node-soap-samples/UpdateProfile__correct_namespaces_for_elements_with_base/soap.wsdl",
  "node-soap-samples/UpdateProfile__correct_namespaces_in_sequence_with_imports/soap.wsdl",
  "node-soap-samples/UpdateProfile__correct_namespaces_other_prefixes/soap.wsdl",
  "node-soap-samples/administrate__Complex_json_object_namespace_issue/soap.wsdl",
  "node-soap-samples/execFile__add_default_namespace_prefix/soap.wsdl",
  "node-soap-samples/execFile__valid_xml_generated_on_request_with_complex_type_element_form_default_missing/soap.wsdl",
  "node-soap-samples/execFile__valid_xml_generated_on_request_with_complex_type_element_form_default_qualified/soap.wsdl",
  "node-soap-samples/execFile__valid_xml_generated_on_request_with_complex_type_element_form_default_unqualified/soap.wsdl",
  "node-soap-samples/fooOp__should_return_back_good_response_object/soap.wsdl",
  "node-soap-samples/getAppointmentNumber__should_be_able_to_parse_response/soap.wsdl",
  "node-soap-samples/getAttachments__should_handle_MTOM_response/soap.wsdl",
  "node-soap-samples/getMessage__does_not_use_schema_xmlns/soap.wsdl",
  "node-soap-samples/multiCall__rpc_stype_request_xsi_attributes/soap.wsdl",
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
    /no wsdl:service port with a soap12:binding or soap:binding|this node implements SOAP over HTTP/,
  "a binding named but not declared": /its binding \S+ is not declared/,
  "xs:import of a namespace no schema declares":
    /has no schemaLocation and no schema of the contract has that targetNamespace/,
  "a type named but not declared": /type \S+ is not declared/,
  "soap:body parts= naming a part the message lacks": /body parts names "[^"]+", which message/,
  "two operations take one element and one action":
    /two operations take \S+ and their soapActions do not tell them apart/,
  "binding operation not in the port type": /is not in the port type/,
  "remote schemaLocation": /remote schemaLocation/,
  "xs:include without schemaLocation": /xs:include without schemaLocation/,
  "XML Schema draft namespace": /2000\/10\/XMLSchema\}schema is not supported/,
  "a header part not declared": /soap:header names part/,
  "an undeclared prefix": /is missing or its prefix is undeclared|prefix of "[^"]+" is not declared/,
  "an XML Schema, not a WSDL":
    /the document element must be wsdl:definitions \(WSDL 1\.1\), not \{http:\/\/www\.w3\.org\/2001\/XMLSchema\}schema/,
  "a name XML Schema does not define": /is not an element of XML Schema/,
  "xs:import namespace not the schema's targetNamespace":
    /xs:import namespace="[^"]*" names schemaLocation="[^"]*", which has/,
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
  // node-soap's request-response samples (one folder of each set of identical contracts,
  // LICENSES.md). Not contracts a team could serve: a prefix used but not declared, a schema
  // a WSDL imports saved as .wsdl, a name XML Schema does not define, a fragment cut short.
  "node-soap-samples/Dummy__should_use_defined_xml_key_in_first_level_for_rpc/soap.wsdl":
    "not namespace-well-formed",
  "node-soap-samples/attachments__should_send_binary_data/soap.wsdl": "not namespace-well-formed",
  "node-soap-samples/login__complex_schema_xmlns_with_array_and_any_type_and_other_types/soap.wsdl":
    "not namespace-well-formed",
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/childs/childxs0.wsdl":
    "an XML Schema, not a WSDL",
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/childs/childxs3.wsdl":
    "an XML Schema, not a WSDL",
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/childs/childxs7.wsdl":
    "an XML Schema, not a WSDL",
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/childs/childxs9.wsdl":
    "an XML Schema, not a WSDL",
  // xs:import namespace="common.xsd" (the file's name) for a schema of another targetNamespace
  // (two also use an element's name as a type: c:DummyResult, me:requestType); a cut-down WCF
  // contract importing its schemas under other namespaces than theirs, which refer to types
  // no schema declares.
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/Dummy__should_add_prefix_for_unqualified_global_elements/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/Dummy__should_escape_xml/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/Dummy__should_handle_null_args/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/Dummy__should_ignore_custom_defined_namespaces/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/Dummy__should_ignore_defined_namespaces/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/Dummy__should_use_defined_xml_key/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/Dummy__should_use_empty_tags_only_when_directed/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/Dummy__should_preserve_leading_and_trailing_whitespace_when_preserveWhitespace_is_true/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/Dummy__should_work_with_imported_schemas_that_have_aliases/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  // NetSuite 2013_2 schemas importing platform/ for its 2013_2 namespaces, where node-soap's
  // test/platform holds the 2011_1 schemas (another targetNamespace): the 2013_2 ones are in no
  // project here. Loaded with the corpus as importRoot (corpus-files.ts), as node-soap's test/ is.
  "node-soap-samples/addList__complex_extension_namespace_for_arrays/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/get__complex_extension_with_explicit_namespace/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/login__attributes_in_request_should_be_handled/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/login__error_returned_should_contain_root_Json_on_fault/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/update__complex_extension_fields_in_parent_without_explicit_namespace/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap-samples/update__complex_extension_with_array_attributes/soap.wsdl":
    "xs:import namespace not the schema's targetNamespace",
  "node-soap/strict/Netsuite.wsdl": "xs:import namespace not the schema's targetNamespace",
  // xs:simpletype for xs:simpleType: names are case-sensitive (XML 1.0 §2.3).
  "node-soap-samples/Dummy__ref_element_should_have_correct_namespace/soap.wsdl":
    "a name XML Schema does not define",
  // Types a cut-down ADempiere contract refers to but no schema declares.
  "node-soap-samples/createData__should_generate_complex_type_request/soap.wsdl":
    "a type named but not declared",
  "node-soap-samples/GetSubscription__should_handle_ref_minOccurs_and_maxOccurs/soap.wsdl":
    "an undeclared message or element",
  "node-soap-samples/SetResource__should_correctly_set_element_if_complex-type_has_same_name/soap.wsdl":
    "an undeclared message or element",
  "node-soap-samples/readMetadata__should_respect_xsi_type_attribute/soap.wsdl":
    "an undeclared message or element",
  // type="xs:string" where xs is not declared (the schema's prefix is s); a port's binding
  // auth:doItSOAP in the imported WSDL, auth declared nowhere.
  "node-soap-samples/addPets__force_namespaces/soap.wsdl": "an undeclared prefix",
  "node-soap-samples/getAvailability__should_not_fail_without_children/imported.wsdl": "an undeclared prefix",
  "node-soap-samples/getAvailability__should_not_fail_without_children/soap.wsdl": "an undeclared prefix",
  // binding="SoapQuery_Binding" unprefixed: WSDL's namespace (the default), not the target one.
  "node-soap-samples/addPrefix__should_add_namespace_on_output_message/soap.wsdl":
    "a binding named but not declared",
  // SOAP encoding, read as any encoded Body, but importing WS-Referral's schema (and others) by
  // namespace alone: no schema of the contract declares it.
  "node-soap-samples/NoParams__add_correct_namespace_for_operations_without_parameters/soap.wsdl":
    "xs:import of a namespace no schema declares",
};

describe("the corpus with strict: false (README: Real-world contracts)", () => {
  const files = wsdlFiles(CORPUS);
  const outcomes = files.map((file) => {
    try {
      const logger = { warn: () => {}, error: () => {} };
      const contract = loadContract(file, { ...contractOptions(file), strict: false, logger });
      return { file: relative(CORPUS, file), contract, err: undefined };
    } catch (err) {
      return { file: relative(CORPUS, file), contract: undefined, err };
    }
  });

  it("111 of 142 load: the 66 that load strictly, with no defect, and 45 more, each with its defect classes", () => {
    const loaded = outcomes.filter((o) => o.contract !== undefined);
    expect(loaded).toHaveLength(111);
    const tolerated: Record<string, string[]> = {};
    for (const { file, contract } of loaded) {
      if (LOADS.includes(file)) expect(contract?.defects, file).toEqual([]);
      else tolerated[file] = [...new Set(contract?.defects.map((d) => d.class))].sort();
    }
    expect(tolerated).toEqual(TOLERATED);
    for (const { file, contract } of loaded) {
      for (const defect of contract?.defects ?? []) {
        // Each defect names its file, the line of its construct and what was assumed.
        expect(defect.file, file).not.toBe("");
        expect(defect.line, `${file}: ${defect.problem}`).toBeGreaterThan(0);
        expect(defect.assumed, file).not.toBe("");
      }
    }
  });

  it("of the 45, 41 serve an operation; 4 load with none left to serve", () => {
    const empty = outcomes.filter(
      (o) => o.contract !== undefined && o.contract.operations.length === 0 && !LOADS.includes(o.file),
    );
    expect(empty.map((o) => o.file).sort()).toEqual([...SERVES_NOTHING].sort());
  });

  it("the 31 still refused: defects with two meanings, or no contract to serve, named as strict names them", () => {
    const refused = outcomes.filter((o) => o.contract === undefined);
    expect(Object.fromEntries(refused.map((o) => [o.file, NEVER[o.file]]))).toEqual(NEVER);
    for (const o of refused) {
      expect(o.err, o.file).toBeInstanceOf(SchemaCompileError);
      expect((o.err as SchemaCompileError).problems[0], o.file).toMatch(
        NEVER_REASONS[NEVER[o.file] as keyof typeof NEVER_REASONS],
      );
    }
  });
});

/** Contracts that load only with strict: false, and the classes of the defects each reports. */
const TOLERATED: Readonly<Record<string, readonly string[]>> = {
  "node-soap-samples/Dummy__ref_element_should_have_correct_namespace/soap.wsdl": [
    "misspelled-construct",
    "own-namespace-reference",
  ],
  "node-soap-samples/Dummy__should_add_prefix_for_unqualified_global_elements/soap.wsdl": [
    "import-namespace",
  ],
  "node-soap-samples/Dummy__should_escape_xml/soap.wsdl": ["import-namespace"],
  "node-soap-samples/Dummy__should_handle_null_args/soap.wsdl": ["import-namespace"],
  "node-soap-samples/Dummy__should_ignore_custom_defined_namespaces/soap.wsdl": ["import-namespace"],
  "node-soap-samples/Dummy__should_ignore_defined_namespaces/soap.wsdl": ["import-namespace"],
  "node-soap-samples/Dummy__should_use_defined_xml_key/soap.wsdl": ["import-namespace"],
  "node-soap-samples/Dummy__should_use_empty_tags_only_when_directed/soap.wsdl": ["import-namespace"],
  "node-soap-samples/Dummy__should_work_with_imported_schemas_that_have_aliases/soap.wsdl": [
    "import-namespace",
    "undeclared-type",
  ],
  "node-soap-samples/Dummy__should_preserve_leading_and_trailing_whitespace_when_preserveWhitespace_is_true/soap.wsdl":
    ["global-occurrence", "import-namespace", "undeclared-type"],
  "node-soap-samples/GetSubscription__should_handle_ref_minOccurs_and_maxOccurs/soap.wsdl": [
    "undeclared-element",
    "undeclared-message",
  ],
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/soap.wsdl": [
    "import-namespace",
    "undeclared-type",
  ],
  "node-soap-samples/SetResource__should_correctly_set_element_if_complex-type_has_same_name/soap.wsdl": [
    "undeclared-element",
  ],
  "node-soap-samples/addList__complex_extension_namespace_for_arrays/soap.wsdl": [
    "import-namespace",
    "undeclared-type",
  ],
  "node-soap-samples/addPets__force_namespaces/soap.wsdl": ["undeclared-prefix"],
  "node-soap-samples/createData__should_generate_complex_type_request/soap.wsdl": ["undeclared-type"],
  "node-soap-samples/getAvailability__should_not_fail_without_children/imported.wsdl": [
    "operation-not-in-port-type",
    "wsdl-name",
  ],
  "node-soap-samples/getAvailability__should_not_fail_without_children/soap.wsdl": ["wsdl-name"],
  "node-soap-samples/get__complex_extension_with_explicit_namespace/soap.wsdl": [
    "import-namespace",
    "undeclared-type",
  ],
  "node-soap-samples/login__attributes_in_request_should_be_handled/soap.wsdl": [
    "import-namespace",
    "undeclared-type",
  ],
  "node-soap-samples/login__error_returned_should_contain_root_Json_on_fault/soap.wsdl": [
    "import-namespace",
    "undeclared-type",
  ],
  "node-soap-samples/readMetadata__should_respect_xsi_type_attribute/soap.wsdl": ["undeclared-element"],
  "node-soap-samples/update__complex_extension_fields_in_parent_without_explicit_namespace/soap.wsdl": [
    "import-namespace",
    "undeclared-type",
  ],
  "node-soap-samples/update__complex_extension_with_array_attributes/soap.wsdl": [
    "import-namespace",
    "undeclared-type",
  ],
  "node-soap/Dummy.wsdl": ["operation-not-in-port-type"],
  "node-soap/binding-exception.wsdl": ["undeclared-prefix", "wsdl-name"],
  "node-soap/binding_document.wsdl": ["wsdl-name"],
  "node-soap/builtin_types.wsdl": ["undeclared-element"],
  "node-soap/complex/registration-common.wsdl": ["undeclared-message"],
  "node-soap/extended_element.wsdl": ["operation-not-in-port-type", "undeclared-type", "wsdl-name"],
  "node-soap/include_with_duplicated_namespace.wsdl": ["operation-not-in-port-type"],
  "node-soap/json_response.wsdl": ["undeclared-element"],
  "node-soap/marketo.wsdl": ["undeclared-header-part", "undeclared-type"],
  "node-soap/missing_message_definition.wsdl": ["undeclared-message"],
  "node-soap/perf/order.wsdl": ["undeclared-type"],
  "node-soap/recursive2.wsdl": ["undeclared-header-part"],
  "node-soap/ref_element_same_as_type.wsdl": ["undeclared-body-part"],
  "node-soap/schema_with_no_targetnamespace.wsdl": ["operation-not-in-port-type"],
  "node-soap/strict/CyberSourceTransaction_1.26_3.wsdl": ["include-location", "include-namespace"],
  "node-soap/strict/Netsuite.wsdl": ["import-namespace", "undeclared-element", "undeclared-type"],
  "node-soap/strict/npe.wsdl": ["wsdl-name"],
  "node-soap/tnsImportConflict/root.wsdl": ["wsdl-name"],
  "node-soap/typeof_null_extend_check.wsdl": ["undeclared-element", "undeclared-type"],
  "node-soap/tnsImportConflict/foo.wsdl": ["unported-binding"],
  "node-soap/typeref/order.wsdl": ["own-namespace-reference"],
};

/**
 * Loaded with strict: false, but with no operation left to serve: every binding operation is
 * missing from its port type or names an undeclared message, or the port type declares none.
 */
const SERVES_NOTHING = [
  "node-soap/binding_document.wsdl",
  "node-soap/missing_message_definition.wsdl",
  "node-soap/strict/npe.wsdl",
  "node-soap-samples/getAvailability__should_not_fail_without_children/imported.wsdl",
];

/** Why a contract is refused even with strict: false, as its first problem says it. */
const NEVER_REASONS = {
  // The names of elements and attributes in an unknown namespace: any reading is a guess.
  "not namespace-well-formed": /not well-formed XML/,
  "no SOAP port over HTTP": REASONS["no SOAP port over HTTP"],
  "an XML Schema, not a WSDL": REASONS["an XML Schema, not a WSDL"],
  // Nothing is fetched: only a local copy named in schemaLocations is read.
  "remote schemaLocation": REASONS["remote schemaLocation"],
  // Another language than XML Schema 1.0, not a misspelling of it.
  "XML Schema draft namespace": REASONS["XML Schema draft namespace"],
  // Routing would have to choose between the two operations.
  "two operations take one element and one action": REASONS["two operations take one element and one action"],
  // xs:sequence straight in xs:element: what was meant is a guess.
  "a construct where XML Schema does not allow it": /is not supported by the schema compiler/,
  // The rpc wrapper's namespace is not said: the receiver would have to pick one.
  "rpc without soap:body namespace": /rpc style needs soap:body namespace=/,
  // A part's element or an operation's message with an undeclared prefix, no single one of that local name.
  "a WSDL QName with an undeclared prefix and no single match": /is missing or its prefix is undeclared/,
} as const;

/** Each contract refused with strict: false, and why. */
const NEVER: Readonly<Record<string, keyof typeof NEVER_REASONS>> = {
  "node-soap-samples/addPrefix__should_add_namespace_on_output_message/soap.wsdl":
    "rpc without soap:body namespace",
  "node-soap-samples/Dummy__should_use_defined_xml_key_in_first_level_for_rpc/soap.wsdl":
    "not namespace-well-formed",
  "node-soap-samples/NoParams__add_correct_namespace_for_operations_without_parameters/soap.wsdl":
    "rpc without soap:body namespace",
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/childs/childxs0.wsdl":
    "an XML Schema, not a WSDL",
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/childs/childxs3.wsdl":
    "an XML Schema, not a WSDL",
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/childs/childxs7.wsdl":
    "an XML Schema, not a WSDL",
  "node-soap-samples/RetrieveFareQuoteDateRange__should_handle_child_namespaces/childs/childxs9.wsdl":
    "an XML Schema, not a WSDL",
  "node-soap-samples/attachments__should_send_binary_data/soap.wsdl": "not namespace-well-formed",
  "node-soap-samples/login__complex_schema_xmlns_with_array_and_any_type_and_other_types/soap.wsdl":
    "not namespace-well-formed",
  "node-soap/attachments.wsdl": "not namespace-well-formed",
  "node-soap/connection/econnrefused.wsdl": "not namespace-well-formed",
  "node-soap/default_namespace_soap12.wsdl": "not namespace-well-formed",
  "node-soap/fixedPath/netsuite.wsdl": "no SOAP port over HTTP",
  "node-soap/mergeWithAttributes/main.wsdl": "not namespace-well-formed",
  "node-soap/recursive/file.wsdl": "not namespace-well-formed",
  "node-soap/schemas_without_targetnamespace.wsdl":
    "a WSDL QName with an undeclared prefix and no single match",
  "node-soap/strict/ImportSample.wsdl": "not namespace-well-formed",
  "node-soap/strict/stockquote-url.wsdl": "remote schemaLocation",
  "node-soap/strict/stockquote.wsdl": "XML Schema draft namespace",
  "node-soap/tnsImportConflict/bar.wsdl": "no SOAP port over HTTP",
  "node-soap/ws-policy.wsdl": "not namespace-well-formed",
  "node-soap/wsdlImport/overridden.wsdl": "no SOAP port over HTTP",
  "node-soap/wsdlImport/sub.wsdl": "no SOAP port over HTTP",
  "node-soap/wsdl_with_attributes.wsdl": "not namespace-well-formed",
  "node-soap/xsdinclude/xsd_include.wsdl": "a construct where XML Schema does not allow it",
  "node-soap/xsdinclude/xsd_include_http.wsdl": "remote schemaLocation",
  "node-soap/xsdinclude/xsd_include_inline_xmlns.wsdl": "a construct where XML Schema does not allow it",
  "zeep/http.wsdl": "no SOAP port over HTTP",
  "zeep/soap.wsdl": "two operations take one element and one action",
  "zeep/soap_import_2.wsdl": "no SOAP port over HTTP",
  "zeep/soap_transport_err.wsdl": "no SOAP port over HTTP",
};
