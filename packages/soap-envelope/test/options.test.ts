import { describe, expect, it } from "vitest";
import { createSoapService, type SoapServiceOptions } from "../src/binding/service.js";
import { ROLE_NONE } from "../src/envelope/envelope.js";
import { soapEndpoint } from "../src/express.js";
import { loadContract } from "../src/wsdl/contract.js";
import { generateTypes } from "../src/wsdl/generate-types.js";
import { resolveLimits } from "../src/xml/reader.js";
import { compileSchemas } from "../src/xsd/schema.js";
import { CUSTOMER_WSDL, customerHandlers } from "./helpers.js";

/**
 * Every option of every factory of this package, refused at construction with a `TypeError`
 * naming the option, what was given and what is accepted, and the stable code
 * `ERR_SVC_SOAP_ENVELOPE_<OPTION>` (the README's table lists them).
 */
const base = (): SoapServiceOptions => ({ wsdl: CUSTOMER_WSDL, handlers: customerHandlers() });
const service = (extra: Record<string, unknown>) => ({ ...base(), ...extra }) as SoapServiceOptions;
const authenticate = async () => ({ id: "u" });

const serviceCases: [string, unknown, string, RegExp][] = [
  ["options: null", null, "ERR_SVC_SOAP_ENVELOPE_OPTIONS", /options must be an object/],
  [
    "unknown option path (node-soap)",
    service({ path: "/ws" }),
    "ERR_SVC_SOAP_ENVELOPE_OPTIONS",
    /got "path"/,
  ],
  ["wsdl: 42", service({ wsdl: 42 }), "ERR_SVC_SOAP_ENVELOPE_WSDL", /wsdl must be the path .* got 42/],
  ["wsdl: ''", service({ wsdl: "" }), "ERR_SVC_SOAP_ENVELOPE_WSDL", /got ""/],
  [
    "handlers: undefined",
    service({ handlers: undefined }),
    "ERR_SVC_SOAP_ENVELOPE_HANDLERS",
    /got undefined/,
  ],
  ["handlers: []", service({ handlers: [] }), "ERR_SVC_SOAP_ENVELOPE_HANDLERS", /got \[\]/],
  [
    "handlers.getCustomer: 5",
    service({ handlers: { ...customerHandlers(), getCustomer: 5 } }),
    "ERR_SVC_SOAP_ENVELOPE_HANDLERS",
    /handlers\.getCustomer must be a function .* got 5/,
  ],
  [
    "a handler for no operation",
    service({ handlers: { ...customerHandlers(), nope: () => 1 } }),
    "ERR_SVC_SOAP_ENVELOPE_HANDLERS",
    /handler "nope" matches no operation of the contract \(getCustomer, createCustomer, logEvent, sendNotification\)/,
  ],
  [
    "no handler for an operation",
    service({ handlers: { getCustomer: () => 1 } }),
    "ERR_SVC_SOAP_ENVELOPE_HANDLERS",
    /no handler for operations "createCustomer", "logEvent", "sendNotification"/,
  ],
  ["authenticate: true", service({ authenticate: true }), "ERR_SVC_SOAP_ENVELOPE_AUTHENTICATE", /got true/],
  ["authorize: 'yes'", service({ authorize: "yes" }), "ERR_SVC_SOAP_ENVELOPE_AUTHORIZE", /got "yes"/],
  [
    "understoodHeaders: '{urn:x}A' (not a list)",
    service({ understoodHeaders: "{urn:x}A" }),
    "ERR_SVC_SOAP_ENVELOPE_UNDERSTOOD_HEADERS",
    /got "\{urn:x\}A"/,
  ],
  [
    "understoodHeaders: ['Security'] (no namespace)",
    service({ understoodHeaders: ["Security"] }),
    "ERR_SVC_SOAP_ENVELOPE_UNDERSTOOD_HEADERS",
    /"\{namespace\}local" or "\{\*\}local", got \["Security"\]/,
  ],
  [
    "authenticateHeaders: [1]",
    service({ authenticate, authenticateHeaders: [1] }),
    "ERR_SVC_SOAP_ENVELOPE_AUTHENTICATE_HEADERS",
    /got \[1\]/,
  ],
  [
    "authenticateHeaders without authenticate",
    service({ authenticateHeaders: ["{*}Token"] }),
    "ERR_SVC_SOAP_ENVELOPE_AUTHENTICATE_HEADERS",
    /given only with authenticate/,
  ],
  ["roles: 'urn:x' (not a list)", service({ roles: "urn:x" }), "ERR_SVC_SOAP_ENVELOPE_ROLES", /got "urn:x"/],
  [
    "roles: ['gateway'] (not a URI)",
    service({ roles: ["gateway"] }),
    "ERR_SVC_SOAP_ENVELOPE_ROLES",
    /absolute role URIs/,
  ],
  ["roles: [none role]", service({ roles: [ROLE_NONE] }), "ERR_SVC_SOAP_ENVELOPE_ROLES", /not the none role/],
  ["limits: 1024", service({ limits: 1024 }), "ERR_SVC_SOAP_ENVELOPE_LIMITS", /got 1024/],
  [
    "limits.maxbytes (misspelt)",
    service({ limits: { maxbytes: 10 } }),
    "ERR_SVC_SOAP_ENVELOPE_LIMITS",
    /got "maxbytes"/,
  ],
  [
    "mtom: true",
    service({ mtom: true }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM",
    /mtom must be false or an object .* got true/,
  ],
  ["mtom: 'yes'", service({ mtom: "yes" }), "ERR_SVC_SOAP_ENVELOPE_MTOM", /got "yes"/],
  [
    "mtom.maxparts (misspelt)",
    service({ mtom: { maxparts: 4 } }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM",
    /got "maxparts"/,
  ],
  [
    "mtom.maxParts: 1",
    service({ mtom: { maxParts: 1 } }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM_MAX_PARTS",
    /at least 2 .* got 1/,
  ],
  [
    "mtom.maxParts: 2.5",
    service({ mtom: { maxParts: 2.5 } }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM_MAX_PARTS",
    /got 2\.5/,
  ],
  [
    "mtom.maxPartBytes: 0",
    service({ mtom: { maxPartBytes: 0 } }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM_MAX_PART_BYTES",
    /a positive safe integer, got 0/,
  ],
  [
    "mtom.maxHeaderBytes: '4096'",
    service({ mtom: { maxHeaderBytes: "4096" } }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM_MAX_HEADER_BYTES",
    /got "4096"/,
  ],
  [
    "mtom.respond: true",
    service({ mtom: { respond: true } }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM_RESPOND",
    /"as-requested", "always" or "never", got true/,
  ],
  [
    "mtom.respond: 'sometimes'",
    service({ mtom: { respond: "sometimes" } }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM_RESPOND",
    /got "sometimes"/,
  ],
  [
    "mtom.threshold: -1",
    service({ mtom: { threshold: -1 } }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM_THRESHOLD",
    /0 or more, got -1/,
  ],
  [
    "mtom.threshold: Infinity",
    service({ mtom: { threshold: Number.POSITIVE_INFINITY } }),
    "ERR_SVC_SOAP_ENVELOPE_MTOM_THRESHOLD",
    /got Infinity/,
  ],
  [
    "limits.maxBytes: 0",
    service({ limits: { maxBytes: 0 } }),
    "ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_BYTES",
    /got 0/,
  ],
  [
    "limits.maxHeaderBlocks: 0",
    service({ limits: { maxHeaderBlocks: 0 } }),
    "ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_HEADER_BLOCKS",
    /got 0/,
  ],
  [
    "limits.maxExpandedBytes: 0",
    service({ limits: { maxExpandedBytes: 0 } }),
    "ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_EXPANDED_BYTES",
    /got 0/,
  ],
  [
    "limits.maxDepth: 1.5",
    service({ limits: { maxDepth: 1.5 } }),
    "ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_DEPTH",
    /got 1.5/,
  ],
  [
    "limits.maxAttributes: '64'",
    service({ limits: { maxAttributes: "64" } }),
    "ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_ATTRIBUTES",
    /got "64"/,
  ],
  [
    "limits.maxElements: Infinity",
    service({ limits: { maxElements: Number.POSITIVE_INFINITY } }),
    "ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_ELEMENTS",
    /got Infinity/,
  ],
  ["bodyTimeoutMs: 0", service({ bodyTimeoutMs: 0 }), "ERR_SVC_SOAP_ENVELOPE_BODY_TIMEOUT_MS", /got 0/],
  [
    "bodyTimeoutMs: Infinity (no limit)",
    service({ bodyTimeoutMs: Number.POSITIVE_INFINITY }),
    "ERR_SVC_SOAP_ENVELOPE_BODY_TIMEOUT_MS",
    /bodyTimeoutMs must be a positive integer of milliseconds .* got Infinity/,
  ],
  [
    "bodyTimeoutMs: 1.5",
    service({ bodyTimeoutMs: 1.5 }),
    "ERR_SVC_SOAP_ENVELOPE_BODY_TIMEOUT_MS",
    /got 1\.5/,
  ],
  [
    "bodyTimeoutMs: '30s'",
    service({ bodyTimeoutMs: "30s" }),
    "ERR_SVC_SOAP_ENVELOPE_BODY_TIMEOUT_MS",
    /got "30s"/,
  ],
  [
    "bodyTimeoutMs: 2 ** 31 (beyond Node's timers)",
    service({ bodyTimeoutMs: 2 ** 31 }),
    "ERR_SVC_SOAP_ENVELOPE_BODY_TIMEOUT_MS",
    /at most 2147483647\), got 2147483648/,
  ],
  [
    "logger: console.error",
    service({ logger: console.error }),
    "ERR_SVC_SOAP_ENVELOPE_LOGGER",
    /got a function/,
  ],
  [
    "logger: {}",
    service({ logger: {} }),
    "ERR_SVC_SOAP_ENVELOPE_LOGGER",
    /error\(obj, msg\) method, got an object/,
  ],
  [
    "validateResponses: 'yes'",
    service({ validateResponses: "yes" }),
    "ERR_SVC_SOAP_ENVELOPE_VALIDATE_RESPONSES",
    /true or false, got "yes"/,
  ],
  ["contract: 'bigint'", service({ contract: "bigint" }), "ERR_SVC_SOAP_ENVELOPE_CONTRACT", /got "bigint"/],
  [
    "contract.longas (misspelt)",
    service({ contract: { longas: "string" } }),
    "ERR_SVC_SOAP_ENVELOPE_CONTRACT",
    /got "longas"/,
  ],
  [
    "contract.baseDir: 1",
    service({ contract: { baseDir: 1 } }),
    "ERR_SVC_SOAP_ENVELOPE_CONTRACT_BASE_DIR",
    /got 1/,
  ],
  [
    "contract.longAs: 'number'",
    service({ contract: { longAs: "number" } }),
    "ERR_SVC_SOAP_ENVELOPE_CONTRACT_LONG_AS",
    /contract\.longAs must be "bigint" or "string", got "number"/,
  ],
];

describe("createSoapService and soapEndpoint refuse each bad option at construction", () => {
  it.each(serviceCases)("%s → %s", (_name, options, code, message) => {
    for (const build of [createSoapService, soapEndpoint]) {
      expect(() => build(options as SoapServiceOptions)).toThrow(
        expect.objectContaining({ name: "TypeError", code, message: expect.stringMatching(message) }),
      );
    }
  });

  it("the options the earlier audit found accepted construct no more", () => {
    expect(() => createSoapService(service({ roles: "urn:x" }))).toThrow(
      '@svc/soap-envelope: roles must be a list of absolute role URIs, not the none role (SOAP 1.2 Part 1 §2.2), got "urn:x"',
    );
    expect(() => createSoapService(service({ contract: { longAs: "number" } }))).toThrow(
      '@svc/soap-envelope: contract.longAs must be "bigint" or "string", got "number"',
    );
  });

  it("valid values of every option construct", () => {
    const built = createSoapService({
      ...base(),
      authenticate,
      authorize: () => true,
      understoodHeaders: ["{urn:x}A", "{*}B"],
      authenticateHeaders: ["{*}Token"],
      roles: ["urn:example:gateway", "http://example.com/roles/audit"],
      limits: { maxBytes: 1024, maxDepth: 8, maxAttributes: 8, maxElements: 100 },
      logger: { error: () => undefined },
      validateResponses: true,
      contract: { baseDir: ".", longAs: "string" },
    });
    expect(built.contract.operations.map((o) => o.name)).toContain("getCustomer");
  });
});

const otherCases: [string, () => unknown, string, RegExp][] = [
  [
    "loadContract: wsdl undefined",
    () => loadContract(undefined as never),
    "ERR_SVC_SOAP_ENVELOPE_WSDL",
    /loadContract: wsdl/,
  ],
  [
    "loadContract: longAs 'number'",
    () => loadContract(CUSTOMER_WSDL, { longAs: "number" as never }),
    "ERR_SVC_SOAP_ENVELOPE_LONG_AS",
    /loadContract: longAs/,
  ],
  [
    "loadContract: baseDir ''",
    () => loadContract(CUSTOMER_WSDL, { baseDir: "" }),
    "ERR_SVC_SOAP_ENVELOPE_BASE_DIR",
    /loadContract: baseDir/,
  ],
  [
    "loadContract: base (misspelt)",
    () => loadContract(CUSTOMER_WSDL, { base: "." } as never),
    "ERR_SVC_SOAP_ENVELOPE_OPTIONS",
    /got "base"/,
  ],
  [
    "compileSchemas: longAs 'int'",
    () => compileSchemas([], { longAs: "int" as never }),
    "ERR_SVC_SOAP_ENVELOPE_LONG_AS",
    /compileSchemas: longAs/,
  ],
  [
    "resolveLimits / parseEnvelope: maxBytes -1",
    () => resolveLimits({ maxBytes: -1 }),
    "ERR_SVC_SOAP_ENVELOPE_LIMITS_MAX_BYTES",
    /limits\.maxBytes must be a positive integer, got -1/,
  ],
  ["generateTypes: wsdl ''", () => generateTypes(""), "ERR_SVC_SOAP_ENVELOPE_WSDL", /generateTypes: wsdl/],
  [
    "generateTypes: longAs 'number'",
    () => generateTypes(CUSTOMER_WSDL, { longAs: "number" as never }),
    "ERR_SVC_SOAP_ENVELOPE_LONG_AS",
    /generateTypes: longAs/,
  ],
  [
    "generateTypes: name 'my service'",
    () => generateTypes(CUSTOMER_WSDL, { name: "my service" }),
    "ERR_SVC_SOAP_ENVELOPE_NAME",
    /a TypeScript identifier, got "my service"/,
  ],
  [
    "generateTypes: baseDir 0",
    () => generateTypes(CUSTOMER_WSDL, { baseDir: 0 as never }),
    "ERR_SVC_SOAP_ENVELOPE_BASE_DIR",
    /generateTypes: baseDir/,
  ],
  [
    "generateTypes: importFrom ''",
    () => generateTypes(CUSTOMER_WSDL, { importFrom: "" }),
    "ERR_SVC_SOAP_ENVELOPE_IMPORT_FROM",
    /got ""/,
  ],
  [
    "generateTypes: source 1",
    () => generateTypes(CUSTOMER_WSDL, { source: 1 as never }),
    "ERR_SVC_SOAP_ENVELOPE_SOURCE",
    /got 1/,
  ],
  [
    "generateTypes: longas (misspelt)",
    () => generateTypes(CUSTOMER_WSDL, { longas: "string" } as never),
    "ERR_SVC_SOAP_ENVELOPE_OPTIONS",
    /got "longas"/,
  ],
];

describe("the other factories refuse each bad option", () => {
  it.each(otherCases)("%s → %s", (_name, build, code, message) => {
    expect(build).toThrow(
      expect.objectContaining({ name: "TypeError", code, message: expect.stringMatching(message) }),
    );
  });
});
