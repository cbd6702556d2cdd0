import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, backends, client, type Started } from "./harness.js";

const TNS = "http://svc.example.com/ws/price/v1";
const SOAP12 = "http://www.w3.org/2003/05/soap-envelope";

interface Product {
  id: number;
  name: string;
  sku: string;
  price: number;
  stock: number;
  _links: { category: { href: string } };
}

describe.each(backends)("SOAP price service on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  let endpoint: string;
  let priceClient: soap.Client;
  let product: Product;
  let category: string;

  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
    endpoint = `${s.url}/ws/PriceService`;
    priceClient = await soap.createClientAsync(`${endpoint}?wsdl`, { forceSoap12Headers: true });
    priceClient.setSecurity(new soap.WSSecurity("reader", "reader", { passwordType: "PasswordText" }));
    product = (await (await api("/products/1")).json()) as Product;
    const href = new URL(product._links.category.href).pathname;
    category = ((await (await api(href)).json()) as { name: string }).name;
  });
  afterAll(() => s.stop());

  it("GET /ws/PriceService?wsdl → the WSDL with this server's address", async () => {
    const res = await fetch(`${endpoint}?wsdl`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(`location="${endpoint}"`);
  });

  it("soap client: GetPrice of a product by name → its REST price, currency and availability", async () => {
    const [result] = await priceClient.GetPriceAsync({ Item: product.name, Category: category });
    expect(priceClient.lastResponse).toMatch(
      new RegExp(`<(\\w+:)?Price currency="EUR">${product.price.toFixed(2).replace(".", "\\.")}</`),
    );
    expect(result.Availability).toBe(product.stock >= 5 ? "IN_STOCK" : "LOW_STOCK");
  });

  it("GetPrice by SKU after a REST PATCH of the price → the new price as an exact xs:decimal", async () => {
    // 0.1 + 0.2 is 0.30000000000000004 in binary floating point: finer than a cent, refused.
    const finer = await api("/products/1", { method: "PATCH", json: { price: 0.1 + 0.2 } });
    expect(finer.status).toBe(400);
    const patched = await api("/products/1", { method: "PATCH", json: { price: 0.3 } });
    expect(patched.status).toBe(200);
    const res = await fetch(endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/soap+xml; charset=utf-8; action=GetPrice",
        authorization: ADMIN,
      },
      body: `<env:Envelope xmlns:env="${SOAP12}" xmlns:p="${TNS}"><env:Body><p:GetPrice><p:Item>${product.sku}</p:Item><p:Category>${category}</p:Category></p:GetPrice></env:Body></env:Envelope>`,
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/<(\w+:)?Price currency="EUR">0\.30</);
    expect(text).not.toContain("0.30000000000000004");
  });

  it("soap client: GetPrice of an unknown item → 400, declared PriceNotFound fault with Detail", async () => {
    const err = (await priceClient
      .GetPriceAsync({ Item: "No Such Thing", Category: category })
      .catch((e: unknown) => e)) as { response?: { status: number }; body?: string };
    expect(err.response?.status).toBe(400);
    expect(err.body).toContain("PriceNotFound");
    expect(err.body).toMatch(/<env:Detail><[\w:]*PriceNotFound[^>]*><[\w:]*Item>No Such Thing</);
  });

  it("GetPrice of a known item in the wrong category → PriceNotFound", async () => {
    const err = (await priceClient
      .GetPriceAsync({ Item: product.name, Category: `${category}-other` })
      .catch((e: unknown) => e)) as { response?: { status: number }; body?: string };
    expect(err.response?.status).toBe(400);
    expect(err.body).toContain("PriceNotFound");
  });

  it("GetPrice without credentials → 400 Sender fault FailedAuthentication", async () => {
    const anonymous = await soap.createClientAsync(`${endpoint}?wsdl`, { forceSoap12Headers: true });
    const err = (await anonymous
      .GetPriceAsync({ Item: product.name, Category: category })
      .catch((e: unknown) => e)) as { response?: { status: number }; body?: string };
    expect(err.response?.status).toBe(400);
    expect(err.body).toContain("FailedAuthentication");
  });
});
