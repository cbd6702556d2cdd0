import type { PipelineRequest, Representation } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { csv, html, json, representations, text, xml } from "./index.js";

function request(method: string, accept: string | undefined): PipelineRequest {
  return { view: { method, headers: accept === undefined ? {} : { accept } }, path: "/employees/2" };
}

/** The 406's status and message, or "go on" when the preflight lets the handler run. */
function decide(
  offers: readonly Representation[],
  method: string,
  accept: string | undefined,
  produces: readonly string[] | undefined,
  label?: string,
): string {
  try {
    representations({ offers }).preflight(request(method, accept), label, method !== "GET", produces);
    return "go on";
  } catch (err) {
    const { status, message } = err as { status: number; message: string };
    return `${status} ${message}`;
  }
}

const DEFAULT = [json, xml, csv, text, html];
const NOT_CSV =
  "406 None of the available representations is acceptable: application/json, application/xml, text/plain, text/html";

/**
 * RFC 9110 §15.5.7 before a write: what the route's response can be, not everything the pipeline
 * offers. CSV can represent a collection only (`canRepresent`), so a write that does not say its
 * route answers a collection cannot promise it before its handler has made the data.
 */
describe("representations().preflight: a write's 406 by what its route produces", () => {
  it.each([
    // No `produces`: the offers that represent any data (JSON, XML, text, HTML; not CSV).
    ["PATCH", "text/csv", undefined, NOT_CSV],
    ["PUT", "text/csv", undefined, NOT_CSV],
    ["POST", "text/csv", undefined, NOT_CSV],
    ["DELETE", "text/csv", undefined, NOT_CSV],
    ["PATCH", "text/csv, image/png;q=0.5", undefined, NOT_CSV],
    ["PATCH", "application/xml", undefined, "go on"],
    ["PATCH", "text/csv, application/json;q=0.1", undefined, "go on"],
    ["PATCH", "text/*", undefined, "go on"],
    ["PATCH", "*/*", undefined, "go on"],
    ["PATCH", undefined, undefined, "go on"],
    ["PATCH", "image/png", undefined, NOT_CSV],
    // A body that names its own +json type (HAL) is still served by the JSON representation.
    ["POST", "application/hal+json", undefined, "go on"],
    // The route says what it answers.
    ["POST", "text/csv", ["text/csv", "application/json"], "go on"],
    [
      "PUT",
      "application/xml",
      ["application/json"],
      "406 None of the available representations is acceptable: application/json",
    ],
    // A route that answers without content (204): no Accept refuses it.
    ["DELETE", "text/csv", [], "go on"],
    ["DELETE", "image/png", [], "go on"],
    ["DELETE", "*/*;q=0", [], "go on"],
    // A read is decided on its data, after its handler.
    ["GET", "text/csv", undefined, "go on"],
    ["GET", "image/png", undefined, "go on"],
  ] as const)("%s, Accept: %s, produces %j → %s", (method, accept, produces, expected) => {
    expect(decide(DEFAULT, method, accept, produces)).toBe(expected);
  });

  it("PATCH, Accept: the version's vendor type, labelling JSON → go on", () => {
    const vnd = "application/vnd.svc.v2+json";
    expect(decide(DEFAULT, "PATCH", vnd, undefined, vnd)).toBe("go on");
  });

  it("every offer depends on the data → none is ruled out before the handler: Accept: text/csv → go on", () => {
    const pages: Representation = { ...csv, canRepresent: Array.isArray };
    const pageJson: Representation = { ...json, canRepresent: Array.isArray };
    expect(decide([pageJson, pages], "POST", "text/csv", undefined)).toBe("go on");
    expect(decide([pageJson, pages], "POST", "image/png", undefined)).toMatch(/^406 .*text\/csv/);
  });
});
