import { createServer, request } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { HttpError } from "@svc/errors";
import { errorHandler, notFound } from "@svc/errors/express";
import { createPipeline, reply, requestState } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { json, type Representation, representations } from "@svc/negotiate";
import { at, listen, listenOn, simulatedProxy } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base } from "../test/base-options.js";
import { versions } from "./core.js";
import { versioned } from "./express.js";
import type { ApiVersioningOptions } from "./options.js";
import { versionedPath } from "./versioned-path.js";

const quiet = { error() {} };

/** A representation of `{ v }` as `<v>…</v>`: an XML offer a route adds to the JSON one. */
const vXml: Representation = {
  mediaType: "application/xml",
  serialize: (data) => `<v>${String((data as { v: unknown }).v)}</v>`,
};

/**
 * The pipeline's versioning step on `app`, in front of the routes (`svc.prepare`). With the media
 * type strategy the routes offer JSON through @svc/negotiate's representations (which put the
 * vendor label on it); without it, the pipeline's default (JSON whatever `Accept` says, no `Vary`).
 */
function pipelined(app: express.Express, options: ApiVersioningOptions) {
  const svc = expressAdapter(
    createPipeline({
      versioning: versions(options),
      representations: options.mediaType ? representations({ offers: [json] }) : undefined,
    }),
  );
  app.use(svc.prepare);
  return svc;
}

function service(options: ApiVersioningOptions) {
  const app = express();
  app.use((_req, res, next) => {
    res.setHeader("Link", '</openapi.json>; rel="service-desc"');
    next();
  });
  const svc = pipelined(app, options);
  app.get(
    "/employees",
    versioned<express.Request, express.Response>({
      1: svc.handle(() => ({ v: 1 })),
      2: svc.handle((req: express.Request) => ({ v: 2, apiVersion: requestState(req).version })),
    }),
  );
  app.get(
    "/version",
    svc.handle((req: express.Request) => ({
      v: requestState(req).version ?? null,
      url: req.url,
      originalUrl: req.originalUrl,
    })),
  );
  app.get(
    "/employees/7",
    svc.handle((req: express.Request) => ({ self: versionedPath(req, "/employees/7") })),
  );
  app.get(
    "/xml",
    svc.handle(() => reply({ v: 2 }, { add: [vXml] })),
  );
  app.get(
    "/object",
    svc.handle(() => ({ sent: true })),
  );
  app.get(
    "/problem",
    svc.handle(() => reply.bytes(JSON.stringify({ title: "t" }), "application/problem+json; charset=utf-8")),
  );
  // Routes outside the pipeline: prepare() has recorded the version, and nothing negotiates their
  // JSON (the decision on a request whose Accept takes no JSON).
  app.get("/plain", (req, res) => {
    res.json({ v: requestState(req).version ?? null });
  });
  app.get("/health", (req, res) => {
    res.json({ ok: true, v: requestState(req).version ?? null });
  });
  app.post("/health", (req, res) => {
    res.json({ ok: true, v: requestState(req).version ?? null });
  });
  app.patch(
    "/employees/7",
    svc.handle((req: express.Request) => ({ v: requestState(req).version ?? null })),
  );
  app.get(
    "/boom",
    svc.handle(() => {
      throw HttpError.conflict("boom");
    }),
  );
  app.get(
    "/async",
    versioned<express.Request, express.Response>({
      1: svc.handle(async () => {
        await Promise.resolve();
        throw HttpError.conflict("async boom");
      }),
    }),
  );
  app.use(notFound());
  app.use(errorHandler({ logger: quiet }));
  return app;
}

const servers: { close: () => Promise<void> }[] = [];
async function start(options: ApiVersioningOptions): Promise<string> {
  const s = await listen(service(options));
  servers.push(s);
  return s.url;
}
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

let url: string;
beforeAll(async () => {
  url = await start(base);
});
const get = (path: string, headers: Record<string, string> = {}) => fetch(`${url}${path}`, { headers });

describe("URI strategy", () => {
  it("GET /v2/employees → version 2, prefix stripped before routing, Vary on the version headers and Accept", async () => {
    const res = await get("/v2/employees");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ v: 2, apiVersion: 2 });
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
  });
  it("GET /v2/employees without the media type strategy → Vary: API-Version, Accept-Version (with API-Version: 1 the same URL is a 400)", async () => {
    const u = await start({ versions: [1, 2], defaultVersion: 1 });
    const res = await fetch(`${u}/v2/employees`);
    expect(at(await res.json(), "v")).toBe(2);
    // RFC 9110 §12.5.5: the version headers were read too; a cache that reused this 200 for
    // the same URL with a conflicting API-Version would serve what the origin refuses.
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version");
    expect((await fetch(`${u}/v2/employees`, { headers: { "API-Version": "1" } })).status).toBe(400);
  });
  it("GET /v2/employees with uri only (header: false, no mediaType) → no Vary: the URL is the cache key", async () => {
    const u = await start({ versions: [1, 2], defaultVersion: 1, header: false });
    const res = await fetch(`${u}/v2/employees`, { headers: { "API-Version": "1" } });
    expect(at(await res.json(), "v")).toBe(2);
    expect(res.headers.get("vary")).toBeNull();
  });
  it("GET /v2/version?x=1 → req.url /version?x=1, originalUrl keeps the prefix", async () => {
    expect(await (await get("/v2/version?x=1")).json()).toEqual({
      v: 2,
      url: "/version?x=1",
      originalUrl: "/v2/version?x=1",
    });
  });
  it("GET /v9/employees → 404 error record with API-Supported-Versions", async () => {
    const res = await get("/v9/employees");
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(at(body, "status")).toBe(404);
    expect(at(body, "message")).toContain("supported versions: 1, 2");
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
    expect(res.headers.get("api-deprecated-versions")).toBe("1");
  });
  it("GET /v0/employees → 404 (0 is not a version)", async () => {
    expect((await get("/v0/employees")).status).toBe(404);
  });
  it("GET /vx/employees and /v2x/employees → not a prefix, path unchanged, route 404", async () => {
    expect((await get("/vx/employees")).status).toBe(404);
    expect(at(await (await get("/v2x/employees")).json(), "path")).toBe("/v2x/employees");
  });
  // RFC 3986 §6.2: /v01/x and /v1/x are different URIs (no normalisation makes them equal); taken
  // as one version, every version had many URLs (/v1, /v01, ... /v000000001): duplicate cache
  // entries, and path rules of intermediaries (deny /v1/admin) bypassed by another spelling.
  it.each(["/v01/version", "/v001/version", "/v000000002/version"])(
    "GET %s → not a version prefix (one URL per version): the router's 404",
    async (path) => {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(at(await res.json(), "path")).toBe(path);
    },
  );
  // A number too large to be any version is still spelled as one (the table of such targets is
  // core.test.ts's): an unknown version, refused with the package's record.
  const huge = "99999999999999999999";
  it("GET /v<400 nines> (beyond any double, Number() is Infinity) → 404 quoting 32 of the digits as sent", async () => {
    const digits = "9".repeat(400);
    const res = await get(`/v${digits}`);
    expect(res.status).toBe(404);
    expect(at(await res.json(), "message")).toBe(
      `API version ${"9".repeat(32)}… (path /v${"9".repeat(30)}…) is not supported; supported versions: 1, 2`,
    );
    expect(res.headers.get("deprecation")).toBeNull();
  });
  it(`GET /v${huge}/health (version-neutral) → 200 with the default version, as /v9/health`, async () => {
    const res = await get(`/v${huge}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, v: 1 });
    expect(res.headers.get("deprecation")).toBeNull();
  });
});

describe("header strategy", () => {
  it("API-Version: 2 → version 2, Vary on the version headers and Accept (it picks the label)", async () => {
    const res = await get("/employees", { "API-Version": "2" });
    expect(at(await res.json(), "v")).toBe(2);
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
  });
  it("Accept-Version: 1 → version 1", async () => {
    expect(at(await (await get("/employees", { "Accept-Version": "1" })).json(), "v")).toBe(1);
  });
  it("API-Version: 9 → 400 with API-Supported-Versions and Vary", async () => {
    const res = await get("/employees", { "API-Version": "9" });
    expect(res.status).toBe(400);
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
    expect(res.headers.get("vary")).toContain("API-Version");
    expect(at(await res.json(), "message")).toContain("API version 9 (header API-Version) is not supported");
  });
  it("API-Version: 99999999999 → 400, not a 500", async () => {
    expect((await get("/employees", { "API-Version": "99999999999" })).status).toBe(400);
  });
  it("API-Version: 2, 2 (same value twice) → version 2", async () => {
    expect(at(await (await get("/employees", { "API-Version": "2, 2" })).json(), "v")).toBe(2);
  });
  it("API-Version: 2 and an empty API-Version appended (combined with a comma, RFC 9110 §5.3) → version 2", async () => {
    const headers = new Headers();
    headers.append("API-Version", "2");
    headers.append("API-Version", "");
    const res = await fetch(`${url}/employees`, { headers });
    expect(at(await res.json(), "v")).toBe(2);
  });
  it("API-Version: 1 with Accept-Version: 2 → 400 conflict", async () => {
    const res = await get("/employees", { "API-Version": "1", "Accept-Version": "2" });
    expect(res.status).toBe(400);
    expect(at(await res.json(), "message")).toMatch(/names API version 1 .* and 2/);
  });
  it("names: [X-Api-Version], unknownVersionStatus: 422 → only that header counts", async () => {
    const custom = await start({
      versions: [1, 2],
      defaultVersion: 1,
      header: { names: ["X-Api-Version"], unknownVersionStatus: 422 },
    });
    const ok = await fetch(`${custom}/employees`, { headers: { "X-Api-Version": "2", "API-Version": "1" } });
    expect(at(await ok.json(), "v")).toBe(2);
    expect(ok.headers.get("vary")).toBe("X-Api-Version");
    expect((await fetch(`${custom}/employees`, { headers: { "X-Api-Version": "3" } })).status).toBe(422);
  });
  // RFC 9110 §5.1: a field name is a token, and `constructor` is one. Node's req.headers (keys
  // lower-cased) inherits from Object.prototype, whose lower-case `constructor` is a function.
  it.each(["constructor", "Constructor"])(
    "names: [%s] (an Object.prototype member) → without the field the lowest version, with it the version it names",
    async (name) => {
      const custom = await start({ versions: [1, 2], defaultVersion: 1, header: { names: [name] } });
      const plain = await fetch(`${custom}/employees`);
      expect(plain.status).toBe(200);
      expect(at(await plain.json(), "v")).toBe(1);
      const named = await fetch(`${custom}/employees`, { headers: { [name]: "2" } });
      expect(named.status).toBe(200);
      expect(at(await named.json(), "v")).toBe(2);
    },
  );
});

describe("media type strategy", () => {
  it("Accept: application/vnd.svc.v2+json → version 2, Content-Type echoed, Vary on Accept and the version headers", async () => {
    const res = await get("/employees", { Accept: "application/vnd.svc.v2+json" });
    expect(at(await res.json(), "v")).toBe(2);
    expect(res.headers.get("content-type")).toBe("application/vnd.svc.v2+json; charset=utf-8");
    // RFC 9110 §12.5.5: the same Accept with API-Version: 1 is a 406, so a cache must not reuse
    // this 200 for it.
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
    const other = await get("/employees", { Accept: "application/vnd.svc.v2+json", "API-Version": "1" });
    expect(other.status).toBe(406);
  });
  // RFC 6838 §4.2: a media type name is compared as a string (case-insensitively); vnd.svc.v01+json
  // is not vnd.svc.v1+json, and answering it labelled vnd.svc.v1+json sends a type not asked for.
  it("Accept: application/vnd.svc.v01+json → 406, not version 1 labelled application/vnd.svc.v1+json", async () => {
    const res = await get("/employees", { Accept: "application/vnd.svc.v01+json" });
    expect(res.status).toBe(406);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });
  it("Accept: application/vnd.svc.v02+json, application/json → the default version as application/json", async () => {
    const res = await get("/employees", { Accept: "application/vnd.svc.v02+json, application/json" });
    expect(res.status).toBe(200);
    expect(at(await res.json(), "v")).toBe(1);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  });
  it("Accept: application/vnd.svc.v2+xml → Content-Type application/vnd.svc.v2+xml", async () => {
    const res = await get("/xml", { Accept: "application/vnd.svc.v2+xml" });
    expect(res.headers.get("content-type")).toBe("application/vnd.svc.v2+xml; charset=utf-8");
    expect(await res.text()).toBe("<v>2</v>");
  });
  // RFC 9110 §8.3: Content-Type names the representation sent. The label is the representation
  // step's: it names the XML representation of its suffix, never JSON bytes.
  it("Accept: application/vnd.svc.v2+xml on a route whose only representation is JSON → 406, never JSON under an XML label", async () => {
    const res = await get("/employees", { Accept: "application/vnd.svc.v2+xml" });
    expect(res.status).toBe(406);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
  });
  it("Accept: application/vnd.svc.v1+xml, application/json;q=0.5 on a JSON route → the JSON as application/json", async () => {
    const res = await get("/object", { Accept: "application/vnd.svc.v1+xml, application/json;q=0.5" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toEqual({ sent: true });
  });
  it("Accept: application/vnd.svc.v2+json on the same route → the +json label", async () => {
    const res = await get("/object", { Accept: "application/vnd.svc.v2+json" });
    expect(res.headers.get("content-type")).toBe("application/vnd.svc.v2+json; charset=utf-8");
    expect(await res.json()).toEqual({ sent: true });
  });
  it("a handler that answers bytes with its own Content-Type keeps it", async () => {
    const res = await get("/problem", { Accept: "application/vnd.svc.v2+xml" });
    expect(res.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
  });
  it("Accept: application/vnd.svc.v9+json → 406 with API-Supported-Versions", async () => {
    const res = await get("/employees", { Accept: "application/vnd.svc.v9+json" });
    expect(res.status).toBe(406);
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
    expect(res.headers.get("vary")).toContain("Accept");
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });
  it.each([
    ["/v2/employees", {}],
    ["/employees", { "API-Version": "2" }],
  ])(
    "%s %j: Accept chooses the Content-Type label, so Vary names Accept with or without a vendor type (RFC 9110 §12.5.5)",
    async (path, headers: Record<string, string>) => {
      const plain = await get(path, headers);
      const vendor = await get(path, { ...headers, Accept: "application/vnd.svc.v2+json" });
      expect(plain.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(vendor.headers.get("content-type")).toBe("application/vnd.svc.v2+json; charset=utf-8");
      // A cache keeping the first answer must not hand it to the second request.
      expect((plain.headers.get("vary") ?? "").split(", ")).toContain("Accept");
      expect((vendor.headers.get("vary") ?? "").split(", ")).toContain("Accept");
    },
  );
  it("Accept: v1;q=0.5, v2 → the higher q wins: version 2", async () => {
    const res = await get("/employees", {
      Accept: "application/vnd.svc.v1+json;q=0.5, application/vnd.svc.v2+json",
    });
    expect(at(await res.json(), "v")).toBe(2);
  });
  it("Accept: application/vnd.svc.v2+json;q=0 → not acceptable, so not a version: default 1", async () => {
    expect(at(await (await get("/plain", { Accept: "application/vnd.svc.v2+json;q=0" })).json(), "v")).toBe(
      1,
    );
  });
  it("Accept: application/vnd.other.v2+json → another vendor, default 1", async () => {
    expect(at(await (await get("/plain", { Accept: "application/vnd.other.v2+json" })).json(), "v")).toBe(1);
  });
  // RFC 9110 §15.5.7: 406 says the resource has no representation the client accepts; RFC 9110
  // §12.5.1: these clients accept a type that names no version, which the default version has.
  it.each([
    "application/vnd.svc.v9+json, application/json",
    "application/vnd.svc.v9+json, application/json;q=0.1",
    "application/vnd.svc.v9+json;q=0.5, application/json",
    "application/vnd.svc.vx+json, */*;q=0.2",
  ])(
    "Accept: %s → an unknown vendor version with another acceptable type: default 1, not 406",
    async (accept) => {
      const res = await get("/employees", { Accept: accept });
      expect(res.status).toBe(200);
      expect(at(await res.json(), "v")).toBe(1);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect((res.headers.get("vary") ?? "").split(", ")).toContain("Accept");
    },
  );
  it("/v2/employees with Accept: application/vnd.svc.v9+json, application/json → version 2, no conflict", async () => {
    const res = await get("/v2/employees", { Accept: "application/vnd.svc.v9+json, application/json" });
    expect(res.status).toBe(200);
    expect(at(await res.json(), "v")).toBe(2);
  });
  it("Accept: application/vnd.svc.v9+json, application/json;q=0 → 406 (nothing else acceptable)", async () => {
    const res = await get("/employees", { Accept: "application/vnd.svc.v9+json, application/json;q=0" });
    expect(res.status).toBe(406);
  });
  it("Accept: application/vnd.svc.vx+json;q=0, application/vnd.svc.v2+json → version 2", async () => {
    const res = await get("/employees", {
      Accept: "application/vnd.svc.vx+json;q=0, application/vnd.svc.v2+json",
    });
    expect(at(await res.json(), "v")).toBe(2);
  });
  it("Accept: application/vnd.svc.vx+json, application/vnd.svc.v2+json → the known version 2", async () => {
    const res = await get("/employees", {
      Accept: "application/vnd.svc.vx+json, application/vnd.svc.v2+json",
    });
    expect(at(await res.json(), "v")).toBe(2);
  });
  it("Accept: application/vnd.svc.v2+yaml → not a versioned JSON/XML type: default 1", async () => {
    expect(at(await (await get("/plain", { Accept: "application/vnd.svc.v2+yaml" })).json(), "v")).toBe(1);
  });
  it("unknownVersionStatus: 400 → 400 instead of 406", async () => {
    const u = await start({ versions: [1], mediaType: { vendor: "acme", unknownVersionStatus: 400 } });
    expect(
      (await fetch(`${u}/version`, { headers: { Accept: "application/vnd.acme.v3+json" } })).status,
    ).toBe(400);
  });
});

describe("Content-Type of the request content (RFC 6838 §3.2, RFC 9110 §8.3)", () => {
  const patch = (path: string, headers: Record<string, string>, body = '{"firstName":"Ada"}') =>
    fetch(`${url}${path}`, { method: "PATCH", headers, body });
  const v2 = "application/vnd.svc.v2+json";
  it("PATCH with Content-Type: application/vnd.svc.v2+json → version 2, Vary adds Content-Type", async () => {
    const res = await patch("/employees/7", { "Content-Type": v2 });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ v: 2 });
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept, Content-Type");
    expect(res.headers.get("deprecation")).toBeNull();
    // The request's own type names its content, not the response's: no vendor label asked for.
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });
  it("PATCH with Content-Type: Application/VND.SVC.V2+JSON; charset=utf-8 → version 2 (case-insensitive, RFC 9110 §8.3.1)", async () => {
    const res = await patch("/employees/7", { "Content-Type": "Application/VND.SVC.V2+JSON; charset=utf-8" });
    expect(await res.json()).toEqual({ v: 2 });
  });
  it("PATCH with Content-Type: application/vnd.svc.v2+xml → version 2", async () => {
    expect(
      await (await patch("/employees/7", { "Content-Type": "application/vnd.svc.v2+xml" }, "<x/>")).json(),
    ).toEqual({
      v: 2,
    });
  });
  it("PATCH with Content-Type v1 and Accept: application/vnd.svc.v2+json → 406 (RFC 9110 §15.5.7)", async () => {
    const res = await patch("/employees/7", {
      "Content-Type": "application/vnd.svc.v1+json",
      Accept: v2,
    });
    expect(res.status).toBe(406);
    const body = await res.json();
    expect(at(body, "message")).toBe(
      "Accept takes no representation of API version 1 (Content-Type application/vnd.svc.v1+json); it names application/vnd.svc.v2+json",
    );
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
  });
  it("PATCH /v1/employees/7 with Content-Type v2 → 400 conflicting_api_version", async () => {
    const res = await patch("/v1/employees/7", { "Content-Type": v2 });
    expect(res.status).toBe(400);
    expect(at(await res.json(), "message")).toContain("(Content-Type application/vnd.svc.v2+json)");
  });
  it("PATCH with API-Version: 1 and Content-Type v2 → 400 conflicting_api_version", async () => {
    const res = await patch("/employees/7", { "API-Version": "1", "Content-Type": v2 });
    expect(res.status).toBe(400);
    expect(at(await res.json(), "message")).toContain("(Content-Type application/vnd.svc.v2+json)");
  });
  it("PATCH with Content-Type v2 and Accept: vnd.svc.v1+json, vnd.svc.v2+json → version 2, labelled v2", async () => {
    const res = await patch("/employees/7", {
      "Content-Type": v2,
      Accept: "application/vnd.svc.v1+json, application/vnd.svc.v2+json",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ v: 2 });
    expect(res.headers.get("content-type")).toMatch(/^application\/vnd\.svc\.v2\+json/);
  });
  it("PATCH /v2/employees/7 with Content-Type v2 and Accept: application/json → version 2", async () => {
    const res = await patch("/v2/employees/7", { "Content-Type": v2, Accept: "application/json" });
    expect(await res.json()).toEqual({ v: 2 });
  });
  it("PATCH with Content-Type: application/vnd.svc.v9+json → 415 unsupported_api_version", async () => {
    const res = await patch("/employees/7", { "Content-Type": "application/vnd.svc.v9+json" });
    expect(res.status).toBe(415);
    const body = await res.json();
    expect(at(body, "status")).toBe(415);
    expect(at(body, "message")).toBe(
      "API version 9 (Content-Type application/vnd.svc.v9+json) is not supported; supported versions: 1, 2",
    );
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
  });
  it("PATCH with Content-Type v9 and Accept: application/vnd.svc.v9+json → 415 (the content cannot be read)", async () => {
    const res = await patch("/employees/7", {
      "Content-Type": "application/vnd.svc.v9+json",
      Accept: "application/vnd.svc.v9+json",
    });
    expect(res.status).toBe(415);
  });
  it("PATCH with Content-Type: application/vnd.svc.vx+json (names no version) → 415", async () => {
    const res = await patch("/employees/7", { "Content-Type": "application/vnd.svc.vx+json" });
    expect(res.status).toBe(415);
    expect(at(await res.json(), "message")).toContain(
      "Content-Type application/vnd.svc.vx+json (no API version)",
    );
  });
  it("POST /health (neutral) with Content-Type v9 → 200, default version", async () => {
    const res = await fetch(`${url}/health`, {
      method: "POST",
      headers: { "Content-Type": "application/vnd.svc.v9+json" },
      body: "{}",
    });
    expect(res.status).toBe(200);
  });
  it("PATCH with Content-Type: application/json → default version 1, unchanged", async () => {
    const res = await patch("/employees/7", { "Content-Type": "application/json" });
    expect(await res.json()).toEqual({ v: 1 });
  });
  it("PATCH with Content-Type: application/vnd.svc.v2+yaml (not this API's suffix) → default version 1", async () => {
    expect(
      await (await patch("/employees/7", { "Content-Type": "application/vnd.svc.v2+yaml" })).json(),
    ).toEqual({
      v: 1,
    });
  });
  it("GET without content, Content-Type: application/vnd.svc.v9+json → default version, Vary unchanged", async () => {
    const res = await get("/version", { "Content-Type": "application/vnd.svc.v9+json" });
    expect(res.status).toBe(200);
    expect(at(await res.json(), "v")).toBe(1);
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
  });
  it("PATCH with Content-Length: 0 and Content-Type v9 → no content, default version", async () => {
    const res = await patch("/employees/7", { "Content-Type": "application/vnd.svc.v9+json" }, "");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ v: 1 });
  });
  it("PATCH with chunked content (Transfer-Encoding) and Content-Type v2 → version 2", async () => {
    const { port } = new URL(url);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          port,
          path: "/employees/7",
          method: "PATCH",
          headers: { "Content-Type": v2, "Transfer-Encoding": "chunked" },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => resolve(text));
        },
      );
      req.on("error", reject);
      req.end('{"firstName":"Ada"}');
    });
    expect(JSON.parse(body)).toEqual({ v: 2 });
  });
  it("Content-Type v2 without the media type strategy → ignored (version 1)", async () => {
    const u = await start({ versions: [1, 2], defaultVersion: 1 });
    const res = await fetch(`${u}/employees/7`, {
      method: "PATCH",
      headers: { "Content-Type": v2 },
      body: "{}",
    });
    expect(await res.json()).toEqual({ v: 1 });
  });
  // RFC 9110 §12.5.5: the refusal of a request with content depended on its Content-Type as much
  // as a success did; the table of such refusals is core.test.ts's.
  const withContentType = "API-Version, Accept-Version, Accept, Content-Type";
  it("required: true, PATCH with content and no version → 400 missing_api_version, Vary names Content-Type", async () => {
    const u = await start({ ...base, required: true });
    const res = await fetch(`${u}/employees/7`, {
      method: "PATCH",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(400);
    expect(at(await res.json(), "message")).toBe("An API version is required; supported versions: 1, 2");
    expect(res.headers.get("vary")).toBe(withContentType);
    const named = await fetch(`${u}/employees/7`, {
      method: "PATCH",
      headers: { "Content-Type": v2 },
      body: "{}",
    });
    expect(named.status).toBe(200);
    expect(named.headers.get("vary")).toBe(withContentType);
  });
});

describe("a vendor Content-Type whose parameters are malformed (RFC 9110 §8.3.1)", () => {
  // A body parser as applications mount it: express.json reads every +json type, and it reads
  // `charset = utf-8` (whitespace around "=") or an unterminated quoted string as the type before
  // the ";". The version is in that type: it must not be read as the default version.
  let parsing: string;
  beforeAll(async () => {
    const app = express();
    pipelined(app, base);
    app.use(express.json({ type: "application/*+json" }));
    app.patch("/employees/7", (req, res) => {
      res.json({ v: requestState(req).version ?? null, body: (req.body as unknown) ?? null });
    });
    app.use(notFound());
    app.use(errorHandler({ logger: quiet }));
    const s = await listen(app);
    servers.push(s);
    parsing = s.url;
  });
  const patch = (path: string, contentType: string) =>
    fetch(`${parsing}${path}`, {
      method: "PATCH",
      headers: { "Content-Type": contentType },
      body: '{"a":1}',
    });

  it.each([
    "application/vnd.svc.v2+json; charset = utf-8",
    "application/vnd.svc.v2+json; charset =utf-8",
    'application/vnd.svc.v2+json; charset="utf-8',
    "application/vnd.svc.v2+json; charset",
    "application/vnd.svc.v2+json; =x",
    "APPLICATION/VND.SVC.V2+JSON ; charset = utf-8",
  ])("PATCH /employees/7, Content-Type: %s → version 2, never the default version 1", async (contentType) => {
    const res = await patch("/employees/7", contentType);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { v: number }).v).toBe(2);
  });

  it.each([
    [
      "application/vnd.svc.v9+json; charset = utf-8",
      "API version 9 (Content-Type application/vnd.svc.v9+json)",
    ],
    [
      "application/vnd.svc.vx+json; charset = utf-8",
      "Content-Type application/vnd.svc.vx+json (no API version)",
    ],
  ])("PATCH /employees/7, Content-Type: %s → 415", async (contentType, message) => {
    const res = await patch("/employees/7", contentType);
    expect(res.status).toBe(415);
    expect(at(await res.json(), "message")).toContain(message);
  });

  it("PATCH /v1/employees/7, Content-Type: application/vnd.svc.v2+json; charset = utf-8 → 400 (a conflict)", async () => {
    const res = await patch("/v1/employees/7", "application/vnd.svc.v2+json; charset = utf-8");
    expect(res.status).toBe(400);
    expect(at(await res.json(), "message")).toContain("2 (Content-Type application/vnd.svc.v2+json)");
  });

  it("PATCH /employees/7, Content-Type: application/vnd.svc.v2+json; charset=utf-8 → version 2, the body read", async () => {
    const res = await patch("/employees/7", "application/vnd.svc.v2+json; charset=utf-8");
    expect(await res.json()).toEqual({ v: 2, body: { a: 1 } });
  });

  it.each([
    // Outside the vendor tree: read as before.
    "application/json; charset = utf-8",
    // Not one media type (a list), so no vendor type either.
    "application/vnd.svc.v2+json, application/json",
  ])("PATCH /employees/7, Content-Type: %s → the default version 1", async (contentType) => {
    const res = await patch("/employees/7", contentType);
    expect(((await res.json()) as { v: number }).v).toBe(1);
  });
});

describe("resolution", () => {
  it("no version named → the lowest version, Vary on every header that could have named one", async () => {
    const res = await get("/employees");
    expect(at(await res.json(), "v")).toBe(1);
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
  });
  it("defaultVersion: 2 → version 2", async () => {
    const u = await start({ versions: [1, 2], defaultVersion: 2 });
    expect(at(await (await fetch(`${u}/version`)).json(), "v")).toBe(2);
  });
  it("required: true, no version → 400 with API-Supported-Versions", async () => {
    const u = await start({ ...base, required: true });
    const res = await fetch(`${u}/employees`);
    expect(res.status).toBe(400);
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
    expect(at(await res.json(), "message")).toContain("An API version is required");
  });
  it("/v1/employees with API-Version: 2 → 400 conflict", async () => {
    expect((await get("/v1/employees", { "API-Version": "2" })).status).toBe(400);
  });
  // RFC 9110 §15.5.7: the path names the target resource, version 2; Accept, a proactive
  // negotiation field (§12.5.1), takes none of its representations: 406, not a malformed request.
  it("/v2/employees with Accept: application/vnd.svc.v1+json → 406, Vary and supported versions", async () => {
    const res = await get("/v2/employees", { Accept: "application/vnd.svc.v1+json" });
    expect(res.status).toBe(406);
    expect(at(await res.json(), "message")).toBe(
      "Accept takes no representation of API version 2 (path /v2); it names application/vnd.svc.v1+json",
    );
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
  });
  it("API-Version: 2 with Accept: application/vnd.svc.v1+json → 406", async () => {
    const res = await get("/employees", { "API-Version": "2", Accept: "application/vnd.svc.v1+json" });
    expect(res.status).toBe(406);
    expect(at(await res.json(), "message")).toBe(
      "Accept takes no representation of API version 2 (header API-Version); it names application/vnd.svc.v1+json",
    );
  });
  it("/v2/employees with Accept: application/vnd.svc.v9+json (an unknown version) → 406", async () => {
    expect((await get("/v2/employees", { Accept: "application/vnd.svc.v9+json" })).status).toBe(406);
  });
  it("/v9/employees with Accept: application/vnd.svc.v1+json → 404 (the path's unknown version first)", async () => {
    expect((await get("/v9/employees", { Accept: "application/vnd.svc.v1+json" })).status).toBe(404);
  });
  it("/v1/employees with API-Version: 2 and Accept: application/vnd.svc.v1+json → 400 (path and header conflict)", async () => {
    const res = await get("/v1/employees", { "API-Version": "2", Accept: "application/vnd.svc.v1+json" });
    expect(res.status).toBe(400);
    expect(at(await res.json(), "message")).toBe(
      "The request names API version 1 (path /v1) and 2 (header API-Version)",
    );
  });
  it("/v2/health (neutral) with Accept: application/vnd.svc.v1+json → 200, not negotiated", async () => {
    expect((await get("/v2/health", { Accept: "application/vnd.svc.v1+json" })).status).toBe(200);
  });
  it("/v2/employees with Accept: vnd v1, vnd v2 (a client of both) → version 2, labelled v2, not a conflict", async () => {
    const res = await get("/v2/employees", {
      Accept: "application/vnd.svc.v1+json, application/vnd.svc.v2+json;q=0.5",
    });
    expect(res.status).toBe(200);
    expect(at(await res.json(), "v")).toBe(2);
    expect(res.headers.get("content-type")).toMatch(/^application\/vnd\.svc\.v2\+json/);
  });
  it("API-Version: 2 with Accept: vnd v1, vnd v2 → version 2", async () => {
    const res = await get("/employees", {
      "API-Version": "2",
      Accept: "application/vnd.svc.v1+json, application/vnd.svc.v2+json",
    });
    expect(res.status).toBe(200);
    expect(at(await res.json(), "v")).toBe(2);
  });
  it("/v2/employees with Accept: vnd v1, application/json;q=0.5 → version 2 as application/json", async () => {
    const res = await get("/v2/employees", { Accept: "application/vnd.svc.v1+json, application/json;q=0.5" });
    expect(res.status).toBe(200);
    expect(at(await res.json(), "v")).toBe(2);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  });
  it("/v2/employees with Accept: vnd v1, vnd v2;q=0 → 406 (v2 not acceptable)", async () => {
    const res = await get("/v2/employees", {
      Accept: "application/vnd.svc.v1+json, application/vnd.svc.v2+json;q=0",
    });
    expect(res.status).toBe(406);
  });
  it("/v2/employees with API-Version: 2 and Accept vnd v2 → version 2 (they agree)", async () => {
    const res = await get("/v2/employees", { "API-Version": "2", Accept: "application/vnd.svc.v2+json" });
    expect(at(await res.json(), "v")).toBe(2);
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
  });
  it("uri: false → /v2/employees is just a path (404)", async () => {
    const u = await start({ versions: [1, 2], defaultVersion: 1, uri: false });
    expect((await fetch(`${u}/v2/employees`)).status).toBe(404);
  });
  it("header: false → API-Version ignored, no Vary on it", async () => {
    const u = await start({ versions: [1, 2], defaultVersion: 1, header: false });
    const res = await fetch(`${u}/employees`, { headers: { "API-Version": "2" } });
    expect(at(await res.json(), "v")).toBe(1);
    expect(res.headers.get("vary")).toBeNull();
  });
});

describe("oversized Accept values", () => {
  // A server may raise Node's header limit (maxHeaderSize); the parsed-Accept cache kept every
  // distinct value as a key, so its bytes grew with that limit: 500 values of 1 MB held 500 MB.
  it("80 distinct Accept values of 256 KB (maxHeaderSize 1 MB) → 200, none of them kept in memory", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const app = express();
    pipelined(app, { versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "svc" } });
    app.get("/version", (req, res) => void res.json({ v: requestState(req).version ?? null }));
    const s = await listenOn(createServer({ maxHeaderSize: 1 << 20 }, app));
    servers.push(s);
    const send = (accept: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${s.url}/version`, { headers: { Accept: accept } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", reject);
        req.end();
      });
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 80; i++) {
      // Built per request, so only what the middleware keeps survives the collection.
      const accept = `application/vnd.svc.v2+json;p="${String(i).padStart(256 * 1024, "x")}"`;
      expect(await send(accept)).toBe(200);
    }
    gc();
    const kept = process.memoryUsage().heapUsed - before;
    expect(kept).toBeLessThan(8 * 1024 * 1024);
  });
});

describe("versionedPath", () => {
  it("GET /v2/employees/7 → links keep /v2", async () => {
    expect(at(await (await get("/v2/employees/7")).json(), "self")).toBe("/v2/employees/7");
  });
  it("GET /employees/7 with API-Version: 2 → links without a prefix", async () => {
    expect(at(await (await get("/employees/7", { "API-Version": "2" })).json(), "self")).toBe("/employees/7");
  });
});

/** A request whose target is in absolute-form (RFC 9112 §3.2.2), which fetch never sends. */
function absoluteForm(
  base: string,
  target: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: target, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("absolute-form request targets (RFC 9112 §3.2.2: a server MUST accept them)", () => {
  it("GET http://api.example/v2/employees → version 2, routed as /employees, as its origin-form is", async () => {
    const res = await absoluteForm(url, "http://api.example/v2/employees");
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ v: 2, apiVersion: 2 });
  });
  it("GET http://api.example/v2/version?x=1 → req.url keeps the scheme and authority, drops /v2", async () => {
    const res = await absoluteForm(url, "http://api.example/v2/version?x=1");
    expect(JSON.parse(res.body)).toMatchObject({ v: 2, url: "http://api.example/version?x=1" });
  });
  it("required: true, GET http://api.example/health → neutral, 200 (never 400)", async () => {
    const u = await start({ ...base, required: true });
    expect((await absoluteForm(u, "http://api.example/health")).status).toBe(200);
    expect((await absoluteForm(u, "http://api.example/employees")).status).toBe(400);
  });
});

describe("version-neutral routes", () => {
  it("required: true, GET /health without a version → 200", async () => {
    const u = await start({ ...base, required: true });
    const res = await fetch(`${u}/health`);
    expect(res.status).toBe(200);
    expect(at(await res.json(), "v")).toBeNull();
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
  });
  it("GET /health with API-Version: 9 → 200, not an error", async () => {
    expect((await get("/health", { "API-Version": "9" })).status).toBe(200);
  });
  it("required: true, CORS preflight OPTIONS /employees without a version → not a 400", async () => {
    const u = await start({ ...base, required: true });
    const res = await fetch(`${u}/employees`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "api-version",
      },
    });
    expect(res.status).not.toBe(400);
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
  });
  it("required: true, plain OPTIONS /employees without a version → 400", async () => {
    const u = await start({ ...base, required: true });
    expect((await fetch(`${u}/employees`, { method: "OPTIONS" })).status).toBe(400);
  });
  it.each(["application/vnd.svc.v2+json", "application/vnd.svc.v2+xml"])(
    "GET /health with Accept: %s → version 2, but the JSON body is not labelled with the vendor type",
    async (accept) => {
      const res = await get("/health", { Accept: accept });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(at(await res.json(), "v")).toBe(2);
    },
  );
  it.each([
    ["no version", {}],
    ["API-Version: 9", { "API-Version": "9" }],
    ["Accept: application/vnd.svc.v9+json", { Accept: "application/vnd.svc.v9+json" }],
  ])(
    "GET /health with %s → the deprecated default 1, yet no Deprecation, Sunset or their Links",
    async (_name, headers) => {
      // RFC 8594 §3: Sunset says the URI is likely to become unresponsive then; RFC 9745 §2:
      // Deprecation says the resource in context is deprecated. Neither holds for a path that is
      // outside versioning; /employees without a version still says both ("deprecation and sunset").
      const res = await get("/health", headers);
      expect(res.status).toBe(200);
      expect(res.headers.get("deprecation")).toBeNull();
      expect(res.headers.get("sunset")).toBeNull();
      expect(res.headers.get("link")).toBe('</openapi.json>; rel="service-desc"');
      expect(res.headers.get("api-deprecated-versions")).toBe("1");
    },
  );
  it("GET /v2/health → 200 at version 2", async () => {
    expect(at(await (await get("/v2/health")).json(), "v")).toBe(2);
  });
});

describe("neutral paths compared as the router compares them", () => {
  /** An app with the given routing settings whose /health route reports what the router matched. */
  async function neutralApp(
    settings: { caseSensitive?: boolean },
    options: Partial<ApiVersioningOptions> = {},
  ) {
    const app = express();
    if (settings.caseSensitive !== undefined) app.set("case sensitive routing", settings.caseSensitive);
    pipelined(app, { versions: [1, 2], required: true, neutral: ["/health", "/Status"], ...options });
    app.get(
      "/health",
      (req, res) => void res.json({ route: "/health", v: requestState(req).version ?? null }),
    );
    app.get("/status", (_req, res) => void res.json({ route: "/status" }));
    app.use(notFound());
    app.use(errorHandler({ logger: quiet }));
    const s = await listen(app);
    servers.push(s);
    return s.url;
  }
  it.each(["/HEALTH", "/Health", "/health", "/v2/HEALTH", "/HEALTH/", "/STATUS"])(
    "default (case-insensitive) routing, GET %s without a version → 200 from the route",
    async (path) => {
      const u = await neutralApp({});
      const res = await fetch(`${u}${path}`);
      expect(res.status).toBe(200);
      expect(at(await res.json(), "route")).toMatch(/^\/(health|status)$/);
    },
  );
  it("default routing, GET /HEALTH with API-Version: 9 → 200, not an error", async () => {
    const u = await neutralApp({});
    expect((await fetch(`${u}/HEALTH`, { headers: { "API-Version": "9" } })).status).toBe(200);
  });
  it("case sensitive routing on, GET /HEALTH → not neutral (400), GET /health → 200", async () => {
    const u = await neutralApp({ caseSensitive: true });
    const upper = await fetch(`${u}/HEALTH`);
    expect(upper.status).toBe(400);
    expect(at(await upper.json(), "message")).toMatch(/^An API version is required/);
    expect((await fetch(`${u}/health`)).status).toBe(200);
    // "/Status" as configured is not the /status the route matches, under case-sensitive routing.
    expect((await fetch(`${u}/status`)).status).toBe(400);
  });
  it("routing: { caseSensitive: true } overrides the app's setting", async () => {
    const u = await neutralApp({}, { routing: { caseSensitive: true } });
    expect((await fetch(`${u}/HEALTH`)).status).toBe(400);
    expect((await fetch(`${u}/health`)).status).toBe(200);
  });
  it("routing: { caseSensitive: false } overrides an app with case sensitive routing on", async () => {
    const u = await neutralApp({ caseSensitive: true }, { routing: { caseSensitive: false } });
    // Neutral, so no 400; the case-sensitive router then finds no /HEALTH route.
    expect((await fetch(`${u}/HEALTH`)).status).toBe(404);
  });
  it.each([
    [false, 200],
    [true, 404],
  ])(
    "strict routing %s, GET /health/ without a version → neutral either way (%i, never 400)",
    async (strict, status) => {
      const app = express();
      app.set("strict routing", strict);
      pipelined(app, { versions: [1, 2], required: true, neutral: ["/health"] });
      app.get("/health", (_req, res) => void res.json({ ok: true }));
      app.use(notFound());
      app.use(errorHandler({ logger: quiet }));
      const s = await listen(app);
      servers.push(s);
      expect((await fetch(`${s.url}/health/`)).status).toBe(status);
    },
  );
  it("a RegExp is tested as given: its own flags decide", async () => {
    const u = await neutralApp({}, { neutral: [/^\/docs$/] });
    expect((await fetch(`${u}/DOCS`)).status).toBe(400);
    expect((await fetch(`${u}/docs`)).status).toBe(404);
  });
  it.each([/^\/docs\//g, /^\/docs\//y, /^\/docs\//gi])(
    "neutral %s (a stateful flag): GET /docs/a without a version is neutral on every request, not every other one",
    async (pattern) => {
      const u = await neutralApp({}, { neutral: [pattern] });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await fetch(`${u}/docs/a`)).status);
      // Neutral: no 400 for the missing version; no /docs route, so the router's 404.
      expect(statuses).toEqual([404, 404, 404, 404]);
    },
  );
});

describe("deprecation and sunset", () => {
  it("version 1 → Deprecation @epoch, Sunset HTTP-date, Link rel=deprecation and rel=sunset", async () => {
    const res = await get("/employees", { "API-Version": "1" });
    expect(res.headers.get("deprecation")).toBe("@1767225600");
    expect(res.headers.get("sunset")).toBe("Wed, 01 Jul 2026 00:00:00 GMT");
    expect(res.headers.get("link")).toBe(
      '</openapi.json>; rel="service-desc", <https://docs.example.com/deprecations/v1>; rel="deprecation", <https://docs.example.com/sunset/v1>; rel="sunset"',
    );
    expect(res.headers.get("api-deprecated-versions")).toBe("1");
  });
  it("no version named → the default 1, deprecated, so Deprecation and Sunset too", async () => {
    const res = await get("/employees");
    expect(at(await res.json(), "v")).toBe(1);
    expect(res.headers.get("deprecation")).toBe("@1767225600");
    expect(res.headers.get("sunset")).toBe("Wed, 01 Jul 2026 00:00:00 GMT");
  });
  it("version 2 → no Deprecation, no Sunset, Link untouched", async () => {
    const res = await get("/employees", { "API-Version": "2" });
    expect(res.headers.get("deprecation")).toBeNull();
    expect(res.headers.get("sunset")).toBeNull();
    expect(res.headers.get("link")).toBe('</openapi.json>; rel="service-desc"');
    expect(res.headers.get("api-deprecated-versions")).toBe("1");
  });
  it("an error in a version 1 handler → the error response keeps every version header", async () => {
    const res = await get("/v1/boom");
    expect(res.status).toBe(409);
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
    expect(res.headers.get("api-deprecated-versions")).toBe("1");
    expect(res.headers.get("deprecation")).toBe("@1767225600");
  });
  it("no deprecated versions → no API-Deprecated-Versions header", async () => {
    const u = await start({ versions: [3, 1], defaultVersion: 1 });
    const res = await fetch(`${u}/version`);
    expect(res.headers.get("api-supported-versions")).toBe("1, 3");
    expect(res.headers.has("api-deprecated-versions")).toBe(false);
  });
});

describe("versioned()", () => {
  it("a version without a handler → 404", async () => {
    const u = await start({ versions: [1, 2, 3], defaultVersion: 1 });
    const res = await fetch(`${u}/employees`, { headers: { "API-Version": "3" } });
    expect(res.status).toBe(404);
    expect(at(await res.json(), "message")).toBe("This resource is not available in API version 3");
  });
  it("a version without a handler, with a default handler → still 404: default is for no version", async () => {
    // The README and the JSDoc: "a version without one is a 404"; "default handles requests
    // without a version" (a neutral path). A route gone in version 2 must not answer it.
    const app = express();
    pipelined(app, { versions: [1, 2], neutral: ["/docs"], required: true });
    const route = versioned<express.Request, express.Response>({
      1: (_req, res) => void res.json({ v: 1 }),
      default: (_req, res) => void res.json({ v: "default" }),
    });
    app.get("/employees", route);
    app.get("/docs", route);
    app.use(notFound());
    app.use(errorHandler({ logger: quiet }));
    const s = await listen(app);
    servers.push(s);
    const v2 = await fetch(`${s.url}/employees`, { headers: { "API-Version": "2" } });
    expect(v2.status).toBe(404);
    expect(at(await v2.json(), "message")).toBe("This resource is not available in API version 2");
    expect(await (await fetch(`${s.url}/v1/employees`)).json()).toEqual({ v: 1 });
    expect(await (await fetch(`${s.url}/docs`)).json()).toEqual({ v: "default" });
  });
  // The pipeline's handler sends a rejection to next(err) itself, on Express 4 as on 5.
  it("an async handler that rejects → its HttpError reaches the error handler", async () => {
    expect((await get("/async")).status).toBe(409);
  });
});

describe("behind a proxy", () => {
  it("a gateway that adds API-Version: 2 → version 2; Vary and version headers pass through", async () => {
    const proxy = await simulatedProxy(url, { "api-version": "2" });
    servers.push(proxy);
    const res = await fetch(`${proxy.url}/employees`);
    expect(at(await res.json(), "v")).toBe(2);
    expect(res.headers.get("vary")).toBe("API-Version, Accept-Version, Accept");
    expect(res.headers.get("api-supported-versions")).toBe("1, 2");
  });
  it("a proxy in front of /v2 paths → prefix still stripped, Content-Type echoed for vnd", async () => {
    const proxy = await simulatedProxy(url, {
      "x-forwarded-proto": "https",
      "x-forwarded-host": "api.example.com",
    });
    servers.push(proxy);
    const res = await fetch(`${proxy.url}/v2/employees`, {
      headers: { Accept: "application/vnd.svc.v2+json" },
    });
    expect(at(await res.json(), "v")).toBe(2);
    expect(res.headers.get("content-type")).toBe("application/vnd.svc.v2+json; charset=utf-8");
  });
});
