import { errorHandler } from "@svc/errors";
import { HAL_JSON, hal } from "@svc/hal";
import { listen } from "@svc/test-utils";
import express from "express";
import { beforeAll, describe, expect, it } from "vitest";
import { MEDIA_TYPE, negotiate } from "../src/index.js";

// Runs on Express 5 and, in the `(express 4)` project, on Express 4.
const employee = () => hal({ id: 7, name: "Ada Lovelace" }).link("self", "/employees/7");

let url: string;

beforeAll(async () => {
  const app = express();
  app.use(negotiate());
  app.get("/represent", async (_req, res) => res.represent(employee()));
  app.get("/represent-list", async (_req, res) =>
    res.represent([employee(), hal({ id: 8, name: "Grace Hopper" })]),
  );
  app.get("/json", (_req, res) => {
    res.json(employee());
  });
  app.get("/json-status", (_req, res) => {
    res.status(201).json(employee());
  });
  app.get("/json-plain", (_req, res) => {
    res.json({ id: 7 });
  });
  app.get("/json-typed", (_req, res) => {
    res.type("application/vnd.svc.v2+json").json(employee());
  });
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  url = server.url;
  return server.close;
});

async function get(path: string, accept?: string) {
  const res = await fetch(`${url}${path}`, accept === undefined ? {} : { headers: { Accept: accept } });
  const vary = (res.headers.get("vary") ?? "").split(/\s*,\s*/).filter(Boolean);
  return { status: res.status, type: res.headers.get("content-type"), vary, body: await res.text() };
}

describe("a HAL resource through res.represent", () => {
  it.each([
    ["application/xml", /^application\/xml/, ["<id>7</id>", "<name>Ada Lovelace</name>", "/employees/7"]],
    ["text/html", /^text\/html/, ["Ada Lovelace", "/employees/7"]],
    ["text/plain", /^text\/plain/, ["Ada Lovelace", "/employees/7"]],
  ])("Accept: %s → 200 with the resource's values, not an empty document", async (accept, type, parts) => {
    const res = await get("/represent", accept);
    expect(res.status).toBe(200);
    expect(res.type).toMatch(type);
    for (const part of parts) expect(res.body).toContain(part);
  });

  // RFC 9110 §8.3: the HAL resource declares application/hal+json, so another `+json` type the
  // client names is not its type; the client's other ranges decide, or a 406.
  it.each([
    // The 406 is an error record: application/problem+json is its type (RFC 9457 §3).
    ["application/problem+json", 406, /^application\/problem\+json/],
    ["application/vnd.svc.v2+json", 406, /^application\/json/],
    ["application/problem+json, application/xml;q=0.5", 200, /^application\/xml/],
    ["application/problem+json, application/hal+json;q=0.5", 200, /^application\/hal\+json/],
  ])(
    "Accept: %s → %s %s, never a Content-Type the resource does not declare",
    async (accept, status, type) => {
      const res = await get("/represent", accept);
      expect(res.status).toBe(status);
      expect(res.type).toMatch(type);
    },
  );

  it("Accept: text/csv on a list of HAL resources → one row per resource with its values", async () => {
    const res = await get("/represent-list", "text/csv");
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/csv/);
    const lines = res.body.trim().split(/\r?\n/);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain("id");
    expect(lines[1]).toContain("Ada Lovelace");
    expect(lines[2]).toContain("Grace Hopper");
  });
});

// The JSON representation's label, the same for res.represent and (behind negotiate()) res.json.
describe.each([
  ["res.represent", "/represent"],
  ["res.json", "/json"],
])("a HAL resource through %s", (_name, path) => {
  it.each([
    [undefined, "application/hal+json; charset=utf-8"],
    ["*/*", "application/hal+json; charset=utf-8"],
    ["application/hal+json", "application/hal+json; charset=utf-8"],
    ["application/*", "application/hal+json; charset=utf-8"],
    ["application/json", "application/json; charset=utf-8"],
    ["application/json, application/hal+json;q=0.5", "application/json; charset=utf-8"],
    ["application/json;q=0.5, application/hal+json", "application/hal+json; charset=utf-8"],
  ])("Accept: %s → Content-Type %s, Vary: Accept, the HAL document", async (accept, type) => {
    const res = await get(path, accept);
    expect(res.status).toBe(200);
    expect(res.type).toBe(type);
    expect(res.vary).toContain("Accept");
    expect(JSON.parse(res.body)).toEqual({
      _links: { self: { href: "/employees/7" } },
      id: 7,
      name: "Ada Lovelace",
    });
  });
});

describe("a HAL resource through res.json", () => {
  it("res.status(201).json(resource) → 201 application/hal+json", async () => {
    const res = await get("/json-status");
    expect(res.status).toBe(201);
    expect(res.type).toBe("application/hal+json; charset=utf-8");
  });

  it("a plain object → application/json, no Vary: Accept added", async () => {
    const res = await get("/json-plain");
    expect(res.type).toBe("application/json; charset=utf-8");
    expect(res.vary).not.toContain("Accept");
  });

  it("a Content-Type the handler set is kept", async () => {
    const res = await get("/json-typed");
    expect(res.type).toBe("application/vnd.svc.v2+json; charset=utf-8");
  });

  it("the HAL resource names its type under negotiate's MEDIA_TYPE symbol", () => {
    expect((employee() as unknown as Record<symbol, unknown>)[MEDIA_TYPE]).toBe(HAL_JSON);
  });
});

describe("negotiate() mounted twice", () => {
  it("res.json of a HAL resource → 200 application/hal+json, the label applied once", async () => {
    const app = express();
    app.use(negotiate(), negotiate());
    app.get("/json", (_req, res) => {
      res.json(employee());
    });
    const server = await listen(app);
    try {
      const res = await fetch(`${server.url}/json`, { headers: { Accept: "application/hal+json" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/hal\+json/);
      expect(await res.json()).toMatchObject({ id: 7, _links: { self: { href: "/employees/7" } } });
    } finally {
      await server.close();
    }
  });
});
