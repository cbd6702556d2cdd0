import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFault, startSoapService, textOf } from "../../test/helpers.js";
import { runZeep, zeepAvailable } from "../../test/zeep.js";
import { createSoapService } from "../binding/service.js";
import { loadContract } from "../wsdl/contract.js";

/**
 * rpc/encoded (SOAP 1.1 §5, §7; SOAP 1.2 Part 2 §3, §4; WSDL 1.1 §3.5): what a request may say
 * and what the handler then receives, what is refused and with which fault, and what a response
 * looks like; then node-soap and zeep calling the same contract.
 */
const WSDL = fileURLToPath(new URL("../__fixtures__/encoded.wsdl", import.meta.url));
const SOAP_ENC_XSD = fileURLToPath(new URL("../../test/corpus/zeep/soap-enc.xsd", import.meta.url));
const TNS = "urn:svc:encoded";
const ENV11 = "http://schemas.xmlsoap.org/soap/envelope/";
const ENV12 = "http://www.w3.org/2003/05/soap-envelope";
const ENC11 = "http://schemas.xmlsoap.org/soap/encoding/";
const ENC12 = "http://www.w3.org/2003/05/soap-encoding";
const NS = `xmlns:t="${TNS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"`;

const received: unknown[] = [];
const handlers = {
  greet: (p: { person: { name: string }; names: { item?: string[] } }) => {
    received.push(p);
    return { greeting: `Hello, ${p.person.name}`, names: p.names };
  },
  team: (p: { members: { item?: unknown[] } }) => {
    received.push(p);
    return { size: p.members.item?.length ?? 0, members: p.members };
  },
  // An xs:anyType result is a string (written as xsd:string) or an object.
  echo: (p: { value: unknown }) => {
    received.push(p);
    return { value: String(p.value) };
  },
};
const service = createSoapService({ wsdl: WSDL, handlers: handlers as never });

async function call11(
  action: string,
  body: string,
  envelopeAttrs = ` s:encodingStyle="${ENC11}"`,
  to = service,
) {
  received.length = 0;
  const r = await to.handle({
    method: "POST",
    contentType: "text/xml; charset=utf-8",
    contentLength: undefined,
    soapAction: `"${TNS}#${action}"`,
    body: `<s:Envelope xmlns:s="${ENV11}" xmlns:enc="${ENC11}" ${NS}${envelopeAttrs}><s:Body>${body}</s:Body></s:Envelope>`,
  });
  return { status: r.status, body: textOf(r.body), payload: received[0] };
}

async function call12(action: string, body: string) {
  received.length = 0;
  const r = await service.handle({
    method: "POST",
    contentType: `application/soap+xml; charset=utf-8; action="${TNS}#${action}"`,
    contentLength: undefined,
    body: `<e:Envelope xmlns:e="${ENV12}" xmlns:enc="${ENC12}" ${NS}><e:Body>${body}</e:Body></e:Envelope>`,
  });
  return { status: r.status, body: textOf(r.body), payload: received[0] };
}

/** A SOAP 1.1 fault's faultcode and faultstring (SOAP 1.1 §4.4), its entities read. */
function fault11(body: string): { code: string | undefined; reason: string | undefined } {
  const text = (name: string) =>
    body
      .match(new RegExp(`<${name}>([^<]*)</${name}>`))?.[1]
      ?.replaceAll("&quot;", '"')
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">")
      .replaceAll("&apos;", "'")
      .replaceAll("&amp;", "&");
  return { code: text("faultcode"), reason: text("faultstring") };
}

const ann = "<name>Ann</name><age>3</age>";
const greet = (person: string, names: string) =>
  `<t:greet ${NS}><person>${person}</person><names${names}</names></t:greet>`;

describe("loadContract: rpc/encoded", () => {
  it("each operation is rpc and encoded, in both bindings", () => {
    const c = loadContract(WSDL);
    expect(c.versions).toEqual(["1.2", "1.1"]);
    for (const v of ["1.1", "1.2"] as const) {
      expect(c.bindings[v]?.map((o) => [o.name, o.style, o.use])).toEqual([
        ["greet", "rpc", "encoded"],
        ["team", "rpc", "encoded"],
        ["echo", "rpc", "encoded"],
      ]);
    }
  });

  // Each row edits the WSDL and keeps the one port whose binding it breaks (with the other port
  // there, the contract would load in that one's version alone).
  it.each([
    [
      "an encoding of the application's own",
      "1.1",
      (w: string) => w.replaceAll(`encodingStyle="${ENC11}"`, 'encodingStyle="urn:x:own"'),
      /operation "greet" \(line \d+\): soap:body use="encoded" encodingStyle="urn:x:own" is not supported: this node reads and writes the SOAP 1\.1 encoding/,
    ],
    [
      "SOAP 1.2's encoding in a SOAP 1.1 binding",
      "1.1",
      (w: string) => w.replaceAll(`encodingStyle="${ENC11}"`, `encodingStyle="${ENC12}"`),
      /soap:body use="encoded" encodingStyle="http:\/\/www\.w3\.org\/2003\/05\/soap-encoding" is not supported: this node reads and writes the SOAP 1\.1 encoding/,
    ],
    [
      "no encodingStyle",
      "1.2",
      (w: string) => w.replaceAll(` encodingStyle="${ENC12}"`, ""),
      /soap12:body use="encoded" needs encodingStyle="http:\/\/www\.w3\.org\/2003\/05\/soap-encoding"/,
    ],
    [
      "an encoded input and a literal output",
      "1.1",
      (w: string) =>
        w.replace(
          `<wsdl:output><soap:body use="encoded" namespace="urn:svc:encoded" encodingStyle="${ENC11}"/>`,
          '<wsdl:output><soap:body use="literal" namespace="urn:svc:encoded"/>',
        ),
      /operation "greet": its input and output differ in soap:body use/,
    ],
    [
      "an array of arrays",
      "1.1",
      (w: string) => w.replace('wsdl:arrayType="tns:Person[]"', 'wsdl:arrayType="tns:Person[][]"'),
      /wsdl:arrayType="tns:Person\[\]\[\]": an array of arrays is not supported/,
    ],
  ])("%s → refused at load, naming where", (_name, keep, edit, message) => {
    const other = keep === "1.1" ? "Encoded12Port" : "Encoded11Port";
    const text = edit(readFileSync(WSDL, "utf8")).replace(
      new RegExp(`<wsdl:port name="${other}"[\\s\\S]*?</wsdl:port>`),
      "",
    );
    expect(() => loadContract(text, { baseDir: dirname(WSDL) })).toThrow(message);
  });
});

describe("requests (SOAP 1.1 §5, §7): accepted, and what the handler receives", () => {
  it.each([
    [
      "plain accessors, no xsi:type",
      greet(ann, ' enc:arrayType="xsd:string[2]"><i>a</i><i>b</i>'),
      {
        person: { name: "Ann", age: 3 },
        names: { item: ["a", "b"] },
      },
    ],
    [
      "xsi:type naming each declared type (soapenc:string for xsd:string, the generic SOAP-ENC:Array)",
      greet(
        '<name xsi:type="enc:string">Ann</name><age xsi:type="xsd:int">3</age>',
        ' xsi:type="enc:Array" enc:arrayType="xsd:string[1]"><item xsi:type="xsd:string">a</item>',
      ),
      { person: { name: "Ann", age: 3 }, names: { item: ["a"] } },
    ],
    [
      "an array without arrayType, its size unstated",
      greet(ann, "><x>a</x>"),
      { person: { name: "Ann", age: 3 }, names: { item: ["a"] } },
    ],
    [
      "xsi:type naming a type derived from the declared one",
      `<t:team ${NS}><lead xsi:type="t:Employee">${ann}<badge>7</badge></lead><members enc:arrayType="t:Person[0]"/></t:team>`,
      { lead: { $type: `{${TNS}}Employee`, name: "Ann", age: 3, badge: "7" }, members: {} },
    ],
    [
      "multi-reference values (Axis's independent multiRef elements, one referred to twice)",
      `<t:team ${NS}><lead href="#p1"/><members enc:arrayType="t:Person[2]"><m href="#p1"/><m href="#p2"/></members></t:team>` +
        `<multiRef id="p1" enc:root="0" xsi:type="t:Person" ${NS}>${ann}</multiRef>` +
        `<multiRef id="p2" enc:root="0" xsi:type="t:Employee" ${NS}><name>Bob</name><age>4</age><badge>8</badge></multiRef>`,
      {
        lead: { name: "Ann", age: 3 },
        members: {
          item: [
            { name: "Ann", age: 3 },
            { $type: `{${TNS}}Employee`, name: "Bob", age: 4, badge: "8" },
          ],
        },
      },
    ],
    [
      "a reference to an element inside the wrapper",
      `<t:team ${NS}><lead id="a">${ann}</lead><members enc:arrayType="t:Person[1]"><m href="#a"/></members></t:team>`,
      { lead: { name: "Ann", age: 3 }, members: { item: [{ name: "Ann", age: 3 }] } },
    ],
    [
      "an xs:anyType part typed by xsi:type",
      `<t:echo ${NS}><value xsi:type="xsd:int">5</value></t:echo>`,
      { value: 5 },
    ],
  ])("%s", async (_name, body, payload) => {
    const action = body.slice(3, body.indexOf(" "));
    const r = await call11(action, body);
    expect(r.status, r.body).toBe(200);
    expect(r.payload).toEqual(payload);
  });

  it("without encodingStyle on the envelope (the binding says it) → accepted", async () => {
    const r = await call11("greet", greet(ann, "><x>a</x>"), "");
    expect(r.status, r.body).toBe(200);
  });
});

describe("requests: refused, each with a Client fault naming why", () => {
  it.each([
    [
      "an encodingStyle other than SOAP's",
      greet(ann, ">"),
      ' s:encodingStyle="urn:x:own"',
      /Encoding style "urn:x:own" is not supported \(the SOAP encoding, http:\/\/schemas\.xmlsoap\.org\/soap\/encoding\/, only\)/,
    ],
    [
      "a cycle of references",
      `<t:team ${NS}><lead href="#a"/><members enc:arrayType="t:Person[1]"><m id="a"><name href="#a"/><age>1</age></m></members></t:team>`,
      undefined,
      /team\/lead\[1\]\/name\[1\]: refers to "a", an element it is inside of: a graph with a cycle has no value as a tree/,
    ],
    [
      "a reference to no element",
      `<t:team ${NS}><lead href="#nowhere"/><members/></t:team>`,
      undefined,
      /refers to "nowhere", which no element of the Body has as its id/,
    ],
    [
      "a reference outside the message",
      `<t:team ${NS}><lead href="http://example.com/p"/><members/></t:team>`,
      undefined,
      /href="http:\/\/example\.com\/p" names no element of this message/,
    ],
    [
      "an id given twice",
      `<t:team ${NS}><lead id="a">${ann}</lead><members><m id="a">${ann}</m></members></t:team>`,
      undefined,
      /id "a" is given twice/,
    ],
    [
      "a referring accessor with content of its own",
      `<t:team ${NS}><lead href="#a">${ann}</lead><members/></t:team><multiRef id="a">${ann}</multiRef>`,
      undefined,
      /refers to another element and has content of its own/,
    ],
    [
      "an array whose declared size is not its member count",
      greet(ann, ' enc:arrayType="xsd:string[3]"><i>a</i>'),
      undefined,
      /the array declares 3 member\(s\) and holds 1/,
    ],
    [
      "an array of another item type",
      greet(ann, ' enc:arrayType="xsd:int[1]"><i>1</i>'),
      undefined,
      /the array's item type \{http:\/\/www\.w3\.org\/2001\/XMLSchema\}int cannot replace \{http:\/\/www\.w3\.org\/2001\/XMLSchema\}string/,
    ],
    [
      "a member that is not of the item type",
      `<t:team ${NS}><lead>${ann}</lead><members enc:arrayType="t:Person[1]"><m><name>A</name></m></members></t:team>`,
      undefined,
      /Invalid request: team\/members\/item: expected element age/,
    ],
    [
      "a partially transmitted array",
      greet(ann, ' enc:arrayType="xsd:string[2]" enc:offset="[1]"><i>a</i>'),
      undefined,
      /a partially transmitted array \(SOAP-ENC:offset\) is not supported/,
    ],
    [
      "a sparse array",
      greet(ann, ' enc:arrayType="xsd:string[2]"><i enc:position="[1]">a</i>'),
      undefined,
      /a sparse array \(SOAP-ENC:position\) is not supported/,
    ],
    [
      "an array of arrays on the wire",
      greet(ann, ' enc:arrayType="xsd:string[][1]"><i>a</i>'),
      undefined,
      /arrays of arrays are not supported/,
    ],
    [
      "xsi:type naming a type not derived from the declared one",
      greet('<name xsi:type="xsd:int">1</name><age>3</age>', ">"),
      undefined,
      /xsi:type="xsd:int" cannot replace \{http:\/\/schemas\.xmlsoap\.org\/soap\/encoding\/\}string: it is not derived from the declared type/,
    ],
    [
      "a Body child after the wrapper that nothing refers to",
      `${greet(ann, ">")}<t:greet ${NS}/>`,
      undefined,
      /the Body must hold the one element greet, not also greet/,
    ],
  ])("%s", async (_name, body, envelopeAttrs, reason) => {
    const action = body.slice(3, body.indexOf(" "));
    const r = await call11(action, body, envelopeAttrs);
    expect(r.status).toBe(500);
    expect(fault11(r.body)).toEqual({ code: "SOAP-ENV:Client", reason: expect.stringMatching(reason) });
    expect(r.payload).toBeUndefined();
  });

  it("references that expand past limits.maxElements → Client fault, the handler not called", async () => {
    // Each level refers twice to the next: 2^18 copies of an xs:anyType value from 40 elements.
    let body = `<t:echo ${NS}><value href="#l0"/></t:echo>`;
    for (let i = 0; i < 18; i++)
      body += `<multiRef id="l${i}"><a href="#l${i + 1}"/><b href="#l${i + 1}"/></multiRef>`;
    body += '<multiRef id="l18">1</multiRef>';
    // Bytes unbounded: at some 60 bytes a copy, limits.maxExpandedBytes would refuse it first.
    const unbounded = createSoapService({
      wsdl: WSDL,
      handlers: handlers as never,
      limits: { maxExpandedBytes: Number.MAX_SAFE_INTEGER },
    });
    const r = await call11("echo", body, undefined, unbounded);
    expect(r.status).toBe(500);
    expect(fault11(r.body).reason).toMatch(
      /the references expand the message past \d+ elements \(limits\.maxElements\)/,
    );
    expect(r.payload).toBeUndefined();
  });
});

describe("SOAP 1.2 (Part 2 §3): enc:ref / enc:id, enc:itemType and enc:arraySize", () => {
  it("accepted: a reference, an array with its item type and size", async () => {
    const r = await call12(
      "team",
      `<t:team ${NS} e:encodingStyle="${ENC12}" xmlns:e="${ENV12}"><lead enc:id="a">${ann}</lead><members enc:itemType="t:Person" enc:arraySize="1"><m enc:ref="a"/></members></t:team>`,
    );
    expect(r.status, r.body).toBe(200);
    expect(r.payload).toEqual({
      lead: { name: "Ann", age: 3 },
      members: { item: [{ name: "Ann", age: 3 }] },
    });
    expect(r.body).toContain(`encodingStyle="${ENC12}"`);
    expect(r.body).toMatch(
      /<members xmlns="" xsi:type="[\w-]+:People" enc:itemType="[\w-]+:Person" enc:arraySize="1"/,
    );
  });

  it.each([
    ["an arraySize that is no size", 'enc:arraySize="two"', /enc:arraySize="two" is not an array size/],
    [
      "an arraySize not the member count",
      'enc:arraySize="2"',
      /the array declares 2 member\(s\) and holds 1/,
    ],
  ])("%s → Sender fault", async (_name, attr, reason) => {
    const r = await call12(
      "team",
      `<t:team ${NS}><lead>${ann}</lead><members ${attr}><m>${ann}</m></members></t:team>`,
    );
    expect(r.status).toBe(400);
    const fault = readFault(r.body);
    expect(fault.code).toBe(`{${ENV12}}Sender`);
    expect(fault.reason).toMatch(reason);
  });

  it("an encodingStyle other than the SOAP 1.2 encoding → DataEncodingUnknown", async () => {
    const r = await call12(
      "greet",
      `<t:greet ${NS} e:encodingStyle="${ENC11}" xmlns:e="${ENV12}"><person>${ann}</person><names/></t:greet>`,
    );
    expect(readFault(r.body).code).toBe(`{${ENV12}}DataEncodingUnknown`);
  });
});

describe("responses (SOAP 1.1 §5, §7.1)", () => {
  it("the wrapper with encodingStyle, each accessor with xsi:type, an array with SOAP-ENC:arrayType", async () => {
    const r = await call11("greet", greet(ann, "><x>a</x><x>b</x>"));
    expect(r.body).toContain(`encodingStyle="${ENC11}"`);
    expect(r.body).toContain('<greeting xmlns="" xsi:type="xsd:string">Hello, Ann</greeting>');
    expect(r.body).toMatch(
      /<names xmlns="" xsi:type="[\w-]+:Names" enc:arrayType="xsd:string\[2\]"[^>]*><item xsi:type="xsd:string">a<\/item><item xsi:type="xsd:string">b<\/item><\/names>/,
    );
  });

  it("an item of a derived type keeps its own xsi:type", async () => {
    const r = await call11(
      "team",
      `<t:team ${NS}><lead>${ann}</lead><members><m xsi:type="t:Employee">${ann}<badge>1</badge></m></members></t:team>`,
    );
    expect(r.body).toMatch(/enc:arrayType="[\w-]+:Person\[1\]"/);
    expect(r.body).toMatch(/<item [^>]*xsi:type="[\w-]+:Employee"/);
  });
});

describe("clients: node-soap and zeep call the rpc/encoded contract", () => {
  let server: Awaited<ReturnType<typeof startSoapService>>;
  beforeAll(async () => {
    server = await startSoapService({ wsdl: WSDL, handlers: handlers as never }, "/ws/encoded");
  });
  afterAll(() => server?.close());

  it("node-soap (SOAP 1.1): a struct and an array", async () => {
    const client = await soap.createClientAsync(`${server.endpoint}?wsdl`);
    const [result] = await client.greetAsync({
      person: { name: "Ann", age: 3 },
      names: { item: ["a", "b"] },
    });
    expect(received.at(-1)).toEqual({ person: { name: "Ann", age: 3 }, names: { item: ["a", "b"] } });
    expect(result.greeting.$value ?? result.greeting).toBe("Hello, Ann");
    expect(
      result.names.item.map((i: { $value?: string } | string) => (typeof i === "string" ? i : i.$value)),
    ).toEqual(["a", "b"]);
  });

  it.skipIf(!zeepAvailable("soap-encoding.test.ts"))(
    "zeep (SOAP 1.1): a struct and an array of structs",
    async () => {
      // zeep fetches the SOAP-ENC schema from its namespace URI (imported without schemaLocation):
      // here it is the corpus's copy, as test/zeep-calls.py gives it.
      const out = await runZeep(
        server.endpoint,
        `
from zeep.transports import Transport
class Local(Transport):
    def load(self, u):
        if u.rstrip("/") == "${ENC11.slice(0, -1)}":
            return open("${SOAP_ENC_XSD}", "rb").read()
        return super().load(u)
client = zeep.Client(url, transport=Local())
service = client.create_service("{${TNS}}Encoded11", url.replace("?wsdl", ""))
# zeep takes a SOAP-ENC array as a list of its items.
result = service.team(lead={"name": "Ann", "age": 3}, members=[{"name": "Bob", "age": 4}])
return serialize_object(result)
`,
      );
      expect(received.at(-1)).toEqual({
        lead: { name: "Ann", age: 3 },
        members: { item: [{ name: "Bob", age: 4 }] },
      });
      expect(out).toMatchObject({ size: 1 });
    },
  );
});
