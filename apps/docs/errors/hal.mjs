import { option } from "./helpers.mjs";

const page = 'import { pageModel } from "@svc/hal";';
/** A field of `pageModel()`'s input, the others right. */
const pm = ({ name, fields, ...rest }) =>
  option({
    raiser: "`pageModel()` of `@svc/hal`",
    when: "call",
    name,
    imports: page,
    call: (v) =>
      `export const model = pageModel({\n  ${fields ?? 'collection: "employees", items: [], page: 1, size: 20, totalElements: 0, url: "/employees?page=1"'},\n  ${name}: ${v},\n});`,
    ...rest,
  });
const without = (name) =>
  [
    'collection: "employees"',
    "items: []",
    "page: 1",
    "size: 20",
    "totalElements: 0",
    'url: "/employees?page=1"',
  ]
    .filter((f) => !f.startsWith(`${name}:`))
    .join(", ");
const baseUrl = ({ name, ...rest }) =>
  option({
    raiser:
      "`externalOrigin()`, `externalBaseUrl()`, `baseUrl()` and `hrefFor()` of `@svc/hal/express` (and of `./fastify`, `./node`, `./fetch`)",
    when: "request",
    name,
    imports:
      'import type { Request } from "express";\nimport { externalOrigin } from "@svc/hal/express";\n\nconst req = { method: "GET", url: "/", headers: { host: "api.example.com" }, socket: { remoteAddress: "127.0.0.1" }, app: { get: () => false } } as unknown as Request;',
    call: (v) => `export const origin = externalOrigin(req, { ${name}: ${v} });`,
    ...rest,
  });
const hosts = 'import { allowedHosts } from "@svc/hal/express";';
const readHal = ({ name, ...rest }) =>
  option({
    raiser: "`readHal()` of `@svc/hal`",
    when: "call",
    name,
    imports:
      'import { readHal } from "@svc/hal";\n\nconst body = \'{"_links":{"self":{"href":"/employees/7"}}}\';',
    call: (v) => `export const links = readHal(body, { ${name}: ${v} });`,
    ...rest,
  });
const crawl = ({ name, ...rest }) =>
  option({
    raiser: "`crawlLinks()` of `@svc/hal/testing`",
    when: "call",
    name,
    imports:
      'import { crawlLinks } from "@svc/hal/testing";\n\n// A server that answers every link with an empty HAL resource.\nconst fetch = async () => new Response("{}", { headers: { "content-type": "application/hal+json" } });',
    call: (v) => `export const report = await crawlLinks("http://api.test", "/", { fetch, ${name}: ${v} });`,
    ...rest,
  });

export default {
  ERR_SVC_HAL_COLLECTION: pm({
    name: "collection",
    fields: without("collection"),
    accepted: "a non-empty string",
    wrong: '""',
    right: '"employees"',
    fix: "Name the collection the page's items are embedded under (`employees`).",
  }),
  ERR_SVC_HAL_ITEMS: pm({
    name: "items",
    fields: without("items"),
    accepted: "an array",
    wrong: 'JSON.parse("{}")',
    right: "[]",
  }),
  ERR_SVC_HAL_PAGE: pm({
    name: "page",
    fields: without("page"),
    accepted: "a 1-based integer",
    wrong: "0",
    right: "1",
    fix: "Give the page's number counted from 1, as `parsePageRequest()` answers it.",
  }),
  ERR_SVC_HAL_SIZE: pm({
    name: "size",
    fields: without("size"),
    accepted: "a positive integer",
    wrong: "0",
    right: "20",
  }),
  ERR_SVC_HAL_TOTAL_ELEMENTS: pm({
    name: "totalElements",
    fields: without("totalElements"),
    accepted: "a non-negative integer",
    wrong: "-1",
    right: "0",
  }),
  ERR_SVC_HAL_URL: pm({
    name: "url",
    fields: without("url"),
    accepted: 'a path starting with "/" (req.originalUrl)',
    wrong: '"employees?page=1"',
    right: '"/employees?page=1"',
    fix: "Give the request's path and query (`req.originalUrl`); the origin goes into `origin`.",
  }),
  ERR_SVC_HAL_ORIGIN: pm({
    name: "origin",
    accepted: 'an absolute http(s) URL without query, fragment or trailing "/"',
    wrong: '"https://api.example.com/"',
    right: '"https://api.example.com"',
    fix: "Give `origin` the scheme, host and port, without a trailing slash: `externalOrigin(req)` answers it.",
  }),
  ERR_SVC_HAL_INPUT: option({
    raiser: "`pageModel()` of `@svc/hal`",
    when: "call",
    name: "input",
    accepted: "an object with the fields",
    imports: page,
    call: (v) => `export const model = pageModel(${v});`,
    wrong: 'JSON.parse("null")',
    right: '{ collection: "employees", items: [], page: 1, size: 20, totalElements: 0, url: "/employees" }',
    fix: "Pass an object with `collection`, `items`, `page`, `size`, `totalElements` and `url`.",
  }),
  ERR_SVC_HAL_MAX_SIZE: option({
    raiser: "`parsePageRequest()` of `@svc/hal`",
    when: "call",
    name: "maxSize",
    accepted: "a positive integer",
    imports: 'import { parsePageRequest } from "@svc/hal";',
    call: (v) => `export const request = parsePageRequest({ page: "2" }, { maxSize: ${v} });`,
    wrong: "0",
    right: "100",
  }),
  ERR_SVC_HAL_DEFAULT_SIZE: option({
    raiser: "`parsePageRequest()` of `@svc/hal`",
    when: "call",
    name: "defaultSize",
    accepted: "a positive integer not above maxSize (100)",
    imports: 'import { parsePageRequest } from "@svc/hal";',
    call: (v) => `export const request = parsePageRequest({ page: "2" }, { defaultSize: ${v} });`,
    wrong: "500",
    right: "20",
    fix: "Give `defaultSize` a positive integer no greater than `maxSize` (100 unless given).",
  }),
  ERR_SVC_HAL_OPTIONS: option({
    raiser:
      "`parsePageRequest()`, `HalResource`, `allowedHosts()` and the other functions of `@svc/hal` that take options",
    when: "call",
    name: "options",
    refused: "its options argument is not an object",
    accepted: "an object with the fields defaultSize, maxSize",
    imports: 'import { parsePageRequest } from "@svc/hal";',
    call: (v) => `export const request = parsePageRequest({ page: "2" }, ${v});`,
    wrong: 'JSON.parse("50")',
    right: "{ maxSize: 50 }",
    fix: "Pass an object of options, or nothing.",
  }),
  ERR_SVC_HAL_UNKNOWN_OPTION: option({
    raiser: "`parsePageRequest()` and the other functions of `@svc/hal` that take options",
    when: "call",
    name: "options",
    refused: "its options name one it does not know; the message names the nearest it knows",
    accepted: 'did you mean "defaultSize"?',
    imports: 'import { parsePageRequest } from "@svc/hal";',
    call: (v) =>
      `const options = { maxSize: 50, ${v}: 10 };\nexport const request = parsePageRequest({ page: "2" }, options);`,
    wrong: "defaultsize",
    right: "defaultSize",
    fix: "Spell the option as the message suggests.",
  }),
  ERR_SVC_HAL_STATE: option({
    raiser: "`new HalResource()` of `@svc/hal`",
    when: "call",
    name: "state",
    accepted: "a plain object",
    imports: 'import { HalResource } from "@svc/hal";\n\nconst names = ["Ada", "Grace"];',
    call: (v) => `export const resource = new HalResource(${v});`,
    wrong: "names as never",
    right: "{ names }",
    fix: "Give the resource's state as a plain object; a list goes into an object member or is embedded.",
  }),
  ERR_SVC_HAL_ARRAY_RELATIONS: option({
    raiser: "`new HalResource()` of `@svc/hal`",
    when: "call",
    name: "arrayRelations",
    accepted: "an array of relation names",
    imports: 'import { HalResource } from "@svc/hal";',
    call: (v) => `export const resource = new HalResource({ id: 7 }, { arrayRelations: ${v} });`,
    wrong: '"item" as never',
    right: '["item"]',
    fix: 'List the relations always written as arrays, even a single one: `["item"]`.',
  }),
  ERR_SVC_HAL_EMPTY_EMBEDDED: option({
    raiser: "`new HalResource()` of `@svc/hal`",
    when: "call",
    name: "emptyEmbedded",
    accepted: "true or false",
    imports: 'import { HalResource } from "@svc/hal";',
    call: (v) => `export const resource = new HalResource({ id: 7 }, { emptyEmbedded: ${v} });`,
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
  ERR_SVC_HAL_TEMPLATE: option({
    raiser: "`HalResource#link()` and `#curie()`, `expandTemplate()` of `@svc/hal`",
    when: "call",
    name: "template",
    accepted: "must be an RFC 6570 URI Template",
    imports: 'import { HalResource } from "@svc/hal";',
    call: (v) =>
      `export const resource = new HalResource({ id: 7 }).link("search", { href: ${v}, templated: true });`,
    wrong: '"/employees{?name"',
    right: '"/employees{?name}"',
    fix: "Close every expression, and use only RFC 6570's operators and varnames: `/employees{?name,page}`.",
  }),
  ERR_SVC_HAL_ALLOWED_HOSTS: option({
    raiser: "`allowedHosts()` of `@svc/hal/express` (and of `./fastify`, `./node`, `./fetch`, `hostGate()`)",
    name: "allowedHosts",
    accepted: '"*" or a non-empty list of host names',
    imports: hosts,
    call: (v) => `export const hostCheck = allowedHosts(${v});`,
    wrong: '["https://api.example.com"]',
    right: '["api.example.com", ".example.com"]',
    fix: 'List host names without a scheme or a port (`api.example.com`), domains with a leading dot for their subdomains, or `"*"`.',
  }),
  ERR_SVC_HAL_TRUST_PROXY: option({
    raiser:
      "`allowedHosts()` of `@svc/hal/express` (and `externalOrigin()`, `hrefFor()` ... for each request)",
    name: "trustProxy",
    accepted: "true, false, a hop count, addresses or CIDR ranges",
    imports: hosts,
    call: (v) => `export const hostCheck = allowedHosts(["api.example.com"], { trustProxy: ${v} });`,
    wrong: "-1",
    right: '"loopback"',
    fix: "Give `trustProxy` what Express's `trust proxy` takes: `true`, `false`, a hop count from 0, addresses and ranges, or a function.",
  }),
  ERR_SVC_HAL_FORWARDED_HEADERS: option({
    raiser:
      "`allowedHosts()` of `@svc/hal/express` (and `externalOrigin()`, `hrefFor()` ... for each request)",
    name: "forwardedHeaders",
    accepted: '"x-forwarded" (X-Forwarded-For, -Proto, -Host, -Prefix) or "forwarded" (RFC 7239 Forwarded)',
    imports: hosts,
    call: (v) =>
      `export const hostCheck = allowedHosts(["api.example.com"], { trustProxy: "loopback", forwardedHeaders: ${v} });`,
    wrong: "JSON.parse('\"x-forwarded-host\"')",
    right: '"forwarded"',
  }),
  ERR_SVC_HAL_FORWARDED_PREFIX: baseUrl({
    name: "forwardedPrefix",
    accepted: "true or false",
    wrong: "JSON.parse('\"/api\"')",
    right: "true",
    fix: "Give `forwardedPrefix` `true` to read `X-Forwarded-Prefix` (or the `Forwarded` field's), `false` otherwise; the prefix itself comes from the proxy.",
  }),
  ERR_SVC_HAL_ABSOLUTE: option({
    raiser: "`hrefFor()` of `@svc/hal/express` (and of `./fastify`, `./node`, `./fetch`)",
    when: "request",
    name: "absolute",
    accepted: "true or false",
    imports:
      'import type { Request } from "express";\nimport { hrefFor } from "@svc/hal/express";\n\nconst req = { method: "GET", url: "/", headers: { host: "api.example.com" }, socket: { remoteAddress: "127.0.0.1" }, app: { get: () => false } } as unknown as Request;',
    call: (v) => `export const href = hrefFor(req, "/employees/7", { absolute: ${v} });`,
    wrong: "JSON.parse('\"yes\"')",
    right: "true",
  }),
  ERR_SVC_HAL_PATH: option({
    raiser: "`hrefFor()` of `@svc/hal/express` (and of `./fastify`, `./node`, `./fetch`)",
    when: "request",
    name: "path",
    accepted: 'a path starting with "/"',
    imports:
      'import type { Request } from "express";\nimport { hrefFor } from "@svc/hal/express";\n\nconst req = { method: "GET", url: "/", headers: { host: "api.example.com" }, socket: { remoteAddress: "127.0.0.1" }, app: { get: () => false } } as unknown as Request;',
    call: (v) => `export const href = hrefFor(req, ${v});`,
    wrong: '"employees/7"',
    right: '"/employees/7"',
    fix: "Give the path from the application's root, starting with `/`; `hrefFor` adds the origin and the proxy's prefix.",
  }),
  ERR_SVC_HAL_READ_HAL_MAX_LENGTH: readHal({
    name: "maxLength",
    accepted: "a positive integer",
    wrong: "0",
    right: "1_000_000",
  }),
  ERR_SVC_HAL_READ_HAL_MAX_PER_RELATION: readHal({
    name: "maxPerRelation",
    accepted: "a positive integer",
    wrong: "0",
    right: "1000",
  }),
  ERR_SVC_HAL_READ_HAL_BASE: readHal({
    name: "base",
    accepted: "an absolute URL",
    wrong: '"/api/"',
    right: '"https://api.example.com/api/"',
    fix: "Give `base` the absolute URL the body was fetched from: relative links are resolved against it.",
  }),
  ERR_SVC_HAL_MAX_REQUESTS: crawl({
    name: "maxRequests",
    accepted: "a positive integer",
    wrong: "Number.POSITIVE_INFINITY",
    right: "500",
    fix: "Give `maxRequests` a positive integer: the crawl stops there, whatever the links.",
  }),
  ERR_SVC_HAL_TIMEOUT_MS: crawl({
    name: "timeoutMs",
    accepted: "milliseconds above 0, at most 2147483647",
    wrong: "0",
    right: "10_000",
  }),
};
