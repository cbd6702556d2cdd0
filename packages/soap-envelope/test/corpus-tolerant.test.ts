import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { createSoapService } from "../src/binding/service.js";
import { type Contract, type ContractOperation, loadContract } from "../src/wsdl/contract.js";
import { parseXmlString, resolveLimits } from "../src/xml/reader.js";
import { CORPUS, contractOptions, wsdlFiles } from "./corpus-files.js";
import { decoded, elementValue, type Node, NoValue } from "./corpus-values.js";

/**
 * Every corpus contract that loads only with `strict: false`, served in process: one
 * request-response operation of each is called with a minimal valid value of its input element
 * (corpus-values.ts, the generator the client round trip uses), encoded by the contract's schema
 * into an envelope, and its handler answers a minimal valid value of the output element. Checked:
 * a 200, the handler received the value sent, and the answer's Body element decodes against the
 * output element as that value: messages are validated against what the load assumed.
 */
const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
const SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";

interface Case {
  file: string;
  wsdl: string;
  contract: Contract;
  operation: ContractOperation;
  input: Node;
  output: Node;
}

const quiet = { warn: () => {}, error: () => {} };
const notCalled: Record<string, string> = {};
const cases: Case[] = wsdlFiles(CORPUS).flatMap((wsdl): Case[] => {
  const file = relative(CORPUS, wsdl);
  try {
    loadContract(wsdl, contractOptions(wsdl));
    return []; // loads strictly: corpus-roundtrip.test.ts calls it
  } catch {}
  let contract: Contract;
  try {
    contract = loadContract(wsdl, { ...contractOptions(wsdl), strict: false, logger: quiet });
  } catch {
    return []; // corpus.test.ts says why
  }
  const reasons: string[] = [];
  for (const operation of contract.operations) {
    if (operation.output === undefined) continue;
    if (operation.use === "encoded") {
      reasons.push(`${operation.name}: use="encoded"`);
      continue;
    }
    const single = (body: readonly string[] | undefined, element: string | undefined) =>
      body?.length === 1 && body[0] === element;
    if (!single(operation.inputBody, operation.input) || !single(operation.outputBody, operation.output)) {
      reasons.push(`${operation.name}: a Body of parts`);
      continue;
    }
    try {
      const input = elementValue(contract, operation.input);
      const output = elementValue(contract, operation.output);
      return [{ file, wsdl, contract, operation, input, output }];
    } catch (err) {
      if (!(err instanceof NoValue)) throw err;
      reasons.push(`${operation.name}: ${err.message}`);
    }
  }
  notCalled[file] = reasons.join("; ") || "no request-response operation";
  return [];
});

/** The contracts loaded only with strict: false that have no operation called here, and why. */
const NOT_CALLED: Readonly<Record<string, RegExp>> = {
  // The generator builds one element per message, and no value of an abstract type.
  "node-soap/builtin_types.wsdl": /a Body of parts/,
  "node-soap/ref_element_same_as_type.wsdl": /a Body of parts/,
  "node-soap-samples/addList__complex_extension_namespace_for_arrays/soap.wsdl": /an abstract type/,
  "node-soap-samples/get__complex_extension_with_explicit_namespace/soap.wsdl": /an abstract type/,
  "node-soap-samples/update__complex_extension_fields_in_parent_without_explicit_namespace/soap.wsdl":
    /an abstract type/,
  "node-soap-samples/update__complex_extension_with_array_attributes/soap.wsdl": /an abstract type/,
  // Nothing left to serve: corpus.test.ts.
  "node-soap/binding_document.wsdl": /no request-response operation/,
  "node-soap/missing_message_definition.wsdl": /no request-response operation/,
  "node-soap/strict/npe.wsdl": /no request-response operation/,
  "node-soap-samples/getAvailability__should_not_fail_without_children/imported.wsdl":
    /no request-response operation/,
};

describe("the contracts that load only with strict: false, called in process", () => {
  it("each is called, or says why not", () => {
    expect(notCalled).toEqual(
      Object.fromEntries(Object.entries(NOT_CALLED).map(([file, why]) => [file, expect.stringMatching(why)])),
    );
    expect(cases).toHaveLength(CALLED);
  });

  for (const c of cases) {
    it(`${c.file}: ${c.operation.name} → a schema-valid 200`, async () => {
      const received: unknown[] = [];
      const handlers = Object.fromEntries(
        c.contract.operations.map((op) => [
          op.name,
          async (payload: unknown) => {
            received.push(payload);
            return decoded(c.output);
          },
        ]),
      );
      const service = createSoapService({
        wsdl: c.wsdl,
        handlers,
        contract: { ...contractOptions(c.wsdl), strict: false, logger: quiet },
        logger: { error: (obj: object) => received.push(obj) },
      } as Parameters<typeof createSoapService>[0]);
      const soap12 = c.contract.versions.includes("1.2");
      const ns = soap12 ? SOAP12 : SOAP11;
      const action = c.operation.soapAction;
      const body = c.contract.schema.encode(c.operation.input, decoded(c.input));
      const response = await service.handle({
        method: "POST",
        contentType: soap12
          ? `application/soap+xml; charset=utf-8${action ? `; action="${action}"` : ""}`
          : "text/xml; charset=utf-8",
        contentLength: undefined,
        soapAction: soap12 ? undefined : `"${action}"`,
        body: `<e:Envelope xmlns:e="${ns}"><e:Body>${body}</e:Body></e:Envelope>`,
      });
      expect(response.status, String(response.body)).toBe(200);
      expect(received).toEqual([decoded(c.input)]);
      const envelope = parseXmlString(String(response.body), resolveLimits());
      const answer = envelope.children.find((e) => e.localName === "Body")?.children[0];
      expect(
        answer && (answer.namespace ? `{${answer.namespace}}${answer.localName}` : answer.localName),
      ).toBe(c.operation.output);
      expect(c.contract.schema.decode(answer as NonNullable<typeof answer>)).toEqual(decoded(c.output));
    });
  }
});

/** How many of the 44 are called: those with a request-response operation the generator can drive. */
const CALLED = 34;
