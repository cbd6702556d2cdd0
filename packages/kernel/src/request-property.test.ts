import { describe, expect, it } from "vitest";
import { writeRequestProperty } from "./request-property.js";

describe("writeRequestProperty: a compatibility option's copy on the framework's request", () => {
  it('a value → written as the property: { principal: { id: "ada" } }', () => {
    const req: Record<string, unknown> = {};
    writeRequestProperty(req, "principal", { id: "ada" });
    expect(req).toEqual({ principal: { id: "ada" } });
  });

  it("undefined → the value an earlier step left is removed; an absent one stays absent", () => {
    const stale: Record<string, unknown> = { principal: { id: "mallory" } };
    writeRequestProperty(stale, "principal", undefined);
    expect("principal" in stale).toBe(false);
    const fresh: Record<string, unknown> = {};
    writeRequestProperty(fresh, "principal", undefined);
    expect(Object.getOwnPropertyNames(fresh)).toEqual([]);
  });

  it("undefined with empty null (a declared property, Fastify's decorateRequest) → null, the property kept", () => {
    const request: Record<string, unknown> = { principal: { id: "mallory" } };
    writeRequestProperty(request, "principal", undefined, null);
    expect(request).toEqual({ principal: null });
  });
});
