import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, post, readFault, startSoapService } from "../../test/helpers.js";
import { runZeep, zeepAvailable } from "../../test/zeep.js";
import { loadContract } from "./contract.js";
import { generateTypes } from "./generate-types.js";

/**
 * WSDL 1.1 §3.5: rpc style (a wrapper element named after the operation, its parts as
 * unqualified accessors) and document style with type= parts, several parts or none (the parts
 * directly in the Body), served through a listening endpoint.
 */
const RPC_WSDL = join(FIXTURES, "rpc.wsdl");
const PARTS_WSDL = join(FIXTURES, "parts.wsdl");
const SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";

const calls: unknown[] = [];
const handlers = {
  add: ({ a, b }: { a: number; b: number }) => ({ sum: a + b }),
  move: (p: { from: { x: number; y: number }; by: { x: number; y: number } }) => {
    calls.push(p);
    return { to: { x: p.from.x + p.by.x, y: p.from.y + p.by.y } };
  },
  reset: (p: unknown) => {
    calls.push(p);
    return {};
  },
};

const start = (wsdl: string) => startSoapService({ wsdl, handlers: handlers as never }, "/ws/calc");

const env11 = (body: string) => `<s:Envelope xmlns:s="${SOAP11}"><s:Body>${body}</s:Body></s:Envelope>`;
const env12 = (body: string) => `<s:Envelope xmlns:s="${SOAP12}"><s:Body>${body}</s:Body></s:Envelope>`;
const post11 = (url: string, body: string, action: string) =>
  post(url, env11(body), "text/xml; charset=utf-8", { SOAPAction: `"${action}"` });
const post12 = (url: string, body: string, action?: string) =>
  post(url, env12(body), `application/soap+xml; charset=utf-8${action ? `; action="${action}"` : ""}`);

describe("loadContract: rpc style and document-style parts", () => {
  it.each([
    [
      "rpc",
      RPC_WSDL,
      [
        [
          "add",
          "rpc",
          "{http://svc.example.com/ws/calc}add",
          ["{http://svc.example.com/ws/calc}add"],
          "{http://svc.example.com/ws/calc}addResponse",
          ["{http://svc.example.com/ws/calc}addResponse"],
        ],
        [
          "move",
          "rpc",
          "{http://svc.example.com/ws/calc}move",
          ["{http://svc.example.com/ws/calc}move"],
          "{http://svc.example.com/ws/calc}moveResponse",
          ["{http://svc.example.com/ws/calc}moveResponse"],
        ],
        [
          "reset",
          "rpc",
          "{http://svc.example.com/ws/calc}reset",
          ["{http://svc.example.com/ws/calc}reset"],
          "{http://svc.example.com/ws/calc}resetResponse",
          ["{http://svc.example.com/ws/calc}resetResponse"],
        ],
      ],
    ],
    [
      "document, type= parts, several parts, none",
      PARTS_WSDL,
      [
        [
          "add",
          "document",
          "{urn:svc:soap-envelope:document-parts}add",
          ["a", "b"],
          "{urn:svc:soap-envelope:document-parts}addResponse",
          ["sum"],
        ],
        [
          "move",
          "document",
          "{urn:svc:soap-envelope:document-parts}move",
          ["from", "by", "{http://svc.example.com/ws/calc/types}label"],
          "{urn:svc:soap-envelope:document-parts}moveResponse",
          ["to"],
        ],
        [
          "reset",
          "document",
          "{urn:svc:soap-envelope:document-parts}reset",
          [],
          "{urn:svc:soap-envelope:document-parts}resetResponse",
          [],
        ],
      ],
    ],
  ])("%s → each operation's style, elements and Body", (_name, wsdl, expected) => {
    const c = loadContract(wsdl as string);
    expect(c.versions).toEqual(["1.2", "1.1"]);
    expect(c.operations.map((o) => [o.name, o.style, o.input, o.inputBody, o.output, o.outputBody])).toEqual(
      expected,
    );
  });

  const rpc = (f: (w: string) => string) => () => loadContract(f(readRpc()), { baseDir: FIXTURES });
  it.each([
    [
      "rpc without soap:body namespace",
      (w: string) => w.replaceAll(' namespace="http://svc.example.com/ws/calc"', ""),
      /operation "add": rpc style needs soap12:body namespace= for the input's wrapper element \(WS-I Basic Profile 1.1 R2717\)/,
    ],
    [
      "an rpc wrapper that is also a global element",
      (w: string) =>
        w
          .replaceAll(
            'namespace="http://svc.example.com/ws/calc"',
            'namespace="http://svc.example.com/ws/calc/types"',
          )
          .replace('name="add"', 'name="label"')
          .replace('<wsdl:operation name="add">', '<wsdl:operation name="label">')
          .replaceAll('<wsdl:operation name="add">', '<wsdl:operation name="label">'),
      /its rpc wrapper element \{http:\/\/svc\.example\.com\/ws\/calc\/types\}label is also a global element of the schema/,
    ],
    [
      "soap:body parts= naming no part",
      (w: string) =>
        w.replace(
          '<soap:body use="literal" namespace="http://svc.example.com/ws/calc"/>',
          '<soap:body use="literal" parts="c" namespace="http://svc.example.com/ws/calc"/>',
        ),
      /soap:body parts names "c", which message "AddRequest" does not have/,
    ],
    [
      "a part of an undeclared type",
      (w: string) => w.replace('<wsdl:part name="a" type="xs:int"/>', '<wsdl:part name="a" type="t:Nope"/>'),
      /wsdl:message "AddRequest": type \{http:\/\/svc\.example\.com\/ws\/calc\/types\}Nope is not declared/,
    ],
    [
      "two parts of one name",
      (w: string) => w.replace('<wsdl:part name="b" type="xs:int"/>', '<wsdl:part name="a" type="xs:int"/>'),
      /wsdl:message "AddRequest": two parts are named "a"/,
    ],
    [
      "use=encoded in an encoding of the application's own",
      (w: string) => w.replaceAll('body use="literal"', 'body use="encoded" encodingStyle="urn:x:own-rules"'),
      /body use="encoded" encodingStyle="urn:x:own-rules" is not supported: this node reads and writes the SOAP 1\.\d encoding/,
    ],
  ])("%s → SchemaCompileError", (_name, edit, message) => {
    expect(rpc(edit)).toThrow(message);
  });

  it("document style: a part of an element with an anonymous type → loads, in the Body as that element", () => {
    const c = loadContract(
      readRpc()
        .replaceAll('style="rpc"', 'style="document"')
        .replaceAll(' namespace="http://svc.example.com/ws/calc"', ""),
      {
        baseDir: FIXTURES,
      },
    );
    expect(c.operations[1]?.inputBody).toContain("{http://svc.example.com/ws/calc/types}label");
  });
});

function readRpc(): string {
  return readFileSync(RPC_WSDL, "utf8");
}

const hasZeep = zeepAvailable("wsdl-styles.test.ts");

describe("rpc style through a listening endpoint", () => {
  let svc: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    svc = await start(RPC_WSDL);
  });
  afterAll(() => svc.close());

  it.each([
    [
      "SOAP 1.1 add",
      () =>
        post11(
          svc.endpoint,
          '<c:add xmlns:c="http://svc.example.com/ws/calc"><a>2</a><b>40</b></c:add>',
          "urn:calc:add",
        ),
      200,
      /<addResponse xmlns="http:\/\/svc\.example\.com\/ws\/calc"><sum xmlns="">42<\/sum><\/addResponse>/,
    ],
    [
      "SOAP 1.2 add, routed by the wrapper alone",
      () => post12(svc.endpoint, '<c:add xmlns:c="http://svc.example.com/ws/calc"><a>2</a><b>40</b></c:add>'),
      200,
      /<addResponse xmlns="http:\/\/svc\.example\.com\/ws\/calc"><sum xmlns="">42<\/sum><\/addResponse>/,
    ],
    [
      "move with complex parts",
      () =>
        post11(
          svc.endpoint,
          '<c:move xmlns:c="http://svc.example.com/ws/calc"><from><x>1</x><y>2</y></from><by><x>10</x><y>20</y></by><name>p</name></c:move>',
          "urn:calc:move",
        ),
      200,
      /<moveResponse xmlns="http:\/\/svc\.example\.com\/ws\/calc"><to xmlns=""><x>11<\/x><y>22<\/y><\/to><\/moveResponse>/,
    ],
    [
      "reset, no parts",
      () => post11(svc.endpoint, '<c:reset xmlns:c="http://svc.example.com/ws/calc"/>', "urn:calc:reset"),
      200,
      /<resetResponse xmlns="http:\/\/svc\.example\.com\/ws\/calc"(\/>|><\/resetResponse>)/,
    ],
    [
      "an accessor qualified (R2735: unqualified)",
      () =>
        post11(
          svc.endpoint,
          '<c:add xmlns:c="http://svc.example.com/ws/calc"><c:a>2</c:a><b>40</b></c:add>',
          "urn:calc:add",
        ),
      500,
      /Invalid request/,
    ],
    [
      "a part missing",
      () =>
        post11(
          svc.endpoint,
          '<c:add xmlns:c="http://svc.example.com/ws/calc"><a>2</a></c:add>',
          "urn:calc:add",
        ),
      500,
      /Invalid request/,
    ],
    [
      "the wrapper in another namespace",
      () => post11(svc.endpoint, '<c:add xmlns:c="urn:other"><a>2</a><b>40</b></c:add>', "urn:calc:add"),
      500,
      /does not take \{urn:other\}add/,
    ],
  ])("%s → %i", async (_name, send, status, body) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect(res.text).toMatch(body);
  });

  it("node-soap (SOAP 1.1, its defaults) calls add and move", async () => {
    const client = await soap.createClientAsync(`${svc.endpoint}?wsdl`);
    const [sum] = await client.addAsync({ a: 2, b: 40 });
    expect(sum).toEqual({ sum: 42 });
    expect(client.lastRequest).toMatch(/<tns:add><a>2<\/a><b>40<\/b><\/tns:add>/);
    const [moved] = await client.moveAsync({ from: { x: 1, y: 2 }, by: { x: 10, y: 20 }, name: "p" });
    // node-soap types the parts it reads, not their children (it reads those as strings).
    expect(moved).toEqual({ to: { x: "11", y: "22" } });
  });

  it("node-soap (SOAP 1.2) calls add", async () => {
    const client = await soap.createClientAsync(`${svc.endpoint}?wsdl`, { forceSoap12Headers: true });
    const [sum] = await client.addAsync({ a: 1, b: 1 });
    expect(Number(sum.sum)).toBe(2);
    expect(client.lastRequestHeaders?.["Content-Type"]).toContain("application/soap+xml");
  });

  it.skipIf(!hasZeep)("zeep (SOAP 1.1) calls add and reset, an operation without parts", async () => {
    const out = await runZeep(
      svc.endpoint,
      `
client = zeep.Client(url)
return {"sum": client.service.add(a=2, b=40), "reset": client.service.reset()}
`,
    );
    expect(out).toEqual({ sum: 42, reset: null });
  });
});

describe("document style with type= parts, several parts or none, through a listening endpoint", () => {
  let svc: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    svc = await start(PARTS_WSDL);
  });
  afterAll(() => svc.close());

  it.each([
    [
      "add: two type= parts in the Body",
      () => post11(svc.endpoint, "<a>2</a><b>40</b>", "urn:calc:add"),
      200,
      /<s:Body><sum>42<\/sum><\/s:Body>|<Body><sum>42<\/sum><\/Body>|Body><sum xmlns="">42<\/sum><\//,
    ],
    [
      "move: type= parts and an element part, routed by the first part",
      () =>
        post12(
          svc.endpoint,
          '<from><x>1</x><y>2</y></from><by><x>10</x><y>20</y></by><t:label xmlns:t="http://svc.example.com/ws/calc/types">p</t:label>',
        ),
      200,
      /<to xmlns="">|<to>/,
    ],
    [
      "reset: an empty Body, routed by the action",
      () => post12(svc.endpoint, "", "urn:calc:reset"),
      200,
      /Body\/>|Body><\/[\w:]*Body>/,
    ],
    [
      "reset's action with a part in the Body",
      () => post12(svc.endpoint, "<a>1</a>", "urn:calc:reset"),
      400,
      /The action &quot;urn:calc:reset&quot; takes an empty env:Body, not a|The action "urn:calc:reset" takes an empty env:Body, not a/,
    ],
    [
      "add with the parts out of order",
      () => post11(svc.endpoint, "<b>40</b><a>2</a>", "urn:calc:add"),
      500,
      /does not take b|Invalid request/,
    ],
    [
      "add with a third part",
      () => post11(svc.endpoint, "<a>2</a><b>40</b><c>1</c>", "urn:calc:add"),
      500,
      /Invalid request/,
    ],
  ])("%s → %i", async (_name, send, status, body) => {
    const res = await send();
    expect(res.status, res.text).toBe(status);
    expect(res.text).toMatch(body);
  });

  it("the handler gets the parts by name", async () => {
    const before = calls.length;
    await post12(
      svc.endpoint,
      '<from><x>1</x><y>2</y></from><by><x>10</x><y>20</y></by><t:label xmlns:t="http://svc.example.com/ws/calc/types">p</t:label>',
    );
    expect(calls[before]).toEqual({ from: { x: 1, y: 2 }, by: { x: 10, y: 20 }, label: "p" });
    await post12(svc.endpoint, "", "urn:calc:reset");
    expect(calls[before + 1]).toEqual({});
  });

  it.skipIf(!hasZeep)("zeep (SOAP 1.1) sends the parts in the Body: move and reset answered", async () => {
    const before = calls.length;
    const out = await runZeep(
      svc.endpoint,
      `
client = zeep.Client(url)
moved = serialize_object(client.service.move(**{"from": {"x": 1, "y": 2}, "by": {"x": 10, "y": 20}, "name": "p"}))
return {"moved": moved, "reset": client.service.reset()}
`,
    );
    expect(out).toEqual({ moved: { x: 11, y: 22 }, reset: null });
    expect(calls.slice(before)).toEqual([{ from: { x: 1, y: 2 }, by: { x: 10, y: 20 }, label: "p" }, {}]);
  });

  it("node-soap wraps type= parts in an element named after the message, which WSDL 1.1 §3.5 does not: a Client fault says so", async () => {
    const client = await soap.createClientAsync(`${svc.endpoint}?wsdl`);
    const err = (await client.addAsync({ a: 2, b: 40 }).catch((e: unknown) => e)) as Error;
    expect(client.lastRequest).toContain("<AddRequest><a>2</a><b>40</b></AddRequest>");
    expect(err.message).toMatch(/The action "urn:calc:add" does not take AddRequest/);
  });
});

it("a fault view of a refused rpc request names the cause", async () => {
  const svc = await start(RPC_WSDL);
  try {
    const res = await post12(svc.endpoint, '<c:nope xmlns:c="http://svc.example.com/ws/calc"/>');
    expect(readFault(res.text).reason).toMatch(
      /No operation takes \{http:\/\/svc\.example\.com\/ws\/calc\}nope/,
    );
  } finally {
    await svc.close();
  }
});

describe("svc-soap-types for rpc style and document-style parts", () => {
  it.each([
    [
      RPC_WSDL,
      "  add: { input: Add; output: AddResponseInit };",
      "export type Move = {\n  /** element of Point */\n  from: Point;",
    ],
    [
      PARTS_WSDL,
      "  reset: { input: Reset; output: ResetResponseInit };",
      "  /** xs:string */\n  label: string;",
    ],
  ])("%s → the handlers' payloads and results", (wsdl, operation, payload) => {
    const types = generateTypes(readFileSync(wsdl, "utf8"), { baseDir: FIXTURES });
    expect(types).toContain(operation);
    expect(types).toContain(payload);
  });
});
