import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { listen } from "@svc/test-utils";
import express from "express";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { soapEndpoint } from "../src/express.js";
import { type Contract, type ContractOperation, loadContract } from "../src/wsdl/contract.js";
import { compileXsdPattern } from "../src/xsd/regex.js";
import { CORPUS, contractOptions, wsdlFiles } from "./corpus-files.js";
import {
  type Client,
  decoded,
  differences,
  elementValue,
  type Node,
  NoValue,
  nodeSoapInput,
  patternExample,
  zeepInput,
} from "./corpus-values.js";
import { soapErrors } from "./helpers.js";
import { PYTHON, zeepAvailable } from "./zeep.js";

/**
 * Every corpus WSDL that loads, served from a real listening server and called by the two clients
 * teams use, as they use them: node-soap's `createClientAsync(url)` and zeep's `Client(url)`, each
 * loading the WSDL the endpoint serves (zeep's first SOAP port bound to the endpoint,
 * zeep-calls.py). For each contract one request-response operation is called with a minimal valid
 * value of its input element (corpus-values.ts); its handler answers a minimal valid value of the
 * output element. Checked: the handler received what the client sent, the client received what
 * the handler answered, no fault. The set follows what loads: a contract that starts loading is
 * called too, and one a client cannot call goes in CLIENT_LIMITS.
 */
/** What each client cannot do with a corpus contract, with the client's own error. */
const CLIENT_LIMITS: Readonly<Record<string, Partial<Record<Client, RegExp>>>> = {
  // node-soap qualifies every local element with the namespace of the element it is in: here
  // clientId, local to a type of a schema with elementFormDefault unqualified (XML Schema Part 1
  // §3.3.2), is sent as {http://request.dummy.com}clientId, and the service refuses it.
  // node-soap sends the part the binding puts in a soap:header (Authentication) in the Body too.
  "zeep/soap_header.wsdl": {
    "node-soap": /does not take \{http:\/\/example\.com\/stockquote\.xsd\}Authentication/,
  },
  // Both parts name their element with the prefix xsns, declared on each part for another
  // namespace: node-soap sends Request1 in no namespace, which no operation takes. zeep asks for
  // requestHeader, required in a sequence that is itself optional (minOccurs="0"), so an empty
  // Request1 is valid (XML Schema Part 1 §3.9.1).
  "node-soap-samples/fooOp__should_return_back_good_response_object/soap.wsdl": {
    "node-soap": /No operation takes Request1/,
    zeep: /Missing element requestHeader \(Request1\.requestHeader\)/,
  },
  // node-soap writes getMessageRequest's children with its placeholder prefix __tns__ unbound.
  "node-soap-samples/getMessage__does_not_use_schema_xmlns/soap.wsdl": {
    "node-soap": /unbound namespace prefix: "__tns__"/,
  },
  // node-soap sends an rpc wrapper in the WSDL's targetNamespace, not in the soap:body namespace
  // WSDL 1.1 §3.5 names (which differs here), so no operation takes it.
  "node-soap/hello.wsdl": {
    "node-soap": /does not take \{http:\/\/www\.examples\.com\/wsdl\/HelloService\.wsdl\}sayHello/,
  },
  "node-soap/multi-service.wsdl": {
    "node-soap": /does not take \{http:\/\/www\.examples\.com\/wsdl\/HelloService\.wsdl\}sayHello/,
  },
  "node-soap-samples/Login__unsupported_response_name_returned_and_local_xs_schema_missed/soap.wsdl": {
    "node-soap": /does not take \{urn:webservice-electrasoft-ru\}Login/,
  },
  "node-soap-samples/getAttachments__should_handle_MTOM_response/soap.wsdl": {
    "node-soap": /does not take \{http:\/\/www\.examples\.com\/wsdl\/MTOMService\.wsdl\}getAttachments/,
  },
  // zeep takes a SOAP-ENC array as a list of its items, where the round trip gives { item: [...] };
  // and for this array of xsd:string it leaves the wsdl:arrayType unresolved and reads the members
  // as xs:any, which it takes only as built AnyObject values, not plain strings.
  "node-soap-samples/multiCall__rpc_stype_request_xsi_attributes/soap.wsdl": {
    zeep: /ArrayValue\.__init__\(\) got an unexpected keyword argument 'item'/,
  },
  "zeep/claim.wsdl": {
    "node-soap": /does not take \{http:\/\/risky-stuff\.com\/soap\/GetClaimDetails\/\}GetClaimDetails/,
  },
  // As for array_namespace_override: the accessors of an rpc part's struct, local to a schema with
  // no elementFormDefault (unqualified), sent in the wrapper's namespace.
  "node-soap/strict/EVacSyncService_SPClient.wsdl": {
    "node-soap":
      /expected element RecordSequenceID, found RecordSequenceID \{http:\/\/spclient\.evac\.ericsson\.com\}/,
  },
  // gSOAP writes SOAP 1.1's arrayType in the SOAP 1.2 encoding's namespace, which declares no
  // such attribute (SOAP 1.2 Part 2 §3.1.6 names itemType and arraySize); zeep stops there.
  "node-soap/rpcexample.wsdl": {
    zeep: /Unable to resolve attribute \{http:\/\/www\.w3\.org\/2003\/05\/soap-encoding\}arrayType/,
  },
  "node-soap/array_namespace_override.wsdl": {
    "node-soap":
      /Invalid request: CreateWebOrderRequest: expected element clientId, found clientId \{http:\/\/request\.dummy\.com\}/,
  },
};

/** The location a `wsdl:import`, `xs:import` or `xs:include` names. */
const IMPORTED = /<(?:[\w.-]+:)?(?:import|include)\b[^>]*?\s(?:schemaLocation|location)="([^"]*)"/g;

/** Whether a contract file, or a local file it imports or includes, names a remote location. */
function importsRemote(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  for (const [, location] of readFileSync(file, "utf8").matchAll(IMPORTED)) {
    if (/^https?:/.test(location ?? "")) return true;
    if (location && importsRemote(join(dirname(file), location), seen)) return true;
  }
  return false;
}

/** A contract that loads but has no operation to call here, and why. */
const NOT_CALLED: Readonly<Record<string, RegExp>> = {
  "node-soap/complex/registration.wsdl": /no request-response operation/,
  "node-soap/strict/one-way.wsdl": /no request-response operation/,
  "node-soap-samples/OneWay__should_handle_one_way_operation/soap.wsdl": /no request-response operation/,
  // Notifications only: loaded, none served (WSDL 1.1 §2.4.3, §2.4.4).
  "node-soap/cross_schema.wsdl": /no request-response operation/,
  "node-soap/nsTypeConflict/main.wsdl": /no request-response operation/,
  "node-soap/empty_body.wsdl": /a Body of parts/,
  "node-soap/wsdl_with_restriction_attributes.wsdl": /a Body of parts/,
  "node-soap/wsdl_style_mix.wsdl": /a required xs:any/,
  "zeep/soap_import_main.wsdl": /a remote schemaLocation/,
};

interface Case {
  file: string;
  wsdl: string;
  contract: Contract;
  operation: ContractOperation;
  input: Node;
  output: Node;
}

/**
 * Besides the corpus, a contract with one element of each kind of simple value (every value form
 * the generator and the comparison know), served in SOAP 1.2 only.
 */
const BUILTINS = join(import.meta.dirname, "fixtures/builtins.wsdl");
const files = [...wsdlFiles(CORPUS), BUILTINS];
const notCalled: Record<string, string> = {};
const cases: Case[] = files.flatMap((wsdl): Case[] => {
  const file = relative(wsdl === BUILTINS ? import.meta.dirname : CORPUS, wsdl);
  let contract: Contract;
  try {
    contract = loadContract(wsdl, contractOptions(wsdl));
  } catch {
    return []; // corpus.test.ts says why
  }
  const reasons: string[] = [];
  // The clients load the served WSDL and fetch what it imports; a remote schemaLocation (SOAP-ENC
  // at schemas.xmlsoap.org, which the node has built in) would need the network this test avoids.
  if (importsRemote(wsdl)) {
    notCalled[file] = "a remote schemaLocation the clients would fetch";
    return [];
  }
  for (const operation of contract.operations) {
    if (operation.output === undefined) continue;
    const single = (body: readonly string[] | undefined, element: string | undefined) =>
      body?.length === 1 && body[0] === element;
    if (!single(operation.inputBody, operation.input) || !single(operation.outputBody, operation.output)) {
      // The generator builds one element per message; a Body of parts is checked by
      // src/wsdl-styles.test.ts with both clients.
      reasons.push(`${operation.name}: a Body of parts (type= parts, several or none)`);
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

/** What each operation's handler received, by client (each client calls its own mount). */
const received = new Map<string, unknown[]>();
/** What each mount logged (a result that does not match the schema, a handler's error). */
const logged = new Map<string, unknown[]>();

/** A failed call's error, with what the service logged meanwhile. */
function failure(key: string, error: string): Error {
  const log = logged.get(key) ?? [];
  return new Error(
    log.length === 0
      ? error
      : `${error}\nthe service logged: ${String((log[0] as { err?: unknown }).err ?? JSON.stringify(log[0]))}`,
  );
}

let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  const app = express();
  const paths: string[] = [];
  for (const [index, c] of cases.entries()) {
    for (const client of ["node-soap", "zeep"] as const) {
      const key = `${client} ${c.file}`;
      received.set(key, []);
      logged.set(key, []);
      const handlers = Object.fromEntries(
        c.contract.operations.map((op) => [
          op.name,
          async (payload: unknown) => {
            if (op.name !== c.operation.name) throw new Error(`${op.name} is not called here`);
            received.get(key)?.push(payload);
            return decoded(c.output);
          },
        ]),
      );
      app.use(
        `/${client}/${index}`,
        soapEndpoint({
          wsdl: c.wsdl,
          handlers,
          contract: contractOptions(c.wsdl),
          logger: { error: (obj: object) => logged.get(key)?.push(obj) },
        } as Parameters<typeof soapEndpoint>[0]),
      );
      paths.push(`/${client}/${index}`);
    }
  }
  app.use(soapErrors(paths));
  server = await listen(app);
});
afterAll(() => server?.close());

const endpoint = (client: Client, c: Case) => `${server.url}/${client}/${cases.indexOf(c)}`;

describe("the corpus round trip: what is called", () => {
  it("every corpus WSDL that loads is called, or says why not", () => {
    expect(notCalled).toEqual(
      Object.fromEntries(Object.entries(NOT_CALLED).map(([file, why]) => [file, expect.stringMatching(why)])),
    );
    for (const file of Object.keys(CLIENT_LIMITS)) expect(cases.map((c) => c.file)).toContain(file);
  });
});

describe("the comparison with a client's result", () => {
  const expected: Node = {
    kind: "complex",
    attributes: [["id", { kind: "leaf", base: "int", lexical: "1" }]],
    children: [
      ["name", { kind: "leaf", base: "string", lexical: "a" }],
      ["at", [{ kind: "leaf", base: "dateTime", lexical: "2001-02-03T04:05:06Z" }]],
    ],
    emptyLists: [],
  };

  it("takes each client's value forms", () => {
    const at = new Date("2001-02-03T04:05:06Z");
    expect(differences(expected, { attributes: { id: "1" }, name: "a", at }, "node-soap")).toEqual([]);
    expect(
      differences(expected, { id: 1, name: "a", at: ["2001-02-03T04:05:06+00:00"], note: null }, "zeep"),
    ).toEqual([]);
  });

  it("takes node-soap's bare value for an element of simple content without attributes", () => {
    const code: Node = {
      kind: "complex",
      attributes: [],
      children: [],
      emptyLists: [],
      simpleContent: { kind: "leaf", base: "string", lexical: "a" },
    };
    expect(differences(code, "a", "node-soap")).toEqual([]);
    expect(differences(code, { $value: "a" }, "node-soap")).toEqual([]);
    expect(differences(code, "b", "node-soap")).toEqual(['result: expected a, got "b"']);
  });

  it("names what differs, what is missing and what was not sent", () => {
    expect(differences(expected, { id: 2, at: ["2001-02-03T04:05:07Z"], extra: "x" }, "zeep")).toEqual([
      "result@id: expected 1, got 2",
      "result.name: expected a, got undefined",
      'result.at[0]: expected 2001-02-03T04:05:06Z, got "2001-02-03T04:05:07Z"',
      'result.extra: not sent, got "x"',
    ]);
  });
});

describe("the value generator's patterns", () => {
  it.each([
    "[A-Za-z][A-Za-z][A-Za-z]",
    "[\\da-fA-F]{8}-[\\da-fA-F]{4}-[\\da-fA-F]{4}-[\\da-fA-F]{4}-[\\da-fA-F]{12}",
    "\\d{5,15}",
    "0|1",
    "EBID[A-Z0-9]{32}",
    "(ab|c)+\\.\\p{Lu}?[^x]\\W",
    "[a-z\\]\\[\\{\\}\\r\\n]{0,255}",
  ])("%s: a string it matches", (pattern) => {
    const example = patternExample(pattern);
    expect(example).toBeDefined();
    expect(compileXsdPattern(pattern).test(example as string)).toBe(true);
  });
});

/** The error a failed call ends with, its first line, with the fault's reason when it is one. */
function reasonOf(err: unknown): string {
  const e = err as { message?: string; root?: { Envelope?: { Body?: { Fault?: unknown } } } };
  const fault = e.root?.Envelope?.Body?.Fault;
  return `${String(e.message ?? err).split("\n")[0]}${fault ? ` ${JSON.stringify(fault)}` : ""}`;
}

describe("the corpus round trip with node-soap", () => {
  for (const c of cases) {
    const limit = CLIENT_LIMITS[c.file]?.["node-soap"];
    it(`${c.file}: ${c.operation.name}${limit ? " (node-soap cannot)" : ""}`, async () => {
      const key = `node-soap ${c.file}`;
      const before = received.get(key)?.length ?? 0;
      const outcome = await (async () => {
        const client = await soap.createClientAsync(`${endpoint("node-soap", c)}?wsdl`, {
          forceSoap12Headers: !c.contract.versions.includes("1.1"),
        });
        const method = client[`${c.operation.name}Async`] as (args: unknown) => Promise<[unknown]>;
        const [result] = await method.call(client, nodeSoapInput(c.input));
        return { result };
      })().catch((err: unknown) => ({ error: reasonOf(err) }));
      if (limit !== undefined) {
        expect("error" in outcome ? outcome.error : "a round trip", c.file).toMatch(limit);
        return;
      }
      if ("error" in outcome) throw failure(key, outcome.error);
      expect(received.get(key)?.slice(before), "the handler received").toEqual([decoded(c.input)]);
      expect(differences(c.output, outcome.result, "node-soap"), "the client received").toEqual([]);
    });
  }
});

const hasZeep = zeepAvailable("corpus-roundtrip.test.ts");

/** One python process calls every operation in turn (zeep-calls.py). */
function zeepCalls(calls: { wsdl: string; address: string; operation: string; input: unknown }[]) {
  return new Promise<({ result: unknown } | { error: string })[]>((resolve, reject) => {
    const child = execFile(
      PYTHON,
      [join(import.meta.dirname, "zeep-calls.py")],
      { timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
    child.stdin?.end(JSON.stringify(calls));
  });
}

describe.skipIf(!hasZeep)("the corpus round trip with zeep", () => {
  let outcomes: ({ result: unknown } | { error: string })[] = [];
  beforeAll(async () => {
    outcomes = await zeepCalls(
      cases.map((c) => ({
        wsdl: `${endpoint("zeep", c)}?wsdl`,
        address: endpoint("zeep", c),
        operation: c.operation.name,
        input: zeepInput(c.input),
      })),
    );
  }, 120_000);

  for (const [index, c] of cases.entries()) {
    const limit = CLIENT_LIMITS[c.file]?.zeep;
    it(`${c.file}: ${c.operation.name}${limit ? " (zeep cannot)" : ""}`, () => {
      const outcome = outcomes[index];
      if (outcome === undefined) throw new Error("no outcome");
      if (limit !== undefined) {
        expect("error" in outcome ? outcome.error : "a round trip", c.file).toMatch(limit);
        return;
      }
      if ("error" in outcome) throw failure(`zeep ${c.file}`, outcome.error);
      expect(received.get(`zeep ${c.file}`), "the handler received").toEqual([decoded(c.input)]);
      expect(differences(c.output, outcome.result, "zeep"), "the client received").toEqual([]);
    });
  }
});
