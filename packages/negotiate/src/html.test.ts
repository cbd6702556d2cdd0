import { describe, expect, it } from "vitest";
import { inMemory } from "../test/core.js";
import { html, json } from "./representation.js";
import { representations } from "./representer.js";

/** A domain object whose fields are private to its class: JSON reads it through `toJSON()`. */
class Employee {
  readonly #id: number;
  readonly #name: string;
  constructor(id: number, name: string) {
    this.#id = id;
    this.#name = name;
  }
  toJSON() {
    return { id: this.#id, name: this.#name };
  }
}

const server = inMemory(
  { representations: representations({ offers: [json, html] }) },
  {
    "/employees": () => [new Employee(7, "Ada"), new Employee(8, "Grace")],
    "/dates": () => [new Date(0), new Date(86_400_000)],
    "/labels": () => [{ toJSON: () => "first" }, { toJSON: () => "second" }],
  },
);

async function page(path: string): Promise<string> {
  const res = await server(path, { headers: { accept: "text/html" } });
  expect(res.status).toBe(200);
  return res.text();
}

describe("text/html collections read as JSON does (ECMA-262 §25.5.2.2 SerializeJSONProperty)", () => {
  it("rows with toJSON() are a table of the fields toJSON() returns", async () => {
    const body = await page("/employees");
    expect(body).toContain('<th scope="col">id</th><th scope="col">name</th>');
    expect(body).toContain("<tr><td>7</td><td>Ada</td></tr>");
    expect(body).toContain("<tr><td>8</td><td>Grace</td></tr>");
  });

  it("an array of Dates is a list of times, not an empty table", async () => {
    const body = await page("/dates");
    expect(body).not.toContain("<table>");
    expect(body).toContain(
      '<li><time datetime="1970-01-01T00:00:00.000Z">1970-01-01T00:00:00.000Z</time></li>',
    );
    expect(body).toContain("1970-01-02T00:00:00.000Z</time></li>");
  });

  it("rows whose toJSON() returns text are that text, never a `toJSON` column", async () => {
    const body = await page("/labels");
    expect(body).not.toContain("toJSON");
    expect(body).toContain("<ul><li>first</li><li>second</li></ul>");
  });
});
