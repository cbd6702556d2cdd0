import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, type Started, sqlite } from "./harness.js";

/**
 * The XML the OpenAPI document describes is the XML the server sends. The harness validates JSON
 * bodies only; an XML client generated from the document reads element names from its XML
 * Objects (OpenAPI 3.1 §4.8.26): the root element is the schema's `xml.name` (else the component's
 * name), an array is one element per item named after the property unless `xml.wrapped` wraps
 * them, each item named by its `items.xml.name`. These cases write the JSON body of a response as
 * the document describes its XML and compare that with the XML the server sends for it. A JSON
 * null is an element with xsi:nil="true" (XML Schema Part 1 §2.6.2; OpenAPI 3.1 has no XML Object
 * field for null), the root declaring the xsi namespace, as @svc/negotiate writes it.
 */
type Json = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, Json> }>>;
  components: { schemas: Record<string, Json>; responses: Record<string, Json> };
}

const escapeText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

describe("XML as the OpenAPI document describes it", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  let doc: Doc;
  beforeAll(async () => {
    s = await sqlite.start();
    api = client(s.url);
    doc = (await (await api("/openapi.json")).json()) as Doc;
  });
  afterAll(() => s.stop());

  /** The schema behind `$ref`/`allOf`, and the component name a `$ref` named (the default root name). */
  function resolve(schema: Json, data: unknown): { schema: Json; component?: string; xml?: Json } {
    let xml = schema.xml as Json | undefined;
    let component: string | undefined;
    let at = schema;
    for (;;) {
      if (typeof at.$ref === "string") {
        component = at.$ref.split("/").pop() as string;
        at = doc.components.schemas[component] as Json;
      } else if (Array.isArray(at.allOf) && at.allOf.length === 1) {
        at = at.allOf[0] as Json;
      } else if (Array.isArray(at.anyOf)) {
        // The branch whose required members the data has.
        at = (at.anyOf as Json[]).find((branch) => {
          const b = resolve(branch, data).schema;
          return ((b.required as string[] | undefined) ?? []).every((k) => Object.hasOwn(data as Json, k));
        }) as Json;
      } else break;
      xml ??= at.xml as Json | undefined;
    }
    return { schema: at, ...(component ? { component } : {}), ...(xml ? { xml } : {}) };
  }

  /** `data` as the XML the schema describes, its element named `name` unless `xml.name` says otherwise. */
  function described(schema: Json, data: unknown, name: string): string {
    const state = { nil: false };
    const xml = element(schema, data, name, state);
    const root = /^<[^\s/>]+/.exec(xml)?.[0] ?? "";
    return state.nil
      ? `${root} xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"${xml.slice(root.length)}`
      : xml;
  }

  function element(schema: Json, data: unknown, name: string, state: { nil: boolean }): string {
    const { schema: s, xml } = resolve(schema, data);
    const tag = (xml?.name as string | undefined) ?? name;
    if (data === null) {
      state.nil = true;
      return `<${tag} xsi:nil="true"/>`;
    }
    if (Array.isArray(data)) {
      const items = (s.items ?? {}) as Json;
      const itemName = ((items.xml as Json | undefined)?.name as string | undefined) ?? tag;
      const inner = data.map((d) => element(items, d, itemName, state)).join("");
      return xml?.wrapped === true ? `<${tag}>${inner}</${tag}>` : inner;
    }
    if (typeof data === "object") {
      const properties = (s.properties ?? {}) as Record<string, Json>;
      const inner = Object.entries(data as Json)
        .map(([k, v]) => element(properties[k] ?? {}, v, k, state))
        .join("");
      return `<${tag}>${inner}</${tag}>`;
    }
    return `<${tag}>${escapeText(String(data))}</${tag}>`;
  }

  /** The response the document declares for a status, its `$ref` resolved. */
  function declared(template: string, status: number): Json {
    let res = doc.paths[template]?.get?.responses[String(status)] as Json;
    if (typeof res.$ref === "string")
      res = doc.components.responses[res.$ref.split("/").pop() as string] as Json;
    return res;
  }

  it.each([
    ["/employees/1", "/employees/{id}", 200, "application/xml", "application/json"],
    ["/employees?size=2", "/employees", 200, "application/xml", "application/json"],
    [
      "/v2/employees/1",
      "/v2/employees/{id}",
      200,
      "application/vnd.svc.v2+xml",
      "application/vnd.svc.v2+json",
    ],
    ["/cart", "/cart", 200, "application/xml", "application/json"],
    ["/cart/items/1", "/cart/items/{productId}", 200, "application/xml", "application/json"],
    ["/orders/1/invoice", "/orders/{id}/invoice", 200, "application/xml", "application/json"],
    ["/employees?page=0", "/employees", 400, "application/xml", "application/json"],
    ["/employees/999999", "/employees/{id}", 404, "application/xml", "application/json"],
  ])("GET %s as %s → the XML the document describes", async (path, template, status, xmlType, jsonType) => {
    const jsonRes = await api(path, { headers: { accept: jsonType } });
    const xmlRes = await api(path, { headers: { accept: xmlType } });
    expect([jsonRes.status, xmlRes.status]).toEqual([status, status]);
    const data = (await jsonRes.json()) as Json;
    // The timestamp of an error record differs between the two requests.
    const xmlText = (await xmlRes.text()).replace(
      /<timestamp>[^<]*<\/timestamp>/,
      "<timestamp>T</timestamp>",
    );
    if ("timestamp" in data) data.timestamp = "T";
    const content = declared(template, status).content as Record<string, { schema: Json }>;
    const schema = content[xmlType]?.schema as Json;
    const { component } = resolve(schema, data);
    expect(xmlText.replace(/^<\?xml[^>]*\?>\s*/, "")).toBe(described(schema, data, component ?? "root"));
  });
});
