import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csv, html, json, parseXmlBody, representations, text, xml } from "../src/index.js";
import { pipelineServer } from "./core.js";

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
    server = pipelineServer(
      { representations: representations({ offers: [json, xml, csv, text, html] }) },
      (req) => {
        const data =
          req.url === "/list" ? [new Employee(1, "Ada"), new Employee(2, "Grace")] : new Employee(7, "Ada");
        return data;
      },
    );
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

describe("CSV cells, and HTML past its depth, carry the value JSON carries", () => {
  /** An amount type whose JSON text is a string, as decimal and money libraries have it. */
  class Amount {
    constructor(readonly cents: number) {}
    toJSON() {
      return (this.cents / 100).toFixed(2);
    }
  }
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = pipelineServer({ representations: representations({ offers: [json, csv, html] }) }, (req) => {
      let deep: unknown = [9007199254740993n];
      for (let i = 0; i < 60; i++) deep = [deep];
      const data =
        req.url === "/deep"
          ? [{ deep }]
          : req.url === "/bigint"
            ? [{ id: 1, ids: [9007199254740993n], owner: { id: 9007199254740995n } }]
            : [
                {
                  id: 1,
                  site: new URL("https://example.com/a"),
                  total: new Amount(1250),
                  debit: new Amount(-500),
                },
              ];
      return data;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // ECMA-262 §25.5.2.2: a value's toJSON() result is what JSON carries: a URL is its text, not
  // that text in JSON quotes. A string cell is still neutralised (OWASP CSV Injection).
  it("Accept: text/csv, cells of a URL and of a toJSON() string → the text, without JSON quotes", async () => {
    const res = await fetch(`${url}/tojson`, { headers: { accept: "text/csv" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("id,site,total,debit\r\n1,https://example.com/a,12.50,'-5.00\r\n");
  });

  // The README promises that all five representations write a BigInt with every digit: a BigInt
  // nested in a cell's object or array made JSON.stringify throw, and the response a 500.
  it("Accept: text/csv, a BigInt inside a nested cell → 200, every digit", async () => {
    const res = await fetch(`${url}/bigint`, { headers: { accept: "text/csv" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('id,ids,owner\r\n1,[9007199254740993],"{""id"":9007199254740995}"\r\n');
  });

  it("Accept: text/html, a BigInt nested past the table's depth → 200, every digit", async () => {
    const res = await fetch(`${url}/deep`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("9007199254740993");
  });
});

// ECMA-262 §21.4.4.37 Date.prototype.toJSON: an invalid Date (a failed `new Date(input)`) is
// `null` in JSON. The other representations called toISOString() on it, which throws a
// RangeError: the JSON response was 200 and every other one a 500.
describe("an invalid Date is null in every representation, as in JSON", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = pipelineServer(
      { representations: representations({ offers: [json, xml, csv, text, html] }) },
      (req) => {
        const row = { id: 7, hired: new Date(Number.NaN), dates: [new Date(Number.NaN)] };
        return req.url === "/list" ? [row] : row;
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each([
    ["application/json", "/one", '{"id":7,"hired":null,"dates":[null]}'],
    [
      "application/xml",
      "/one",
      '<?xml version="1.0" encoding="UTF-8"?>\n<resource xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><id>7</id><hired xsi:nil="true"/><dates><item xsi:nil="true"/></dates></resource>',
    ],
    ["text/csv", "/list", "id,hired,dates\r\n7,,[null]\r\n"],
    ["text/plain", "/one", "id: 7\nhired: \ndates:\n  - \n"],
  ])("Accept: %s → 200, the date empty (nil in XML)", async (accept, path, expected) => {
    const res = await fetch(`${url}${path}`, { headers: { accept } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(expected);
  });

  it("Accept: text/html → 200, no <time> element", async () => {
    const res = await fetch(`${url}/one`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(await res.text()).not.toContain("<time");
  });
});

// XML 1.0 (Fifth Edition) §2.3: a Name may start with any letter, not only an ASCII one, so a
// member named `prénom` or `名前` is an element name as it is. Each character outside A-Z was made
// "_": `prénom` became `_pr_nom`, and `名前` and `住所` both `___`, two members under one name.
describe("XML element names from non-ASCII member names", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = pipelineServer({ representations: representations({ offers: [json, xml] }) }, () => {
      return { prénom: "Ada", 名前: "エイダ", 住所: "London", "a b": 1 };
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("Accept: application/xml → <prénom>, <名前>, <住所> kept; well-formed", async () => {
    const res = await fetch(url, { headers: { accept: "application/xml" } });
    const body = await res.text();
    expect(body).toContain("<prénom>Ada</prénom><名前>エイダ</名前><住所>London</住所><_a_b>1</_a_b>");
    expect(parseXmlBody(body)).toEqual({
      resource: { prénom: "Ada", 名前: "エイダ", 住所: "London", _a_b: "1" },
    });
  });
});
