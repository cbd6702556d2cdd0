import { HAL_JSON, hal } from "@svc/hal";
import { MEDIA_TYPE as KERNEL_MEDIA_TYPE, reply, type Versioner } from "@svc/kernel";
import { beforeAll, describe, expect, it } from "vitest";
import { MEDIA_TYPE, representations } from "../src/index.js";
import { inMemory, onExpress, type Route } from "./core.js";

// Runs on Express 5 and, in the `(express 4)` project, on Express 4.
const employee = () => hal({ id: 7, name: "Ada Lovelace" }).link("self", "/employees/7");

/** As @svc/versioning labels a version's JSON: here the path /json-typed asks for v2. */
const labels: Versioner = {
  resolve(_request, target) {
    const label = target === "/json-typed" ? "application/vnd.svc.v2+json" : undefined;
    return { target, version: undefined, prefix: "", label, fields: {}, vary: [], error: undefined };
  },
};
const steps = { versioning: labels, representations: representations() };
// "/json" is a reply narrowed to JSON (what res.json sent); "/json-plain" is content in its final
// form, not negotiated.
const routes: Record<string, Route> = {
  "/represent": () => employee(),
  "/represent-list": () => [employee(), hal({ id: 8, name: "Grace Hopper" })],
  "/json": () => reply(employee(), { only: ["application/json"] }),
  "/json-status": () => reply(employee(), { status: 201, only: ["application/json"] }),
  "/json-plain": () => reply.bytes(JSON.stringify({ id: 7 }), "application/json; charset=utf-8"),
  "/json-typed": () => reply(employee(), { only: ["application/json"] }),
};

let url: string;

beforeAll(async () => {
  const server = await onExpress(steps, routes);
  url = server.url;
  return server.close;
});

async function get(path: string, accept?: string) {
  const res = await fetch(`${url}${path}`, accept === undefined ? {} : { headers: { Accept: accept } });
  const vary = (res.headers.get("vary") ?? "").split(/\s*,\s*/).filter(Boolean);
  return { status: res.status, type: res.headers.get("content-type"), vary, body: await res.text() };
}

describe("a HAL resource through representations()", () => {
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

// The JSON representation's label, the same for every offer and for a reply narrowed to JSON.
describe.each([
  ["representations()", "/represent"],
  ["a reply narrowed to JSON", "/json"],
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

describe("a HAL resource in a reply narrowed to JSON", () => {
  it("reply(resource, { status: 201, only: [JSON] }) → 201 application/hal+json", async () => {
    const res = await get("/json-status");
    expect(res.status).toBe(201);
    expect(res.type).toBe("application/hal+json; charset=utf-8");
  });

  it("content in its final form → application/json, no Vary: Accept added", async () => {
    const res = await get("/json-plain");
    expect(res.type).toBe("application/json; charset=utf-8");
    expect(res.vary).not.toContain("Accept");
  });

  it("the version's label (application/vnd.svc.v2+json) is kept", async () => {
    const res = await get("/json-typed", "application/vnd.svc.v2+json");
    expect(res.type).toBe("application/vnd.svc.v2+json; charset=utf-8");
  });

  it("the HAL resource names its type under the kernel's MEDIA_TYPE, which negotiate re-exports", () => {
    expect(MEDIA_TYPE).toBe(KERNEL_MEDIA_TYPE);
    expect((employee() as unknown as Record<symbol, unknown>)[MEDIA_TYPE]).toBe(HAL_JSON);
  });
});

describe("in memory, over the cores", () => {
  it("a reply narrowed to JSON of a HAL resource → 200 application/hal+json, the label applied once", async () => {
    const res = await inMemory(steps, routes)("/json", { headers: { Accept: "application/hal+json" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/hal\+json/);
    expect(await res.json()).toMatchObject({ id: 7, _links: { self: { href: "/employees/7" } } });
  });
});
