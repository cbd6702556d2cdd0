import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNegotiator, csv, html, json, text, xml } from "../src/index.js";

/** A value whose fields are private to its class, like a HAL resource: only `toJSON` shows them. */
class Employee {
  readonly #id: number;
  readonly #name: string;
  constructor(id: number, name: string) {
    this.#id = id;
    this.#name = name;
  }
  toJSON() {
    return { id: this.#id, name: this.#name, _links: { self: { href: `/employees/${this.#id}` } } };
  }
}

describe("every representation reads a value through its toJSON(), as JSON does", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    const negotiator = createNegotiator({ representations: [json, xml, csv, text, html] });
    server = createServer((req, res) => {
      const data =
        req.url === "/list" ? [new Employee(1, "Ada"), new Employee(2, "Grace")] : new Employee(7, "Ada");
      negotiator.represent(req, res, data).catch(() => {
        res.statusCode = 500;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each([
    ["application/xml", "<id>7</id><name>Ada</name><_links><self><href>/employees/7</href></self></_links>"],
    ["text/html", "Ada"],
    ["text/plain", "Ada"],
  ])("Accept: %s → the fields, not an empty element", async (accept, expected) => {
    const res = await fetch(`${url}/one`, { headers: { accept } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(expected);
  });

  it("Accept: text/csv on a list → one row per item with its fields", async () => {
    const res = await fetch(`${url}/list`, { headers: { accept: "text/csv" } });
    expect(res.status).toBe(200);
    const lines = (await res.text()).trim().split(/\r?\n/);
    expect(lines[0]).toBe("id,name,_links");
    expect(lines[1]).toMatch(/^1,Ada,/);
    expect(lines).toHaveLength(3);
  });
});
