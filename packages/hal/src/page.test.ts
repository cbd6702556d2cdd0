import { errorHandler } from "@svc/errors/express";
import { at, listen, simulatedProxy } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raw } from "../test/helpers.js";
import { externalBaseUrl } from "./express.js";
import { isPage, pageItems, pageModel, parsePageRequest } from "./page.js";
import { hal } from "./resource.js";

const employees = Array.from({ length: 45 }, (_, i) => ({
  id: i + 1,
  name: `E${i + 1}`,
  department: i % 2 ? "IT" : "HR",
}));

function app() {
  const a = express();
  a.set("trust proxy", "loopback");
  a.get("/employees", (req, res) => {
    const { page, size } = parsePageRequest(req.query, { defaultSize: 20, maxSize: 50 });
    const dept = typeof req.query.department === "string" ? req.query.department : undefined;
    const all = dept ? employees.filter((e) => e.department === dept) : employees;
    const items = all.slice((page - 1) * size, page * size);
    res.json(
      pageModel({
        collection: "employees",
        items,
        page,
        size,
        totalElements: all.length,
        url: req.originalUrl,
        origin: externalBaseUrl(req),
      }),
    );
  });
  // A maxSize above a billion: sizes are read up to it, not up to nine digits.
  a.get("/large", (req, res) => {
    const { page, size } = parsePageRequest(req.query, { maxSize: 5_000_000_000 });
    res.json(
      pageModel({ collection: "rows", items: [], page, size, totalElements: 0, url: req.originalUrl }),
    );
  });
  a.use(errorHandler({ logger: { error() {} } }));
  return a;
}

/** A collection under a route parameter, its links built from the path as requested. */
function teamsApp() {
  const a = express();
  a.get("/teams/:team/members", (req, res) => {
    const { page, size } = parsePageRequest(req.query);
    res.json(
      pageModel({ collection: "members", items: [], page, size, totalElements: 5, url: req.originalUrl }),
    );
  });
  a.use(errorHandler({ logger: { error() {} } }));
  return a;
}

describe("page model through a real server", () => {
  let url: string;
  let close: () => Promise<void>;
  let teamsUrl: string;
  let closeTeams: () => Promise<void>;
  beforeAll(async () => {
    ({ url, close } = await listen(app()));
    ({ url: teamsUrl, close: closeTeams } = await listen(teamsApp()));
  });
  afterAll(async () => {
    await close();
    await closeTeams();
  });
  const get = async (q: string) => fetch(`${url}/employees${q}`);

  it("no query → page 1 of 3, default size, first/next/last, no previous", async () => {
    const body = await (await get("")).json();
    expect(Object.keys(body as object)).toEqual(["_embedded", "page", "_links"]);
    expect(at(body, "page")).toEqual({ number: 1, size: 20, totalElements: 45, totalPages: 3 });
    expect(at(body, "_embedded", "employees")).toHaveLength(20);
    expect(at(body, "_embedded", "employees", 0, "id")).toBe(1);
    expect(at(body, "_links")).toEqual({
      self: { href: `${url}/employees?page=1&size=20` },
      first: { href: `${url}/employees?page=1&size=20` },
      next: { href: `${url}/employees?page=2&size=20` },
      last: { href: `${url}/employees?page=3&size=20` },
    });
  });

  it("?sort=name,desc&page=2&size=10&department=IT → filter, sort and size kept in every link", async () => {
    const body = await (await get("?sort=name,desc&page=2&size=10&department=IT")).json();
    expect(at(body, "page")).toEqual({ number: 2, size: 10, totalElements: 22, totalPages: 3 });
    const q = (n: number) => `${url}/employees?sort=name,desc&page=${n}&size=10&department=IT`;
    expect(at(body, "_links")).toEqual({
      self: { href: q(2) },
      first: { href: q(1) },
      previous: { href: q(1) },
      next: { href: q(3) },
      last: { href: q(3) },
    });
  });

  it("last page ?page=3 → previous, no next", async () => {
    const body = await (await get("?page=3")).json();
    expect((at(body, "_embedded", "employees") as { id: number }[]).map((e) => e.id)).toEqual([
      41, 42, 43, 44, 45,
    ]);
    expect(at(body, "_links", "previous", "href")).toBe(`${url}/employees?page=2&size=20`);
    expect(at(body, "_links", "next")).toBeUndefined();
  });

  it("?department=none (empty) → totalPages 0, first and last are page 1, no next/previous", async () => {
    const body = await (await get("?department=none")).json();
    expect(at(body, "page")).toEqual({ number: 1, size: 20, totalElements: 0, totalPages: 0 });
    expect(at(body, "_embedded", "employees")).toEqual([]);
    expect(Object.keys(at(body, "_links") as object)).toEqual(["self", "first", "last"]);
    expect(at(body, "_links", "last", "href")).toBe(`${url}/employees?department=none&page=1&size=20`);
  });

  it("?page=9 (past the end) → empty page whose previous is the last page", async () => {
    const body = await (await get("?page=9")).json();
    expect(at(body, "_embedded", "employees")).toEqual([]);
    expect(at(body, "_links", "previous", "href")).toBe(`${url}/employees?page=3&size=20`);
    expect(at(body, "_links", "next")).toBeUndefined();
  });

  it.each([
    ["?page=0", "page"],
    ["?page=-1", "page"],
    ["?page=abc", "page"],
    ["?page=1.5", "page"],
    ["?page=1&page=2", "page"],
    ["?size=0", "size"],
    ["?size=51", "size"],
    ["?size=1e3", "size"],
    ["?page=99999999999999999999", "page"],
  ])("%s → 400 with a field error on %s", async (q, field) => {
    const res = await get(q);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(at(body, "errors", 0, "field")).toBe(field);
  });

  it.each([
    ["?page=1000000000", "page", "must not exceed 999999999"],
    ["?page=99999999999999999999", "page", "must not exceed 999999999"],
    ["?page=0999999999", "page", "must be a positive integer"],
    ["?size=51", "size", "must not exceed 50"],
    ["?size=1000000000", "size", "must not exceed 50"],
  ])("%s → 400, %s %s", async (q, field, message) => {
    const res = await get(q);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(at(body, "errors", 0)).toEqual({ field, message });
    expect(at(body, "message")).toBe(`Query parameter ${field} ${message}`);
  });

  it("?page=999999999 (the largest page) → 200, an empty page past the end", async () => {
    const res = await get("?page=999999999");
    expect(res.status).toBe(200);
    expect(at(await res.json(), "page", "number")).toBe(999_999_999);
  });

  it.each(["1000000000", "5000000000"])("maxSize 5000000000, ?size=%s → 200 with that size", async (size) => {
    const res = await fetch(`${url}/large?size=${size}`);
    expect(res.status).toBe(200);
    expect(at(await res.json(), "page", "size")).toBe(Number(size));
  });

  // RFC 9112 §3.2.2: a server MUST accept a request-target in absolute-form; req.originalUrl is
  // then the whole URI, which pageModel refused with a TypeError: a 500 for a valid request.
  // Their origin is the target's authority, not Host (RFC 9112 §3.2.2: the server MUST ignore Host).
  it.each([
    [
      "http://127.0.0.1/employees?page=1&size=20&department=IT",
      "http://127.0.0.1/employees?page=2&size=20&department=IT",
    ],
    ["HTTP://127.0.0.1:9/employees?size=20&page=2", "http://127.0.0.1:9/employees?size=20&page=3"],
  ])("GET %s (absolute-form) → 200, links from its path and query", async (target, next) => {
    const reply = await raw(url, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    const body: unknown = JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4));
    expect(at(body, "_links", "next", "href")).toBe(next);
  });

  // RFC 3986 §2: a URI carries only unreserved and reserved characters and percent-encodings;
  // Node passes `"<>{}|^`\` of the request-target through, and pageModel copied them into every
  // href. A WHATWG URL parser (a browser, fetch) reads "\" as "/" in an http(s) path, so a route
  // parameter holding "..\..\" made `next` point outside the collection (RFC 3986 §5.2.4).
  it("GET /teams/a\\..\\..\\admin/members → links stay under /teams/ (\\ percent-encoded)", async () => {
    const reply = await raw(
      teamsUrl,
      "GET /teams/a\\..\\..\\admin/members?size=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    );
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    const body: unknown = JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4));
    const next = at(body, "_links", "next", "href") as string;
    expect(new URL(next, teamsUrl).pathname).toBe("/teams/a%5C..%5C..%5Cadmin/members");
    expect(next).toBe("/teams/a%5C..%5C..%5Cadmin/members?size=1&page=2");
  });

  it('GET /employees?q="<x>{y}|^`\\ → every href a URI: those characters percent-encoded', async () => {
    const reply = await raw(
      url,
      `GET /employees?q="<x>{y}|^\`\\&size=20 HTTP/1.1\r\nHost: ${new URL(url).host}\r\nConnection: close\r\n\r\n`,
    );
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    const body: unknown = JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4));
    expect(at(body, "_links", "next", "href")).toBe(
      `${url}/employees?q=%22%3Cx%3E%7By%7D%7C%5E%60%5C&size=20&page=2`,
    );
  });

  // A fragment is no part of the request-target (RFC 9112 §3.2), but Node passes one through; it
  // went before the query, so every link had its page and size inside the fragment.
  it("GET /employees#x (a fragment in the target) → links without it", async () => {
    const reply = await raw(
      url,
      `GET /employees#x HTTP/1.1\r\nHost: ${new URL(url).host}\r\nConnection: close\r\n\r\n`,
    );
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    const body: unknown = JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4));
    expect(at(body, "_links", "next", "href")).toBe(`${url}/employees?page=2&size=20`);
  });

  it("behind a trusted proxy → paging links carry the public origin", async () => {
    const proxy = await simulatedProxy(url, {
      "x-forwarded-proto": "https",
      "x-forwarded-host": "api.example.com",
    });
    try {
      const body = await (await fetch(`${proxy.url}/employees?page=2&size=20`)).json();
      expect(at(body, "_links", "next", "href")).toBe("https://api.example.com/employees?page=3&size=20");
    } finally {
      await proxy.close();
    }
  });

  it("behind a trusted gateway mapping /api → paging links carry /api", async () => {
    const proxy = await simulatedProxy(url, {
      "x-forwarded-host": "gw.example.com",
      "x-forwarded-prefix": "/api",
    });
    try {
      const body = await (await fetch(`${proxy.url}/employees?size=20&department=IT`)).json();
      expect(at(body, "_links", "last", "href")).toBe(
        "http://gw.example.com/api/employees?size=20&department=IT&page=2",
      );
    } finally {
      await proxy.close();
    }
  });
});

describe("pageModel (pure)", () => {
  it("origin omitted → relative links", () => {
    const m = pageModel({
      collection: "x",
      items: [],
      page: 1,
      size: 5,
      totalElements: 6,
      url: "/x?q=a%20b",
    });
    expect(m._links.next?.href).toBe("/x?q=a%20b&page=2&size=5");
  });
  it("absolute-form url whose path starts with // → 400 invalid_path (never a network-path link)", () => {
    expect(() =>
      pageModel({
        collection: "x",
        items: [],
        page: 1,
        size: 5,
        totalElements: 0,
        url: "http://h//evil.example/x",
      }),
    ).toThrow(expect.objectContaining({ status: 400, code: "invalid_path" }));
  });
  // A browser reads "\" as "/": the links carry it percent-encoded, a path of this origin.
  it("url /\\evil.example/x → relative links to /%5Cevil.example/x, not another origin", () => {
    const { _links } = pageModel({
      collection: "x",
      items: [],
      page: 1,
      size: 5,
      totalElements: 0,
      url: "/\\evil.example/x",
    });
    expect(_links.self.href).toBe("/%5Cevil.example/x?page=1&size=5");
    expect(new URL(_links.self.href, "https://a.example").host).toBe("a.example");
  });
  it("page 0 → TypeError", () => {
    expect(() =>
      pageModel({ collection: "x", items: [], page: 0, size: 5, totalElements: 0, url: "/x" }),
    ).toThrow(TypeError);
  });
  it("parsePageRequest({ page: 2, size: 5 }) with numbers → accepted; { page: 2.5 } → 400", () => {
    expect(parsePageRequest({ page: 2, size: 5 })).toEqual({ page: 2, size: 5 });
    expect(() => parsePageRequest({ page: 2.5 })).toThrow(expect.objectContaining({ status: 400 }));
  });
  it("parsePageRequest from a query string", () => {
    expect(parsePageRequest("?page=3&size=7")).toEqual({ page: 3, size: 7 });
  });
});

describe("pageItems: a page's rows for a flat representation such as CSV", () => {
  const items = [1, 2].map((id) =>
    hal({ id, name: `E${id}` })
      .link("self", `/employees/${id}`)
      .embed("department", hal({ id: 9 }).link("self", "/departments/9"))
      .toJSON(),
  );
  const page = pageModel({
    collection: "employees",
    items,
    page: 1,
    size: 2,
    totalElements: 2,
    url: "/employees",
  });
  let server: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    server = await listen((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ isPage: isPage(page), rows: pageItems(page) }));
    });
  });
  afterAll(() => server.close());

  it("a page of HAL items → the items without _links, their state and _embedded kept", async () => {
    const body = await (await fetch(server.url)).json();
    expect(body).toEqual({
      isPage: true,
      rows: [1, 2].map((id) => ({
        id,
        name: `E${id}`,
        _embedded: { department: { _links: { self: { href: "/departments/9" } }, id: 9 } },
      })),
    });
    // the page itself is left as it was
    expect(page._embedded.employees?.[0]).toHaveProperty("_links");
  });

  it("an empty page → no rows", () => {
    const empty = pageModel({ collection: "x", items: [], page: 1, size: 5, totalElements: 0, url: "/x" });
    expect(isPage(empty)).toBe(true);
    expect(pageItems(empty)).toEqual([]);
  });

  it.each([
    ["a single resource", hal({ id: 1 }).link("self", "/x/1").toJSON()],
    ["null", null],
    ["a list", [{ id: 1 }]],
    ["a string", "page"],
    ["embedded items without page", { _embedded: { x: [{ id: 1 }] } }],
    ["two embedded lists", { page: {}, _embedded: { x: [], y: [] } }],
    ["an embedded object, not a list", { page: {}, _embedded: { x: { id: 1 } } }],
    ["a list of scalars", { page: {}, _embedded: { x: [1, 2] } }],
    ["a list holding null", { page: {}, _embedded: { x: [{ id: 1 }, null] } }],
    ["an _embedded list", { page: {}, _embedded: [[{ id: 1 }]] }],
  ])("%s → not a page", (_label, data) => {
    expect(isPage(data)).toBe(false);
    expect(pageItems(data)).toBeUndefined();
  });
});
