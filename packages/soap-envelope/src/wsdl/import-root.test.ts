import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CUSTOMER_WSDL, customerHandlers, FIXTURES } from "../../test/helpers.js";
import { soapEndpoint } from "../express.js";
import { SchemaCompileError } from "../xsd/schema.js";
import { loadContract } from "./contract.js";
import { generateTypes } from "./generate-types.js";

/**
 * `importRoot`: contracts sharing schemas kept in a sibling folder. `contracts/customer/customer.wsdl`
 * imports `../common/customer.xsd`, which includes `parts/empty.xsd` next to it; each file is
 * read from inside the root and served under its path from the WSDL's folder.
 */
const customerWsdl = readFileSync(CUSTOMER_WSDL, "utf8");
const customerXsd = readFileSync(join(FIXTURES, "customer.xsd"), "utf8");

let root: string;
let wsdl: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "soap-import-root-"));
  mkdirSync(join(root, "contracts/customer"), { recursive: true });
  mkdirSync(join(root, "contracts/common/parts"), { recursive: true });
  // A schema included by the shared one: a location relative to the shared schema's folder.
  writeFileSync(
    join(root, "contracts/common/parts/empty.xsd"),
    '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:complexType name="Nothing"/></xs:schema>',
  );
  writeFileSync(
    join(root, "contracts/common/customer.xsd"),
    customerXsd.replace(/(<xs:schema\b[^>]*>)/, '$1<xs:include schemaLocation="parts/empty.xsd"/>'),
  );
  wsdl = join(root, "contracts/customer/customer.wsdl");
  writeFileSync(
    wsdl,
    customerWsdl.replace('schemaLocation="customer.xsd"', 'schemaLocation="../common/customer.xsd"'),
  );
  writeFileSync(join(root, "secret.xsd"), customerXsd);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("importRoot: schemas read from a folder holding the WSDL's", () => {
  it("without it, a schema in a sibling folder is outside the WSDL's directory, the option named", () => {
    expect(() => loadContract(wsdl)).toThrow(SchemaCompileError);
    expect(() => loadContract(wsdl)).toThrow(
      /schemaLocation "\.\.\/common\/customer\.xsd" is outside the WSDL's directory \(the importRoot option names a folder holding it\)/,
    );
  });

  it("with the contracts folder as root → loads; each file served under its path from the WSDL's folder", () => {
    const contract = loadContract(wsdl, { importRoot: join(root, "contracts") });
    expect(contract.operations.map((o) => o.name)).toContain("getCustomer");
    expect([...contract.schemaFiles.keys()].sort()).toEqual([
      "../common/customer.xsd",
      "../common/parts/empty.xsd",
    ]);
    const rendered = contract.render("http://h/ws");
    expect(rendered).toContain('schemaLocation="http://h/ws?xsd=../common/customer.xsd"');
    expect(contract.render("http://h/ws", "../common/customer.xsd")).toContain(
      'schemaLocation="http://h/ws?xsd=../common/parts/empty.xsd"',
    );
  });

  it("a location beyond the root is still refused, named with the root", () => {
    const beyond = join(root, "contracts/customer/beyond.wsdl");
    writeFileSync(
      beyond,
      customerWsdl.replace('schemaLocation="customer.xsd"', 'schemaLocation="../../secret.xsd"'),
    );
    expect(() => loadContract(beyond, { importRoot: join(root, "contracts") })).toThrow(
      `schemaLocation "../../secret.xsd" is outside importRoot ${join(root, "contracts")}`,
    );
  });

  it.each([
    [
      "a folder not holding the WSDL's",
      () => join(root, "contracts/common"),
      /a folder holding the WSDL's folder/,
    ],
    ["an empty string", () => "", /a directory path/],
  ])("%s → TypeError naming importRoot", (_name, importRoot, message) => {
    expect(() => loadContract(wsdl, { importRoot: importRoot() })).toThrow(TypeError);
    expect(() => loadContract(wsdl, { importRoot: importRoot() })).toThrow(message);
  });

  it("svc-soap-types takes it too", () => {
    const text = readFileSync(wsdl, "utf8");
    expect(() => generateTypes(text, { baseDir: join(root, "contracts/customer") })).toThrow(/outside/);
    expect(
      generateTypes(text, { baseDir: join(root, "contracts/customer"), importRoot: join(root, "contracts") }),
    ).toContain("getCustomer");
  });

  it("through an endpoint (contract.importRoot): the WSDL's schemaLocation fetches the shared schema", async () => {
    const app = express();
    app.use(
      "/ws/customer",
      soapEndpoint({
        wsdl,
        handlers: customerHandlers(),
        contract: { importRoot: join(root, "contracts") },
        logger: { error: () => {} },
      }),
    );
    const server = await listen(app);
    try {
      const served = await (await fetch(`${server.url}/ws/customer?wsdl`)).text();
      const location = served.match(/schemaLocation="([^"]*)"/)?.[1] ?? "";
      expect(location).toBe(`${server.url}/ws/customer?xsd=../common/customer.xsd`);
      const res = await fetch(location);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<xs:include schemaLocation="');
    } finally {
      await server.close();
    }
  });
});
