import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type Listening, listen, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HAL_JSON, HalFollowError, hal, pageModel, readHal } from "./index.js";

const order = {
  id: 7,
  status: "open",
  _links: {
    self: { href: "/orders/7" },
    item: [
      { href: "/orders/7/items/1", name: "first" },
      { href: "/orders/7/items/2", name: "second", title: "Second" },
    ],
    find: { href: "/orders{/id}{?expand}", templated: true },
  },
  _embedded: {
    customer: { name: "Ada", _links: { self: { href: "/customers/1" } } },
    items: [{ sku: "a" }, { sku: "b" }],
  },
};

describe("readHal: reading", () => {
  const doc = readHal(order, { base: "https://api.example/v1/" });

  it("properties are the state without _links and _embedded", () => {
    expect(doc.ok).toBe(true);
    expect(doc.properties).toEqual({ id: 7, status: "open" });
  });

  it("link / links / link by name, single objects and arrays alike (draft §4.1.1)", () => {
    expect(doc.link("self")).toEqual({ href: "/orders/7" });
    expect(doc.links("item").map((l) => l.href)).toEqual(["/orders/7/items/1", "/orders/7/items/2"]);
    expect(doc.link("item", { name: "second" })).toEqual({
      href: "/orders/7/items/2",
      name: "second",
      title: "Second",
    });
    expect(doc.link("item", { name: "third" })).toBeUndefined();
    expect(doc.links("self")).toHaveLength(1);
    expect(doc.linkRels()).toEqual(["self", "item", "find"]);
  });

  it("href resolves against base (RFC 3986 §5) and expands templates (RFC 6570)", () => {
    expect(doc.href("self")).toBe("https://api.example/orders/7");
    expect(doc.href("find", { variables: { id: 9, expand: "items" } })).toBe(
      "https://api.example/orders/9?expand=items",
    );
    expect(doc.href("find")).toBe("https://api.example/orders");
    expect(readHal(order).href("self")).toBe("/orders/7");
  });

  it("embedded / embeddedList read as readers of their own", () => {
    expect(doc.embedded("customer")?.properties).toEqual({ name: "Ada" });
    expect(doc.embedded("customer")?.href("self")).toBe("https://api.example/customers/1");
    expect(doc.embeddedList("items").map((i) => i.properties.sku)).toEqual(["a", "b"]);
    expect(doc.embeddedList("customer")).toHaveLength(1);
    expect(doc.embeddedRels()).toEqual(["customer", "items"]);
  });

  it("JSON text is read like the object it parses to", () => {
    expect(readHal(JSON.stringify(order)).links("item")).toHaveLength(2);
  });
});

describe("readHal: whatever comes off the wire, nothing throws", () => {
  it.each<[string, unknown]>([
    ["null", null],
    ["undefined", undefined],
    ['""', ""],
    ["not JSON", "{"],
    ["a number", 42],
    ["an array", [order]],
    ["JSON text of an array", "[1,2]"],
    ["_links: 5", { _links: 5 }],
    ["_links: []", { _links: [] }],
    ["a string link", { _links: { self: "/x" } }],
    ["href: 1", { _links: { self: { href: 1 } } }],
    ["links: [null, 1, []]", { _links: { self: [null, 1, []] } }],
    ["_embedded entries that are not objects", { _embedded: { e: [1, null, "x", []] } }],
  ])("%s → empty answers", (_name, body) => {
    const doc = readHal(body);
    expect(doc.link("self")).toBeUndefined();
    expect(doc.links("self")).toEqual([]);
    expect(doc.href("self")).toBeUndefined();
    expect(doc.embedded("e")).toBeUndefined();
    expect(doc.embeddedList("e")).toEqual([]);
  });

  it("a link attribute of the wrong type is dropped, the link kept", () => {
    expect(readHal({ _links: { self: { href: "/x", title: 5, templated: "yes" } } }).link("self")).toEqual({
      href: "/x",
    });
  });

  it("__proto__, constructor, toString as relations find nothing inherited, and pollute nothing", () => {
    const wire = JSON.parse(
      '{"__proto__":{"polluted":1},"_links":{"__proto__":{"href":"/own"}},"_embedded":{"__proto__":{"x":1}}}',
    );
    const doc = readHal(wire);
    for (const rel of ["constructor", "toString", "hasOwnProperty", "valueOf"]) {
      expect(doc.link(rel)).toBeUndefined();
      expect(doc.embedded(rel)).toBeUndefined();
      expect(readHal({}).links(rel)).toEqual([]);
    }
    // An own "__proto__" relation on the wire is data like any other.
    expect(doc.link("__proto__")).toEqual({ href: "/own" });
    expect(doc.embedded("__proto__")?.properties).toEqual({ x: 1 });
    expect(Object.hasOwn(doc.properties, "__proto__")).toBe(true);
    expect(({} as { polluted?: number }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(doc.properties)).toBe(Object.prototype);
  });

  it("text over maxLength is not parsed; a relation yields at most maxPerRelation entries", () => {
    const big = JSON.stringify({ _links: { self: { href: "/x" } }, pad: "x".repeat(2_000_000) });
    expect(readHal(big).ok).toBe(false);
    expect(readHal(big, { maxLength: 3_000_000 }).ok).toBe(true);
    const many = { _links: { item: Array.from({ length: 5000 }, (_, i) => ({ href: `/i/${i}` })) } };
    expect(readHal(many).links("item")).toHaveLength(1000);
    expect(readHal(many, { maxPerRelation: 10 }).links("item")).toHaveLength(10);
  });

  it.each<[string, string, object]>([
    ["maxLength: 0", "ERR_SVC_HAL_READ_HAL_MAX_LENGTH", { maxLength: 0 }],
    ["maxPerRelation: 1.5", "ERR_SVC_HAL_READ_HAL_MAX_PER_RELATION", { maxPerRelation: 1.5 }],
    ['base: "/relative"', "ERR_SVC_HAL_READ_HAL_BASE", { base: "/relative" }],
  ])("the caller's own option %s → TypeError %s", (_name, code, options) => {
    expect(() => readHal({}, options)).toThrow(expect.objectContaining({ name: "TypeError", code }));
  });
});

describe("readHal: follow, against a server rendering HAL with this package", () => {
  const employees = [
    { id: 1, name: "Ada" },
    { id: 2, name: "Grace" },
    { id: 3, name: "Linus" },
  ];
  let server: Listening;
  let requests: { url: string; accept: string | undefined }[] = [];
  const authorizations: (string | undefined)[] = [];

  function send(res: ServerResponse, status: number, type: string, body: string): void {
    res.writeHead(status, { "content-type": type }).end(body);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://localhost");
    requests.push({ url: url.pathname + url.search, accept: req.headers.accept });
    authorizations.push(req.headers.authorization);
    const one = /^\/employees\/(\d+)$/.exec(url.pathname);
    if (url.pathname === "/employees") {
      const page = Number(url.searchParams.get("page") ?? 1);
      const items = employees
        .slice((page - 1) * 2, page * 2)
        .map((e) => hal(e).link("self", `/employees/${e.id}`));
      const body = JSON.parse(
        JSON.stringify(
          pageModel({
            collection: "employees",
            items,
            page,
            size: 2,
            totalElements: 3,
            url: url.pathname + url.search,
          }),
        ),
      );
      body._links.find = { href: "/employees/{id}", templated: true };
      send(res, 200, HAL_JSON, JSON.stringify(body));
    } else if (one) {
      const employee = employees.find((e) => e.id === Number(one[1]));
      if (!employee) send(res, 404, "application/problem+json", '{"status":404}');
      else send(res, 200, HAL_JSON, JSON.stringify(hal(employee).link("self", `/employees/${employee.id}`)));
    } else if (url.pathname === "/html") send(res, 200, "text/html", "<html></html>");
    else if (url.pathname === "/bom")
      send(res, 200, HAL_JSON, `\uFEFF${JSON.stringify(hal({ id: 9 }).link("self", "/bom"))}`);
    else if (url.pathname === "/hang") return;
    else if (url.pathname === "/stall") {
      res.writeHead(200, { "content-type": HAL_JSON }).write('{"id":');
    } else if (url.pathname === "/huge")
      send(res, 200, HAL_JSON, JSON.stringify({ pad: "x".repeat(200_000) }));
    else send(res, 404, "text/plain", "no");
  }

  beforeAll(async () => {
    server = await listenOn(createServer(handle));
  });
  afterAll(() => server.close());

  it("next, then an embedded item's self, then a templated find: each resolved against the response URL", async () => {
    requests = [];
    const first = readHal(await (await fetch(`${server.url}/employees`)).text(), {
      base: `${server.url}/employees`,
    });
    expect(first.embeddedList("employees").map((e) => e.properties.name)).toEqual(["Ada", "Grace"]);
    const second = await first.follow("next");
    expect(second.base).toBe(`${server.url}/employees?page=2&size=2`);
    expect(second.embeddedList("employees").map((e) => e.properties.name)).toEqual(["Linus"]);
    expect(second.href("next")).toBeUndefined();
    const linus = await second.embeddedList("employees")[0]?.follow("self");
    expect(linus?.properties).toEqual({ id: 3, name: "Linus" });
    const grace = await second.follow("find", { variables: { id: 2 } });
    expect(grace.properties.name).toBe("Grace");
    expect(requests.map((r) => r.url)).toEqual([
      "/employees",
      "/employees?page=2&size=2",
      "/employees/3",
      "/employees/2",
    ]);
    expect(requests[1]?.accept).toBe("application/hal+json, application/json");
  });

  // RFC 6570 §2.3: "A variable defined as a list value is considered undefined if the list contains
  // zero members", an associative array too "if the array contains zero members or if all member
  // names in the array are associated with undefined values"; §3.2.1: an undefined variable is
  // ignored. {?department} with no department chosen asked for ?department= (the empty one).
  it.each<[string, Record<string, unknown>]>([
    ["[]", { department: [] }],
    ["{}", { department: {} }],
    ["[null]", { department: [null] }],
    ["{ a: null }", { department: { a: null } }],
  ])("a templated search followed with department %s → the variable is left out", async (_name, vars) => {
    requests = [];
    const doc = readHal({
      _links: { search: { href: `${server.url}/employees{?department,page}{&sort}`, templated: true } },
    });
    await doc.follow("search", { variables: { ...vars, page: 2, sort: [] } as never });
    expect(requests.map((r) => r.url)).toEqual(["/employees?page=2"]);
  });

  it.each<[string, string, string, object]>([
    ["a relation that is not there", "ERR_HAL_NO_LINK", "/employees", { rel: "nope" }],
    ["a 404", "ERR_HAL_STATUS", "/employees/9", {}],
    ["HTML", "ERR_HAL_NOT_HAL", "/html", {}],
    ["a body over maxLength", "ERR_HAL_NOT_HAL", "/huge", { maxLength: 10_000 }],
  ])("following to %s → HalFollowError %s", async (_name, code, href, extra) => {
    const { rel = "go", ...options } = extra as { rel?: string; maxLength?: number };
    const doc = readHal({ _links: { go: { href } } }, { base: server.url, ...options });
    const err = await doc.follow(rel).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HalFollowError);
    expect(err).toMatchObject({ code, rel });
  });

  it("a relative href with no base → ERR_HAL_BAD_HREF; a closed port → ERR_HAL_FETCH with the cause", async () => {
    await expect(readHal({ _links: { go: { href: "/x" } } }).follow("go")).rejects.toMatchObject({
      code: "ERR_HAL_BAD_HREF",
    });
    const closed = await listen(() => {});
    await closed.close();
    const err = await readHal({ _links: { go: { href: `${closed.url}/x` } } })
      .follow("go")
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "ERR_HAL_FETCH", url: `${closed.url}/x` });
    expect((err as Error).cause).toBeInstanceOf(Error);
  });

  // RFC 9110 §5.1: field names are case-insensitive, so `Accept` is the Accept header "given"; the
  // default was sent beside it and fetch joined them into one list the client never asked for.
  it.each(["Accept", "ACCEPT", "accept"])(
    "follow with headers { %s: ... } → only that Accept is sent",
    async (name) => {
      requests = [];
      const doc = readHal({ _links: { go: { href: `${server.url}/employees/1` } } });
      await doc.follow("go", { headers: { [name]: "application/vnd.acme.v2+json" } }).catch(() => undefined);
      expect(requests.map((r) => r.accept)).toEqual(["application/vnd.acme.v2+json"]);
    },
  );

  // A document's links are data (a profile's homepage, an upload's URL): the caller's credentials
  // go to the origin the document came from, not wherever a link points. Fetch Standard, HTTP-redirect
  // fetch: "If request's current URL's origin is not same origin with locationURL's origin, then
  // for each headerName of CORS non-wildcard request-header name, delete headerName" (Authorization).
  it("credentials in headers (Authorization, Proxy-Authorization, Cookie) go only to the document's origin", async () => {
    const seen: string[] = [];
    const other = await listenOn(
      createServer((req, res) => {
        const h = req.headers;
        seen.push(`${h.authorization}|${h["proxy-authorization"]}|${h.cookie}|${h["x-trace"]}`);
        res.writeHead(200, { "content-type": HAL_JSON }).end(
          JSON.stringify({
            _links: { away: { href: `${server.url}/employees/1` }, here: { href: "/again" } },
          }),
        );
      }),
    );
    try {
      const headers = {
        Authorization: "Bearer secret",
        "Proxy-Authorization": "Basic c2VjcmV0",
        Cookie: "sid=secret",
        "X-Trace": "t1",
      };
      const doc = readHal({ _links: { away: { href: `${other.url}/x` } } }, { base: `${server.url}/` });
      const there = await doc.follow("away", { headers });
      expect(seen).toEqual(["undefined|undefined|undefined|t1"]);
      // The credentials are for the origin the first document came from, whatever origin the
      // document being followed from has: a link on the other origin's own document (same origin
      // as it) gets none either. The Fetch Standard deletes Authorization once a redirect leaves
      // the origin and never puts it back for the next hop; passing the same headers to each
      // follow of a chain sent them to the other origin on the second hop.
      await there.follow("here", { headers });
      expect(seen[1]).toBe("undefined|undefined|undefined|t1");
      // Back on the first document's origin: sent.
      authorizations.length = 0;
      const home = await there.follow("away", { headers: { ...headers, Accept: HAL_JSON } });
      expect(home.properties.name).toBe("Ada");
      expect(authorizations).toEqual(["Bearer secret"]);
    } finally {
      await other.close();
    }
  });

  it("a document sent with a UTF-8 byte order mark → read, as fetch's json() reads it (RFC 8259 §8.1)", async () => {
    const doc = readHal({ _links: { go: { href: `${server.url}/bom` } } });
    expect((await doc.follow("go")).properties.id).toBe(9);
  });

  it.each([
    ["never answers", "/hang"],
    ["stalls in its body", "/stall"],
  ])(
    "a target that %s, signal: AbortSignal.timeout(200) → ERR_HAL_FETCH",
    async (_name, path) => {
      const doc = readHal({ _links: { go: { href: `${server.url}${path}` } } });
      const started = Date.now();
      await expect(doc.follow("go", { signal: AbortSignal.timeout(200) })).rejects.toMatchObject({
        code: "ERR_HAL_FETCH",
      });
      expect(Date.now() - started).toBeLessThan(3000);
    },
    5000,
  );

  it("the signal reaches a fetch of the caller's", async () => {
    const controller = new AbortController();
    let given: AbortSignal | undefined;
    const doc = readHal({ _links: { go: { href: `${server.url}/employees/1` } } });
    await doc.follow("go", {
      signal: controller.signal,
      fetch: (url, init) => {
        given = init.signal;
        return fetch(url, init);
      },
    });
    expect(given).toBe(controller.signal);
  });

  it("follow takes a fetch of the caller's (an authenticated one, say) and headers", async () => {
    const seen: string[] = [];
    const doc = readHal({ _links: { go: { href: `${server.url}/employees/1` } } });
    const ada = await doc.follow("go", {
      headers: { authorization: "Bearer t" },
      fetch: (url, init) => {
        seen.push(`${url} ${init.headers.authorization}`);
        return fetch(url, init);
      },
    });
    expect(ada.properties.name).toBe("Ada");
    expect(seen).toEqual([`${server.url}/employees/1 Bearer t`]);
  });
});
