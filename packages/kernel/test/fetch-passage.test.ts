import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addPassage,
  fetchAdapter,
  fetchGate,
  passagesOf,
  settleUnreadRequest,
  withPassage,
} from "../src/fetch.js";
import { createPipeline, type Gate, type Versioner } from "../src/index.js";

/** A version decided from `Accept-Version`, so every response varies on it. */
const byHeader: Versioner = {
  resolve(request, target) {
    const asked = request.view.headers["accept-version"];
    return {
      target,
      version: typeof asked === "string" ? Number(asked) : 1,
      prefix: "",
      label: undefined,
      fields: { "api-supported-versions": "1, 2" },
      vary: ["Accept-Version"],
      error: undefined,
    };
  },
};

/** A preflight-like gate: answers OPTIONS itself, varying on Origin; passes everything else. */
const gate: Gate = (view) =>
  view.method === "OPTIONS"
    ? { answer: { status: 204, fields: {}, vary: ["Origin"], body: undefined } }
    : { fields: { "X-Gate": "passed" }, vary: ["Origin"] };

describe("@svc/kernel/fetch: a passage on Hono's response", () => {
  let url: string;
  let server: ReturnType<typeof serve>;
  beforeAll(async () => {
    const svc = fetchAdapter(createPipeline({ versioning: byHeader }));
    const app = new Hono({ getPath: svc.getPath });
    app.use(svc.middleware);
    app.use(fetchGate(gate));
    app.get("/item", (c) => svc.respond(c.req.raw, () => ({ ok: true })));
    app.get("/own", (c) => c.text("own", 200, { "X-Gate": "route" }));
    await new Promise<void>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
        url = `http://127.0.0.1:${info.port}`;
        resolve();
      });
    });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("OPTIONS answered by a gate inside the version middleware → Vary names both", async () => {
    const res = await fetch(`${url}/item`, { method: "OPTIONS" });
    expect(res.status).toBe(204);
    // As on the other frameworks: the version's Vary, set in front, then the answering gate's.
    expect(res.headers.get("vary")).toBe("Accept-Version, Origin");
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
  });

  it("GET through the pipeline → the gate's field and one Vary of every token", async () => {
    const res = await fetch(`${url}/item`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-gate")).toBe("passed");
    expect(res.headers.get("vary")?.split(", ").sort()).toEqual(["Accept-Version", "Origin"]);
  });

  it("GET of a route that sets the gate's field itself → the route's value", async () => {
    const res = await fetch(`${url}/own`);
    expect(await res.text()).toBe("own");
    expect(res.headers.get("x-gate")).toBe("route");
    expect(res.headers.get("vary")).toBe("Accept-Version, Origin");
  });

  it("a Response from fetch() (immutable headers) → a copy with the fields", async () => {
    const response = await fetch(`${url}/own`);
    const result = withPassage(response, { fields: { "X-Other": "added" }, vary: ["Origin"] });
    expect(result).not.toBe(response);
    expect(result.headers.get("x-other")).toBe("added");
    expect(response.headers.get("x-other")).toBeNull();
    expect(await result.text()).toBe("own");
  });
});

describe("withPassage", () => {
  const passage = { fields: { "X-Gate": "passed" }, vary: ["Origin"] };

  it("a Response of its own → the same Response, its fields added", () => {
    const response = new Response("x", { headers: { Vary: "Accept" } });
    const result = withPassage(response, passage);
    expect(result).toBe(response);
    expect(result.headers.get("x-gate")).toBe("passed");
    expect(result.headers.get("vary")).toBe("Accept, Origin");
  });
});

/**
 * A process that imports one package and requires another loads both builds of
 * `@svc/kernel/fetch`: two copies of the module. A gate's fields recorded through one (a rate
 * limit's, CORS's) must reach the response or the error the other writes.
 */
describe("passages across two copies of @svc/kernel/fetch", () => {
  it("a passage recorded through one copy is read through the other, in order", async () => {
    const spec = "../src/fetch.ts?second-copy";
    const other = (await import(/* @vite-ignore */ spec)) as typeof import("../src/fetch.js");
    expect(other.addPassage).not.toBe(addPassage);
    const request = new Request("http://127.0.0.1/item");
    other.addPassage(request, { fields: { "X-Rate": "1" }, vary: [] });
    addPassage(request, { fields: { "X-Cors": "2" }, vary: ["Origin"] });
    const expected = [
      { fields: { "X-Rate": "1" }, vary: [] },
      { fields: { "X-Cors": "2" }, vary: ["Origin"] },
    ];
    expect(passagesOf(request)).toEqual(expected);
    expect(other.passagesOf(request)).toEqual(expected);
    expect(passagesOf(new Request("http://127.0.0.1/item"))).toEqual([]);
    // Kept out of the way: not an own enumerable property of the request.
    expect(Object.keys(request)).toEqual([]);
  });
});

describe("@svc/kernel/fetch: settleUnreadRequest", () => {
  /** A request whose `body` counts its reads, as `@hono/node-server`'s builds a whole `Request` on the first. */
  function counted(fields: Record<string, string>) {
    const request = { headers: new Headers(fields), bodyUsed: false, reads: 0 };
    Object.defineProperty(request, "body", {
      get() {
        request.reads++;
        return null;
      },
    });
    return request;
  }

  it("a request without Content-Length or Transfer-Encoding → its body is never read", () => {
    const request = counted({});
    const response = new Response("ok");
    expect(settleUnreadRequest(request as unknown as Request, response)).toBe(response);
    expect(request.reads).toBe(0);
  });

  it("a chunked request → its body is looked at (unread: Connection: close)", () => {
    const request = counted({ "transfer-encoding": "chunked" });
    settleUnreadRequest(request as unknown as Request, new Response("ok"));
    expect(request.reads).toBe(1);
  });
});
