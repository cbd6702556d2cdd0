import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { type Contract, loadContract } from "../src/wsdl/contract.js";
import { type CorpusCall, callInProcess, callProblem, corpusCall } from "./corpus-call.js";
import { CORPUS, contractOptions, wsdlFiles } from "./corpus-files.js";
import { decoded } from "./corpus-values.js";

/**
 * Every corpus contract that loads only with `strict: false`, served in process: one
 * request-response operation of each is called with a minimal valid value of its input element
 * (corpus-values.ts, the generator the client round trip uses), encoded by the contract's schema
 * into an envelope, and its handler answers a minimal valid value of the output element
 * (corpus-call.ts). Checked: a 200, the handler received the value sent, and the answer's Body
 * element decodes against the output element as that value: messages are validated against what
 * the load assumed.
 */
interface Case {
  file: string;
  wsdl: string;
  contract: Contract;
  call: CorpusCall;
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
  const call = corpusCall(contract);
  if (typeof call === "string") {
    notCalled[file] = call;
    return [];
  }
  return [{ file, wsdl, contract, call }];
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
    it(`${c.file}: ${c.call.operation.name} → a schema-valid 200`, async () => {
      const options = { ...contractOptions(c.wsdl), strict: false };
      const outcome = await callInProcess(c.wsdl, options, c.contract, c.call);
      expect(outcome.status, outcome.body).toBe(200);
      expect(outcome.received).toEqual([decoded(c.call.input)]);
      expect(outcome.answer).toBe(c.call.operation.output);
      expect(outcome.answerValue).toEqual({ value: decoded(c.call.output) });
      // The verdict scripts/contract-corpus.ts gives an outside corpus.
      expect(callProblem(c.call, outcome)).toBeUndefined();
    });
  }
});

/** How many of the 45 are called: those with a request-response operation the generator can drive. */
const CALLED = 35;
