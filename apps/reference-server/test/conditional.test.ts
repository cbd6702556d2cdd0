import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, type Started } from "./harness.js";

const identity = { "accept-encoding": "identity" };

/** The JSON a request naming its version by `headers` reads: the vendor type it names, else plain JSON. */
function jsonOf(headers: Readonly<Record<string, string>>): string {
  return headers.accept?.includes("+json") ? headers.accept : "application/json";
}
/**
 * fetch() sends `Cache-Control: no-cache` with any conditional header unless told otherwise
 * (Fetch standard, cache mode "no-store"), and a server must not answer that with a 304.
 */
const revalidate = { ...identity, "cache-control": "max-age=0" };

describe.each(backends)("conditional requests on $name (part 4.3)", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  it("GET → strong ETag; If-None-Match with it → 304, no body, ETag and security headers kept", async () => {
    const first = await api("/employees/5", { headers: identity });
    const etag = first.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await api("/employees/5", { headers: { ...revalidate, "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("etag")).toBe(etag);
    expect(again.headers.get("x-content-type-options")).toBe("nosniff");
  });

  // RFC 9110 §13.1.2: the origin MUST evaluate If-None-Match; a request's no-cache asks caches
  // for validation at the origin (RFC 9111 §5.2.1.4), which is what the 304 is. fetch() adds
  // no-cache to every conditional request, so ignoring the tag then would mean no 304 for it.
  it("If-None-Match with Cache-Control: no-cache → 304 all the same", async () => {
    const etag = (await api("/employees/5", { headers: identity })).headers.get("etag") ?? "";
    const res = await api("/employees/5", {
      headers: { ...identity, "if-none-match": etag, "cache-control": "no-cache" },
    });
    expect(res.status).toBe(304);
  });

  it("the JSON and XML representations have different ETags", async () => {
    const j = await api("/employees/5", { headers: identity });
    const x = await api("/employees/5", { headers: { ...identity, accept: "application/xml" } });
    expect(j.headers.get("etag")).not.toBe(x.headers.get("etag"));
  });

  it("a compressed response does not keep the strong tag", async () => {
    const res = await api("/employees?size=100", { headers: { "accept-encoding": "gzip" } });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(res.headers.get("etag")).toMatch(/^W\//);
  });

  it("collections have ETags and revalidate too", async () => {
    const first = await api("/departments", { headers: identity });
    const res = await api("/departments", {
      headers: { ...revalidate, "if-none-match": first.headers.get("etag") ?? "" },
    });
    expect(res.status).toBe(304);
  });

  it("PATCH with the current If-Match → 200; with the now stale one → 412", async () => {
    const etag = (await api("/employees/6", { headers: identity })).headers.get("etag") ?? "";
    const ok = await api("/employees/6", {
      method: "PATCH",
      headers: { "if-match": etag },
      json: { salary: 50001 },
    });
    expect(ok.status).toBe(200);
    const stale = await api("/employees/6", {
      method: "PATCH",
      headers: { "if-match": etag },
      json: { salary: 50002 },
    });
    expect(stale.status).toBe(412);
    expect(await stale.json()).toMatchObject({ status: 412, error: "Precondition Failed" });
    const now = (await (await api("/employees/6")).json()) as { salary: number };
    expect(now.salary).toBe(50001);
  });

  it("an XML client's If-Match (the tag of the XML it read) → 200; once stale → 412", async () => {
    const xmlHeaders = { ...identity, accept: "application/xml" };
    const etag = (await api("/employees/8", { headers: xmlHeaders })).headers.get("etag") ?? "";
    expect(etag).toMatch(/^"/);
    const ok = await api("/employees/8", {
      method: "PATCH",
      headers: { ...xmlHeaders, "if-match": etag },
      json: { salary: 70001 },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^application\/xml/);
    const stale = await api("/employees/8", {
      method: "PATCH",
      headers: { ...xmlHeaders, "if-match": etag },
      json: { salary: 70002 },
    });
    expect(stale.status).toBe(412);
    // The tag of the XML it now reads works again.
    const fresh = (await api("/employees/8", { headers: xmlHeaders })).headers.get("etag") ?? "";
    expect(
      (
        await api("/employees/8", {
          method: "PATCH",
          headers: { ...xmlHeaders, "if-match": fresh },
          json: { salary: 70003 },
        })
      ).status,
    ).toBe(200);
  });

  // RFC 9110 §8.8.3: a strong tag names one representation, media type included; the JSON,
  // HAL+JSON and vendor JSON of one state share their bytes but not their tag.
  it.each(["application/hal+json", "application/vnd.svc.v1+json", "application/xml", "text/csv"])(
    "GET /employees?size=3 Accept: %s with If-None-Match of the application/json tag → 200, its own tag",
    async (accept) => {
      const jsonTag = (await api("/employees?size=3", { headers: identity })).headers.get("etag") ?? "";
      const other = await api("/employees?size=3", {
        headers: { ...revalidate, accept, "if-none-match": jsonTag },
      });
      expect(other.status).toBe(200);
      expect(other.headers.get("etag")).toMatch(/^"[^"]+"$/);
      expect(other.headers.get("etag")).not.toBe(jsonTag);
    },
  );

  it.each(["application/hal+json", "application/vnd.svc.v1+json", "application/xml"])(
    "GET Accept: %s with If-None-Match of the application/json tag → 200, its own tag (never a 304)",
    async (accept) => {
      const jsonTag = (await api("/employees/5", { headers: identity })).headers.get("etag") ?? "";
      const other = await api("/employees/5", {
        headers: { ...revalidate, accept, "if-none-match": jsonTag },
      });
      expect(other.status).toBe(200);
      expect(other.headers.get("content-type")).toMatch(new RegExp(`^${accept.replace(/[+.]/g, "\\$&")}`));
      const own = other.headers.get("etag") ?? "";
      expect(own).toMatch(/^"[^"]+"$/);
      expect(own).not.toBe(jsonTag);
      const again = await api("/employees/5", { headers: { ...revalidate, accept, "if-none-match": own } });
      expect(again.status).toBe(304);
    },
  );

  // RFC 9110 §13.1.1: If-Match is compared with the tag of the selected representation, the one a
  // GET with the write's own header fields would be sent (§3.2).
  it("PATCH Accept: application/hal+json with the HAL tag it read → 200; with the JSON tag → 412 carrying the HAL tag", async () => {
    const hal = { ...identity, accept: "application/hal+json" };
    const halTag = (await api("/employees/9", { headers: hal })).headers.get("etag") ?? "";
    const jsonTag = (await api("/employees/9", { headers: identity })).headers.get("etag") ?? "";
    expect(halTag).not.toBe(jsonTag);
    const wrong = await api("/employees/9", {
      method: "PATCH",
      headers: { ...hal, "if-match": jsonTag },
      json: { salary: 61001 },
    });
    expect(wrong.status).toBe(412);
    expect(wrong.headers.get("etag")).toBe(halTag);
    const ok = await api("/employees/9", {
      method: "PATCH",
      headers: { ...hal, "if-match": halTag },
      json: { salary: 61002 },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^application\/hal\+json/);
  });

  it("PATCH without Accept is compared with the default JSON tag: the XML tag → 412, the JSON tag → 200", async () => {
    const xmlTag =
      (await api("/employees/10", { headers: { ...identity, accept: "application/xml" } })).headers.get(
        "etag",
      ) ?? "";
    const stale = await api("/employees/10", {
      method: "PATCH",
      headers: { "if-match": xmlTag },
      json: { salary: 62001 },
    });
    expect(stale.status).toBe(412);
    const jsonTag = (await api("/employees/10", { headers: identity })).headers.get("etag") ?? "";
    const ok = await api("/employees/10", {
      method: "PATCH",
      headers: { "if-match": jsonTag },
      json: { salary: 62002 },
    });
    expect(ok.status).toBe(200);
  });

  it("PUT and DELETE with a stale If-Match → 412 and nothing changes", async () => {
    const stale = '"0-stale"';
    const put = await api("/departments/2", {
      method: "PUT",
      headers: { "if-match": stale },
      json: { name: "Sales", city: "Nice" },
    });
    expect(put.status).toBe(412);
    expect((await api("/projects/1", { method: "DELETE", headers: { "if-match": stale } })).status).toBe(412);
    expect((await api("/projects/1")).status).toBe(200);
  });

  it("12 concurrent PATCHes with the same current If-Match → exactly one 200, the rest 412, no lost update", async () => {
    const etag = (await api("/employees/7", { headers: identity })).headers.get("etag") ?? "";
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const res = await api("/employees/7", {
          method: "PATCH",
          headers: { "if-match": etag },
          json: { salary: 60_000 + i },
        });
        return { status: res.status, body: (await res.json()) as { salary?: number } };
      }),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 412)).toHaveLength(11);
    const now = (await (await api("/employees/7")).json()) as { salary: number };
    expect(now.salary).toBe(winners[0]?.body.salary);
  });

  // The losers either raced the winner (412: the row changed under their precondition) or came
  // after it (404: RFC 9110 §13.2.1, a request whose response would be 404 without its
  // precondition ignores it).
  it("concurrent DELETEs with the same If-Match → one 204, each other one 412 or 404, the item gone", async () => {
    const created = await api("/categories", { method: "POST", json: { name: "Race", description: "x" } });
    const path = new URL(created.headers.get("location") ?? "").pathname;
    const etag = (await api(path, { headers: identity })).headers.get("etag") ?? "";
    const statuses = await Promise.all(
      Array.from(
        { length: 6 },
        async () => (await api(path, { method: "DELETE", headers: { "if-match": etag } })).status,
      ),
    );
    expect(statuses.filter((status) => status === 204)).toHaveLength(1);
    expect(statuses.filter((status) => status === 412 || status === 404)).toHaveLength(5);
    expect((await api(path)).status).toBe(404);
  });

  // RFC 9110 §13.2.1: "A server MUST ignore all received preconditions if its response to the same
  // request without those conditions, prior to processing the request content, would have been a
  // status code other than a 2xx (Successful) or 412 (Precondition Failed)."
  it.each([
    ["PATCH", "/employees/999999", { salary: 1 }],
    ["PUT", "/departments/999999", { name: "Nowhere", city: "Nice" }],
    ["DELETE", "/accounts/0", undefined],
    ["DELETE", "/projects/999999", undefined],
  ])("%s %s with If-Match: * on a missing resource → 404, not 412", async (method, path, json) => {
    const res = await api(path, { method, headers: { "if-match": "*" }, ...(json ? { json } : {}) });
    expect(res.status).toBe(404);
  });

  // RFC 9110 §13.1.1: the tag compared is the selected representation's, the one the write's own
  // GET gets, whichever way the request names version 2 (spec part 9).
  it.each([
    ["/v2/employees/11", "/employees/11", {}],
    ["/employees/12", "/employees/12", { "api-version": "2" }],
    ["/employees/13", "/employees/13", { accept: "application/vnd.svc.v2+json" }],
    ["/v2/employees/14", "/employees/14", { accept: "application/hal+json" }],
    ["/employees/15", "/employees/15", { "api-version": "2", accept: "application/xml" }],
    ["/v2/employees/16", "/employees/16", { accept: "application/xml" }],
    ["/employees/17", "/employees/17", { "api-version": "2", "accept-encoding": "gzip" }],
  ])(
    "PUT %s %o with the tag of its v2 GET → 200; with the v1 tag → 412 advertising the v2 tag",
    async (v2Path, v1Path, v2) => {
      const read = await api(v2Path, { headers: { ...identity, ...v2 } });
      expect(read.status).toBe(200);
      const v2Tag = read.headers.get("etag") ?? "";
      const asJson = await api(v2Path, { headers: { ...v2, accept: jsonOf(v2) } });
      const { _links, ...state } = (await asJson.json()) as Record<string, unknown>;
      expect(state).toHaveProperty("firstName");
      const v1Tag = (await api(v1Path, { headers: identity })).headers.get("etag") ?? "";
      expect(v2Tag).toMatch(/^"[^"]+"$/);
      expect(v1Tag).not.toBe(v2Tag);
      const body = { ...state, city: "Lyon" };
      const stale = await api(v2Path, { method: "PUT", headers: { ...v2, "if-match": v1Tag }, json: body });
      expect(stale.status).toBe(412);
      expect(stale.headers.get("etag")).toBe(v2Tag);
      const ok = await api(v2Path, { method: "PUT", headers: { ...v2, "if-match": v2Tag }, json: body });
      expect(ok.status).toBe(200);
      expect(
        (await (await api(v2Path, { headers: { ...v2, accept: jsonOf(v2) } })).json()) as object,
      ).toMatchObject({ city: "Lyon" });
    },
  );

  it("the cart takes the If-Match of its XML representation too, from a client that writes with Accept: application/xml", async () => {
    const xmlHeaders = { ...identity, accept: "application/xml" };
    const etag = (await api("/cart", { headers: xmlHeaders })).headers.get("etag") ?? "";
    const ok = await api("/cart", {
      method: "PUT",
      headers: { ...xmlHeaders, "if-match": etag },
      json: { items: [] },
    });
    expect(ok.status).toBe(200);
  });

  it("8 concurrent cart PUTs with the same If-Match → exactly one 200, the rest 412", async () => {
    const etag = (await api("/cart", { headers: identity })).headers.get("etag") ?? "";
    const statuses = await Promise.all(
      Array.from(
        { length: 8 },
        async (_, i) =>
          (
            await api("/cart", {
              method: "PUT",
              headers: { "if-match": etag },
              json: { items: [{ productId: 1 + (i % 4), quantity: i + 1 }] },
            })
          ).status,
      ),
    );
    expect(statuses.sort()).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
  });

  it("the cart honours If-Match", async () => {
    const etag = (await api("/cart", { headers: identity })).headers.get("etag") ?? "";
    const ok = await api("/cart", { method: "PUT", headers: { "if-match": etag }, json: { items: [] } });
    expect(ok.status).toBe(200);
    const stale = await api("/cart", {
      method: "PUT",
      headers: { "if-match": etag },
      json: { items: [{ productId: 1, quantity: 1 }] },
    });
    expect([200, 412]).toContain(stale.status);
  });
});
