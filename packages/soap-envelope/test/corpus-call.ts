import { isDeepStrictEqual } from "node:util";
import { escapeXml } from "@svc/errors";
import { bindingAddressing, declaresAddressing } from "../src/addressing/wsdl-actions.js";
import { createSoapService } from "../src/index.js";
import type { Contract, ContractOperation, LoadContractOptions } from "../src/wsdl/contract.js";
import { parseXmlString, resolveLimits } from "../src/xml/reader.js";
import { decoded, elementValue, type Node, NoValue } from "./corpus-values.js";

// One operation of a corpus contract called in process, as a team's endpoint would serve it: a
// minimal valid value of its input element (corpus-values.ts) encoded by the contract's schema
// into an envelope, its handler answering a minimal valid value of the output element. Shared by
// test/corpus-tolerant.test.ts and scripts/contract-corpus.ts.

const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
const SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
const WSA = "http://www.w3.org/2005/08/addressing";

/** The operation called and the values sent and answered. */
export interface CorpusCall {
  operation: ContractOperation & { output: string };
  input: Node;
  output: Node;
}

/**
 * The first request-response operation with one element in its Body each way whose values the
 * generator builds, else why there is none (each operation's reason, `; `-separated).
 */
export function corpusCall(contract: Contract): CorpusCall | string {
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
      return { operation: { ...operation, output: operation.output }, input, output };
    } catch (err) {
      if (!(err instanceof NoValue)) throw err;
      reasons.push(`${operation.name}: ${err.message}`);
    }
  }
  return reasons.join("; ") || "no request-response operation";
}

/** What came back from one call. */
export interface CallOutcome {
  status: number;
  body: string;
  /** What the handler received, and what the endpoint's logger was given, in order. */
  received: unknown[];
  /** The Clark name of the answer's Body element. */
  answer: string | undefined;
  /** The answer's Body element decoded by the contract's schema, or the error decoding it threw. */
  answerValue: { value: unknown } | { error: unknown };
}

/** Serves `wsdl` with `options` in process and calls `call.operation` once. */
export async function callInProcess(
  wsdl: string,
  options: LoadContractOptions,
  contract: Contract,
  call: CorpusCall,
): Promise<CallOutcome> {
  const received: unknown[] = [];
  const quiet = { warn: () => {}, error: () => {} };
  const handlers = Object.fromEntries(
    contract.operations.map((op) => [
      op.name,
      async (payload: unknown) => {
        received.push(payload);
        return decoded(call.output);
      },
    ]),
  );
  const service = createSoapService({
    wsdl,
    handlers,
    contract: { ...options, logger: quiet },
    logger: { error: (obj: object) => received.push(obj) },
  } as Parameters<typeof createSoapService>[0]);
  const soap12 = contract.versions.includes("1.2");
  const action = call.operation.soapAction;
  const body = contract.schema.encode(call.operation.input, decoded(call.input));
  // A binding that requires WS-Addressing refuses a message without its headers (WS-Addressing
  // 1.0 Metadata §3.1.1): the operation's input [action], a message id, the anonymous reply.
  const addressing = declaresAddressing(contract)
    ? bindingAddressing(contract)[soap12 ? "1.2" : "1.1"]
    : undefined;
  const wsaAction = addressing?.byOperation.get(call.operation.name)?.input;
  const header =
    addressing?.use === "required" && wsaAction !== undefined
      ? `<e:Header xmlns:wsa="${WSA}"><wsa:Action>${escapeXml(wsaAction)}</wsa:Action><wsa:MessageID>urn:uuid:00000000-0000-4000-8000-000000000001</wsa:MessageID><wsa:ReplyTo><wsa:Address>${WSA}/anonymous</wsa:Address></wsa:ReplyTo></e:Header>`
      : "";
  const response = await service.handle({
    method: "POST",
    contentType: soap12
      ? `application/soap+xml; charset=utf-8${action ? `; action="${action}"` : ""}`
      : "text/xml; charset=utf-8",
    contentLength: undefined,
    soapAction: soap12 ? undefined : `"${action}"`,
    body: `<e:Envelope xmlns:e="${soap12 ? SOAP12 : SOAP11}">${header}<e:Body>${body}</e:Body></e:Envelope>`,
  });
  const text = String(response.body);
  let answer: string | undefined;
  let answerValue: CallOutcome["answerValue"] = { error: new Error("no Body element") };
  try {
    const envelope = parseXmlString(text, resolveLimits());
    const element = envelope.children.find((e) => e.localName === "Body")?.children[0];
    if (element !== undefined) {
      answer = element.namespace ? `{${element.namespace}}${element.localName}` : element.localName;
      answerValue = { value: contract.schema.decode(element) };
    }
  } catch (error) {
    answerValue = { error };
  }
  return { status: response.status, body: text, received, answer, answerValue };
}

/**
 * Why a call's outcome is not a schema-valid 200 that carried the values both ways, or undefined
 * when it is one.
 */
export function callProblem(call: CorpusCall, outcome: CallOutcome): string | undefined {
  if (outcome.status !== 200) return `status ${outcome.status}: ${outcome.body.slice(0, 300)}`;
  if (!isDeepStrictEqual(outcome.received, [decoded(call.input)]))
    return "the handler did not receive the value sent";
  if (outcome.answer !== call.operation.output)
    return `the answer is ${outcome.answer}, not ${call.operation.output}`;
  if ("error" in outcome.answerValue)
    return `the answer does not decode: ${String(outcome.answerValue.error)}`;
  if (!isDeepStrictEqual(outcome.answerValue.value, decoded(call.output)))
    return "the answer does not decode as the value answered";
  return undefined;
}
