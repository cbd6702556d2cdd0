// RFC 9110 §12.5.5: a refusal's own `Vary` names request fields its decision read; the fields a
// step in front varied on (the API version's, CORS') stay. Every adapter appends `response.vary`
// to what is set in front and writes `response.headers` over it, so the refusal's `Vary` belongs
// in the former.

import { HttpError } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { refusalResponse } from "./core.js";

describe("refusalResponse: the refusal's Vary is appended, never a replacing field", () => {
  it.each([
    [{ Vary: "X-Forwarded-Host, X-Forwarded-Proto" }, ["X-Forwarded-Host", "X-Forwarded-Proto"]],
    [{ vary: "Accept" }, ["Accept"]],
    [{ VARY: " Origin ,, " }, ["Origin"]],
  ])("%o → vary %o, no Vary field among the headers", (fields, vary) => {
    const response = refusalResponse(HttpError.notFound("none", { headers: fields }), "1.2", "GET");
    expect(response.vary).toEqual(vary);
    expect(Object.keys(response.headers).map((name) => name.toLowerCase())).not.toContain("vary");
    expect(response.status).toBe(404);
  });

  it("a refusal without Vary has no vary, and keeps its other fields", () => {
    const response = refusalResponse(HttpError.methodNotAllowed(["POST"]), "1.1", "GET");
    expect(response.vary).toBeUndefined();
    expect(response.headers.Allow).toBe("POST");
    expect(response.headers["Content-Type"]).toBe("text/xml; charset=utf-8");
  });
});
