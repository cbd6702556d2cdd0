import { request } from "node:http";
import { HttpError } from "@svc/errors";
import { errorHandler } from "@svc/errors/express";
import { at, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hrefFor } from "./base-url.js";

// RFC 3986 §5.2.4: a client removes the dot segments "." and ".." of a reference it resolves, and
// the WHATWG URL parser (browsers, fetch) reads ".%2e", "%2e." and "%2e%2e" as ".." too. A route
// parameter Express decoded into one (`/documents/%2E%2E`, `/documents/..%2Fadmin`, or
// `%252e%252e`, which Express decodes once to "%2e%2e") made hrefFor's link point outside the
// collection: no encoding of it survives, so the request is refused.
/** PUT the path byte for byte: a URL string (fetch, http.request) would lose its dot
 * segments to the WHATWG URL parser first. */
function put(
  base: string,
  path: string,
): Promise<{ status: number; location: string | undefined; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, method: "PUT" }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
    })
      .on("error", reject)
      .end();
  });
}

describe("hrefFor with a dot segment in a route parameter the client chose (RFC 3986 §5.2.4)", () => {
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const app = express();
    app.put("/documents/:name", (req, res) => {
      const absolute = req.query.absolute !== "false";
      const href = hrefFor(req, `/documents/${req.params.name}/content?v=..#..`, { absolute });
      res
        .location(href)
        .status(201)
        .json({ _links: { self: { href } } });
    });
    app.use(errorHandler({ logger: { error() {} } }));
    ({ url, close } = await listen(app));
  });
  afterAll(async () => close());

  it.each([
    ["%2E%2E", ".."],
    ["%2e", "."],
    [".%2e", ".."],
    ["%2E.", ".."],
    ["%252e%252E", "%2e%2E"],
    ["%252E.", "%2E."],
    ["%252e", "%2e"],
    ["..%2Fadmin", "../admin"],
    ["a%2F..%2F..%2Fadmin", "a/../../admin"],
    ["a%2F.", "a/."],
  ])("PUT /documents/%s (name %j) → 400 invalid_path, no Location, no link", async (name, _decoded) => {
    for (const absolute of ["true", "false"]) {
      const { status, location, body } = await put(url, `/documents/${name}?absolute=${absolute}`);
      expect({ status, location }).toEqual({ status: 400, location: undefined });
      expect(JSON.parse(body)).toMatchObject({
        status: 400,
        message: "The link's path holds a dot segment (. or ..)",
      });
      expect(body).not.toContain("_links");
    }
  });

  it.each(["...", "..a", "a..", ".hidden", "%252e%252e%252e", "%252ex", "a.b"])(
    "PUT /documents/%s → 201, the link under /documents/ as given",
    async (name) => {
      const decoded = decodeURIComponent(name);
      for (const absolute of [true, false]) {
        const { status, location, body } = await put(url, `/documents/${name}?absolute=${absolute}`);
        expect(status).toBe(201);
        const href = `${absolute ? url : ""}/documents/${decoded}/content?v=..#..`;
        expect(location).toBe(href);
        expect(at(JSON.parse(body), "_links", "self", "href")).toBe(href);
        expect(new URL(href, url).pathname).toBe(`/documents/${decoded}/content`);
      }
    },
  );

  it("hrefFor throws the 400 HttpError itself (code invalid_path), for a handler that catches it", () => {
    const req = { headers: { host: "api.example" }, socket: {}, url: "/" } as never;
    let error: unknown;
    try {
      hrefFor(req, "/a/../b");
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 400, code: "invalid_path" });
    // Dots in the query or the fragment are no path segments.
    expect(hrefFor(req, "/a?x=/../#/..", { absolute: false })).toBe("/a?x=/../#/..");
  });
});
