import { errorHandler } from "@svc/errors/express";
import { createPipeline } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "../src/express.js";
import { fromXmlRepresentation, parseXmlBody, representations, type XmlBodySchema } from "../src/index.js";

const orderSchema: XmlBodySchema = {
  type: "object",
  properties: {
    id: { type: "integer" },
    tags: { type: "array", items: { type: "string" } },
    total: { type: "number" },
    paid: { type: "boolean" },
    note: { anyOf: [{ type: "string" }, { type: "null" }] },
    lines: { type: "array", items: { type: "object", properties: { qty: { type: "integer" } } } },
  },
};

/** What the `xml` representation writes, POSTed back, is the value it was written from. */
describe("XML round trip: the xml representation POSTed back through parseBody({ xml: { shape: 'representation' } })", () => {
  let server: Listening;
  beforeAll(async () => {
    const svc = expressAdapter(createPipeline({ representations: representations() }));
    const app = express();
    app.use(svc.prepare);
    app.use(
      parseBody({
        xml: { shape: "representation", schema: (req) => (req.url === "/typed" ? orderSchema : undefined) },
      }),
    );
    app.get(
      "/order",
      svc.handle(() => ({ id: 3, tags: ["a", "b"] })),
    );
    app.post(["/typed", "/untyped"], (req, res) => res.json({ received: req.body }));
    app.use(errorHandler());
    server = await listen(app);
  });
  afterAll(() => server.close());

  const post = (path: string, body: string) =>
    fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/xml" }, body });

  it("GET the README's { id: 3, tags: [a, b] } as XML, POST it back with the schema → { id: 3, tags: [a, b] }", async () => {
    const xml = await (await fetch(`${server.url}/order`, { headers: { accept: "application/xml" } })).text();
    const res = await post("/typed", xml);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: { id: 3, tags: ["a", "b"] } });
  });

  it("without a schema → the shape comes back, every leaf a string", async () => {
    const res = await post("/untyped", "<order><id>3</id><tags><item>a</item><item>b</item></tags></order>");
    expect(await res.json()).toEqual({ received: { id: "3", tags: ["a", "b"] } });
  });

  it("a posted <order> reaches the handler as the order itself, typed, one-item and empty lists kept", async () => {
    const res = await post(
      "/typed",
      '<order xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><id> 7 </id><tags><item>x</item></tags><total>12.50</total><paid>1</paid><note xsi:nil="true"/><lines></lines></order>',
    );
    expect(await res.json()).toEqual({
      received: { id: 7, tags: ["x"], total: 12.5, paid: true, note: null, lines: [] },
    });
  });

  it.each([
    ["<order><id>3.5</id></order>", "id", "must be an integer"],
    ["<order><total>1.0000000000000001</total></order>", "total", "1.0000000000000001 is not"],
    ["<order><paid>yes</paid></order>", "paid", "must be true or false"],
    ["<order><lines><item><qty>x</qty></item></lines></order>", "lines.0.qty", "must be an integer"],
  ])("%s → 400 naming %s", async (xml, field, message) => {
    const res = await post("/typed", xml);
    expect(res.status).toBe(400);
    const record = (await res.json()) as { errors: Array<{ field: string; message: string }> };
    expect(record.errors[0]?.field).toBe(field);
    expect(record.errors[0]?.message).toContain(message);
  });
});

describe("fromXmlRepresentation (pure core)", () => {
  it("the README example", () => {
    const document = parseXmlBody("<resource><id>3</id><tags><item>a</item><item>b</item></tags></resource>");
    expect(document).toEqual({ resource: { id: "3", tags: { item: ["a", "b"] } } });
    expect(
      fromXmlRepresentation(document, { type: "object", properties: { id: { type: "integer" } } }),
    ).toEqual({
      id: 3,
      tags: ["a", "b"],
    });
  });
  it("a collection root → the list", () => {
    expect(
      fromXmlRepresentation(parseXmlBody("<items><item><id>1</id></item><item><id>2</id></item></items>")),
    ).toEqual([{ id: "1" }, { id: "2" }]);
  });
  it("an object whose one member is named item, with its schema → stays an object", () => {
    const schema: XmlBodySchema = {
      type: "object",
      properties: { box: { type: "object", properties: { item: { type: "string" } } } },
    };
    expect(fromXmlRepresentation(parseXmlBody("<r><box><item>a</item></box></r>"), schema)).toEqual({
      box: { item: "a" },
    });
  });
});

describe("parseBody xml options are checked at construction", () => {
  it.each([
    [{ xml: { shape: "tree" } }, "ERR_SVC_NEGOTIATE_XML_SHAPE"],
    [{ xml: { schema: () => undefined } }, "ERR_SVC_NEGOTIATE_XML_SCHEMA"],
    [{ xml: { shap: "representation" } }, "ERR_SVC_NEGOTIATE_UNKNOWN_OPTION"],
    [{ xml: "representation" }, "ERR_SVC_NEGOTIATE_XML"],
  ])("%j → %s", (options, code) => {
    expect(() => parseBody(options as never)).toThrow(expect.objectContaining({ name: "TypeError", code }));
  });
});
