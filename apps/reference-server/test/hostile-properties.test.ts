import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, postgres, type Started, sqlite } from "./harness.js";
import {
  expectAlive,
  expectApiResponse,
  expectSoapResponse,
  type Sent,
  SOAP11,
  SOAP12,
  TNS,
} from "./hostile.js";

/**
 * Property-based hostile input against a listening server (SQLite in memory): whatever arrives in
 * the query, the headers, a JSON or XML body or a SOAP envelope, the answer is never a 5xx, always
 * the error record (or a SOAP fault with the status of SOAP 1.2 Part 2 §7.5.2.2), and the server
 * keeps answering. `FC_SEED` replays a run; fast-check prints the seed and the shrunk input of a
 * failure.
 */
const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
/**
 * The share of the cases below that a run makes: `HOSTILE_SCALE` (default 1). The suite's second
 * run, against the Fastify composition (`vitest.config.ts`), makes a quarter, with fresh random input.
 */
const scale = Number(process.env.HOSTILE_SCALE ?? "1");
const scaled = <T extends Record<string, number>>(runs: T): T =>
  Object.fromEntries(Object.entries(runs).map(([k, n]) => [k, Math.ceil(n * scale)])) as T;
const RUNS = scaled({
  query: 2600,
  headers: 2600,
  json: 2600,
  xml: 800,
  soap: 1600,
  head: 300,
  paths: 600,
});
/** Cases of the PostgreSQL rerun (when DATABASE_URL is set), on top of the ones above. */
const PG_RUNS = scaled({ query: 400, json: 600 });
const MINIMUM_CASES = Math.ceil(10_000 * scale);
let ran = 0;
/** Statuses seen per path kind: proof the generators reach the handlers, not only the front door. */
const seen = new Map<string, Set<number>>();

function params(numRuns: number): fc.Parameters<unknown> {
  return seed === undefined ? { numRuns } : { numRuns, seed };
}

let s: Started;
/** The SOAP endpoints themselves; anything else under /ws is the resource API's 404. */
const SOAP_ENDPOINT = /^\/ws\/(?:customer|PriceService)\/?$/i;
let bearer: string;

/** Sends one request and checks it against the contract of the resource API or the SOAP endpoint. */
async function send(
  method: string,
  target: string,
  headers: Record<string, string>,
  body?: string | Uint8Array,
): Promise<Response> {
  ran++;
  // Appended, not resolved: a target starting with "//" is a path here, not another host.
  const url = new URL(`${s.url}${target}`);
  const res = await fetch(url, { method, headers, body: body ?? null });
  const sent: Sent = { method, target: `${url.pathname}${url.search}`, accept: headers.accept };
  const soap = SOAP_ENDPOINT.test(url.pathname);
  const kind = soap ? "soap" : method;
  seen.set(kind, (seen.get(kind) ?? new Set()).add(res.status));
  if (soap) await expectSoapResponse(res, sent);
  else await expectApiResponse(res, sent);
  return res;
}

beforeAll(async () => {
  s = await sqlite.start({ CORS_ORIGINS: "https://app.example.com" });
  const token = await fetch(`${s.url}/auth/token`, { method: "POST", headers: { authorization: ADMIN } });
  bearer = `Bearer ${((await token.json()) as { access_token: string }).access_token}`;
});
afterAll(() => s.stop());

// ---- building blocks --------------------------------------------------------------------------

const SQL = [
  "' OR '1'='1",
  "1; DROP TABLE employees; --",
  "name; DELETE FROM departments",
  "id desc, (select 1)",
  "1) UNION SELECT username, password FROM users --",
  'x" OR "1"="1',
  "name,asc;--",
  "`id`",
  "\\",
  "%",
  "_",
  "%_%",
  "pg_sleep(5)",
  "randomblob(1000000000)",
  "$1",
  "?",
  ":name",
];
const NUMBERS = [
  "0",
  "-1",
  "1.5",
  "1e3",
  "0x10",
  "+1",
  "01",
  " 1",
  "NaN",
  "Infinity",
  "-0",
  "2147483647",
  "2147483648",
  "9007199254740993",
  "9".repeat(40),
  "999999999",
  "1000000000",
];
/** Raw, deliberately broken percent-encodings: invalid UTF-8, NUL, stray `%`. */
const RAW = [
  "%",
  "%G1",
  "%C3%28",
  "%FF%FE",
  "%ED%A0%80",
  "%E2%82",
  "%00",
  "%0D%0A",
  "%C0%AF",
  "%25",
  "%2e%2e",
];

const paramName = fc.oneof(
  fc.constantFrom(
    "page",
    "size",
    "sort",
    "name",
    "department",
    "city",
    "firstName",
    "email",
    "managerId",
    "status",
    "rating",
    "author",
    "productId",
    "orderId",
    "method",
    "owner",
    "currency",
    "username",
    "type",
    "severity",
    "customerId",
    "access_token",
    "sort[]",
    "page[size]",
  ),
  fc.string({ maxLength: 12 }),
);
const sortValue = fc
  .tuple(
    fc.constantFrom("id", "name", "salary", "city", "department", "rating", "amount", "x", "", ...SQL),
    fc.option(fc.constantFrom("asc", "desc", "ASC", "", "sideways", "asc,desc", ...SQL), { nil: undefined }),
  )
  .map(([f, d]) => (d === undefined ? f : `${f},${d}`));
const paramValue = fc.oneof(
  fc.constantFrom(...SQL, ...NUMBERS, ""),
  sortValue,
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.integer().map(String),
  fc.bigInt().map(String),
  fc.double().map(String),
  fc.string({ minLength: 190, maxLength: 260 }),
);
/** One encoded query segment: a name/value pair through URLSearchParams, or raw broken bytes. */
const segment = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.tuple(paramName, paramValue).map(([k, v]) => new URLSearchParams([[k, v]]).toString()),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(paramName, fc.constantFrom(...RAW), fc.string({ maxLength: 5 }))
      .map(([k, raw, tail]) => `${encodeURIComponent(k)}=${raw}${encodeURIComponent(tail)}`),
  },
  { weight: 1, arbitrary: fc.constantFrom("", "=", "&", "page", "size=", "=1", "a=1=2", "page=1&page=2") },
);

const COLLECTIONS = [
  "/employees",
  "/v2/employees",
  "/departments",
  "/projects",
  "/categories",
  "/products",
  "/products/1/reviews",
  "/customers",
  "/customers/1/orders",
  "/users",
  "/users/1/orders",
  "/orders",
  "/orders/1/items",
  "/payments",
  "/accounts",
  "/transfers",
  "/employees/1/projects",
  "/events",
  "/notifications",
];

// ---- properties -------------------------------------------------------------------------------

const queryProperty = () =>
  fc.asyncProperty(
    fc.constantFrom(...COLLECTIONS),
    fc.array(segment, { maxLength: 6 }),
    fc.constantFrom("GET", "HEAD"),
    async (path, segments, method) => {
      const res = await send(method, `${path}?${segments.join("&")}`, { authorization: bearer });
      // A collection read is a page or a 400/404, whatever the query.
      expect([200, 400, 404]).toContain(res.status);
    },
  );

let jsonProperty: () => fc.IAsyncPropertyWithHooks<
  [{ path: string; body: string }, string, string, string | undefined]
>;

describe("hostile input: properties", () => {
  it(`query parameters on every collection (${RUNS.query} cases)`, async () => {
    await fc.assert(queryProperty(), params(RUNS.query));
    await expectAlive(s.url);
  }, 120_000);

  const mediaRange = fc.oneof(
    fc.constantFrom(
      "application/json",
      "application/hal+json",
      "application/xml",
      "text/xml",
      "text/csv",
      "text/plain",
      "text/html",
      "application/problem+json",
      "application/problem+xml",
      "application/vnd.svc.v1+json",
      "application/vnd.svc.v2+json",
      "application/vnd.svc.v9+json",
      "application/vnd.svc.v2+xml",
      "image/png",
      "application/pdf",
      "*/*",
      "text/*",
      "application/*",
      "*/json",
      "application/json;version=2",
      'application/json; charset="utf-8"',
      "application/json;q=0",
      "*/*;q=0",
      "application/json;q=1.0001",
      "application/json;q=-1",
      "application/json;q=abc",
      ";",
      "/",
      "",
    ),
    fc
      .tuple(
        fc.constantFrom("application/json", "application/xml", "*/*", "text/html"),
        fc.integer({ min: 0, max: 1000 }),
      )
      .map(([t, q]) => `${t};q=${(q / 1000).toFixed(3)}`),
  );
  const headerText = fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 60,
  });
  const latin1 = fc.string({
    unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
    maxLength: 8,
  });
  const etag = fc.oneof(
    fc.constantFrom('"abc"', 'W/"abc"', "*", '"', "W/", '"a", "b"', ", ,", 'W/"x", *', "abc"),
    headerText,
  );
  const httpDate = fc.oneof(
    fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
    fc.constantFrom("Sun, 06 Nov 1994 08:49:37 GMT", "yesterday", "0", "Mon, 99 Foo 9999 99:99:99 GMT"),
    headerText,
  );
  const authorization = fc.oneof(
    fc.constant(ADMIN),
    fc.constant("__bearer__"),
    fc.constantFrom(
      "Basic",
      "Basic ",
      "Basic !!!",
      "Basic YWRtaW4=",
      `Basic ${Buffer.from("admin:admin:extra").toString("base64")}`,
      `Basic ${Buffer.from(":").toString("base64")}`,
      "Bearer",
      "Bearer ",
      "Bearer a.b.c",
      "Bearer ....",
      "bearer  x",
      "Digest username=admin",
      "Negotiate abc",
      `Basic ${ADMIN.slice(6)}, Bearer x`,
    ),
    headerText.map((t) => `Basic ${t}`),
    headerText.map((t) => `Bearer ${t}`),
    headerText,
  );
  const headerSet = fc.record(
    {
      accept: fc.oneof(
        mediaRange,
        fc.array(mediaRange, { minLength: 2, maxLength: 4 }).map((a) => a.join(", ")),
        headerText,
      ),
      "accept-encoding": fc.oneof(
        fc.constantFrom(
          "gzip",
          "br",
          "deflate",
          "identity",
          "*",
          "gzip;q=0",
          "identity;q=0",
          "*;q=0",
          "zstd",
          "gzip, identity;q=0",
          "br;q=0.5, gzip;q=0.5",
          "",
        ),
        headerText,
      ),
      "accept-language": fc.oneof(
        fc.constantFrom("en-US", "de-DE,de;q=0.9", "*", "xx-invalid-tag-too-long-for-anything"),
        headerText,
        latin1,
      ),
      "if-none-match": etag,
      "if-match": etag,
      "if-modified-since": httpDate,
      "if-unmodified-since": httpDate,
      authorization,
      "idempotency-key": fc.oneof(fc.uuid(), headerText, fc.string({ minLength: 250, maxLength: 300 })),
      "api-version": fc.oneof(fc.constantFrom("1", "2", "0", "-1", "9", "1.0", "v2", "2, 1", ""), headerText),
      "accept-version": fc.oneof(fc.constantFrom("1", "2", "3", "x"), headerText),
      "content-type": fc.oneof(
        fc.constantFrom(
          "application/json",
          "application/json; charset=utf-8",
          "application/json; charset=latin1",
          'application/json; charset="UTF-8"; foo=bar',
          "application/json;;;",
          "application/merge-patch+json",
          "application/xml",
          "text/plain",
          "multipart/form-data; boundary=x",
          "application/x-www-form-urlencoded",
          "",
        ),
        headerText,
      ),
      "x-correlation-id": fc.oneof(fc.uuid(), headerText, latin1),
      "cache-control": fc.constantFrom(
        "no-cache",
        "max-age=0",
        "no-transform",
        "max-age=-1",
        "no-store, no-cache",
      ),
      origin: fc.constantFrom("https://app.example.com", "https://evil.example", "null"),
      cookie: fc.constantFrom("SESSION_ID=abc", "a=b; c=d"),
    },
    { requiredKeys: [] },
  );

  it(`request paths: odd segments, encodings, ids and prefixes (${RUNS.paths} cases)`, async () => {
    const part = fc.oneof(
      fc.constantFrom(
        "employees",
        "v1",
        "v2",
        "v99",
        "orders",
        "1",
        "invoice",
        "tracking",
        "reviews",
        "items",
        "ws",
        "customer",
        "docs",
        "assets",
        "..",
        ".",
        "",
        "%2e%2e",
        "%2F",
        "%5C",
        "%00",
        "%ZZ",
        "%C3%28",
        "-1",
        "0",
        "1.5",
        "99999999999999999999",
        "null",
        "undefined",
        "__proto__",
        "constructor",
        ";jsessionid=1",
        "employees.json",
        "EMPLOYEES",
      ),
      fc.string({ maxLength: 10 }).map(encodeURIComponent),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(part, { minLength: 1, maxLength: 5 }),
        fc.constantFrom("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"),
        async (parts, method) => {
          const body = method === "POST" || method === "PUT" || method === "PATCH" ? "{}" : undefined;
          const headers: Record<string, string> = { authorization: bearer };
          if (body) headers["content-type"] = "application/json";
          await send(method, `/${parts.join("/")}`, headers, body);
        },
      ),
      params(RUNS.paths),
    );
    await expectAlive(s.url);
  }, 120_000);

  it(`request headers on reads and writes (${RUNS.headers} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          ["GET", "/employees/1"],
          ["HEAD", "/employees/1"],
          ["GET", "/employees?size=3"],
          ["GET", "/products/1"],
          ["GET", "/orders/1"],
          ["GET", "/orders/1/invoice"],
          ["GET", "/orders/1/tracking"],
          ["GET", "/accounts/1"],
          ["PATCH", "/employees/2"],
          ["PUT", "/departments/1"],
          ["POST", "/departments"],
          ["DELETE", "/employees/999999"],
          ["OPTIONS", "/employees"],
          ["GET", "/"],
          ["GET", "/health"],
          ["GET", "/nowhere"],
        ),
        headerSet,
        async ([method, path], raw) => {
          const headers: Record<string, string> = { ...raw };
          if (headers.authorization === "__bearer__") headers.authorization = bearer;
          let body: string | undefined;
          if (method === "PATCH") body = JSON.stringify({ salary: 50_000 });
          if (method === "PUT") body = JSON.stringify({ name: "Engineering", city: "Berlin" });
          if (method === "POST") body = JSON.stringify({ name: `Dept ${ran}`, city: "Rome" });
          await send(method, path, headers, body);
        },
      ),
      params(RUNS.headers),
    );
    await expectAlive(s.url);
  }, 120_000);

  const valid: Record<string, Record<string, unknown>> = {
    "/employees": {
      name: "Ada Lovelace",
      email: "ada@example.com",
      department: "Engineering",
      city: "London",
      salary: 1000,
    },
    "/v2/employees": {
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.com",
      department: "Engineering",
      city: "London",
      salary: 1000,
    },
    "/departments": { name: "Legal", city: "Rome" },
    "/projects": { name: "Apollo", department: "Engineering", budget: 10, status: "ACTIVE" },
    "/categories": { name: "Books", description: "Paper" },
    "/products": { name: "Pen", sku: "PEN-1", categoryId: 1, price: 1.5, stock: 3 },
    "/products/1/reviews": { author: "Bob", rating: 4, comment: "ok" },
    "/customers": { name: "Carol", email: "carol@example.com", city: "Paris" },
    "/users": { username: "carol", email: "carol@example.com", role: "customer", customerId: 1 },
    "/orders": { customerId: 1, items: [{ productId: 1, quantity: 2 }] },
    "/accounts": { number: "DE00 1", owner: "Dan", currency: "EUR", balance: 10 },
    "/cart": { items: [{ productId: 1, quantity: 1 }] },
  };
  /** A JSON value of any shape, including the ones that stress parsers: deep, wide, odd numbers. */
  const anyJson = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }),
    fc.constantFrom(
      null,
      0,
      -0,
      1e308,
      -1e308,
      5e-324,
      2 ** 53 + 2,
      true,
      "",
      "\u0000",
      "\ud800",
      "𝄞",
      [],
      {},
      { __proto__: { admin: true } },
      { constructor: { prototype: { x: 1 } } },
      "a".repeat(5000),
    ),
  );
  const mutated = fc
    .tuple(fc.constantFrom(...Object.keys(valid)), fc.string({ maxLength: 12 }), anyJson, fc.boolean())
    .map(([path, key, value, replace]) => {
      const base = { ...(valid[path] as Record<string, unknown>) };
      const keys = Object.keys(base);
      const target = replace && keys.length > 0 ? (keys[key.length % keys.length] as string) : key;
      base[target] = value;
      return { path, body: JSON.stringify(base) };
    });
  const rawJson = fc.oneof(
    fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 40 }),
    fc.constantFrom(
      "",
      "{",
      "[",
      '{"a":}',
      "{'a':1}",
      '{"a":1,}',
      "NaN",
      '{"a":1e999}',
      '{"a":"\\ud800"}',
      '{"__proto__":{"isAdmin":true}}',
      `${"[".repeat(5000)}${"]".repeat(5000)}`,
      `${'{"a":'.repeat(100)}1${"}".repeat(100)}`,
      '{"name":"x","name":"y"}',
      "\ufeff{}",
      "null",
      "1",
      '"str"',
    ),
  );

  jsonProperty = () =>
    fc.asyncProperty(
      fc.oneof(
        { weight: 4, arbitrary: mutated },
        {
          weight: 4,
          arbitrary: fc
            .tuple(fc.constantFrom(...Object.keys(valid)), rawJson)
            .map(([path, body]) => ({ path, body })),
        },
        // Bodies that pass validation, and ones that only break a business rule (→ 201/200 or 422).
        fc.constantFrom(...Object.keys(valid)).map((path) => ({ path, body: JSON.stringify(valid[path]) })),
        fc
          .constantFrom(
            ["/employees", "salary"],
            ["/products", "price"],
            ["/projects", "budget"],
            ["/accounts", "balance"],
          )
          .map(([path, field]) => ({ path, body: JSON.stringify({ ...valid[path], [field]: -1 }) })),
      ),
      fc.constantFrom("POST", "POST", "PUT", "PATCH"),
      fc.constantFrom("application/json", "application/json; charset=utf-8", "application/problem+json"),
      fc.option(fc.uuid(), { nil: undefined }),
      async ({ path, body }, method, contentType, key) => {
        let target = path;
        if (method !== "POST") {
          // Items of the collection: the seeded first ones, or a missing one.
          target = path === "/cart" ? "/cart" : `${path}/${(body.length % 3) + 1}`;
        }
        const headers: Record<string, string> = { authorization: bearer, "content-type": contentType };
        if (key) headers["idempotency-key"] = key;
        await send(method, target, headers, body);
      },
    );

  it(`JSON bodies to POST, PUT and PATCH (${RUNS.json} cases)`, async () => {
    await fc.assert(jsonProperty(), params(RUNS.json));
    await expectAlive(s.url);
  }, 120_000);

  it(`HEAD carries the Content-Encoding, Vary and ETag of GET, whatever the Accept-Encoding (${RUNS.head} cases)`, async () => {
    const coding = fc.constantFrom("gzip", "br", "deflate", "identity", "*", "zstd", "x-gzip", "compress");
    const acceptEncoding = fc.oneof(
      fc
        .array(fc.tuple(coding, fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined })), {
          maxLength: 4,
        })
        .map((items) =>
          items.map(([c, q]) => (q === undefined ? c : `${c};q=${(q / 1000).toFixed(3)}`)).join(", "),
        ),
      fc.string({ maxLength: 20 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/employees?size=100", "/employees/1", "/products?size=50", "/openapi.json"),
        acceptEncoding,
        async (path, ae) => {
          const headers = { authorization: bearer, "accept-encoding": ae };
          const get = await send("GET", path, headers);
          const head = await send("HEAD", path, headers);
          expect(head.status).toBe(get.status);
          for (const name of ["content-encoding", "vary", "etag", "content-type", "cache-control"])
            expect(head.headers.get(name), `${name} for Accept-Encoding: ${ae}`).toBe(get.headers.get(name));
          const length = head.headers.get("content-length");
          if (length !== null) expect(length).toBe(get.headers.get("content-length"));
        },
      ),
      params(RUNS.head),
    );
  }, 120_000);

  const xmlName = fc.stringMatching(/^[A-Za-z_][\w.-]{0,8}(:[A-Za-z_][\w-]{0,5})?$/);
  const xmlText = fc.oneof(
    fc.string({ maxLength: 20 }).map((t) => t.replace(/[<&]/g, "")),
    fc.constantFrom("&amp;", "&lt;", "&#0;", "&#x1F600;", "&#xD800;", "&undefined;", "<![CDATA[x]]>", "]]>"),
  );
  const xmlElement: fc.Arbitrary<string> = fc.letrec((tie) => ({
    el: fc
      .tuple(
        xmlName,
        fc.array(fc.tuple(xmlName, xmlText), { maxLength: 2 }),
        fc.array(fc.oneof(xmlText, tie("el")), { maxLength: 3 }),
      )
      .map(([name, attrs, children]) => {
        const a = attrs.map(([k, v]) => ` ${k}="${v.replace(/"/g, "")}"`).join("");
        return `<${name}${a}>${children.join("")}</${name}>`;
      }),
  })).el as fc.Arbitrary<string>;
  const xmlDoc = fc.oneof(
    xmlElement,
    xmlElement.map((x) => `<?xml version="1.0" encoding="UTF-8"?>${x}`),
    xmlElement.chain((x) => fc.nat({ max: x.length }).map((cut) => x.slice(0, cut))),
    fc.constantFrom(
      '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>',
      '<?xml version="1.1"?><a/>',
      '<?xml version="1.0" encoding="UTF-16"?><a/>',
      "<a><b></a></b>",
      "<a xmlns:p='urn:x'><p:b/><q:c/></a>",
    ),
  );

  it(`XML bodies to the resource API and the SOAP endpoints (${RUNS.xml} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        xmlDoc,
        fc.constantFrom(
          ["POST", "/employees"],
          ["PUT", "/departments/1"],
          ["PATCH", "/employees/1"],
          ["POST", "/ws/customer"],
          ["POST", "/ws/PriceService"],
        ),
        fc.constantFrom("application/xml", "text/xml; charset=utf-8", "application/soap+xml; charset=utf-8"),
        async (doc, [method, path], contentType) => {
          await send(method, path, { authorization: bearer, "content-type": contentType }, doc);
        },
      ),
      params(RUNS.xml),
    );
    await expectAlive(s.url);
  }, 120_000);

  const customerId = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom("1", "2", "3") },
    fc.constantFrom(
      "1",
      "2",
      "0",
      "-1",
      "999999",
      "9223372036854775807",
      "9223372036854775808",
      "1.0",
      " 1 ",
      "",
      "x",
      "1e3",
    ),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  );
  const soapName = fc.oneof(fc.constantFrom("Erin", "Frank Ltd"), fc.string({ maxLength: 30 }));
  const soapEmail = fc.oneof(fc.emailAddress(), fc.string({ maxLength: 30 }));
  const soapText = fc.string({ maxLength: 30 }).map((t) => t.replace(/[<&]/g, ""));
  const operation = fc.oneof(
    customerId.map(
      (id) =>
        `<c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>${id}</c:customerId></c:GetCustomerRequest>`,
    ),
    fc
      .tuple(customerId, soapName, soapEmail)
      .map(
        ([id, name, email]) =>
          `<c:CreateCustomerRequest xmlns:c="${TNS}"><c:customer><c:id>${id}</c:id><c:name>${name}</c:name><c:email>${email}</c:email></c:customer></c:CreateCustomerRequest>`,
      ),
    fc
      .tuple(soapText, soapText)
      .map(
        ([t, m]) =>
          `<c:LogEventRequest xmlns:c="${TNS}"><c:event><c:type>${t}</c:type><c:message>${m}</c:message></c:event></c:LogEventRequest>`,
      ),
    soapText.map(
      (m) =>
        `<c:SendNotificationRequest xmlns:c="${TNS}"><c:message>${m}</c:message></c:SendNotificationRequest>`,
    ),
    xmlElement,
    fc.constant(""),
  );
  const soapHeader = fc.oneof(
    { weight: 4, arbitrary: fc.constant("") },
    { weight: 2, arbitrary: fc.constant(`<env:Header/>`) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom("true", "1", "false", "0", "yes", ""), xmlName)
        .map(
          ([mu, n]) =>
            `<env:Header><x:${n.replace(/:.*/, "")} xmlns:x="urn:x" env:mustUnderstand="${mu}"/></env:Header>`,
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(soapText, soapText)
        .map(
          ([u, p]) =>
            `<env:Header><Authentication><Username>${u}</Username><Password>${p}</Password></Authentication></env:Header>`,
        ),
    },
  );
  const envelope = fc
    .tuple(
      fc.oneof({ weight: 6, arbitrary: fc.constant(SOAP12) }, fc.constantFrom(SOAP11, "urn:other", "")),
      soapHeader,
      operation,
      fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, fc.constant(false)),
    )
    .map(
      ([ns, header, op, withBody]) =>
        `<env:Envelope xmlns:env="${ns}">${header}${withBody ? `<env:Body>${op}</env:Body>` : op}</env:Envelope>`,
    );
  /** Character-level damage to an otherwise plausible envelope. */
  const damaged = fc
    .tuple(
      envelope,
      fc.nat(),
      fc.constantFrom("", "<", ">", "&", "\u0000", "\uFFFF", "]]>", "<!--", '"', "é"),
    )
    .map(([env, at, insert]) => {
      const i = at % (env.length + 1);
      return env.slice(0, i) + insert + env.slice(i + (insert === "" ? 1 : 0));
    });

  it(`SOAP envelopes to /ws/customer (${RUNS.soap} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 2, arbitrary: envelope }, damaged),
        fc.constantFrom(
          "application/soap+xml; charset=utf-8",
          "application/soap+xml; charset=utf-8",
          "application/soap+xml; charset=utf-8",
          'application/soap+xml; charset=utf-8; action="getCustomer"',
          "application/soap+xml",
          "application/soap+xml; charset=iso-8859-1",
          "text/xml; charset=utf-8",
          "application/xml",
          "application/json",
        ),
        // Mostly the (cheap) token: Basic costs a deliberate scrypt per request.
        fc.constantFrom(ADMIN, "__bearer__", "__bearer__", "__bearer__", "__bearer__", "", "Bearer x.y.z"),
        async (doc, contentType, auth) => {
          const headers: Record<string, string> = { "content-type": contentType };
          if (auth === "__bearer__") headers.authorization = bearer;
          else if (auth) headers.authorization = auth;
          await send("POST", "/ws/customer", headers, doc);
        },
      ),
      params(RUNS.soap),
    );
    await expectAlive(s.url);
  }, 120_000);

  it(`ran at least ${MINIMUM_CASES} generated cases`, () => {
    const planned = Object.values(RUNS).reduce((a, b) => a + b, 0);
    expect(planned).toBeGreaterThanOrEqual(MINIMUM_CASES);
    expect(ran).toBeGreaterThanOrEqual(MINIMUM_CASES);
    // Generated input got past validation to the handlers, and was refused where it should be.
    expect([...(seen.get("GET") ?? [])]).toEqual(expect.arrayContaining([200, 400, 401, 404]));
    expect([...(seen.get("POST") ?? [])]).toEqual(expect.arrayContaining([201, 400, 415, 422]));
    expect([...(seen.get("soap") ?? [])]).toEqual(expect.arrayContaining([200, 400, 415, 500]));
  });
});

/** The database-facing properties again on PostgreSQL, whose types refuse what SQLite stores. */
describe.skipIf(!postgres)("hostile input: properties on PostgreSQL", () => {
  let sqliteServer: Started;
  let sqliteBearer: string;
  beforeAll(async () => {
    sqliteServer = s;
    sqliteBearer = bearer;
    s = await (postgres as NonNullable<typeof postgres>).start();
    const token = await fetch(`${s.url}/auth/token`, { method: "POST", headers: { authorization: ADMIN } });
    bearer = `Bearer ${((await token.json()) as { access_token: string }).access_token}`;
  });
  afterAll(async () => {
    await s.stop();
    s = sqliteServer;
    bearer = sqliteBearer;
  });

  it(`query parameters (${PG_RUNS.query} cases)`, async () => {
    await fc.assert(queryProperty(), params(PG_RUNS.query));
    await expectAlive(s.url);
  }, 120_000);

  it(`JSON bodies (${PG_RUNS.json} cases)`, async () => {
    await fc.assert(jsonProperty(), params(PG_RUNS.json));
    await expectAlive(s.url);
  }, 120_000);
});
