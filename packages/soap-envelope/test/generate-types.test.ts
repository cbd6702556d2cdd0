import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { assertReadmeShows } from "@svc/test-utils";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSoapService } from "../src/binding/service.js";
import { runCli } from "../src/cli.js";
import { generateTypes } from "../src/wsdl/generate-types.js";
import { strictDiagnostics } from "./compile-types.js";
import { CUSTOMER_WSDL, FIXTURES } from "./helpers.js";

const ORDERS_WSDL = join(FIXTURES, "orders.wsdl");
const SHAPES_WSDL = join(FIXTURES, "shapes.wsdl");
const _ROOT = resolve(import.meta.dirname, "../../..");

/** Generated from the files, as the command does. */
const generate = (wsdl: string, options: Parameters<typeof generateTypes>[1] = {}) =>
  generateTypes(readFileSync(wsdl, "utf8"), {
    baseDir: FIXTURES,
    source: wsdl.split("/").pop() ?? "",
    ...options,
  });

describe("generateTypes: key shapes", () => {
  const orders = generate(ORDERS_WSDL);
  const customer = generate(CUSTOMER_WSDL);
  it.each([
    ["an enumeration → a union of its literals", orders, 'export type Status = "OPEN" | "SHIPPED";'],
    ["an int enumeration → number literals", orders, "priority?: 1 | 2 | undefined;"],
    ["xs:long in a payload → bigint", orders, "  id: bigint;"],
    ["xs:long in a result → what the encoder accepts", orders, "  id: bigint | number | string;"],
    ["xs:date in a result → string or Date", orders, "  placed: string | Date;"],
    [
      "minOccurs=0 → optional, undefined allowed in results",
      orders,
      "shippedAt?: string | Date | undefined;",
    ],
    ["nillable → | null", orders, "  note: string | null;"],
    ["maxOccurs unbounded, minOccurs 1 → a required list", orders, "  line: readonly LineInit[];"],
    ["maxOccurs 5, minOccurs 0 → an optional list", orders, "  tag?: readonly string[] | undefined;"],
    ["a choice → each branch optional", orders, '  "phone-number"?: string | undefined;'],
    ["an optional attribute in a payload", orders, "  verbose?: boolean;"],
    ["simple content → $value", orders, "  $value: string | number | bigint;"],
    ["a recursive element", orders, "  Category?: readonly CategoryInit[] | undefined;"],
    ["a nillable output element", orders, "  order: OrderInit | null;"],
    ["a one-way operation → no output", orders, "  ping: { input: Ping };"],
    ["a declared fault's detail", orders, "  OrderNotFound: OrderNotFoundInit;"],
    [
      "the handlers type",
      customer,
      "export type CustomerServiceHandlers = SoapHandlers<CustomerServiceOperations>;",
    ],
    ["a named enumeration used by name", customer, "  severity: Severity;"],
    ["minOccurs=0 in a payload: optional, never undefined", customer, "  occurredAt?: string;\n"],
    [
      "facets named in a comment",
      customer,
      "/** xs:string, maxLength 254, pattern [^@\\s]+@[^@\\s]+\\.[^@\\s]+ */",
    ],
  ])("%s", (_name, text, line) => {
    expect(text).toContain(line);
  });

  it("a SOAP 1.1 contract (soap:binding) → the types of its SOAP 1.2 twin; both bindings → the same", () => {
    const body = (text: string) => text.slice(text.indexOf("\n\n"));
    const soap11 = generate(join(FIXTURES, "customer11.wsdl"), { source: "customer.wsdl" });
    const both = generate(join(FIXTURES, "customer-both.wsdl"), { source: "customer.wsdl" });
    expect(soap11).toContain(
      "export type CustomerServiceHandlers = SoapHandlers<CustomerServiceOperations>;",
    );
    expect(body(soap11).length).toBeGreaterThan(1000);
    expect(body(soap11)).toBe(body(customer));
    expect(body(both)).toBe(body(customer));
  });

  it('longAs: "string" → xs:long payloads are strings', () => {
    const text = generate(CUSTOMER_WSDL, { longAs: "string", name: "Customers" });
    expect(text).toContain("export type GetCustomerRequest = {\n  /** xs:long */\n  customerId: string;\n};");
    expect(text).toContain("export type CustomersOperations = {");
  });

  it.each(["\n", "\r", "\u2028", "\u2029"])(
    "a file name with a line terminator (%j) stays in the header comment (ECMA-262 §12.3)",
    (eol) => {
      const text = generate(ORDERS_WSDL, { source: `orders${eol}export const injected = 1;${eol}.wsdl` });
      const file = ts.createSourceFile("orders.types.ts", text, ts.ScriptTarget.ES2022);
      const declared = file.statements.flatMap((s) => (ts.isVariableStatement(s) ? [s.getText(file)] : []));
      expect(declared).toEqual([]);
      expect(text.split("\n")[0]).toContain("export const injected = 1;");
    },
  );

  it("a contract the service refuses is refused here too", () => {
    expect(() => generateTypes(readFileSync(ORDERS_WSDL, "utf8").replace("xs:int", "xs:shortish"))).toThrow(
      /xs:shortish is not a built-in type/,
    );
  });
});

/**
 * The generated files compiled with a handler file that is right and one that is wrong, by the
 * TypeScript compiler, as strict as the package (noUncheckedIndexedAccess,
 * exactOptionalPropertyTypes); `@svc/*` resolve to the sources.
 */
describe("generateTypes: XML Schema constructs", () => {
  const shapes = generate(SHAPES_WSDL);
  it.each([
    ["xs:unsignedInt → number", "  id: number;"],
    ["xs:double → number", "  radius: number;"],
    ["xs:list of xs:unsignedShort → number[]", "  sides: number[];"],
    [
      "an abstract base → its derived types, each with $type",
      '  shape: ((Circle & { $type: "{urn:example:shapes}Circle" }) | (Polygon & { $type: "{urn:example:shapes}Polygon" }))[];',
    ],
    ["xs:base64Binary in a payload → Uint8Array", "  thumbnail?: Uint8Array;"],
    ["xs:any → $any entries", "  $any?: { name: string; value: unknown }[];"],
    ["xs:anyAttribute → $attributes", "  $attributes?: Record<string, string>;"],
    ["xs:QName → its Clark name", "  kind: string;"],
    ["a union of xs:byte and an enumeration", '  level?: number | "max" | undefined;'],
    ["xs:float → number", "  area: number;"],
    ["xs:hexBinary in a result → bytes or the lexical form", "  checksum: Uint8Array | string;"],
    ["xs:duration → its lexical form", "  took: string;"],
    ["an element without a type (xs:anyType) → unknown", "  extra?: unknown | undefined;"],
  ])("%s", (_name, line) => {
    expect(shapes).toContain(line);
  });
});

describe("generated types check handlers under strict TypeScript", () => {
  let dir: string;
  let diagnostics: { file: string; line: number; message: string }[];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "soap-types-"));
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }');
    writeFileSync(join(dir, "orders.types.ts"), generate(ORDERS_WSDL));
    writeFileSync(join(dir, "customer.types.ts"), generate(CUSTOMER_WSDL));
    writeFileSync(
      join(dir, "customer-string.types.ts"),
      generate(CUSTOMER_WSDL, { longAs: "string", name: "S" }),
    );
    writeFileSync(join(dir, "shadowing.types.ts"), generateTypes(SHADOWING_WSDL));
    writeFileSync(join(dir, "soap.types.ts"), generateTypes(SHADOWING_WSDL, { name: "Soap" }));
    writeFileSync(join(dir, "shadowing.ts"), SHADOWING_HANDLERS);
    writeFileSync(join(dir, "good.ts"), GOOD);
    writeFileSync(join(dir, "readme.ts"), README_TYPED);
    writeFileSync(join(dir, "bad.ts"), BAD);
    writeFileSync(join(dir, "shapes.types.ts"), generate(SHAPES_WSDL));
    writeFileSync(join(dir, "shapes.ts"), SHAPES_HANDLERS);
    const files = [
      "shapes.types.ts",
      "shapes.ts",
      "orders.types.ts",
      "customer.types.ts",
      "customer-string.types.ts",
      "shadowing.types.ts",
      "soap.types.ts",
      "shadowing.ts",
      "good.ts",
      "readme.ts",
      "bad.ts",
    ];
    diagnostics = strictDiagnostics(files.map((f) => join(dir, f))).map((d) => ({
      file: d.file ? d.file.fileName.slice(dir.length + 1) : "",
      line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
      message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
    }));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("the README shows the typed example compiled here", () => {
    expect(() => assertReadmeShows(import.meta.url, README_TYPED)).not.toThrow();
  });

  it("the generated files, the README example and the right handlers compile", () => {
    expect(diagnostics.filter((d) => d.file !== "bad.ts")).toEqual([]);
  });

  const expected = [...BAD.matchAll(/\/\/ error: (.+)$/gm)].map((m) => m[1] as string);
  it.each(expected)("the wrong handler file: %s", (marker) => {
    const line = BAD.split("\n").findIndex((l) => l.endsWith(`// error: ${marker}`)) + 1;
    const [, ...fragments] = marker.split(" | ");
    const found = diagnostics.filter((d) => d.file === "bad.ts" && d.line === line);
    expect(found, `no error on line ${line} of bad.ts: ${JSON.stringify(diagnostics)}`).not.toEqual([]);
    for (const fragment of fragments) expect(found.map((d) => d.message).join("\n")).toContain(fragment);
  });

  it("the wrong handler file has no other error", () => {
    const lines = BAD.split("\n");
    const unexpected = diagnostics.filter(
      (d) => d.file === "bad.ts" && !lines[d.line - 1]?.includes("// error: "),
    );
    expect(unexpected).toEqual([]);
  });
});

describe("svc-soap-types", () => {
  it("writes the file named by -o", () => {
    const dir = mkdtempSync(join(tmpdir(), "soap-types-cli-"));
    try {
      const out: string[] = [];
      const io = {
        stdout: { write: (t: string) => out.push(t) },
        stderr: { write: (t: string) => out.push(t) },
      };
      expect(runCli([ORDERS_WSDL, "-o", join(dir, "src/orders.types.ts"), "--name", "Orders"], io)).toBe(0);
      const written = readFileSync(join(dir, "src/orders.types.ts"), "utf8");
      expect(written).toBe(generate(ORDERS_WSDL, { name: "Orders" }));
      expect(written.split("\n")[0]).toBe(
        "// Generated by svc-soap-types from orders.wsdl: do not edit, generate again when the contract changes.",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads a contract saved as UTF-16 (XML 1.0 §4.3.3)", () => {
    const dir = mkdtempSync(join(tmpdir(), "soap-types-utf16-"));
    try {
      const text = readFileSync(ORDERS_WSDL, "utf8");
      writeFileSync(
        join(dir, "orders.wsdl"),
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]),
      );
      const out: string[] = [];
      const io = {
        stdout: { write: (t: string) => out.push(t) },
        stderr: { write: (t: string) => out.push(t) },
      };
      expect(runCli([join(dir, "orders.wsdl")], io)).toBe(0);
      expect(out.join("")).toContain('export type Status = "OPEN" | "SHIPPED";');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [[ORDERS_WSDL, "--long-as", "string"], 0, "  id: string;"],
    [["--help"], 0, "Usage: svc-soap-types"],
    [[], 2, "name one WSDL file"],
    [[ORDERS_WSDL, "--bogus"], 2, "Unknown option '--bogus'"],
    [
      [ORDERS_WSDL, "--long-as", "number"],
      1,
      'generateTypes: longAs must be "bigint" or "string", got "number"',
    ],
    [[join(FIXTURES, "missing.wsdl")], 1, "ENOENT"],
  ] as const)("%j → exit %i", (args, status, text) => {
    const out: string[] = [];
    const io = {
      stdout: { write: (t: string) => out.push(t) },
      stderr: { write: (t: string) => out.push(t) },
    };
    expect(runCli(args, io)).toBe(status);
    expect(out.join("")).toContain(text);
  });
});

/**
 * The values the result types allow are what the encoder accepts, and payloads are what the
 * types say, through a listening server: a Date, a number for xs:long, a readonly list, null.
 */
describe("what the types allow, the service encodes", () => {
  it("describe: a derived type by xsi:type, bytes, a list, skipped foreign elements; a QName, a union, a float", async () => {
    const received: unknown[] = [];
    const service = createSoapService({
      wsdl: SHAPES_WSDL,
      handlers: {
        describe: (payload: unknown) => {
          received.push(payload);
          return {
            kind: "{urn:example:kinds}polygon",
            level: "max",
            area: 12.5,
            checksum: new Uint8Array([0xca, 0xfe]),
            took: "PT0.5S",
            extra: { $text: "ok" },
          };
        },
      },
    });
    const answer = await service.handle({
      method: "POST",
      contentType: "application/soap+xml; charset=utf-8",
      contentLength: undefined,
      body: `<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><e:Body><s:Describe xmlns:s="urn:example:shapes"><s:shape xsi:type="s:Polygon" xmlns:o="urn:o" o:note="n"><s:id>1</s:id><s:sides>3 4 5</s:sides></s:shape><s:thumbnail>AQID</s:thumbnail><x:trace xmlns:x="urn:x">anything<x:deep/></x:trace></s:Describe></e:Body></e:Envelope>`,
    });
    expect(answer.status).toBe(200);
    expect(received).toEqual([
      {
        shape: [
          {
            $type: "{urn:example:shapes}Polygon",
            $attributes: { "{urn:o}note": "n" },
            id: 1,
            sides: [3, 4, 5],
          },
        ],
        thumbnail: new Uint8Array([1, 2, 3]),
        $any: [
          { name: "{urn:x}trace", value: { $text: "anything", $any: [{ name: "{urn:x}deep", value: {} }] } },
        ],
      },
    ]);
    expect(answer.body).toContain(
      '<kind xmlns:q="urn:example:kinds">q:polygon</kind><level>max</level><area>12.5</area><checksum>CAFE</checksum><took>PT0.5S</took><extra>ok</extra>',
    );
  });

  it("describe: an abstract type without xsi:type → Sender fault naming it", async () => {
    const service = createSoapService({ wsdl: SHAPES_WSDL, handlers: { describe: () => ({}) } });
    const answer = await service.handle({
      method: "POST",
      contentType: "application/soap+xml; charset=utf-8",
      contentLength: undefined,
      body: `<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><s:Describe xmlns:s="urn:example:shapes"><s:shape><s:id>1</s:id></s:shape></s:Describe></e:Body></e:Envelope>`,
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain("abstract type {urn:example:shapes}Shape");
  });

  it("getOrder with a Date, numbers, a readonly list and null", async () => {
    const received: unknown[] = [];
    const service = createSoapService({
      wsdl: ORDERS_WSDL,
      handlers: {
        getOrder: (payload: unknown) => {
          received.push(payload);
          return {
            order: {
              id: 7,
              status: "OPEN",
              placed: new Date("2026-11-22T10:00:00Z"),
              note: null,
              line: [{ sku: "ABC-1", quantity: 2, price: { currency: "EUR", $value: "9.90" } }] as const,
              email: "a@example.com",
              priority: 2,
              shippedAt: undefined,
            },
          };
        },
        ping: () => undefined,
      },
    });
    const answer = await service.handle({
      method: "POST",
      contentType: "application/soap+xml; charset=utf-8",
      contentLength: undefined,
      body: `<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><o:GetOrder xmlns:o="urn:example:orders"><o:id>7</o:id></o:GetOrder></e:Body></e:Envelope>`,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain("<placed>2026-11-22</placed>");
    expect(answer.body).toContain(
      '<note xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true"/>',
    );
    expect(received).toEqual([{ id: 7n }]);
  });
});

/** Handlers for the shapes contract, checked against its generated types. */
const SHAPES_HANDLERS = `import { createSoapService } from "@svc/soap-envelope";
import type { ShapesOperations } from "./shapes.types.js";

export const service = createSoapService<ShapesOperations>({
  wsdl: "shapes.wsdl",
  handlers: {
    describe: async ({ shape, thumbnail }) => {
      let area = 0;
      for (const s of shape) {
        if (s.$type === "{urn:example:shapes}Circle") area += Math.PI * s.radius ** 2;
        else area += s.sides.length;
      }
      const bytes: Uint8Array | undefined = thumbnail;
      return { kind: "{urn:k}any", area, checksum: bytes ?? "00", took: "PT1S", level: 3 };
    },
  },
});
`;

/** The README's typed example (its ts block, word for word). */
const README_TYPED = `import { createSoapService, SoapFault } from "@svc/soap-envelope";
import type { CustomerServiceOperations } from "./customer.types.js";

export const service = createSoapService<CustomerServiceOperations>({
  wsdl: "contracts/customer.wsdl",
  handlers: {
    // customerId: bigint; the result must be a GetCustomerResponse (id, name, email).
    getCustomer: async ({ customerId }) => {
      if (customerId <= 0n) {
        throw new SoapFault({ code: "Sender", subcode: "CustomerNotFound", reason: "No such customer" });
      }
      return { customer: { id: customerId, name: "Ada Lovelace", email: "ada@example.com" } };
    },
    createCustomer: async ({ customer }) => ({ customerId: customer.id }),
    // One-way: the handler returns nothing; event.occurredAt is string | absent.
    logEvent: async ({ event }, ctx) => {
      ctx.logger.error({ severity: event.severity, at: event.occurredAt ?? "unknown" }, event.message);
    },
    sendNotification: async () => {},
  },
});
`;

/**
 * Schema types named like the globals the generated file uses (`Date` for xs:dateTime results,
 * `Record` for empty types), and a service named `Soap`, whose `SoapHandlers` is the import's name.
 */
const SHADOWING_WSDL = `<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:tns="urn:cal" name="Cal" targetNamespace="urn:cal">
  <wsdl:types>
    <xs:schema targetNamespace="urn:cal" elementFormDefault="qualified">
      <xs:complexType name="Date"><xs:sequence><xs:element name="day" type="xs:int"/></xs:sequence></xs:complexType>
      <xs:complexType name="Record"><xs:sequence><xs:element name="id" type="xs:int"/></xs:sequence></xs:complexType>
      <xs:complexType name="Uint8Array"><xs:sequence><xs:element name="n" type="xs:int"/></xs:sequence></xs:complexType>
      <xs:element name="Get"><xs:complexType><xs:sequence>
        <xs:element name="d" type="tns:Date"/><xs:element name="r" type="tns:Record"/>
        <xs:element name="u" type="tns:Uint8Array"/><xs:element name="raw" type="xs:hexBinary"/>
      </xs:sequence></xs:complexType></xs:element>
      <xs:element name="GetResponse"><xs:complexType><xs:sequence>
        <xs:element name="when" type="xs:dateTime"/><xs:element name="empty"><xs:complexType/></xs:element>
        <xs:element name="blob" type="xs:base64Binary"/>
      </xs:sequence></xs:complexType></xs:element>
    </xs:schema>
  </wsdl:types>
  <wsdl:message name="Get"><wsdl:part name="p" element="tns:Get"/></wsdl:message>
  <wsdl:message name="GetResponse"><wsdl:part name="p" element="tns:GetResponse"/></wsdl:message>
  <wsdl:portType name="PT">
    <wsdl:operation name="Get"><wsdl:input message="tns:Get"/><wsdl:output message="tns:GetResponse"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="B" type="tns:PT">
    <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="Get">
      <wsdl:input><soap12:body use="literal"/></wsdl:input><wsdl:output><soap12:body use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="S"><wsdl:port name="P" binding="tns:B"><soap12:address location="http://localhost/cal"/></wsdl:port></wsdl:service>
</wsdl:definitions>`;

const SHADOWING_HANDLERS = `import type { CalHandlers } from "./shadowing.types.js";
import type { SoapHandlers } from "./soap.types.js";

export const cal: CalHandlers = {
  Get: (input) => ({ when: new Date(input.d.day * 86_400_000 + input.u.n), empty: {}, blob: input.raw.subarray(1) }),
};
export const soap: SoapHandlers = { Get: (input) => ({ when: new Date(input.r.id), empty: {}, blob: new Uint8Array([1]) }) };
`;

const GOOD = `import { createSoapService, SoapFault, type SoapHandlers } from "@svc/soap-envelope";
import { soapEndpoint } from "@svc/soap-envelope/express";
import type { CustomerServiceHandlers, CustomerServiceOperations, Event, GetCustomerRequest } from "./customer.types.js";
import type { GetOrder, OrderServiceFaultDetails, OrderServiceHandlers, OrderServiceOperations, Ping } from "./orders.types.js";
import type { GetCustomerRequest as StringRequest } from "./customer-string.types.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
export const checks: [
  Equal<GetCustomerRequest, { customerId: bigint }>,
  Equal<StringRequest, { customerId: string }>,
  Equal<Pick<Event, "occurredAt" | "customerId">, { occurredAt?: string; customerId?: bigint }>,
  Equal<Event["severity"], "DEBUG" | "INFO" | "WARN" | "ERROR">,
  Equal<GetOrder, { verbose?: boolean; id: bigint }>,
  Equal<Ping, { at: string }>,
  Equal<OrderServiceHandlers, SoapHandlers<OrderServiceOperations>>,
] = [true, true, true, true, true, true, true];

export const customers = createSoapService<CustomerServiceOperations>({
  wsdl: "customer.wsdl",
  handlers: {
    getCustomer: async ({ customerId }, ctx) => {
      if (customerId === 0n) throw new SoapFault({ code: "Sender", reason: ctx.operation });
      return { customer: { id: customerId, name: "Ada", email: "ada@example.com" } };
    },
    createCustomer: async ({ customer }) => ({ customerId: customer.id }),
    logEvent: async ({ event }) => {
      const at: string = event.occurredAt ?? "now";
      void at;
    },
    sendNotification: () => {},
  },
});

const detail: OrderServiceFaultDetails["OrderNotFound"] = { id: 1n };
export const orders = soapEndpoint<OrderServiceOperations>({
  wsdl: "orders.wsdl",
  handlers: {
    getOrder: async ({ id, verbose }) => {
      if (verbose === true) throw new SoapFault({ code: "Sender", reason: "x", detail: { OrderNotFound: detail } });
      return {
        order: {
          id,
          status: "SHIPPED",
          placed: new Date(),
          note: null,
          line: [{ sku: "ABC-1", quantity: 1, price: { currency: "EUR", $value: 9.5 }, gift: true }],
          "phone-number": "+44",
          Category: { name: "books", Category: [{ name: "novels" }] },
        },
      };
    },
    ping: async ({ at }) => {
      at.toUpperCase();
    },
  },
});

export const handlers = { getOrder: async () => ({ order: null }), ping: () => {} } satisfies OrderServiceHandlers;

// Without the type parameter, the factories take untyped handlers as before.
export const untyped = createSoapService({ wsdl: "x.wsdl", handlers: { any: (p: { n: number }) => p.n } });
`;

const BAD = `import { createSoapService } from "@svc/soap-envelope";
import type { CustomerServiceOperations } from "./customer.types.js";
import type { OrderServiceOperations } from "./orders.types.js";
import type { SOperations } from "./customer-string.types.js";

const ok = {
  createCustomer: async () => ({ customerId: 1n }),
  logEvent: async () => {},
  sendNotification: async () => {},
};

createSoapService<CustomerServiceOperations>({
  wsdl: "customer.wsdl",
  handlers: {
    ...ok,
    getCustomer: async ({ customerId }) => ({ customer: { id: customerId, name: "Ada", email: 5 } }), // error: result email a number | customer.email | Type 'number' is not assignable to type 'string'
  },
});

createSoapService<CustomerServiceOperations>({
  wsdl: "customer.wsdl",
  handlers: {
    ...ok,
    getCustomer: async () => ({ customer: { id: 1n, name: "Ada" } }), // error: result without email | Property 'email' is missing
  },
});

createSoapService<CustomerServiceOperations>({
  wsdl: "customer.wsdl",
  handlers: {
    ...ok,
    getCustomer: async ({ customerId }) => {
      const n: number = customerId; // error: payload xs:long is a bigint | Type 'bigint' is not assignable to type 'number'
      return { customer: { id: n, name: "Ada", email: "a@b.c" } };
    },
  },
});

createSoapService<SOperations>({
  wsdl: "customer.wsdl",
  contract: { longAs: "string" },
  handlers: {
    ...ok,
    getCustomer: async ({ customerId }) => {
      const n: bigint = customerId; // error: longAs string: payload xs:long is a string | Type 'string' is not assignable to type 'bigint'
      return { customer: { id: n, name: "Ada", email: "a@b.c" } };
    },
  },
});

createSoapService<CustomerServiceOperations>({
  wsdl: "customer.wsdl",
  handlers: {
    ...ok,
    logEvent: async ({ event }) => {
      const at: string = event.occurredAt; // error: an optional element may be absent | Type 'string | undefined' is not assignable to type 'string'
      void at;
    },
    getCustomer: async () => ({ customer: { id: 1n, name: "Ada", email: "a@b.c" } }),
  },
});

createSoapService<CustomerServiceOperations>({
  wsdl: "customer.wsdl",
  handlers: { // error: a missing handler | Property 'getCustomer' is missing
    ...ok,
  },
});

createSoapService<CustomerServiceOperations>({
  wsdl: "customer.wsdl",
  handlers: {
    ...ok,
    getCustomer: async () => ({ customer: { id: 1n, name: "Ada", email: "a@b.c" } }),
    nope: async () => 1, // error: a handler for no operation | 'nope' does not exist
  },
});

createSoapService<OrderServiceOperations>({
  wsdl: "orders.wsdl",
  handlers: {
    ping: async () => 5, // error: a one-way handler returning a value | Type 'number' is not assignable to type 'void'
    getOrder: async () => ({ order: null }),
  },
});

createSoapService<OrderServiceOperations>({
  wsdl: "orders.wsdl",
  handlers: {
    ping: () => {},
    getOrder: async () => ({ // error: an enumeration | order.status | '"CLOSED"' is not assignable to type 'Status'
      order: { id: 1n, status: "CLOSED", placed: "2026-01-01", note: null, line: [] },
    }),
  },
});

createSoapService<OrderServiceOperations>({
  wsdl: "orders.wsdl",
  handlers: {
    ping: () => {},
    getOrder: async () => ({ order: { id: 1n, status: "OPEN", placed: "2026-01-01", line: [] } }), // error: nillable is not optional | Property 'note' is missing
  },
});
`;
