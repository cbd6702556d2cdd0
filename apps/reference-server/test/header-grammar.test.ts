import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, type Started, sqlite } from "./harness.js";

/**
 * One grammar and one media-range selection (RFC 9110 §12.5.1) for successes and errors: the
 * composed packages must agree on what a client's `Accept` asks for.
 */
describe("Accept: one decision for successes, errors and versions", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await sqlite.start({});
    api = client(s.url);
  });
  afterAll(() => s.stop());

  it.each([
    ["application/xml, application/json", /^application\/json/],
    ["text/xml, application/json", /^application\/json/],
    ["application/json;q=0.5, application/xml", /^application\/xml/],
  ])("Accept: %s → the 200 and the 404 in the same representation", async (accept, type) => {
    const ok = await api("/employees/1", { headers: { accept } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(type);
    const missing = await api("/employees/999999", { headers: { accept } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(type);
  });

  it.each([
    "application/vnd.svc.v2+xml, application/vnd.svc.v1+json",
    "application/vnd.svc.v1+json, application/vnd.svc.v2+xml",
  ])(
    "Accept: %s → the label and the body name one version (found by the hostile property suite)",
    async (accept) => {
      for (const path of ["/employees/1", "/employees?size=2"]) {
        const res = await api(path, { headers: { accept } });
        expect(res.status).toBe(200);
        const type = res.headers.get("content-type") ?? "";
        const body = await res.text();
        const version = /vnd\.svc\.v(\d+)\+/.exec(type)?.[1];
        expect(version, `${path}: ${type}`).toBeDefined();
        // Version 1 has one `name`, version 2 `firstName` and `lastName`, in JSON and XML alike.
        expect(body.includes("firstName"), `${path}: ${type}`).toBe(version === "2");
      }
    },
  );

  it.each([
    "application/vnd.svc.v1+json;q=0, application/vnd.svc.v2+json",
    "application/vnd.svc.v2+json, application/vnd.svc.v1+json;q=0",
    // Version 2 is the supported one: its body is never labelled with the unknown type.
    "application/vnd.svc.v9+json, application/vnd.svc.v2+json",
    "application/vnd.svc.vx+json;q=0.5, application/vnd.svc.v2+json;q=0.4",
  ])("Accept: %s → 200, version 2, sent as vnd.svc.v2+json", async (accept) => {
    const res = await api("/employees/1", { headers: { accept } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.svc.v2+json; charset=utf-8");
    expect(await res.json()).toHaveProperty("firstName");
  });

  it.each(["application/vnd.svc.vx+json", "application/vnd.svc.v99999999999+json"])(
    "Accept: %s → 406, the type never echoed",
    async (accept) => {
      const res = await api("/employees/1", { headers: { accept } });
      expect(res.status).toBe(406);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await res.json()).toMatchObject({
        status: 406,
        message: expect.stringMatching(/supported versions: 1, 2/),
      });
    },
  );

  it("Accept: application/vnd.svc.v1+json;q=0 → 406 (the only type named is refused)", async () => {
    const res = await api("/employees/1", { headers: { accept: "application/vnd.svc.v1+json;q=0" } });
    expect(res.status).toBe(406);
  });
});
