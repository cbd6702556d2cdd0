import { describe, expect, it } from "vitest";
import { halOpenApi, halPageSchema, halResourceSchema } from "./openapi.js";
import { pageModel } from "./page.js";

describe("halOpenApi", () => {
  it("describes a page as pageModel writes it", () => {
    const page = pageModel({
      collection: "employees",
      items: [{ id: 1 }],
      page: 2,
      size: 1,
      totalElements: 3,
      url: "/employees?page=2&size=1",
    }) as unknown as Record<string, Record<string, unknown>>;
    const schemas = halOpenApi().components?.schemas ?? {};
    const metadata = schemas.PageMetadata as { required: string[] };
    expect(Object.keys(page.page ?? {}).sort()).toEqual([...metadata.required].sort());
    const links = schemas.PageLinks as { properties: Record<string, unknown> };
    for (const rel of Object.keys(page._links ?? {})) expect(links.properties).toHaveProperty(rel);
    const schema = halPageSchema("employees", { type: "object" }) as { required: string[] };
    expect(Object.keys(page).sort()).toEqual([...schema.required].sort());
  });

  it("describes a resource: its state and its links, self first", () => {
    expect(halResourceSchema("A thing", { id: { type: "integer" } }, ["up"], ["next"])).toEqual({
      type: "object",
      description: "A thing",
      required: ["id", "_links"],
      properties: {
        id: { type: "integer" },
        _links: {
          type: "object",
          required: ["self", "up"],
          properties: {
            self: { $ref: "#/components/schemas/HalLink" },
            up: { $ref: "#/components/schemas/HalLink" },
            next: { $ref: "#/components/schemas/HalLink" },
          },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    });
  });
});
