import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, type Started } from "./harness.js";

/**
 * String bounds count characters, as the OpenAPI document's `maxLength` does (JSON Schema
 * Validation 2020-12 §6.3.1: "the number of its characters as defined by RFC 8259", that is code
 * points), not UTF-16 code units: a client that validates against the document must not be refused
 * by the server. Bodies (zod) always counted characters; the list filters counted code units.
 */
const EMOJI = "😀"; // one character, two UTF-16 code units

describe.each(backends)("string lengths in characters on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  it("the document bounds the city filter of GET /employees at 200 characters", async () => {
    const doc = (await (await api("/openapi.json")).json()) as {
      paths: { "/employees": { get: { parameters: { name?: string; schema?: { maxLength?: number } }[] } } };
    };
    const city = doc.paths["/employees"].get.parameters.find((p) => p.name === "city");
    expect(city?.schema?.maxLength).toBe(200);
  });

  it("POST /customers with a name of 200 emoji (200 characters, 400 UTF-16 units) → 201, stored as sent", async () => {
    const name = EMOJI.repeat(200);
    const res = await api("/customers", {
      method: "POST",
      json: { name, email: "emoji200@example.com", city: "X" },
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { name: string }).name).toBe(name);
  });

  it("POST /customers with a name of 201 emoji → 400 naming the field", async () => {
    const res = await api("/customers", {
      method: "POST",
      json: { name: EMOJI.repeat(201), email: "emoji201@example.com", city: "X" },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { field: string }[] };
    expect(body.errors.map((e) => e.field)).toContain("name");
  });

  it("GET /employees?city=<200 emoji> → 200; <201 emoji> → 400", async () => {
    const ok = await api(`/employees?city=${encodeURIComponent(EMOJI.repeat(200))}`);
    expect(ok.status).toBe(200);
    const tooLong = await api(`/employees?city=${encodeURIComponent(EMOJI.repeat(201))}`);
    expect(tooLong.status).toBe(400);
  });
});
