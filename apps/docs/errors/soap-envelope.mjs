import { readFileSync } from "node:fs";
import { option } from "./helpers.mjs";

/** The contract and handlers the SOAP examples import (`./greeter.mjs`), as a reader has their own. */
export const support = {
  "greeter.mts": `// The service's WSDL 1.1 contract (SOAP 1.2 binding, document/literal) and its handlers.
const NS = "urn:example:greeter";
export const wsdl = \`<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:tns="\${NS}" targetNamespace="\${NS}">
  <wsdl:types>
    <xs:schema targetNamespace="\${NS}" elementFormDefault="qualified">
      <xs:element name="greet"><xs:complexType><xs:sequence>
        <xs:element name="name" type="xs:string"/>
      </xs:sequence></xs:complexType></xs:element>
      <xs:element name="greetResponse"><xs:complexType><xs:sequence>
        <xs:element name="greeting" type="xs:string"/>
      </xs:sequence></xs:complexType></xs:element>
    </xs:schema>
  </wsdl:types>
  <wsdl:message name="greet"><wsdl:part name="parameters" element="tns:greet"/></wsdl:message>
  <wsdl:message name="greetResponse"><wsdl:part name="parameters" element="tns:greetResponse"/></wsdl:message>
  <wsdl:portType name="Greeter">
    <wsdl:operation name="greet">
      <wsdl:input message="tns:greet"/><wsdl:output message="tns:greetResponse"/>
    </wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="GreeterSoap12" type="tns:Greeter">
    <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="greet">
      <soap12:operation soapAction="\${NS}#greet"/>
      <wsdl:input><soap12:body use="literal"/></wsdl:input>
      <wsdl:output><soap12:body use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="GreeterService">
    <wsdl:port name="GreeterPort" binding="tns:GreeterSoap12">
      <soap12:address location="http://localhost/greeter"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>\`;
export const handlers = { greet: ({ name }: { name: string }) => ({ greeting: \`Hello, \${name}\` }) };
export const partnerCertificate = ${JSON.stringify(readFileSync(new URL("../../../packages/soap-envelope/src/__fixtures__/wsse/partner.pem", import.meta.url), "utf8"))};
`,
};

const SERVICE =
  "`createSoapService()` of `@svc/soap-envelope` (and `soapEndpoint()` of every entry, which takes the same options)";
const imports =
  'import { createSoapService } from "@svc/soap-envelope";\nimport { handlers, wsdl } from "./greeter.mjs";';
const svc = ({ name, ...rest }) =>
  option({
    raiser: SERVICE,
    name,
    imports,
    call: (v) => `export const service = createSoapService({ wsdl, handlers, ${name}: ${v} });`,
    ...rest,
  });
const limit = (key) =>
  svc({
    name: "limits",
    accepted: "a positive integer",
    refused: `\`limits.${key}\`, a bound of what one message may hold, is not a positive integer`,
    wrong: `{ ${key}: 0 }`,
    right: `{ ${key}: 1000 }`,
    fix: `Give \`limits.${key}\` a positive integer, or leave it out for its default.`,
  });
const mtom = (key, wrong, right, accepted) =>
  svc({
    name: "mtom",
    accepted,
    refused: `\`mtom.${key}\` is not what MTOM takes`,
    wrong: `{ ${key}: ${wrong} }`,
    right: `{ ${key}: ${right} }`,
    fix: `Give \`mtom.${key}\` ${accepted}.`,
  });
const ws = (path, wrong, right, accepted, refused) =>
  option({
    raiser: SERVICE,
    imports:
      'import { createSoapService } from "@svc/soap-envelope";\nimport { handlers, partnerCertificate, wsdl } from "./greeter.mjs";',
    call: (v) => `export const service = createSoapService({ wsdl, handlers, wsSecurity: ${v} });`,
    name: "wsSecurity",
    accepted,
    refused: refused ?? `\`wsSecurity.${path}\` is not what it takes`,
    wrong,
    right,
    fix: `Give \`wsSecurity.${path}\` ${accepted}.`,
  });
const fault = ({ field, wrong, right, accepted, refused, fix }) =>
  option({
    raiser: "`new SoapFault()` of `@svc/soap-envelope` (thrown by a handler)",
    when: "call",
    name: field,
    accepted,
    refused,
    fix,
    imports: 'import { SoapFault } from "@svc/soap-envelope";',
    call: (v) =>
      `export const fault = new SoapFault({ code: "Sender", reason: "Customer 42 does not exist", ${v} });`,
    wrong,
    right,
  });
const contract = (name, wrong, right, accepted, refused, fix) =>
  option({
    raiser: "`loadContract()` of `@svc/soap-envelope`",
    when: "call",
    name,
    accepted,
    refused,
    fix,
    imports: 'import { loadContract } from "@svc/soap-envelope";\nimport { wsdl } from "./greeter.mjs";',
    call: (v) => `export const contract = loadContract(wsdl, { ${name}: ${v} });`,
    wrong,
    right,
  });
const types = (name, wrong, right, accepted, fix) =>
  option({
    raiser: "`generateTypes()` of `@svc/soap-envelope`",
    when: "call",
    name,
    accepted,
    fix,
    imports: 'import { generateTypes } from "@svc/soap-envelope";\nimport { wsdl } from "./greeter.mjs";',
    call: (v) => `export const source = generateTypes(wsdl, { ${name}: ${v} });`,
    wrong,
    right,
  });

export default {
  ERR_SVC_SOAP_ENVELOPE_OPTIONS: {
    raiser: SERVICE,
    when: "construction",
    refused:
      "its options are not an object, or name one it does not know (a misspelling, or an option of node-soap such as `path`), which the compiler does not catch when the object is not a literal",
    accepted: "(unknown option)",
    fix: "Use the option names the message lists: a bound of the message is under `limits` (`limits.maxBytes`).",
    wrong: `${imports}\n\nconst options = { wsdl, handlers, maxbytes: 1_000_000 };\nexport const service = createSoapService(options);\n`,
    right: `${imports}\n\nconst options = { wsdl, handlers, limits: { maxBytes: 1_000_000 } };\nexport const service = createSoapService(options);\n`,
  },
  ERR_SVC_SOAP_ENVELOPE_WSDL: option({
    raiser: `${SERVICE}; \`loadContract()\` and \`generateTypes()\``,
    name: "wsdl",
    accepted: "the path of a WSDL 1.1 file or its text",
    imports:
      'import { createSoapService } from "@svc/soap-envelope";\nimport { handlers, wsdl } from "./greeter.mjs";\n\nconst env: Record<string, string | undefined> = { CONTRACT: wsdl };',
    call: (v) => `export const service = createSoapService({ wsdl: ${v}, handlers });`,
    wrong: 'env.CONTRACT_PATH ?? ""',
    right: 'env.CONTRACT ?? "contracts/greeter.wsdl"',
    fix: "Give the WSDL 1.1 contract's path or its text.",
  }),
  ERR_SVC_SOAP_ENVELOPE_HANDLERS: option({
    raiser: SERVICE,
    name: "handlers",
    accepted: "an object with one handler function per operation",
    imports:
      'import { createSoapService } from "@svc/soap-envelope";\nimport { handlers, wsdl } from "./greeter.mjs";',
    call: (v) => `export const service = createSoapService({ wsdl, handlers: ${v} });`,
    wrong: "handlers.greet as never",
    right: "handlers",
    fix: "Give an object with one function per operation of the contract, named as the operation (`greet`).",
  }),
  ERR_SVC_SOAP_ENVELOPE_AUTHENTICATE: svc({
    name: "authenticate",
    accepted: "a function (headerBlocks, context) => principal",
    wrong: 'JSON.parse("true")',
    right: 'async () => ({ id: "anonymous" })',
  }),
  ERR_SVC_SOAP_ENVELOPE_AUTHORIZE: svc({
    name: "authorize",
    accepted: "a function (context) => boolean | Promise<boolean>",
    wrong: "JSON.parse('[\"admin\"]')",
    right: "() => true",
  }),
  ERR_SVC_SOAP_ENVELOPE_AUTHENTICATE_HEADERS: svc({
    name: "authenticateHeaders",
    accepted: "given only with authenticate",
    refused:
      "`authenticateHeaders`, the header blocks `authenticate` reads, was given without `authenticate`",
    wrong: '["{urn:example:auth}Token"]',
    right: '["{urn:example:auth}Token"], authenticate: async () => ({ id: "anonymous" })',
    fix: "Give `authenticateHeaders` with the `authenticate` that reads them, or leave both out.",
  }),
  ERR_SVC_SOAP_ENVELOPE_UNDERSTOOD_HEADERS: svc({
    name: "understoodHeaders",
    accepted: 'a list of element names as "{namespace}local" or "{*}local"',
    wrong: '["Token"]',
    right: '["{urn:example:auth}Token"]',
    fix: "Name each header block as `{namespace}local` (Clark notation), `{*}local` for any namespace.",
  }),
  ERR_SVC_SOAP_ENVELOPE_ROLES: svc({
    name: "roles",
    accepted: "a list of absolute role URIs, not the none role",
    wrong: '["gateway"]',
    right: '["urn:example:roles:gateway"]',
    fix: "List the roles this node plays as absolute URIs.",
  }),
  ERR_SVC_SOAP_ENVELOPE_LIMITS: svc({
    name: "limits",
    accepted: "an object with maxBytes",
    wrong: 'JSON.parse("1000000")',
    right: "{ maxBytes: 1_000_000 }",
    fix: "Give `limits` an object of bounds (`maxBytes`, `maxDepth`, ...).",
  }),
  ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_BYTES: limit("maxBytes"),
  ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_DEPTH: limit("maxDepth"),
  ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_ATTRIBUTES: limit("maxAttributes"),
  ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_ELEMENTS: limit("maxElements"),
  ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_HEADER_BLOCKS: limit("maxHeaderBlocks"),
  ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_EXPANDED_BYTES: limit("maxExpandedBytes"),
  ERR_SVC_SOAP_ENVELOPE_BODY_TIMEOUT_MS: svc({
    name: "bodyTimeoutMs",
    accepted: "a positive integer of milliseconds (at most 2147483647)",
    wrong: "0",
    right: "30_000",
  }),
  ERR_SVC_SOAP_ENVELOPE_UNREAD_BODY_MAX_BYTES: svc({
    name: "unreadBody",
    accepted: "a whole number of bytes from 0 to 16777216",
    refused:
      "`unreadBody.maxBytes`, how much of a refused body is drained before the connection is kept, is not a whole number of bytes within bounds",
    wrong: "{ maxBytes: -1 }",
    right: "{ maxBytes: 65_536 }",
    fix: "Give `unreadBody.maxBytes` a whole number of bytes from 0 to 16777216.",
  }),
  ERR_SVC_SOAP_ENVELOPE_LOGGER: svc({
    name: "logger",
    accepted: "an object with an error(obj, msg) method",
    wrong: "console.error as never",
    right: "console",
  }),
  ERR_SVC_SOAP_ENVELOPE_VALIDATE_RESPONSES: svc({
    name: "validateResponses",
    accepted: "true or false",
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
  ERR_SVC_SOAP_ENVELOPE_ADDRESSING: svc({
    name: "addressing",
    accepted: "true or false",
    wrong: "JSON.parse('\"off\"')",
    right: "false",
    fix: "Leave `addressing` out (WS-Addressing 1.0 understood, the default), or give `false` to leave its headers not understood.",
  }),
  ERR_SVC_SOAP_ENVELOPE_CONTRACT: svc({
    name: "contract",
    accepted: "an object with documents",
    wrong: "JSON.parse('\"contracts\"')",
    right: '{ longAs: "string" }',
    fix: "Give `contract` an object of how the contract is read (`documents`, `baseDir`, `importRoot`, `longAs`, `schemaLocations`).",
  }),
  ERR_SVC_SOAP_ENVELOPE_CONTRACT_BASE_DIR: svc({
    name: "contract",
    accepted: "a directory path",
    refused: "`contract.baseDir` is not a directory path",
    wrong: '{ baseDir: "" }',
    right: '{ baseDir: "contracts" }',
    fix: "Give `contract.baseDir` the folder the WSDL's relative imports are read from.",
  }),
  ERR_SVC_SOAP_ENVELOPE_CONTRACT_IMPORT_ROOT: svc({
    name: "contract",
    accepted: "a directory path",
    refused: "`contract.importRoot` is not a directory path",
    wrong: '{ importRoot: "" }',
    right: '{ importRoot: "." }',
    fix: "Give `contract.importRoot` the folder no import may leave, one that holds the WSDL's own folder.",
  }),
  ERR_SVC_SOAP_ENVELOPE_CONTRACT_LONG_AS: svc({
    name: "contract",
    accepted: '"bigint" or "string"',
    refused: "`contract.longAs`, how `xs:long` is decoded, is neither form",
    wrong: "{ longAs: JSON.parse('\"number\"') }",
    right: '{ longAs: "string" }',
    fix: 'Give `contract.longAs` `"bigint"` or `"string"`: a `number` loses digits above 2^53.',
  }),
  ERR_SVC_SOAP_ENVELOPE_CONTRACT_STRICT: svc({
    name: "contract",
    accepted: "true or false",
    refused: "`contract.strict`, whether the contract's defects are refused, is not a boolean",
    wrong: "{ strict: JSON.parse('\"no\"') }",
    right: "{ strict: false }",
    fix: "Give `contract.strict` `false` to load a contract despite the defects a receiver can still serve, or leave it out (`true`).",
  }),
  ERR_SVC_SOAP_ENVELOPE_CONTRACT_LOGGER: svc({
    name: "contract",
    accepted: "an object with an error(obj, msg) method",
    refused: "`contract.logger`, where `strict: false` logs each defect it passes over, is not a logger",
    wrong: "{ strict: false, logger: console.warn as never }",
    right: "{ strict: false, logger: console }",
    fix: "Give `contract.logger` a pino-compatible logger (`warn` and `error`), or leave it out for the endpoint's.",
  }),
  ERR_SVC_SOAP_ENVELOPE_CONTRACT_SCHEMA_LOCATIONS: svc({
    name: "contract",
    accepted: "a key is not an absolute URL",
    refused: "a key of `contract.schemaLocations` is not an absolute URL",
    wrong: '{ schemaLocations: { "common.xsd": "contracts/common.xsd" } }',
    right: '{ schemaLocations: { "https://example.com/common.xsd": "contracts/common.xsd" } }',
    fix: "Key `contract.schemaLocations` by the absolute URL the WSDL imports, each to a local file path.",
  }),
  ERR_SVC_SOAP_ENVELOPE_CONTRACT_DOCUMENTS: svc({
    name: "contract",
    accepted: "a name is not a relative path inside the tree",
    refused:
      "a name of `contract.documents` (the contract's files given in memory) is not a relative path inside the tree",
    wrong: '{ documents: { "../common.xsd": "<xs:schema/>" } }',
    right: '{ documents: { "common.xsd": "<xs:schema xmlns:xs=\\"http://www.w3.org/2001/XMLSchema\\"/>" } }',
    fix: "Name each document by its path relative to the WSDL, inside the tree.",
  }),
  ERR_SVC_SOAP_ENVELOPE_MTOM: svc({
    name: "mtom",
    accepted: "an object with maxParts, maxPartBytes, maxHeaderBytes, respond, threshold",
    wrong: "JSON.parse('\"on\"')",
    right: '{ respond: "always" }',
    fix: "Give `mtom` `false`, or an object of its settings (`maxParts`, `maxPartBytes`, `maxHeaderBytes`, `respond`, `threshold`).",
  }),
  ERR_SVC_SOAP_ENVELOPE_MTOM_RESPOND: mtom(
    "respond",
    "JSON.parse('\"yes\"')",
    '"always"',
    '"as-requested", "always" or "never"',
  ),
  ERR_SVC_SOAP_ENVELOPE_MTOM_THRESHOLD: mtom("threshold", "-1", "1024", "a safe integer, 0 or more"),
  ERR_SVC_SOAP_ENVELOPE_MTOM_MAX_PARTS: mtom(
    "maxParts",
    "1",
    "16",
    "at least 2 (the root part and an attachment)",
  ),
  ERR_SVC_SOAP_ENVELOPE_MTOM_MAX_PART_BYTES: mtom(
    "maxPartBytes",
    "0",
    "1_048_576",
    "a positive safe integer",
  ),
  ERR_SVC_SOAP_ENVELOPE_MTOM_MAX_HEADER_BYTES: mtom("maxHeaderBytes", "0", "4096", "a positive safe integer"),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY: ws(
    "",
    "JSON.parse('\"timestamp\"')",
    "{ timestamp: { required: true } }",
    "an object with timestamp, replay, signature",
    "`wsSecurity` is not an object of its parts",
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_TIMESTAMP: ws(
    "timestamp",
    "{ timestamp: JSON.parse('\"required\"') }",
    "{ timestamp: { required: true } }",
    "an object with required, clockSkewMs, maxAgeMs, requireExpires",
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_TIMESTAMP_REQUIRED: ws(
    "timestamp.required",
    "{ timestamp: { required: JSON.parse('\"yes\"') } }",
    "{ timestamp: { required: true } }",
    "true or false",
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_TIMESTAMP_CLOCK_SKEW_MS: ws(
    "timestamp.clockSkewMs",
    "{ timestamp: { clockSkewMs: -1 } }",
    "{ timestamp: { clockSkewMs: 300_000 } }",
    "a non-negative integer",
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_TIMESTAMP_MAX_AGE_MS: ws(
    "timestamp.maxAgeMs",
    "{ timestamp: { maxAgeMs: 0 } }",
    "{ timestamp: { maxAgeMs: 300_000 } }",
    "a positive integer",
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_REPLAY: ws(
    "replay",
    "{ timestamp: false, replay: { maxEntries: 10_000 } }",
    "{ timestamp: {}, replay: { maxEntries: 10_000 } }",
    "false or left out when timestamp is false",
    "`wsSecurity.replay` was given while `timestamp` is off: a replay is recognised by its timestamp",
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_REPLAY_MAX_ENTRIES: ws(
    "replay.maxEntries",
    "{ replay: { maxEntries: 0 } }",
    "{ replay: { maxEntries: 10_000 } }",
    "a positive integer",
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE: ws(
    "signature",
    "{ signature: JSON.parse('\"required\"') }",
    "{ signature: { trustedCertificates: [partnerCertificate] } }",
    "an object with trustedCertificates",
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE_TRUSTED_CERTIFICATES: ws(
    "signature.trustedCertificates",
    "{ signature: { trustedCertificates: [] } }",
    "{ signature: { trustedCertificates: [partnerCertificate] } }",
    "a non-empty list of certificates (PEM text, DER bytes or X509Certificate)",
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE_SIGNED_PARTS: ws(
    "signature.signedParts",
    '{ signature: { trustedCertificates: [partnerCertificate], signedParts: ["Body", "Token"] } }',
    '{ signature: { trustedCertificates: [partnerCertificate], signedParts: ["Body", "{urn:example:auth}Token"] } }',
    'a list of "Body", "Timestamp" and header block names as "{namespace}local"',
  ),
  ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE_MAX_REFERENCES: ws(
    "signature.maxReferences",
    "{ signature: { trustedCertificates: [partnerCertificate], maxReferences: 0 } }",
    "{ signature: { trustedCertificates: [partnerCertificate], maxReferences: 16 } }",
    "a positive integer",
  ),
  ERR_SVC_SOAP_ENVELOPE_CODING: option({
    raiser:
      "`soapEndpoint()` of `@svc/soap-envelope/express` (and of `./node`, `./fastify`, `./fetch`, `createSoapEndpoint()`)",
    name: "coding",
    accepted: "a content coding step: compression() of @svc/negotiate",
    imports:
      'import { compression } from "@svc/negotiate";\nimport { soapEndpoint } from "@svc/soap-envelope/express";\nimport { handlers, wsdl } from "./greeter.mjs";',
    call: (v) => `export const endpoint = soapEndpoint({ wsdl, handlers, coding: ${v} });`,
    wrong: "compression as never",
    right: "compression()",
    fix: "Give the step `compression()` makes, not the factory.",
  }),
  ERR_SVC_SOAP_ENVELOPE_FORWARDED_HEADERS: option({
    raiser: "`soapEndpoint()` of `@svc/soap-envelope/express` (and of `./node`, `./fastify`, `./fetch`)",
    name: "forwardedHeaders",
    accepted: '"x-forwarded" (X-Forwarded-For, -Proto, -Host, -Prefix) or "forwarded" (RFC 7239 Forwarded)',
    imports:
      'import { soapEndpoint } from "@svc/soap-envelope/express";\nimport { handlers, wsdl } from "./greeter.mjs";',
    call: (v) => `export const endpoint = soapEndpoint({ wsdl, handlers, forwardedHeaders: ${v} });`,
    wrong: "JSON.parse('\"x-forwarded-host\"')",
    right: '"forwarded"',
  }),
  ERR_SVC_SOAP_ENVELOPE_PATH: option({
    raiser:
      "`soapFaults()` of `@svc/soap-envelope` (a renderer of `errorHandler`), and `soapEndpoint()` of `@svc/soap-envelope/node`",
    name: "path",
    accepted: 'a path ("/ws/customer") or a non-empty list of them',
    imports: 'import { soapFaults } from "@svc/soap-envelope";',
    call: (v) => `export const renderer = soapFaults({ path: ${v} });`,
    wrong: "[]",
    right: '"/ws/greeter"',
    fix: "Give the endpoint's path (or the list of them) whose errors are answered as SOAP faults.",
  }),
  ERR_SVC_SOAP_ENVELOPE_VERSIONS: option({
    raiser: "`soapFaults()` of `@svc/soap-envelope`",
    name: "versions",
    accepted: 'a non-empty list of "1.1" and "1.2"',
    imports: 'import { soapFaults } from "@svc/soap-envelope";',
    call: (v) => `export const renderer = soapFaults({ path: "/ws/greeter", versions: ${v} });`,
    wrong: "JSON.parse('[\"1.0\"]')",
    right: '["1.1", "1.2"]',
  }),
  ERR_SVC_SOAP_ENVELOPE_FAULT: option({
    raiser: "`new SoapFault()` of `@svc/soap-envelope` (thrown by a handler)",
    when: "call",
    name: "init",
    accepted: "an object with code and reason",
    imports: 'import { SoapFault } from "@svc/soap-envelope";',
    call: (v) => `export const fault = new SoapFault(${v});`,
    wrong: '"Customer 42 does not exist" as never',
    right: '{ code: "Sender", reason: "Customer 42 does not exist" }',
    fix: "Give an object with at least `code` and `reason`.",
  }),
  ERR_SVC_SOAP_ENVELOPE_FAULT_CODE: option({
    raiser: "`new SoapFault()` of `@svc/soap-envelope` (thrown by a handler)",
    when: "call",
    name: "code",
    accepted: "one of VersionMismatch, MustUnderstand, DataEncodingUnknown, Sender, Receiver",
    imports: 'import { SoapFault } from "@svc/soap-envelope";',
    call: (v) => `export const fault = new SoapFault({ code: ${v}, reason: "Customer 42 does not exist" });`,
    wrong: "JSON.parse('\"Client\"')",
    right: '"Sender"',
    fix: "Give a SOAP 1.2 fault code (`Sender` for SOAP 1.1's `Client`, `Receiver` for `Server`); the 1.1 name is written for a 1.1 request.",
  }),
  ERR_SVC_SOAP_ENVELOPE_FAULT_REASON: option({
    raiser: "`new SoapFault()` of `@svc/soap-envelope` (thrown by a handler)",
    when: "call",
    name: "reason",
    accepted: "a",
    imports: 'import { SoapFault } from "@svc/soap-envelope";',
    call: (v) => `export const fault = new SoapFault({ code: "Sender", reason: ${v} });`,
    wrong: "[]",
    right: '"Customer 42 does not exist"',
    fix: "Give a reason text, or a non-empty list of `{ text, lang }`.",
  }),
  ERR_SVC_SOAP_ENVELOPE_FAULT_SUBCODE: fault({
    field: "subcode",
    wrong: 'subcode: "Customer not found"',
    right: 'subcode: "CustomerNotFound"',
    accepted: "a",
    refused: "a `subcode` is not a qualified name (an NCName, with its namespace)",
    fix: "Give each subcode as an XML name without spaces (`CustomerNotFound`), or `{ namespace, localName }`.",
  }),
  ERR_SVC_SOAP_ENVELOPE_FAULT_NODE: fault({
    field: "node",
    wrong: 'node: JSON.parse("1")',
    right: 'node: "urn:example:nodes:gateway"',
    accepted: "a string",
    fix: "Give `node` the URI of the node that faulted, a string.",
  }),
  ERR_SVC_SOAP_ENVELOPE_FAULT_ROLE: fault({
    field: "role",
    wrong: 'role: JSON.parse("1")',
    right: 'role: "http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver"',
    accepted: "a string",
    fix: "Give `role` the URI of the role the node played, a string.",
  }),
  ERR_SVC_SOAP_ENVELOPE_FAULT_DETAIL: fault({
    field: "detail",
    wrong: "detail: JSON.parse('\"no such id\"')",
    right: 'detail: { customerId: "42" }',
    accepted: "an object of element name → value",
    fix: "Give `detail` an object, each member an element of `env:Detail`.",
  }),
  ERR_SVC_SOAP_ENVELOPE_DOCUMENTS: contract(
    "documents",
    '{ "/etc/common.xsd": "<xs:schema/>" }',
    '{ "common.xsd": "<xs:schema xmlns:xs=\\"http://www.w3.org/2001/XMLSchema\\"/>" }',
    "a name is not a relative path inside the tree",
    "a name of `documents` (the contract's files given in memory) is not a relative path inside the tree",
    "Name each document by its path relative to the WSDL.",
  ),
  ERR_SVC_SOAP_ENVELOPE_BASE_DIR: contract(
    "baseDir",
    '""',
    '"contracts"',
    "a directory path",
    "`baseDir` is not a directory path",
    "Give `baseDir` the folder the WSDL's relative imports are read from.",
  ),
  ERR_SVC_SOAP_ENVELOPE_IMPORT_ROOT: contract(
    "importRoot",
    '""',
    '"."',
    "a directory path",
    "`importRoot` is not a directory path",
    "Give `importRoot` the folder no import may leave, one that holds the WSDL's own folder.",
  ),
  ERR_SVC_SOAP_ENVELOPE_LONG_AS: contract(
    "longAs",
    "JSON.parse('\"number\"')",
    '"string"',
    '"bigint" or "string"',
    "`longAs`, how `xs:long` is decoded, is neither form",
    'Give `longAs` `"bigint"` or `"string"`: a `number` loses digits above 2^53.',
  ),
  ERR_SVC_SOAP_ENVELOPE_STRICT: contract(
    "strict",
    "JSON.parse('\"no\"')",
    "false",
    "true or false",
    "`strict`, whether the contract's defects are refused, is not a boolean",
    "Give `strict` `false` to load a contract despite the defects a receiver can still serve, or leave it out (`true`).",
  ),
  ERR_SVC_SOAP_ENVELOPE_SCHEMA_LOCATIONS: contract(
    "schemaLocations",
    '{ "common.xsd": "contracts/common.xsd" }',
    '{ "https://example.com/common.xsd": "contracts/common.xsd" }',
    "a key is not an absolute URL",
    "a key of `schemaLocations` is not an absolute URL",
    "Key `schemaLocations` by the absolute URL the WSDL imports, each to a local file path.",
  ),
  ERR_SVC_SOAP_ENVELOPE_NAME: types(
    "name",
    '"greeter-service"',
    '"GreeterService"',
    "a TypeScript identifier",
    "Give `name` a TypeScript identifier: it names the generated interface.",
  ),
  ERR_SVC_SOAP_ENVELOPE_IMPORT_FROM: types(
    "importFrom",
    '""',
    '"@svc/soap-envelope"',
    "a module specifier",
    "Give `importFrom` the module the generated file imports the package's types from.",
  ),
  ERR_SVC_SOAP_ENVELOPE_SOURCE: types(
    "source",
    'JSON.parse("null")',
    '"contracts/greeter.wsdl"',
    "a string",
    "Give `source` the text the generated header names the contract by.",
  ),
};
