import { errorHandler } from "@svc/errors/express";
import { at, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { halJson } from "./hal-json.js";
import { expandLink, expandTemplate, toHalLink } from "./link.js";
import { RELATIONS, Rel } from "./relations.js";
import { HalResource, hal } from "./resource.js";

describe("HAL resources through a real server", () => {
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const app = express();
    app.get("/orders/1", (_req, res) => {
      const order = hal({ id: 1, status: "PAID" }, { arrayRelations: ["item"] })
        .curie("acme", "https://docs.example.com/rels/{rel}")
        .link(Rel.SELF, "/orders/1")
        .link("item", { href: "/orders/1/items/1", title: "Widget" })
        .link("acme:search", { href: "/orders{?q}", templated: true })
        .link(Rel.INVOICE, {
          href: "/orders/1/invoice",
          type: "application/pdf",
          deprecation: "https://docs.example.com/deprecations/invoice",
          name: "pdf",
          profile: "https://example.com/profiles/invoice",
          title: "Invoice",
          hreflang: "en",
        })
        .embed("items", [hal({ id: 1 }).link(Rel.SELF, "/orders/1/items/1")])
        .embed("customer", { id: 9, name: "Ada" });
      res.type(halJson.mediaType).send(halJson.serialize(order));
    });
    app.get("/customers/9223372036854775807", (_req, res) => {
      const customer = hal({ id: 9223372036854775807n }).link(Rel.SELF, "/customers/9223372036854775807");
      res.type(halJson.mediaType).send(halJson.serialize(customer));
    });
    // The state is held by reference: a member added after construction is rendered as it is then.
    app.get("/late/:member", (req, res) => {
      const state: Record<string, unknown> = { id: 2 };
      const resource = hal(state).link(Rel.SELF, "/late");
      state[req.params.member as string] = { evil: { href: "https://evil.example/" } };
      res.type(halJson.mediaType).send(halJson.serialize(resource));
    });
    // JSON.parse makes "__proto__" an own member, as RFC 8259 allows any member name.
    app.get("/proto", (_req, res) => {
      const state = JSON.parse('{"__proto__":{"admin":true},"id":4}') as Record<string, unknown>;
      res.type(halJson.mediaType).send(halJson.serialize(hal(state).link(Rel.SELF, "/proto")));
    });
    // Relations copied from a document read off the wire (readHal's linkRels() lists an own
    // "__proto__" key as JSON.parse made it): a relation name like any other.
    app.get("/proto-rel", (_req, res) => {
      const resource = hal({ id: 5 })
        .link(Rel.SELF, "/proto-rel")
        .link("__proto__", "/elsewhere")
        .embed("__proto__", { id: 6 });
      res.type(halJson.mediaType).send(halJson.serialize(resource));
    });
    // A link to a resource named by the client, from a JSON body (RFC 8259 §8.2: a JSON text may
    // carry an unpaired surrogate escape, and JSON.parse keeps it).
    app.post("/users", express.json(), (req, res) => {
      const name = (req.body as { name: string; tags: string[] }).name;
      const tags = (req.body as { name: string; tags: string[] }).tags;
      const self = expandLink({ href: "/users/{name}{?tags*}", templated: true }, { name, tags });
      res
        .status(201)
        .type(halJson.mediaType)
        .send(halJson.serialize(hal({ name }).link(Rel.SELF, self)));
    });
    // A search link that echoes the client's query, cut to its first 3 characters (RFC 6570
    // §2.4.1 prefix modifier).
    app.get("/search", (req, res) => {
      const q = String(req.query.q ?? "");
      const self = expandTemplate("/search{?q:3}", { q });
      res.type(halJson.mediaType).send(halJson.serialize(hal({ q }).link(Rel.SELF, self)));
    });
    // A link to a file the client named, its path in reserved expansion (RFC 6570 §3.2.3) and a
    // section in fragment expansion (§3.2.4); `prefix` cuts the path to 2 characters (§2.4.1).
    app.get("/files", (req, res) => {
      const { path, section, prefix } = req.query as Record<string, string | undefined>;
      const template = prefix === undefined ? "/files{+path}{#section}" : "/files{+path:2}";
      const self = expandTemplate(template, { path, section });
      res.type(halJson.mediaType).send(halJson.serialize(hal({}).link(Rel.SELF, self)));
    });
    app.use(errorHandler({ logger: { error() {} } }));
    ({ url, close } = await listen(app));
  });
  afterAll(async () => close());

  // draft-kelly-json-hal-11 §4.1: _links and _embedded are reserved properties of a resource; the
  // builder's own links must never be replaced by state (the constructor already refuses them).
  it.each(["_links", "_embedded"])(
    "state given %s after construction → 500, never a document with the state's links",
    async (member) => {
      const res = await fetch(`${url}/late/${member}`);
      expect(res.status).toBe(500);
      expect(await res.text()).not.toContain("evil.example");
    },
  );

  it('state with an own "__proto__" member (from JSON.parse) → rendered as a member, like JSON.stringify does', async () => {
    const text = await (await fetch(`${url}/proto`)).text();
    expect(JSON.parse(text)).toEqual({
      _links: { self: { href: "/proto" } },
      ["__proto__"]: { admin: true },
      id: 4,
    });
    expect(text).toBe('{"_links":{"self":{"href":"/proto"}},"__proto__":{"admin":true},"id":4}');
  });

  it('a link and an embedded resource under the relation "__proto__" → rendered, not dropped', async () => {
    const text = await (await fetch(`${url}/proto-rel`)).text();
    expect(text).toBe(
      '{"_links":{"self":{"href":"/proto-rel"},"__proto__":{"href":"/elsewhere"}},"id":5,"_embedded":{"__proto__":{"id":6}}}',
    );
  });

  // encodeURIComponent, under url-template, throws URIError on an unpaired surrogate: a 500 for a
  // client's valid JSON. It is encoded as U+FFFD, as the WHATWG URL standard's UTF-8 percent-encode
  // (and TextEncoder) does.
  it("POST /users with a name holding an unpaired surrogate (\\ud800) → 201, the link with it as %EF%BF%BD", async () => {
    const res = await fetch(`${url}/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name":"a\\ud800b","tags":["\\udfff"]}',
    });
    expect(res.status).toBe(201);
    expect(at(await res.json(), "_links", "self", "href")).toBe("/users/a%EF%BF%BDb?tags=%EF%BF%BD");
  });

  // RFC 6570 §2.4.1: a prefix counts characters ("in order to avoid splitting between the octets
  // of a multi-octet-encoded character"); url-template counts UTF-16 code units, so the prefix
  // cut an emoji in half and encodeURIComponent threw URIError on the half: a 500.
  it("GET /search?q=a😀bc with a {?q:3} link → 200, the prefix keeps the emoji whole", async () => {
    const res = await fetch(`${url}/search?q=${encodeURIComponent("a😀bc")}`);
    expect(res.status).toBe(200);
    expect(at(await res.json(), "_links", "self", "href")).toBe("/search?q=a%F0%9F%98%80b");
  });

  // RFC 6570 §3.2.1: reserved ("+") and fragment ("#") expansion pass "the union of (unreserved /
  // reserved / pct-encoded)" through, and pct-encode everything else. url-template left a whole
  // run of the value unencoded when it held a "%" and one hex digit that start no pct-encoded
  // triplet: spaces, "<", "\\", non-ASCII and the "%" itself went into the href as they were.
  it.each([
    ["path", "/a b%1", "/files/a%20b%251"],
    ["path", "/x\\..\\..\\admin%a", "/files/x%5C..%5C..%5Cadmin%25a"],
    ["path", '/"><img src=x>%2', "/files/%22%3E%3Cimg%20src=x%3E%252"],
    ["path", "/ü%F", "/files/%C3%BC%25F"],
    ["path", "/a%2Fb c%1", "/files/a%2Fb%20c%251"],
    ["path", "/%1%2F", "/files/%251%2F"],
    ["section", "a b%1", "/files#a%20b%251"],
    ["path:2", "%2Fabc", "/files%252"],
    // Pass on the old code too: what url-template did encode.
    ["path", "/a b", "/files/a%20b"],
    ["path", "/a%2Fb", "/files/a%2Fb"],
    ["path", "/100%", "/files/100%25"],
    ["path", "/[x]@", "/files/[x]@"],
  ])("GET /files with %s = %j → href %s, a URI", async (name, value, href) => {
    const query =
      name === "path:2" ? `path=${encodeURIComponent(value)}&prefix` : `${name}=${encodeURIComponent(value)}`;
    const res = await fetch(`${url}/files?${query}`);
    expect(res.status).toBe(200);
    const self = at(await res.json(), "_links", "self", "href");
    expect(self).toBe(href);
    // RFC 3986 §2: nothing but unreserved, reserved and pct-encoded triplets.
    expect(self).toMatch(/^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/);
  });

  it("state given another member after construction → rendered", async () => {
    const body = await (await fetch(`${url}/late/extra`)).json();
    expect(at(body, "extra", "evil", "href")).toBe("https://evil.example/");
    expect(at(body, "_links", "self", "href")).toBe("/late");
  });

  it("GET a resource whose id is the BigInt 2^63 − 1 → HAL+JSON with the id's every digit", async () => {
    const res = await fetch(`${url}/customers/9223372036854775807`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(
      '{"_links":{"self":{"href":"/customers/9223372036854775807"}},"id":9223372036854775807}',
    );
  });

  it("GET /orders/1 → every link attribute, curies, arrays and embedded rendered", async () => {
    const res = await fetch(`${url}/orders/1`);
    expect(res.headers.get("content-type")).toMatch(/^application\/hal\+json/);
    const body = await res.json();
    expect(Object.keys(body as object)).toEqual(["_links", "id", "status", "_embedded"]);
    expect(at(body, "_links", "self")).toEqual({ href: "/orders/1" });
    expect(at(body, "_links", "item")).toEqual([{ href: "/orders/1/items/1", title: "Widget" }]);
    expect(at(body, "_links", "acme:search")).toEqual({ href: "/orders{?q}", templated: true });
    expect(at(body, "_links", "invoice")).toEqual({
      href: "/orders/1/invoice",
      type: "application/pdf",
      deprecation: "https://docs.example.com/deprecations/invoice",
      name: "pdf",
      profile: "https://example.com/profiles/invoice",
      title: "Invoice",
      hreflang: "en",
    });
    expect(at(body, "_links", "curies")).toEqual([
      { href: "https://docs.example.com/rels/{rel}", templated: true, name: "acme" },
    ]);
    expect(at(body, "_embedded", "items")).toEqual([
      { _links: { self: { href: "/orders/1/items/1" } }, id: 1 },
    ]);
    expect(at(body, "_embedded", "customer")).toEqual({ id: 9, name: "Ada" });
  });
});

describe("HalResource", () => {
  it("array relation with one link → still an array", () => {
    expect(hal().link("item", "/a", { array: true }).toJSON()._links?.item).toEqual([{ href: "/a" }]);
  });
  it("array relation given twice → both links, in order", () => {
    const doc = hal().link("item", ["/a"]).link("item", "/b").toJSON();
    expect(doc._links?.item).toEqual([{ href: "/a" }, { href: "/b" }]);
  });
  it("single relation given twice → TypeError instead of switching to an array", () => {
    expect(() => hal().link("self", "/a").link("self", "/b")).toThrow(/already has a link/);
  });
  it("templated: false → attribute omitted", () => {
    expect(toHalLink({ href: "/a", templated: false })).toEqual({ href: "/a" });
  });
  it("link without href → TypeError", () => {
    expect(() => hal().link("self", {} as never)).toThrow(TypeError);
  });
  it("link title: 5 → TypeError", () => {
    expect(() => hal().link("self", { href: "/a", title: 5 as never })).toThrow(/title/);
  });
  it("relation with a space → TypeError", () => {
    expect(() => hal().link("my rel", "/a")).toThrow(TypeError);
  });
  it("state with _links → TypeError", () => {
    expect(() => new HalResource({ _links: {} })).toThrow(/reserved/);
  });
  it("curie href without {rel} → TypeError", () => {
    expect(() => hal().curie("acme", "https://docs.example.com/rels")).toThrow(/\{rel\}/);
  });
  it("emptyEmbedded: true with nothing embedded → _embedded: {}", () => {
    expect(hal({ id: 1 }, { emptyEmbedded: true }).toJSON()._embedded).toEqual({});
  });
  it("embed(rel, []) → empty array kept", () => {
    expect(hal().embed("items", []).toJSON()._embedded).toEqual({ items: [] });
  });
  it("nothing linked or embedded → neither key", () => {
    expect(hal({ id: 1 }).toJSON()).toEqual({ id: 1 });
  });
  it("halJson.serialize of a resource equals the plain JSON body", () => {
    const r = hal({ id: 1 }).link("self", "/x");
    expect(halJson.serialize(r)).toBe(JSON.stringify(r));
    expect(JSON.parse(halJson.serialize(r) as string)).toEqual({ _links: { self: { href: "/x" } }, id: 1 });
  });
});

describe("RFC 6570 expansion", () => {
  it("level 4: {/path*}{?q,tags*}{#frag} → expanded and encoded", () => {
    expect(
      expandTemplate("/s{/path*}{?q,tags*}{#frag}", {
        path: ["a", "b c"],
        q: "x&y",
        tags: ["t1", "t2"],
        frag: "top",
      }),
    ).toBe("/s/a/b%20c?q=x%26y&tags=t1&tags=t2#top");
  });
  it("{?page,size} with size undefined → variable left out", () => {
    expect(expandTemplate("/employees{?page,size}", { page: 2, size: undefined })).toBe("/employees?page=2");
  });
  it("{+base}/x reserved expansion keeps slashes", () => {
    expect(expandTemplate("{+base}/x", { base: "https://a.example/api" })).toBe("https://a.example/api/x");
  });
  it("{var:3} prefix and {;keys*} associative array", () => {
    expect(expandTemplate("/{var:3}{;keys*}", { var: "value", keys: { a: "1", b: "2" } })).toBe(
      "/val;a=1;b=2",
    );
  });
  it("{x:1}, {+x:1}, {/x:2}, {?x:2,y} over characters outside the BMP → whole characters (RFC 6570 §2.4.1)", () => {
    expect(expandTemplate("/{x:1}", { x: "😀a" })).toBe("/%F0%9F%98%80");
    expect(expandTemplate("{+x:1}", { x: "😀a" })).toBe("%F0%9F%98%80");
    expect(expandTemplate("{/x:2}", { x: "a😀b" })).toBe("/a%F0%9F%98%80");
    expect(expandTemplate("{?x:2,y}{&x}", { x: "😀😀😀", y: "1" })).toBe(
      "?x=%F0%9F%98%80%F0%9F%98%80&y=1&x=%F0%9F%98%80%F0%9F%98%80%F0%9F%98%80",
    );
    expect(expandTemplate("{?x:9999}", { x: "😀" })).toBe("?x=%F0%9F%98%80");
    expect(expandTemplate("{x:3}", { x: 123456 })).toBe("123");
  });
  // The types allow numbers and booleans in lists and associative arrays; url-template's reserved
  // expansion called String#split on them (TypeError).
  it("{+list}, {#list*}, {+map*} with numbers and booleans → expanded as their text (RFC 6570 §3.2.3, §3.2.4)", () => {
    expect(expandTemplate("{+list}", { list: [1, 2] })).toBe("1,2");
    expect(expandTemplate("{#list*}", { list: [1, true] })).toBe("#1,true");
    expect(expandTemplate("{+map*}", { map: { a: 1, b: false } })).toBe("a=1,b=false");
    expect(expandTemplate("{+map}", { map: { a: [1, 2] } })).toBe("a,1,2");
    expect(
      expandTemplate("{?map*}", { map: { a: 1, b: undefined } as unknown as Record<string, number> }),
    ).toBe("?a=1");
  });
  it("expandLink of a templated link → templated dropped, other attributes kept", () => {
    expect(expandLink({ href: "/employees/{id}", templated: true, title: "E" }, { id: 7 })).toEqual({
      href: "/employees/7",
      title: "E",
    });
  });
});

describe("relation constants", () => {
  it("relation names: previous, not prev", () => {
    expect(RELATIONS).toEqual([
      "self",
      "next",
      "previous",
      "first",
      "last",
      "update",
      "delete",
      "manager",
      "department",
      "tracking",
      "invoice",
      "cancel",
      "payment",
    ]);
    expect(Rel.PREVIOUS).toBe("previous");
  });
});
