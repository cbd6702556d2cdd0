import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  envelope,
  FIXTURES,
  getCustomer,
  SOAP,
  silentLogger,
} from "../../test/helpers.js";
import { soapEndpoint } from "../fetch.js";
import { SchemaCompileError } from "../xsd/schema.js";
import { loadContract } from "./contract.js";

// `contract.documents`: the WSDL and the schemas it imports given as text, by name, read as the
// same files would be (relative locations, importRoot, schemaLocations), nothing else read.

const customerWsdl = readFileSync(CUSTOMER_WSDL, "utf8");
const customerXsd = readFileSync(join(FIXTURES, "customer.xsd"), "utf8");
const URL_BASE = "http://soap.example/ws/customer";

/** status, the fields that depend on the bytes, and the bytes. */
async function seen(response: Response) {
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    etag: response.headers.get("etag"),
    body: await response.text(),
  };
}

const requests = (): Request[] => [
  new Request(`${URL_BASE}?wsdl`),
  new Request(`${URL_BASE}?xsd=customer.xsd`),
  new Request(URL_BASE, {
    method: "POST",
    headers: { "content-type": SOAP },
    body: envelope(getCustomer("42")),
  }),
  new Request(URL_BASE, {
    method: "POST",
    headers: { "content-type": SOAP },
    body: envelope(getCustomer("7")),
  }),
];

describe("contract.documents: a contract given in memory", () => {
  it("customer.wsdl and customer.xsd as documents → the same ?wsdl, ?xsd= and responses as from the files", async () => {
    const fromFiles = soapEndpoint({
      wsdl: CUSTOMER_WSDL,
      handlers: customerHandlers(),
      logger: silentLogger,
    });
    const inMemory = soapEndpoint({
      wsdl: "customer.wsdl",
      handlers: customerHandlers(),
      logger: silentLogger,
      contract: { documents: { "customer.wsdl": customerWsdl, "customer.xsd": customerXsd } },
    });
    const files = await Promise.all(requests().map(async (r) => seen(await fromFiles(r))));
    const memory = await Promise.all(requests().map(async (r) => seen(await inMemory(r))));
    expect(memory).toEqual(files);
    expect(files.map((r) => r.status)).toEqual([200, 200, 200, 400]);
    expect(files[0]?.body).toContain(`schemaLocation="${URL_BASE}?xsd=customer.xsd"`);
    expect(files[2]?.body).toContain("Ada Lovelace");
    expect(inMemory.service.contract.schemaFiles).toEqual(fromFiles.service.contract.schemaFiles);
  });

  it("an import in a sibling folder → refused outside the WSDL's folder, read and served with importRoot", () => {
    const documents = {
      "contracts/customer/service.wsdl": customerWsdl.replace(
        'schemaLocation="customer.xsd"',
        'schemaLocation="../common/customer.xsd"',
      ),
      "contracts/common/customer.xsd": customerXsd,
    };
    expect(() => loadContract("contracts/customer/service.wsdl", { documents })).toThrow(
      /schemaLocation "\.\.\/common\/customer\.xsd" is outside the WSDL's directory/,
    );
    const contract = loadContract("contracts/customer/service.wsdl", { documents, importRoot: "contracts" });
    expect([...contract.schemaFiles.keys()]).toEqual(["../common/customer.xsd"]);
    expect(contract.render(URL_BASE)).toContain(`schemaLocation="${URL_BASE}?xsd=../common/customer.xsd"`);
  });

  it('schemaLocation="types.xsd" with only the WSDL given → refused at start-up, naming the document and those given', () => {
    const load = () => loadContract("service.wsdl", { documents: { "service.wsdl": customerWsdl } });
    expect(load).toThrow(SchemaCompileError);
    expect(load).toThrow(
      'schemaLocation="customer.xsd" names customer.xsd, which cannot be read (not one of the documents given: service.wsdl)',
    );
    expect(() =>
      soapEndpoint({
        wsdl: "service.wsdl",
        handlers: customerHandlers(),
        contract: { documents: { "service.wsdl": customerWsdl } },
      }),
    ).toThrow(/names customer\.xsd, which cannot be read \(not one of the documents given/);
  });

  it("a remote schemaLocation → the document schemaLocations names for it, never fetched", () => {
    const remote = "https://vendor.example/schemas/customer.xsd";
    const wsdl = customerWsdl.replace('schemaLocation="customer.xsd"', `schemaLocation="${remote}"`);
    const contract = loadContract("service.wsdl", {
      documents: { "service.wsdl": wsdl, "vendor/customer.xsd": customerXsd },
      schemaLocations: { [remote]: "vendor/customer.xsd" },
    });
    expect([...contract.schemaFiles.keys()]).toEqual(["vendor/customer.xsd"]);
    expect(() => loadContract("service.wsdl", { documents: { "service.wsdl": wsdl } })).toThrow(
      `remote schemaLocation "${remote}" is not fetched: name a local copy of ${remote} in the schemaLocations option`,
    );
  });

  it.each([
    [
      "a name above the root",
      { "../customer.xsd": customerXsd },
      /a name is not a relative path inside the tree/,
    ],
    ["an absolute name", { "/customer.xsd": customerXsd }, /a name is not a relative path inside the tree/],
    [
      "a URL as a name",
      { "https://x.example/a.xsd": customerXsd },
      /a name is not a relative path inside the tree/,
    ],
    ["a name given twice", { "a.xsd": customerXsd, "./a.xsd": customerXsd }, /a\.xsd is named twice/],
    ["text that is not a string", { "a.xsd": 1 }, /the text of a\.xsd is not a non-empty string/],
    ["not an object", "customer.wsdl", /an object mapping document names to their text/],
  ])("contract.documents with %s → ERR_SVC_SOAP_ENVELOPE_CONTRACT_DOCUMENTS", (_name, documents, message) => {
    const make = () =>
      soapEndpoint({
        wsdl: "customer.wsdl",
        handlers: customerHandlers(),
        contract: { documents: documents as Record<string, string> },
      });
    expect(make).toThrow(message);
    expect(make).toThrow(expect.objectContaining({ code: "ERR_SVC_SOAP_ENVELOPE_CONTRACT_DOCUMENTS" }));
  });

  it("wsdl naming no document given → ERR_SVC_SOAP_ENVELOPE_WSDL at construction", () => {
    expect(() =>
      soapEndpoint({
        wsdl: "service.wsdl",
        handlers: customerHandlers(),
        contract: { documents: { "customer.wsdl": customerWsdl, "customer.xsd": customerXsd } },
      }),
    ).toThrow(
      expect.objectContaining({
        code: "ERR_SVC_SOAP_ENVELOPE_WSDL",
        message: expect.stringContaining(
          "wsdl names service.wsdl, which cannot be read (not one of the documents given: customer.wsdl, customer.xsd)",
        ),
      }),
    );
  });
});
