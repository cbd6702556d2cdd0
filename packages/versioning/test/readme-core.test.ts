// The README's node:http example (readme-core.ts, the same text) on a real server, checked with fetch.

import { readFileSync } from "node:fs";
import { assertReadmeShows, type Listening, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "./readme-core.js";

let base: string;
let listening: Listening;
beforeAll(async () => {
  listening = await listenOn(server);
  base = `${listening.url}`;
});
afterAll(() => listening.close());

const get = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, init);

describe("README: the core from plain node:http", () => {
  it("the README shows exactly the code of readme-core.ts", () => {
    const code = readFileSync(new URL("./readme-core.ts", import.meta.url), "utf8");
    expect(() => assertReadmeShows(import.meta.url, code)).not.toThrow();
  });
  it("GET /v2/employees → version 2, the prefix kept in links, Vary on the version headers and Accept", async () => {
    const res = await get("/v2/employees");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ version: 2, self: "/v2/employees" });
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
    expect(res.headers.get("api-deprecated-versions")).toBe("1");
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
    expect(res.headers.get("deprecation")).toBeNull();
  });
  it("API-Version: 1 → version 1 with Deprecation and Link, Vary on the version headers and Accept", async () => {
    const res = await get("/employees", { headers: { "API-Version": "1" } });
    expect(await res.json()).toEqual({ version: 1, self: "/employees" });
    expect(res.headers.get("deprecation")).toBe("@1767225600");
    expect(res.headers.get("link")).toBe('<https://docs.example.com/v1>; rel="deprecation"');
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
  });
  it("Accept: application/vnd.svc.v2+json → that Content-Type, Vary on Accept and the version headers", async () => {
    const res = await get("/employees", { headers: { Accept: "application/vnd.svc.v2+json" } });
    expect(res.headers.get("content-type")).toBe("application/vnd.svc.v2+json");
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
  });
  it("Accept: application/vnd.svc.v2+xml → the JSON body labelled application/vnd.svc.v2+json", async () => {
    const res = await get("/employees", { headers: { Accept: "application/vnd.svc.v2+xml" } });
    expect(res.headers.get("content-type")).toBe("application/vnd.svc.v2+json");
    expect(await res.json()).toEqual({ version: 2, self: "/employees" });
  });
  it("no version (required) → 400 with the supported versions and Vary on every version field", async () => {
    const res = await get("/employees");
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("An API version is required; supported versions: 1, 2");
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
  });
  it("POST with content in vnd.svc.v9+json → 415, Vary names Content-Type as the answers to v2 content do", async () => {
    const post = (type: string) =>
      get("/employees", { method: "POST", headers: { "Content-Type": type }, body: "{}" });
    const refused = await post("application/vnd.svc.v9+json");
    expect(refused.status).toBe(415);
    expect(await refused.text()).toBe(
      "API version 9 (Content-Type application/vnd.svc.v9+json) is not supported; supported versions: 1, 2",
    );
    expect(refused.headers.get("vary")).toBe("API-Version, Accept-Version, Accept, Content-Type");
    const served = await post("application/vnd.svc.v2+json");
    expect(served.status).toBe(200);
    expect(await served.json()).toEqual({ version: 2, self: "/employees" });
    expect(served.headers.get("vary")).toBe("API-Version, Accept-Version, Accept, Content-Type");
  });
  it("/v9/employees → 404; Accept vnd.svc.v9+json → 406", async () => {
    expect((await get("/v9/employees")).status).toBe(404);
    expect((await get("/employees", { headers: { Accept: "application/vnd.svc.v9+json" } })).status).toBe(
      406,
    );
  });
  it("a CORS preflight without a version → 204; a plain OPTIONS → 400", async () => {
    const preflight = await get("/employees", {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "GET" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("api-supported-versions")).toBe("1, 2");
    expect((await get("/employees", { method: "OPTIONS" })).status).toBe(400);
  });
});
