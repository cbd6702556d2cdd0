import { principalKey } from "@svc/kernel";
import { type CryptoKey, generateKeyPair, importJWK, SignJWT } from "jose";
import { expect } from "vitest";
import {
  CLIENT_LIMIT,
  ISSUER_A,
  ISSUER_B,
  PRINCIPAL_LIMIT,
  PUBLIC_JWK,
  PUBLIC_JWK_B,
  SOAP_PATH,
} from "../src/service.js";
import type { Request, Response, Row } from "./harness.js";

type Fields = readonly (readonly [string, string])[];

const get = (target: string, headers: Fields = [], method = "GET"): Request => ({ method, target, headers });
const send = (method: string, target: string, headers: Fields, body?: string): Request => ({
  method,
  target,
  headers,
  ...(body !== undefined && { body }),
});
const field = (name: string, want: string | RegExp | null) => (r: Response) => {
  const got = r.headers[name];
  if (want === null) expect(got, name).toBeUndefined();
  else if (typeof want === "string") expect(got, name).toBe(want);
  else expect(got, name).toMatch(want);
};
const all =
  (...checks: ((r: Response) => void)[]) =>
  (r: Response) => {
    for (const check of checks) check(r);
  };
const text = (pattern: RegExp) => (r: Response) => expect(r.body.toString("utf8")).toMatch(pattern);

// The private half of PUBLIC_JWK: the table's tokens are signed with it.
const signer = (await importJWK(
  { ...PUBLIC_JWK, d: "ZJe9Qqsv7i22GYRuqk4QTm1kk5zurzM4b8UdLTOkwzg" },
  "ES256",
)) as CryptoKey;
// Tenant B's authorization server: its own key, its own subjects (an `alice` of its own).
const signerB = (await importJWK(
  { ...PUBLIC_JWK_B, d: "t4hbVtUx9uQ9TK1COmF9nT9pn-pJ1efF6u9YQghYJeE" },
  "ES256",
)) as CryptoKey;
const token = (
  subject: string,
  scope: string | undefined,
  expires: string | number = "10m",
  key = signer,
  issuer = key === signerB ? ISSUER_B : ISSUER_A,
) =>
  new SignJWT(scope === undefined ? {} : { scope })
    .setProtectedHeader({ alg: "ES256" })
    .setIssuer(issuer)
    .setSubject(subject)
    .setExpirationTime(expires)
    .sign(key);
const carol = `Bearer ${await token("carol", "employees:read")}`;
const dave = `Bearer ${await token("dave", undefined)}`;
const expired = `Bearer ${await token("erin", undefined, Math.floor(Date.now() / 1000) - 3600)}`;
const forged = `Bearer ${await token("mallory", "employees:read", "10m", (await generateKeyPair("ES256")).privateKey)}`;
const aliceOfA = `Bearer ${await token("alice", "employees:read")}`;
const aliceOfB = `Bearer ${await token("alice", "employees:read", "10m", signerB)}`;
const bobOfA = `Bearer ${await token("bob", "employees:read")}`;
const bobOfB = `Bearer ${await token("bob", "employees:read", "10m", signerB)}`;
// Signed by tenant B's key, naming tenant A: A's key does not verify it.
const bPosingAsA = `Bearer ${await token("alice", "employees:read", "10m", signerB, ISSUER_A)}`;
// A subject of both tenants no other row sends to the per-principal limit of `GET /me`.
const graceOfA = `Bearer ${await token("grace", "employees:read")}`;
const graceOfB = `Bearer ${await token("grace", "employees:read", "10m", signerB)}`;
const basic = (user: string, password = `${user}-pw`) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

const rows: Row[] = [];

// ---------------------------------------------------------------- errors: the record, 404, 405
for (const [accept, type] of [
  [undefined, /^application\/json/],
  ["application/json", /^application\/json/],
  ["application/xml", /^application\/xml/],
  ["text/xml", /^text\/xml/],
  ["application/problem+json", /^application\/problem\+json/],
  ["application/problem+xml", /^application\/problem\+xml/],
  ["image/png", /^application\/json/],
  ["application/xml, application/json", /^application\/json/],
] as const) {
  const headers: Fields = accept === undefined ? [] : [["Accept", accept]];
  rows.push({
    name: `GET /nowhere${accept === undefined ? "" : `, Accept: ${accept}`} → 404 record`,
    request: get("/nowhere", headers),
    status: 404,
    expect: field("content-type", type),
  });
  rows.push({
    name: `GET /employees/99${accept === undefined ? "" : `, Accept: ${accept}`} → 404 record`,
    request: get("/employees/99", headers),
    status: 404,
    expect: field("content-type", type),
  });
}
for (const [method, target, allow] of [
  ["DELETE", "/employees", /GET/],
  ["PATCH", "/employees", /POST/],
  ["PUT", "/employees", /GET/],
  ["DELETE", "/employees/1", /PUT/],
  ["POST", "/employees/1", /PUT/],
  ["GET", "/orders", /POST/],
  ["DELETE", "/orders", /POST/],
  ["POST", "/me", /GET/],
] as const) {
  rows.push({
    name: `${method} ${target} → 405 with Allow`,
    request: get(target, [], method),
    status: 405,
    expect: field("allow", allow),
  });
  rows.push({
    name: `${method} ${target}, Accept: application/xml → 405, the XML record`,
    request: get(target, [["Accept", "application/xml"]], method),
    status: 405,
    expect: field("content-type", /^application\/xml/),
  });
}
for (const target of ["/employees", "/employees/1", "/orders", "/me"]) {
  rows.push({
    name: `OPTIONS ${target} → 204 with Allow`,
    request: get(target, [], "OPTIONS"),
    status: 204,
    expect: field("allow", /OPTIONS/),
  });
}

// ---------------------------------------------------------------- 406, 415, 413, 400
for (const [accept, status] of [
  ["image/png", 406],
  ["application/json;q=0, application/hal+json;q=0, application/xml;q=0", 406],
  ["text/csv", 406],
  ["application/problem+json", 406],
] as const) {
  rows.push({
    name: `GET /employees/1, Accept: ${accept} → ${status}`,
    request: get("/employees/1", [["Accept", accept]]),
    status,
  });
}
rows.push({
  name: "GET /employees/1, Accept-Encoding: identity;q=0 → 406",
  request: get("/employees/1", [["Accept-Encoding", "identity;q=0"]]),
  status: 406,
});
rows.push({
  name: "GET /employees/1, Accept-Encoding: *;q=0 → 406",
  request: get("/employees/1", [["Accept-Encoding", "*;q=0"]]),
  status: 406,
});
rows.push({
  name: "POST /employees, Accept: image/png → 406 before the handler",
  request: send(
    "POST",
    "/employees",
    [
      ["Content-Type", "application/json"],
      ["Accept", "image/png"],
    ],
    '{"name":"X"}',
  ),
  status: 406,
});
for (const [type, body, status] of [
  ["text/plain", "Zed", 415],
  ["application/x-www-form-urlencoded", "name=Zed", 415],
  ["application/json; charset=latin1", '{"name":"Zed"}', 415],
  ["application/json", '{"name":', 400],
  ["application/json", "", 400],
  ["application/xml", "<employee><name>Zed", 400],
  ["application/xml", '<!DOCTYPE x [<!ENTITY a "b">]><employee><name>&a;</name></employee>', 400],
  ["application/json", '{"name":""}', 400],
  ["application/json", `{"name":"${"x".repeat(600)}"}`, 413],
] as const) {
  rows.push({
    name: `POST /employees, Content-Type: ${type}, ${body.length} bytes → ${status}`,
    request: send("POST", "/employees", [["Content-Type", type]], body),
    status,
    ...(status === 413 && { expect: field("connection", "close") }),
    ...(status === 415 && { expect: field("accept-post", /application\/json/) }),
  });
}
rows.push({
  name: "POST /employees without Content-Type → 415",
  request: send("POST", "/employees", [], '{"name":"Zed"}'),
  status: 415,
});
rows.push({
  name: "POST /employees, Content-Encoding: gzip → 415 with Accept-Encoding",
  request: send(
    "POST",
    "/employees",
    [
      ["Content-Type", "application/json"],
      ["Content-Encoding", "gzip"],
    ],
    "xx",
  ),
  status: 415,
});
rows.push({
  name: "POST /employees, Content-Length: 100000 announced → 413",
  request: send(
    "POST",
    "/employees",
    [
      ["Content-Type", "application/json"],
      ["Content-Length", "100000"],
    ],
    "",
  ),
  status: 413,
});
rows.push({
  name: "POST /employees, JSON → 201 with Location",
  request: send("POST", "/employees", [["Content-Type", "application/json"]], '{"name":"Frances"}'),
  status: 201,
  expect: field("location", /^\/employees\/\d+$/),
});
rows.push({
  name: "POST /employees, XML → 201",
  request: send(
    "POST",
    "/employees",
    [["Content-Type", "application/xml"]],
    "<employee><name>Frances</name></employee>",
  ),
  status: 201,
});
rows.push({
  name: "POST /employees, JSON as alice → 201 naming her",
  request: send(
    "POST",
    "/employees",
    [
      ["Content-Type", "application/json"],
      ["Authorization", basic("alice")],
    ],
    '{"name":"Radia"}',
  ),
  status: 201,
  expect: text(/"by":"alice"/),
});

// ---------------------------------------------------------------- negotiation and content coding
const accepts = [
  undefined,
  "*/*",
  "application/json",
  "application/hal+json",
  "application/xml",
  "text/xml",
  "application/*",
  "application/json;q=0.5, application/xml",
  "application/xml;q=0.5, application/json",
  "application/json, application/hal+json",
  "application/json;q=0, */*",
  "APPLICATION/JSON",
];
for (const accept of accepts) {
  for (const target of ["/employees/1", "/employees?size=5"]) {
    rows.push({
      name: `GET ${target}${accept === undefined ? "" : `, Accept: ${accept}`} → ${accept === "text/xml" ? 406 : 200}`,
      request: get(target, accept === undefined ? [] : [["Accept", accept]]),
      // text/xml: no representation offers it (application/xml does).
      status: accept === "text/xml" ? 406 : 200,
      expect: field("vary", /Accept/),
    });
  }
}
for (const encoding of [
  "gzip",
  "br",
  "identity",
  "gzip, br",
  "br;q=0.5, gzip",
  "gzip;q=0.5, br",
  "gzip;q=0",
  "*",
  "deflate",
  "GZIP",
  "gzip;q=0.001, identity;q=0",
  "zstd",
  "gzip, deflate, br, zstd",
]) {
  for (const target of ["/employees?size=5", "/employees/1"]) {
    rows.push({
      name: `GET ${target}, Accept-Encoding: ${encoding} → 200`,
      request: get(target, [["Accept-Encoding", encoding]]),
      status: 200,
      expect: field("vary", /Accept-Encoding/),
    });
  }
}
rows.push({
  name: "HEAD /employees?size=5, Accept-Encoding: gzip → the GET's fields, no content",
  request: get("/employees?size=5", [["Accept-Encoding", "gzip"]], "HEAD"),
  status: 200,
  expect: (r) => expect(r.body.length).toBe(0),
});
rows.push({
  name: "HEAD /employees/1 → the GET's fields, no content",
  request: get("/employees/1", [], "HEAD"),
  status: 200,
  expect: (r) => expect(r.body.length).toBe(0),
});

// ---------------------------------------------------------------- conditional requests
const etagOf = (before: readonly Response[]) => before[0]?.headers.etag ?? "<none>";
for (const [accept, encoding] of [
  [undefined, undefined],
  ["application/xml", undefined],
  [undefined, "gzip"],
] as const) {
  const headers: [string, string][] = [];
  if (accept !== undefined) headers.push(["Accept", accept]);
  if (encoding !== undefined) headers.push(["Accept-Encoding", encoding]);
  const target = encoding === undefined ? "/employees/2" : "/employees?size=5";
  const label = `${target}${accept === undefined ? "" : `, ${accept}`}${encoding === undefined ? "" : `, ${encoding}`}`;
  rows.push({
    name: `GET ${label}, If-None-Match: its ETag → 304`,
    before: [get(target, headers)],
    request: (before) => get(target, [...headers, ["If-None-Match", etagOf(before)]]),
    status: 304,
    expect: field("etag", /"/),
  });
  rows.push({
    name: `GET ${label}, If-None-Match: another tag, its ETag → 200`,
    before: [get(target, headers)],
    request: (before) => get(target, [...headers, ["If-None-Match", `"other", ${etagOf(before)}`]]),
    status: 304,
  });
  rows.push({
    name: `HEAD ${label}, If-None-Match: its ETag → 304`,
    before: [get(target, headers)],
    request: (before) => get(target, [...headers, ["If-None-Match", etagOf(before)]], "HEAD"),
    status: 304,
  });
}
for (const [value, status] of [
  ["*", 304],
  ['"nope"', 200],
  ['W/"nope"', 200],
  ["", 200],
  ["garbage", 200],
] as const) {
  rows.push({
    name: `GET /employees/2, If-None-Match: ${value || "(empty)"} → ${status}`,
    request: get("/employees/2", [["If-None-Match", value]]),
    status,
  });
}
rows.push({
  name: 'GET /employees/2, If-Match: "nope" → 412',
  request: get("/employees/2", [["If-Match", '"nope"']]),
  status: 412,
});
rows.push({
  name: "GET /employees/2, If-Modified-Since in the future → 200 (no Last-Modified)",
  request: get("/employees/2", [["If-Modified-Since", "Wed, 01 Jan 2099 00:00:00 GMT"]]),
  status: 200,
});
const put = (target: string, headers: Fields, name = "Kathleen") =>
  send("PUT", target, [["Content-Type", "application/json"], ...headers], JSON.stringify({ name }));
rows.push({ name: "PUT /employees/4 without If-Match → 428", request: put("/employees/4", []), status: 428 });
rows.push({
  name: 'PUT /employees/4, If-Match: "stale" → 412',
  request: put("/employees/4", [["If-Match", '"stale"']]),
  status: 412,
  expect: field("etag", /"/),
});
rows.push({
  name: "PUT /employees/4, If-Match: W/ of its tag → 412 (weak never matches If-Match)",
  before: [get("/employees/4")],
  request: (before) => put("/employees/4", [["If-Match", `W/${etagOf(before)}`]]),
  status: 412,
});
rows.push({
  name: "PUT /employees/4, If-Match: its ETag → 200",
  before: [get("/employees/4")],
  request: (before) => put("/employees/4", [["If-Match", etagOf(before)]]),
  status: 200,
  expect: text(/Kathleen/),
});
rows.push({
  name: "PUT /employees/4, If-Match: the XML ETag, Accept: application/xml → 200",
  before: [get("/employees/4", [["Accept", "application/xml"]])],
  request: (before) =>
    put(
      "/employees/4",
      [
        ["If-Match", etagOf(before)],
        ["Accept", "application/xml"],
      ],
      "Kay",
    ),
  status: 200,
});
rows.push({
  name: "PUT /employees/4, If-Match: * → 200",
  request: put("/employees/4", [["If-Match", "*"]], "Katherine"),
  status: 200,
});
rows.push({
  name: "PUT /employees/99, If-Match: * → 404",
  request: put("/employees/99", [["If-Match", "*"]]),
  status: 404,
});
rows.push({
  // A precondition (no 428); with no modification date it is not evaluated (RFC 9110 §13.1.4).
  name: "PUT /employees/4, If-Unmodified-Since, no Last-Modified → 200",
  request: put("/employees/4", [["If-Unmodified-Since", "Wed, 01 Jan 2020 00:00:00 GMT"]]),
  status: 200,
});
rows.push({
  name: "PUT /employees/4, If-Match: its ETag, a body that is no JSON → 400",
  before: [get("/employees/4")],
  request: (before) =>
    send(
      "PUT",
      "/employees/4",
      [
        ["Content-Type", "application/json"],
        ["If-Match", etagOf(before)],
      ],
      "{",
    ),
  status: 400,
});

// A write whose route can answer nothing the client accepts is refused before it runs (RFC 9110
// §15.5.7): CSV is offered for pages only, so an employee cannot be answered as CSV.
rows.push({
  name: "GET /employees?size=2, Accept: text/csv → 200 CSV (offered for pages)",
  request: get("/employees?size=2", [["Accept", "text/csv"]]),
  status: 200,
  expect: field("content-type", /^text\/csv/),
});
rows.push({
  name: "PUT /employees/3, If-Match: its ETag, Accept: text/csv → 406 before the write",
  before: [get("/employees/3")],
  request: (before) =>
    put(
      "/employees/3",
      [
        ["If-Match", etagOf(before)],
        ["Accept", "text/csv"],
      ],
      "Csv",
    ),
  status: 406,
  expect: field("content-type", /^application\/json/),
});
rows.push({
  name: "POST /employees, Accept: text/csv → 406 before the handler",
  request: send(
    "POST",
    "/employees",
    [
      ["Content-Type", "application/json"],
      ["Accept", "text/csv"],
    ],
    '{"name":"Csv"}',
  ),
  status: 406,
});

// ---------------------------------------------------------------- HAL: links and pages
for (const query of [
  "",
  "?page=1&size=2",
  "?page=2&size=2",
  "?page=3&size=2",
  "?page=9&size=2",
  "?size=10",
  "?page=2&size=2&sort=name",
  "?size=2&filter=a%20b",
]) {
  rows.push({
    name: `GET /employees${query} → a HAL page`,
    request: get(`/employees${query}`),
    status: 200,
    expect: text(/"_links"/),
  });
}
for (const query of ["?page=0", "?size=0", "?size=11", "?page=abc", "?page=1&page=2", "?size=-1"]) {
  rows.push({ name: `GET /employees${query} → 400`, request: get(`/employees${query}`), status: 400 });
}
rows.push({
  name: "GET /employees/1 → self link on the Host's origin",
  request: get("/employees/1"),
  status: 200,
  expect: text(/"href":"http:\/\/api\.example\/employees\/1"/),
});
rows.push({
  name: "GET /employees/1, Host: public.example → its origin in the links",
  request: get("/employees/1", [["Host", "public.example"]]),
  status: 200,
  expect: text(/public\.example/),
});
rows.push({
  name: "GET /employees/1, Host: PUBLIC.example:80 → 200",
  request: get("/employees/1", [["Host", "PUBLIC.example:80"]]),
  status: 200,
});
rows.push({
  name: "GET /employees/1, Host: evil.example → 421",
  request: get("/employees/1", [["Host", "evil.example"]]),
  status: 421,
});
rows.push({
  name: "GET /employees/1, Host: a b → 400",
  request: get("/employees/1", [["Host", "a b"]]),
  status: 400,
});
rows.push({
  name: "GET /employees/1, two Host lines → 400",
  request: get("/employees/1", [
    ["Host", "api.example"],
    ["Host", "public.example"],
  ]),
  status: 400,
});

// ---------------------------------------------------------------- trust proxy and forwarded fields
rows.push({
  name: "GET /employees/1, X-Forwarded-Proto: https, X-Forwarded-Host: public.example → https links",
  request: get("/employees/1", [
    ["X-Forwarded-Proto", "https"],
    ["X-Forwarded-Host", "public.example"],
  ]),
  status: 200,
  expect: text(/https:\/\/public\.example\/employees\/1/),
});
rows.push({
  name: "GET /employees?page=2&size=2, X-Forwarded-Proto: https → https page links",
  request: get("/employees?page=2&size=2", [["X-Forwarded-Proto", "https"]]),
  status: 200,
  expect: text(/https:\/\/api\.example\/employees\?page=1&size=2/),
});
rows.push({
  name: "GET /employees/1, X-Forwarded-Host: evil.example → 421",
  request: get("/employees/1", [["X-Forwarded-Host", "evil.example"]]),
  status: 421,
});
rows.push({
  name: "GET /employees/1, X-Forwarded-Prefix: /api → links under /api",
  request: get("/employees/1", [["X-Forwarded-Prefix", "/api"]]),
  status: 200,
});
rows.push({
  name: "GET /employees/1, X-Forwarded-Prefix: /a/../b → 400",
  request: get("/employees/1", [["X-Forwarded-Prefix", "/a/../b"]]),
  status: 400,
});
rows.push({
  name: "GET /employees/1, Forwarded: host=public.example;proto=https → not read (x-forwarded family)",
  request: get("/employees/1", [["Forwarded", "for=192.0.2.60;host=public.example;proto=https"]]),
  status: 200,
  expect: text(/http:\/\/api\.example\/employees\/1/),
});
rows.push({
  name: "GET /employees/1, X-Forwarded-Host: public.example, api.example → the nearest hop's",
  request: get("/employees/1", [["X-Forwarded-Host", "public.example, api.example"]]),
  status: 200,
});
rows.push({
  name: "GET /employees/1, X-Forwarded-Proto: gopher → 200, not read",
  request: get("/employees/1", [["X-Forwarded-Proto", "gopher"]]),
  status: 200,
  expect: text(/http:\/\/api\.example\/employees\/1/),
});
for (const [label, xff] of [
  ["one address", "203.0.113.9"],
  ["a chain", "198.51.100.1, 203.0.113.10"],
  ["an IPv6 address", "2001:db8::7"],
  ["garbage", "not-an-address"],
] as const) {
  rows.push({
    name: `${CLIENT_LIMIT} requests, X-Forwarded-For: ${label} → 429 on the next`,
    before: Array.from({ length: CLIENT_LIMIT }, () => get("/employees/1", [["X-Forwarded-For", xff]])),
    request: get("/employees/1", [["X-Forwarded-For", xff]]),
    status: 429,
    expect: all(field("retry-after", /^\d+$/), field("ratelimit-policy", /client/)),
  });
}
rows.push({
  name: `${CLIENT_LIMIT} requests of 192.0.2.1, then 192.0.2.2 → 200 (a bucket per client)`,
  before: Array.from({ length: CLIENT_LIMIT }, () => get("/employees/1", [["X-Forwarded-For", "192.0.2.1"]])),
  request: get("/employees/1", [["X-Forwarded-For", "192.0.2.2"]]),
  status: 200,
});
rows.push({
  name: `${CLIENT_LIMIT} requests of 192.0.2.3 with Forwarded: for=… varying → 429 (Forwarded not read)`,
  before: Array.from({ length: CLIENT_LIMIT }, (_, i) =>
    get("/employees/1", [
      ["X-Forwarded-For", "192.0.2.3"],
      ["Forwarded", `for=198.51.100.${i}`],
    ]),
  ),
  request: get("/employees/1", [
    ["X-Forwarded-For", "192.0.2.3"],
    ["Forwarded", "for=198.51.100.99"],
  ]),
  status: 429,
});

// ---------------------------------------------------------------- rate limit
rows.push({
  name: "GET /employees/1 → RateLimit and RateLimit-Policy fields",
  request: get("/employees/1"),
  status: 200,
  expect: all(field("ratelimit", /r=3/), field("ratelimit-policy", /q=4/)),
});
rows.push({
  name: `${CLIENT_LIMIT} requests, the next → 429 with Retry-After and the record`,
  before: Array.from({ length: CLIENT_LIMIT }, () => get("/employees/1")),
  request: get("/employees/1"),
  status: 429,
  expect: all(field("retry-after", /^\d+$/), field("ratelimit", /r=0/)),
});
rows.push({
  name: `${CLIENT_LIMIT} requests, the next as XML → 429, the XML record`,
  before: Array.from({ length: CLIENT_LIMIT }, () => get("/nowhere")),
  request: get("/employees", [["Accept", "application/xml"]]),
  status: 429,
});
rows.push({
  name: `${CLIENT_LIMIT} bad passwords, the next → 429 (the limiter in front of authentication)`,
  before: Array.from({ length: CLIENT_LIMIT }, () =>
    get("/me", [["Authorization", basic("alice", "wrong")]]),
  ),
  request: get("/me", [["Authorization", basic("alice", "wrong")]]),
  status: 429,
});
rows.push({
  name: `${CLIENT_LIMIT} requests, then a CORS preflight → 204 or 429`,
  before: Array.from({ length: CLIENT_LIMIT }, () => get("/employees/1")),
  request: get(
    "/employees/1",
    [
      ["Origin", "https://app.example"],
      ["Access-Control-Request-Method", "PUT"],
    ],
    "OPTIONS",
  ),
  status: 204,
});
rows.push({
  name: `${CLIENT_LIMIT} requests, the next SOAP call → 429`,
  before: Array.from({ length: CLIENT_LIMIT }, () => get("/employees/1")),
  request: get(`${SOAP_PATH}?wsdl`),
  status: 429,
});

// ---------------------------------------------------------------- versioning
for (const [target, status] of [
  ["/v1/employees/1", 200],
  ["/v2/employees/1", 200],
  ["/v3/employees/1", 404],
  ["/v0/employees/1", 404],
  ["/v01/employees/1", 404],
  ["/v99999999999/employees/1", 404],
  ["/v1/employees?page=2&size=2", 200],
  ["/v2/employees", 200],
  ["/v1/nowhere", 404],
  ["/V1/employees/1", 404],
  ["/v1", 404],
  ["/v1/", 404],
] as const) {
  rows.push({ name: `GET ${target} → ${status}`, request: get(target), status });
}
rows.push({
  name: "GET /v1/employees/1 → Deprecation, Sunset, the /v1 self link",
  request: get("/v1/employees/1"),
  status: 200,
  expect: all(field("deprecation", /@/), field("sunset", /2027/), text(/api\.example\/v1\/employees\/1/)),
});
for (const [name, value, status] of [
  ["API-Version", "1", 200],
  ["API-Version", "2", 200],
  ["API-Version", "3", 400],
  ["API-Version", "abc", 400],
  ["API-Version", "01", 400],
  ["API-Version", "1, 2", 400],
  ["API-Version", "2, 2", 200],
  ["Accept-Version", "1", 200],
  ["Accept-Version", "9", 400],
] as const) {
  rows.push({
    name: `GET /employees/1, ${name}: ${value} → ${status}`,
    request: get("/employees/1", [[name, value]]),
    status,
  });
}
rows.push({
  name: "GET /v1/employees/1, API-Version: 2 → 400 (conflict)",
  request: get("/v1/employees/1", [["API-Version", "2"]]),
  status: 400,
});
for (const [accept, status] of [
  ["application/vnd.svc.v1+json", 200],
  ["application/vnd.svc.v2+json", 200],
  ["application/vnd.svc.v2+xml", 200],
  ["application/vnd.svc.v9+json", 406],
  ["application/vnd.svc.v9+json, application/json", 200],
  ["application/vnd.svc.v1+json;q=0.5, application/vnd.svc.v2+json", 200],
  ["application/vnd.svc.vx+json", 406],
] as const) {
  rows.push({
    name: `GET /employees/1, Accept: ${accept} → ${status}`,
    request: get("/employees/1", [["Accept", accept]]),
    status,
  });
}
rows.push({
  name: "GET /v2/employees/1, Accept: application/vnd.svc.v1+json → 406",
  request: get("/v2/employees/1", [["Accept", "application/vnd.svc.v1+json"]]),
  status: 406,
});
rows.push({
  name: "POST /employees, Content-Type: application/vnd.svc.v9+json → 415",
  request: send("POST", "/employees", [["Content-Type", "application/vnd.svc.v9+json"]], '{"name":"Zed"}'),
  status: 415,
});
rows.push({
  name: "POST /v1/employees, Content-Type: application/vnd.svc.v2+json → 400 (conflict)",
  request: send("POST", "/v1/employees", [["Content-Type", "application/vnd.svc.v2+json"]], '{"name":"Zed"}'),
  status: 400,
});
rows.push({
  name: "DELETE /v1/employees → 405 with API-Supported-Versions",
  request: get("/v1/employees", [], "DELETE"),
  status: 405,
  expect: field("api-supported-versions", "1, 2"),
});

// ---------------------------------------------------------------- idempotency
let keys = 0;
const order = (key: string | undefined, item: string, authorization?: string): Request =>
  send(
    "POST",
    "/orders",
    [
      ["Content-Type", "application/json"],
      ...(key === undefined ? [] : ([["Idempotency-Key", key]] as const)),
      ...(authorization === undefined ? [] : ([["Authorization", authorization]] as const)),
    ],
    JSON.stringify({ item }),
  );
const key = () => `"k-${++keys}"`;
rows.push({
  name: "POST /orders without Idempotency-Key → 400",
  request: order(undefined, "tea"),
  status: 400,
});
rows.push({
  name: "POST /orders, Idempotency-Key: a token, not a string → 201",
  request: order("bare", "tea"),
  status: 201,
});
{
  const k = key();
  rows.push({ name: "POST /orders with a new key → 201", request: order(k, "tea"), status: 201 });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, the same key and body again → the 201 replayed",
    before: [order(k, "tea")],
    request: order(k, "tea"),
    status: 201,
    expect: field("idempotent-replayed", "true"),
  });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, the same key, another body → 422",
    before: [order(k, "tea")],
    request: order(k, "coffee"),
    status: 422,
  });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, alice's key, then bob's same key and body → his own 201",
    before: [order(k, "tea", basic("alice"))],
    request: order(k, "tea", basic("bob")),
    status: 201,
    expect: all(field("idempotent-replayed", null), text(/"by":"bob"/)),
  });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, alice's key, then an anonymous caller's same key → its own 201",
    before: [order(k, "tea", basic("alice"))],
    request: order(k, "tea"),
    status: 201,
    expect: text(/"by":null/),
  });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, alice's key, then alice's again as a Bearer of another subject → its own 201",
    before: [order(k, "tea", basic("alice"))],
    request: order(k, "tea", carol),
    status: 201,
    expect: text(/"by":"carol"/),
  });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, tenant A's alice's key, then tenant B's alice's same key and body → her own 201",
    before: [order(k, "tea", aliceOfA)],
    request: order(k, "tea", aliceOfB),
    status: 201,
    expect: field("idempotent-replayed", null),
  });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, tenant A's alice's key replayed for her → 201 replayed",
    before: [order(k, "tea", aliceOfA)],
    request: order(k, "tea", aliceOfA),
    status: 201,
    expect: field("idempotent-replayed", "true"),
  });
}
// The version prefix is no second spelling of the route (version 2 is the default).
{
  const k = key();
  rows.push({
    name: "POST /orders, a key, then POST /v2/orders, the same key and body → the 201 replayed",
    before: [order(k, "tea")],
    request: { ...order(k, "tea"), target: "/v2/orders" },
    status: 201,
    expect: field("idempotent-replayed", "true"),
  });
}
{
  const k = key();
  rows.push({
    name: "POST /v2/orders, a key, then POST /orders, the same key and body → the 201 replayed",
    before: [{ ...order(k, "tea"), target: "/v2/orders" }],
    request: order(k, "tea"),
    status: 201,
    expect: field("idempotent-replayed", "true"),
  });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, a key, then POST /v1/orders, the same key and body → 422 (another version)",
    before: [order(k, "tea")],
    request: { ...order(k, "tea"), target: "/v1/orders" },
    status: 422,
  });
}
for (const target of ["/v1/orders", "/v2/orders"]) {
  rows.push({
    name: `POST ${target} without Idempotency-Key → 400 (required on /orders)`,
    request: { ...order(undefined, "tea"), target },
    status: 400,
  });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, alice's key replayed for alice → 201 replayed",
    before: [order(k, "tea", basic("alice"))],
    request: order(k, "tea", basic("alice")),
    status: 201,
    expect: field("idempotent-replayed", "true"),
  });
}
{
  const k = key();
  rows.push({
    name: "POST /orders, a key, then a body the parser refuses → 400 and the key stays free",
    before: [
      send(
        "POST",
        "/orders",
        [
          ["Content-Type", "application/json"],
          ["Idempotency-Key", k],
        ],
        "{",
      ),
    ],
    request: order(k, "tea"),
    status: 201,
  });
}
rows.push({
  name: "POST /orders, two Idempotency-Key lines → 400",
  request: send(
    "POST",
    "/orders",
    [
      ["Content-Type", "application/json"],
      ["Idempotency-Key", '"a"'],
      ["Idempotency-Key", '"b"'],
    ],
    "{}",
  ),
  status: 400,
});

// ---------------------------------------------------------------- authentication
for (const [label, authorization, status] of [
  ["no credentials", undefined, 401],
  ["alice (Basic, with the scope)", basic("alice"), 200],
  ["bob (Basic, no scope)", basic("bob"), 403],
  ["alice, a wrong password", basic("alice", "nope"), 401],
  ["an unknown user", basic("zoe"), 401],
  ["Basic, not base64", "Basic !!!", 401],
  ["Basic, no colon", `Basic ${Buffer.from("alice").toString("base64")}`, 401],
  ["carol (Bearer, with the scope)", carol, 200],
  ["dave (Bearer, no scope)", dave, 403],
  ["an expired token", expired, 401],
  ["a token of another key", forged, 401],
  ["a junk Bearer token", "Bearer junk.junk.junk", 401],
  ["Bearer and nothing", "Bearer", 400],
  ["an unknown scheme", "Digest username=alice", 401],
] as const) {
  rows.push({
    name: `GET /me, ${label} → ${status}`,
    request: get("/me", authorization === undefined ? [] : [["Authorization", authorization]]),
    status,
    ...(status === 401 && { expect: field("www-authenticate", /^(Bearer|Basic) realm="api"/) }),
    ...(status === 403 && { expect: field("content-type", /json/) }),
  });
}
// Two tenants' authorization servers each mint their own `sub`: their `alice` are two users.
rows.push({
  name: "GET /me, tenant B's alice → 200, her issuer named",
  request: get("/me", [["Authorization", aliceOfB]]),
  status: 200,
  expect: text(new RegExp(`"id":"alice","issuer":"${ISSUER_B}"`)),
});
rows.push({
  name: "GET /me, tenant A's alice → 200, her issuer named",
  request: get("/me", [["Authorization", aliceOfA]]),
  status: 200,
  expect: text(new RegExp(`"id":"alice","issuer":"${ISSUER_A}"`)),
});
rows.push({
  name: "GET /me, a token of tenant B's key naming tenant A → 401",
  request: get("/me", [["Authorization", bPosingAsA]]),
  status: 401,
});
rows.push({
  name: `GET /me, tenant B's bob ${PRINCIPAL_LIMIT.limit} times, then tenant A's bob → 200 (a limit per issuer's subject)`,
  before: Array.from({ length: PRINCIPAL_LIMIT.limit }, () => get("/me", [["Authorization", bobOfB]])),
  request: get("/me", [["Authorization", bobOfA]]),
  status: 200,
});
rows.push({
  name: `GET /me, tenant B's bob ${PRINCIPAL_LIMIT.limit + 1} times → 429 (his own limit)`,
  before: Array.from({ length: PRINCIPAL_LIMIT.limit }, () => get("/me", [["Authorization", bobOfB]])),
  request: get("/me", [["Authorization", bobOfB]]),
  status: 429,
});
rows.push({
  name: "GET /me, two Authorization lines → 400",
  request: get("/me", [
    ["Authorization", basic("alice")],
    ["Authorization", basic("bob")],
  ]),
  status: 400,
});
rows.push({
  name: "GET /employees/1, a junk Bearer token → 401 on a public route too",
  request: get("/employees/1", [["Authorization", "Bearer junk.junk.junk"]]),
  status: 401,
});
rows.push({
  name: "GET /me, dave, Accept: application/xml → 403, the XML record",
  request: get("/me", [
    ["Authorization", dave],
    ["Accept", "application/xml"],
  ]),
  status: 403,
});

// ---------------------------------------------------------------- CORS
const APP = "https://app.example";
rows.push({
  name: "OPTIONS /employees/1 preflight from the listed origin → 204 with the grant",
  request: get(
    "/employees/1",
    [
      ["Origin", APP],
      ["Access-Control-Request-Method", "PUT"],
    ],
    "OPTIONS",
  ),
  status: 204,
  expect: all(field("access-control-allow-origin", APP), field("access-control-max-age", "600")),
});
rows.push({
  name: "OPTIONS /employees preflight with request headers → 204",
  request: get(
    "/employees",
    [
      ["Origin", APP],
      ["Access-Control-Request-Method", "POST"],
      ["Access-Control-Request-Headers", "content-type, idempotency-key, authorization"],
    ],
    "OPTIONS",
  ),
  status: 204,
});
rows.push({
  name: "OPTIONS /employees/1 preflight from another origin → no grant",
  request: get(
    "/employees/1",
    [
      ["Origin", "https://evil.example"],
      ["Access-Control-Request-Method", "PUT"],
    ],
    "OPTIONS",
  ),
  status: 204,
  expect: field("access-control-allow-origin", null),
});
rows.push({
  name: "OPTIONS /nowhere preflight from the listed origin → 204",
  request: get(
    "/nowhere",
    [
      ["Origin", APP],
      ["Access-Control-Request-Method", "GET"],
    ],
    "OPTIONS",
  ),
  status: 204,
});
rows.push({
  name: "GET /employees/1 from the listed origin → the grant, exposed fields",
  request: get("/employees/1", [["Origin", APP]]),
  status: 200,
  expect: all(field("access-control-allow-origin", APP), field("access-control-expose-headers", /ETag/)),
});
rows.push({
  name: "GET /employees/1 from another origin → Vary: Origin, no grant",
  request: get("/employees/1", [["Origin", "https://evil.example"]]),
  status: 200,
  expect: all(field("access-control-allow-origin", null), field("vary", /Origin/)),
});
rows.push({
  name: "GET /nowhere from the listed origin → 404 with the grant",
  request: get("/nowhere", [["Origin", APP]]),
  status: 404,
  expect: field("access-control-allow-origin", APP),
});
rows.push({
  name: "GET /me from the listed origin, no credentials → 401 with the grant",
  request: get("/me", [["Origin", APP]]),
  status: 401,
  expect: field("access-control-allow-origin", APP),
});
rows.push({
  name: "POST /employees from the listed origin → 201 with the grant",
  request: send(
    "POST",
    "/employees",
    [
      ["Origin", APP],
      ["Content-Type", "application/json"],
    ],
    '{"name":"Hedy"}',
  ),
  status: 201,
});
rows.push({
  name: "GET /employees/1, Origin: null → no grant",
  request: get("/employees/1", [["Origin", "null"]]),
  status: 200,
});

// ---------------------------------------------------------------- SOAP 1.2 and 1.1
const TNS = "http://svc.example.com/ws/customer/v1";
const ENV12 = "http://www.w3.org/2003/05/soap-envelope";
const ENV11 = "http://schemas.xmlsoap.org/soap/envelope/";
const envelope = (body: string, ns = ENV12) =>
  `<?xml version="1.0" encoding="utf-8"?><env:Envelope xmlns:env="${ns}"><env:Body>${body}</env:Body></env:Envelope>`;
const getCustomer = (id: string) =>
  `<c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>${id}</c:customerId></c:GetCustomerRequest>`;
const SOAP12 = "application/soap+xml; charset=utf-8";
const SOAP11 = "text/xml; charset=utf-8";
const soap = (body: string, type: string, extra: Fields = []) =>
  send("POST", SOAP_PATH, [["Content-Type", type], ...extra], body);
for (const [name, request, status] of [
  ["SOAP 1.2 getCustomer 42 → 200", soap(envelope(getCustomer("42")), SOAP12), 200],
  ["SOAP 1.2 getCustomer 7 → 400, a Sender fault", soap(envelope(getCustomer("7")), SOAP12), 400],
  ["SOAP 1.2 getCustomer, not a number → 400 fault", soap(envelope(getCustomer("x")), SOAP12), 400],
  [
    "SOAP 1.2 with action=getCustomer → 200",
    soap(envelope(getCustomer("42")), `${SOAP12}; action="getCustomer"`),
    200,
  ],
  [
    "SOAP 1.1 getCustomer 42, SOAPAction → 200",
    soap(envelope(getCustomer("42"), ENV11), SOAP11, [["SOAPAction", '"getCustomer"']]),
    200,
  ],
  [
    "SOAP 1.1 getCustomer 7 → 500, a Client fault",
    soap(envelope(getCustomer("7"), ENV11), SOAP11, [["SOAPAction", '"getCustomer"']]),
    500,
  ],
  ["SOAP 1.1 envelope as application/soap+xml → 415", soap(envelope(getCustomer("42"), ENV11), SOAP12), 415],
  ["SOAP 1.2 envelope as text/xml → VersionMismatch", soap(envelope(getCustomer("42")), SOAP11), 500],
  ["SOAP, Content-Type: application/json → 415", soap("{}", "application/json"), 415],
  ["SOAP, no Content-Type → 415", send("POST", SOAP_PATH, [], "<x/>"), 415],
  ["SOAP 1.2, not well-formed → 400 fault", soap("<env:Envelope", SOAP12), 400],
  ["SOAP 1.2, a DOCTYPE → 400 fault", soap(`<!DOCTYPE x []>${envelope(getCustomer("42"))}`, SOAP12), 400],
  ["SOAP 1.2, over the size limit → 413", soap(envelope(getCustomer("42".repeat(3000))), SOAP12), 413],
  ["PUT on the endpoint → 405", send("PUT", SOAP_PATH, [], ""), 405],
  ["DELETE on the endpoint → 405", send("DELETE", SOAP_PATH, [], ""), 405],
  ["GET ?wsdl → the WSDL", get(`${SOAP_PATH}?wsdl`), 200],
  [
    "GET ?wsdl, Host: public.example → its address",
    get(`${SOAP_PATH}?wsdl`, [["Host", "public.example"]]),
    200,
  ],
  [
    "GET ?wsdl behind the proxy, X-Forwarded-Proto: https → an https address",
    get(`${SOAP_PATH}?wsdl`, [["X-Forwarded-Proto", "https"]]),
    200,
  ],
  ["HEAD ?wsdl → 200, no content", get(`${SOAP_PATH}?wsdl`, [], "HEAD"), 200],
  ["GET ?wsdl, If-None-Match: * → 304", get(`${SOAP_PATH}?wsdl`, [["If-None-Match", "*"]]), 304],
  ["GET ?xsd=customer.xsd → the schema", get(`${SOAP_PATH}?xsd=customer.xsd`), 200],
  ["GET ?xsd=nothing.xsd → 404", get(`${SOAP_PATH}?xsd=nothing.xsd`), 404],
  ["GET on the endpoint without ?wsdl → 405", get(SOAP_PATH), 405],
  [
    "SOAP 1.2 from the listed origin → 200 with the grant",
    soap(envelope(getCustomer("42")), SOAP12, [["Origin", APP]]),
    200,
  ],
  [
    "SOAP 1.2, bad credentials → 401",
    soap(envelope(getCustomer("42")), SOAP12, [["Authorization", "Bearer junk"]]),
    401,
  ],
] as const) {
  rows.push({ name, request, status });
}
// The endpoint's responses in the coding Accept-Encoding prefers (`coding: compression()`).
rows.push(
  {
    name: "GET ?wsdl, Accept-Encoding: gzip → the WSDL gzip-coded, a weak ETag",
    request: get(`${SOAP_PATH}?wsdl`, [["Accept-Encoding", "gzip"]]),
    status: 200,
    expect: (r) => {
      expect(r.headers["content-encoding"]).toBe("gzip");
      expect(r.headers.etag).toMatch(/^W\//);
      expect(r.headers.vary).toMatch(/Accept-Encoding/);
    },
  },
  {
    name: "HEAD ?wsdl, Accept-Encoding: gzip → the coded GET's fields, no content",
    request: get(`${SOAP_PATH}?wsdl`, [["Accept-Encoding", "gzip"]], "HEAD"),
    status: 200,
    expect: (r) => {
      expect(r.headers["content-encoding"]).toBe("gzip");
      expect(r.body.length).toBe(0);
    },
  },
  {
    name: "GET ?wsdl, Accept-Encoding: gzip, If-None-Match: its weak ETag → 304",
    before: [get(`${SOAP_PATH}?wsdl`, [["Accept-Encoding", "gzip"]])],
    request: (before) =>
      get(`${SOAP_PATH}?wsdl`, [
        ["Accept-Encoding", "gzip"],
        ["If-None-Match", etagOf(before)],
      ]),
    status: 304,
  },
  {
    name: "SOAP 1.2 getCustomer 42, Accept-Encoding: gzip → the envelope gzip-coded",
    request: soap(envelope(getCustomer("42")), SOAP12, [["Accept-Encoding", "gzip"]]),
    status: 200,
    expect: field("content-encoding", "gzip"),
  },
  {
    name: "SOAP 1.2 getCustomer 42, Accept-Encoding: *;q=0 → 406 fault",
    request: soap(envelope(getCustomer("42")), SOAP12, [["Accept-Encoding", "*;q=0"]]),
    status: 406,
    expect: field("content-type", /^application\/soap\+xml/),
  },
);

// ---------------------------------------------------------------- who, which route, which version
// What a handler reads of its request through `requestState` (`GET /whoami`), and what the packages
// key by it: the principal's key, the version, the route as routed.
interface Identity {
  principalKey: string | null;
  version: number | string | null;
  path: string;
  template: string | null;
}
const whoami =
  (want: Partial<Identity> = {}) =>
  (r: Response) =>
    expect(JSON.parse(r.body.toString("utf8"))).toEqual({
      principalKey: null,
      version: 2,
      path: "/whoami",
      template: "/whoami",
      ...want,
    });
// Express's default routing: `/Orders` and `/orders/` are `/orders` (EXCEPTIONS.md, X1).
const FOLDING = "express5-folding";

rows.push({
  name: "GET /whoami, anonymous → no principal, version 2, the route /whoami",
  request: get("/whoami"),
  status: 200,
  expect: whoami(),
});
rows.push({
  name: "GET /whoami, alice (Basic) → her id as her key",
  request: get("/whoami", [["Authorization", basic("alice")]]),
  status: 200,
  expect: whoami({ principalKey: "alice" }),
});
rows.push({
  name: "GET /whoami, tenant A's alice → her key, qualified by issuer A",
  request: get("/whoami", [["Authorization", aliceOfA]]),
  status: 200,
  expect: whoami({ principalKey: principalKey({ id: "alice", issuer: ISSUER_A }) }),
});
rows.push({
  name: "GET /whoami, tenant B's alice → another key, qualified by issuer B",
  request: get("/whoami", [["Authorization", aliceOfB]]),
  status: 200,
  expect: (r) => {
    whoami({ principalKey: principalKey({ id: "alice", issuer: ISSUER_B }) })(r);
    expect(r.body.toString("utf8")).not.toContain(principalKey({ id: "alice", issuer: ISSUER_A }));
  },
});
rows.push({
  name: `GET /me, tenant A's grace ${PRINCIPAL_LIMIT.limit} times, then tenant B's grace → 200, a count of her own`,
  before: Array.from({ length: PRINCIPAL_LIMIT.limit }, () => get("/me", [["Authorization", graceOfA]])),
  request: get("/me", [["Authorization", graceOfB]]),
  status: 200,
  expect: field("ratelimit", new RegExp(`"principal";r=${PRINCIPAL_LIMIT.limit - 1};`)),
});
rows.push({
  name: `GET /me, tenant B's grace, then tenant A's grace once more → 429 (her own ${PRINCIPAL_LIMIT.limit} spent)`,
  before: [get("/me", [["Authorization", graceOfB]])],
  request: get("/me", [["Authorization", graceOfA]]),
  status: 429,
  expect: field("ratelimit-policy", /"principal"/),
});

// One route, whatever the spelling: the version prefix on every router, letter case and a
// trailing slash where the router folds them (Express's defaults); an exact router has no route
// there.
for (const [target, version] of [
  ["/v2/whoami", 2],
  ["/v1/whoami", 1],
] as const) {
  rows.push({
    name: `GET ${target} → version ${version}, the route /whoami`,
    request: get(target),
    status: 200,
    expect: whoami({ version }),
  });
}
rows.push({
  name: "GET /whoami, API-Version: 1 → version 1, the route /whoami",
  request: get("/whoami", [["API-Version", "1"]]),
  status: 200,
  expect: whoami({ version: 1 }),
});
for (const target of ["/Whoami", "/whoami/", "/v2/WhoAmI/"]) {
  rows.push({
    name: `GET ${target} → 404 where routes match exactly; the route /whoami where the router folds`,
    request: get(target),
    status: 404,
    answers: { [FOLDING]: { status: 200, expect: whoami() } },
  });
}
for (const target of ["/Orders", "/orders/", "/v2/ORDERS/"]) {
  const k = key();
  rows.push({
    name: `POST /orders, a key, then POST ${target}, the same key and body → 404 where routes match exactly; the 201 replayed where the router folds`,
    before: [order(k, "tea")],
    request: { ...order(k, "tea"), target },
    status: 404,
    answers: { [FOLDING]: { status: 201, expect: field("idempotent-replayed", "true") } },
  });
}
rows.push({
  name: "POST /Orders/ without Idempotency-Key → 404 where routes match exactly; 400 where the router folds (required on /orders)",
  request: { ...order(undefined, "tea"), target: "/Orders/" },
  status: 404,
  answers: { [FOLDING]: { status: 400 } },
});
rows.push({
  name: "GET /employees/1/ → 404 (strict routing)",
  request: get("/employees/1/"),
  status: 404,
  answers: { [FOLDING]: { status: 200, expect: text(/api\.example\/employees\/1"/) } },
});
rows.push({
  name: "GET /EMPLOYEES/1 → 404 (case-sensitive routing)",
  request: get("/EMPLOYEES/1"),
  status: 404,
  answers: { [FOLDING]: { status: 200, expect: text(/api\.example\/employees\/1"/) } },
});

// A version the API does not have: one refusal everywhere, whatever its length, and of its
// spelling no more than a short excerpt in the answer (status line, fields, content).
const EXCERPT = 64;
const digits = (length: number) => "1234567890".repeat(Math.ceil(length / 10)).slice(0, length);
const echoesAtMost = (spelling: string, sentPath?: string) => (r: Response) => {
  let content = r.body.toString("latin1");
  if (sentPath !== undefined) {
    // The record's `path` is the request's path as sent (@svc/errors README, "Path"), whatever
    // its length: that member alone, and nothing the version step says, carries the spelling.
    const record = JSON.parse(r.body.toString("utf8")) as { path?: unknown };
    expect(record.path, "the record's path").toBe(sentPath);
    content = JSON.stringify({ ...record, path: "<the path sent>" });
  }
  const answer = [
    `${r.status} ${r.reason}`,
    ...Object.entries(r.headers).map(([name, value]) => `${name}: ${value}`),
    content,
  ].join("\n");
  // Every run of EXCERPT + 1 characters of the spelling (a spelling of period 10 has ten).
  for (let at = 0; at < Math.min(10, spelling.length - EXCERPT); at++)
    expect(answer, `${EXCERPT + 1} characters of the spelling from ${at}`).not.toContain(
      spelling.slice(at, at + EXCERPT + 1),
    );
};
const longPath = `/v${digits(2048)}/whoami`;
for (const [label, request, status, spelling, sentPath] of [
  ["/v999/whoami", get("/v999/whoami"), 404, "v999"],
  ["/v<2 kB>/whoami", get(longPath), 404, digits(2048), longPath],
  ["/whoami, API-Version: 999", get("/whoami", [["API-Version", "999"]]), 400, "999"],
  ["/whoami, API-Version: <10 kB>", get("/whoami", [["API-Version", digits(10_240)]]), 400, digits(10_240)],
  [
    "/whoami, Accept-Version: <10 kB>",
    get("/whoami", [["Accept-Version", digits(10_240)]]),
    400,
    digits(10_240),
  ],
  [
    "/whoami, Accept: application/vnd.svc.v<6 kB>+json",
    get("/whoami", [["Accept", `application/vnd.svc.v${digits(6144)}+json`]]),
    406,
    digits(6144),
  ],
] as const) {
  rows.push({
    name: `GET ${label} → ${status}, no more than ${EXCERPT} characters of the version in the answer`,
    request,
    status,
    every: echoesAtMost(spelling, sentPath),
  });
}

// ---------------------------------------------------------------- unusual targets and methods
for (const [name, request, status] of [
  ["QUERY /employees → 405", get("/employees", [], "QUERY"), 405],
  [
    "QUERY /employees with JSON content → 405",
    send("QUERY", "/employees", [["Content-Type", "application/json"]], "{}"),
    405,
  ],
  ["QUERY /nowhere → 404", get("/nowhere", [], "QUERY"), 404],
  ["OPTIONS * → 404 record", get("*", [], "OPTIONS"), 404],
  ["GET * → 404 record", get("*", []), 404],
  ["GET /%ZZ → 404", get("/%ZZ"), 404],
  ["GET /employees/%ZZ → 400", get("/employees/%ZZ"), 400],
  ["GET /% → 404", get("/%"), 404],
  ["GET /employees/1% → 400", get("/employees/1%"), 400],
  ["GET /v1/employees/%zz → 400", get("/v1/employees/%zz"), 400],
  ["GET /employees/%31 → employee 1", get("/employees/%31"), 200],
  ["GET /employees%2F1 → 404", get("/employees%2F1"), 404],
  ["GET /employees/1%2F2 → 404", get("/employees/1%2F2"), 404],
  ["GET /employees/%20 → 404", get("/employees/%20"), 404],
  ["GET //employees/1 → 404", get("//employees/1"), 404],
  ["GET /./employees/1 → 404", get("/./employees/1"), 404],
  ["GET /employees/1?x=%ZZ → 200", get("/employees/1?x=%ZZ"), 200],
  ["GET /employees?page=%ZZ → 400", get("/employees?page=%ZZ"), 400],
  ["GET /employees/1#frag → 200", get("/employees/1#frag"), 200],
  [
    "GET http://api.example/employees/1 → 200, the target's host",
    get("http://api.example/employees/1", [["Host", "public.example"]]),
    200,
  ],
  [
    "GET http://public.example/employees?page=2&size=2 → links of that host",
    get("http://public.example/employees?page=2&size=2"),
    200,
  ],
  ["GET http://evil.example/employees/1 → 421", get("http://evil.example/employees/1"), 421],
  ["GET http://api.example/v1/employees/1 → version 1", get("http://api.example/v1/employees/1"), 200],
  ["GET http://api.example/nowhere → 404", get("http://api.example/nowhere"), 404],
  // RFC 9112 §3.2.2: the absolute-form of any scheme is routed by its path, as Express's router
  // does; the scheme is case-insensitive (RFC 3986 §3.1).
  ["GET ftp://api.example/employees/1 → as Express routes it", get("ftp://api.example/employees/1"), 200],
  ["GET ws://api.example/employees/1 → as Express routes it", get("ws://api.example/employees/1"), 200],
  ["GET FTP://API.EXAMPLE/employees/1 → as Express routes it", get("FTP://API.EXAMPLE/employees/1"), 200],
  ["GET ftp://api.example/v1/employees/1 → version 1", get("ftp://api.example/v1/employees/1"), 200],
  ["GET ftp://api.example/nowhere → 404", get("ftp://api.example/nowhere"), 404],
  ["GET ftp://api.example/employees/%ZZ → 400", get("ftp://api.example/employees/%ZZ"), 400],
  ["GET ws://api.example → 404", get("ws://api.example"), 404],
  ["GET HTTP://API.EXAMPLE/employees/1 → 200", get("HTTP://API.EXAMPLE/employees/1"), 200],
  ["GET HTTPS://API.EXAMPLE/employees/1 → 200", get("HTTPS://API.EXAMPLE/employees/1"), 200],
  // A scheme without `//` (`urn:x`) is refused by Node's parser before any framework.
  ["GET urn:x → 400", get("urn:x"), 400],
  ["GET http://api.example → 404", get("http://api.example"), 404],
  [
    `GET http://api.example${SOAP_PATH}?wsdl → the WSDL`,
    get(`http://api.example${SOAP_PATH}?wsdl`, [["Host", "public.example"]]),
    200,
  ],
  ["TRACE /employees → 405", get("/employees", [], "TRACE"), 405],
  ["PROPFIND /employees → 405", get("/employees", [], "PROPFIND"), 405],
  [
    "GET /employees/1 with a body → 200",
    send("GET", "/employees/1", [["Content-Type", "application/json"]], "{}"),
    200,
  ],
] as const) {
  rows.push({ name, request, status });
}

export { rows };
