import { errorHandler } from "@svc/errors/express";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raw } from "../test/helpers.js";
import { hrefFor } from "./base-url.js";
import { pageModel, parsePageRequest } from "./page.js";

// The WHATWG URL parser (browsers, fetch) reads "\" as "/" and drops tab and newlines, so a path
// starting "/\" or "/<tab>/" is a network-path reference to it (RFC 3986 §4.2), another origin.
// hrefFor and pageModel percent-encode those characters (RFC 3986 §2.1: no URI carries them),
// after which the path is an ordinary one of this origin; refusing it before encoding turned a
// client's route parameter, or a request-target as Node passes it on (req.originalUrl), into a 500.
const reply = (text: string) => ({
  status: Number(text.slice(9, 12)),
  body: text.slice(text.indexOf("\r\n\r\n") + 4),
});

describe('a path starting "/\\" or "/<tab>" from the client, through a real server', () => {
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const app = express();
    app.get("/:slug", (req, res) => {
      const path = `/${req.params.slug}`;
      res.json({ href: hrefFor(req, path), relative: hrefFor(req, path, { absolute: false }) });
    });
    // A collection behind a catch-all: its links are built from req.originalUrl, as documented.
    app.use((req, res) => {
      const { page, size } = parsePageRequest(req.query as Record<string, unknown>);
      res.json(
        pageModel({ collection: "items", items: [], page, size, totalElements: 9, url: req.originalUrl }),
      );
    });
    app.use(errorHandler({ logger: { error() {} } }));
    ({ url, close } = await listen(app));
  });
  afterAll(async () => close());

  it.each([
    ["%5Cevil.example", "/%5Cevil.example"],
    ["%5C%5Cevil.example", "/%5C%5Cevil.example"],
    ["%09%2Fevil.example", "/%09/evil.example"],
    ["%0A%5Cevil.example", "/%0A%5Cevil.example"],
    ["%0D%0A%5Cevil.example", "/%0D%0A%5Cevil.example"],
  ])("GET /%s → 200, the link %s on this origin", async (slug, expected) => {
    const res = reply(
      await raw(url, `GET /${slug} HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n`),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ href: `http://api.example.com${expected}`, relative: expected });
    expect(new URL(expected, "https://api.example.com").host).toBe("api.example.com");
  });

  it.each([
    ["/\\evil.example/x?page=2", "/%5Cevil.example/x"],
    ["/\\\\evil.example/x?page=2", "/%5C%5Cevil.example/x"],
  ])("GET %s (collection) → 200, links under %s on this origin", async (target, path) => {
    const res = reply(
      await raw(url, `GET ${target} HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n`),
    );
    expect(res.status).toBe(200);
    const links = (JSON.parse(res.body) as { _links: Record<string, { href: string }> })._links;
    expect(links).toEqual({
      self: { href: `${path}?page=2&size=20` },
      first: { href: `${path}?page=1&size=20` },
      previous: { href: `${path}?page=1&size=20` },
      last: { href: `${path}?page=1&size=20` },
    });
    for (const { href } of Object.values(links)) {
      expect(new URL(href, "https://api.example.com").host).toBe("api.example.com");
    }
  });

  // RFC 3986 §4.2: "//host" is a network-path reference, another origin. A route parameter the
  // client sent as "%2F..." (Express decodes it) or a request-target starting "//" puts it in front
  // of a link: the client's input, so a 400, not a TypeError that the error handler makes a 500.
  it.each(["/%2Fevil.example", "/%2F%2Fevil.example", "//evil.example/x?page=2", "///evil.example/x"])(
    "GET %s → 400 invalid_path, no link to another origin",
    async (target) => {
      const res = reply(
        await raw(url, `GET ${target} HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n`),
      );
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({
        status: 400,
        message: 'The link\'s path starts with "//", which names another origin',
      });
      expect(res.body).not.toMatch(/_links|href/);
    },
  );

  it("a literal // from the application: the same 400 HttpError, no link", () => {
    const req = { headers: { host: "api.example.com" }, socket: {}, url: "/" } as never;
    for (const build of [
      () => hrefFor(req, "//evil.example/x", { absolute: false }),
      () =>
        pageModel({
          collection: "x",
          items: [],
          page: 1,
          size: 5,
          totalElements: 0,
          url: "//evil.example/x",
        }),
    ]) {
      expect(build).toThrow(expect.objectContaining({ status: 400, code: "invalid_path" }));
    }
  });
});
