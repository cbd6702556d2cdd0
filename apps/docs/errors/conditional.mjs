import { option } from "./helpers.mjs";

const main = (names) => `import { ${names} } from "@svc/conditional";`;
const cc = ({ name, ...rest }) =>
  option({
    raiser:
      "`formatCacheControl()` of `@svc/conditional` (and the frameworks' `cacheControl()` helpers, which take the same directives)",
    when: "call",
    name,
    imports: main("formatCacheControl"),
    call: (v) => `export const value = formatCacheControl({ ${name}: ${v} });`,
    ...rest,
  });
const flag = (name, directive) =>
  cc({
    name,
    accepted: "true or false",
    wrong: "JSON.parse('\"true\"')",
    right: "true",
    fix: `Give \`${name}\` \`true\` to write \`${directive}\`, or leave it out.`,
  });
const delta = (name, directive) =>
  cc({
    name,
    accepted: `a non-negative integer of seconds (${directive})`,
    wrong: "1.5",
    right: "60",
    fix: `Give \`${name}\` a whole number of seconds from 0 (RFC 9111 §1.2.2 delta-seconds): it is written as \`${directive}=<seconds>\`.`,
  });
const validatorsOpt = ({ name, ...rest }) =>
  option({
    raiser: "`validators()` of `@svc/conditional` (the pipeline step)",
    name,
    imports: main("validators"),
    call: (v) => `export const step = validators({ ${name}: ${v} });`,
    ...rest,
  });
const pre = 'import { preconditions } from "@svc/conditional/express";';

export default {
  ERR_SVC_CONDITIONAL_OPTIONS: option({
    raiser: "`formatCacheControl()` of `@svc/conditional` (and the frameworks' `cacheControl()` helpers)",
    when: "call",
    name: "options",
    accepted: "cacheControl: options must name at least one directive",
    refused:
      "its options are not an object, or name no directive at all, so no `Cache-Control` value could be written",
    imports: main("formatCacheControl"),
    call: (v) => `export const value = formatCacheControl(${v});`,
    wrong: "{}",
    right: "{ maxAge: 60 }",
    fix: "Name one directive at least (`visibility`, `maxAge`, `noCache`, `noStore`, ...).",
  }),
  ERR_SVC_CONDITIONAL_UNKNOWN_OPTION: {
    raiser: "`formatCacheControl()` of `@svc/conditional` (and every factory of the package)",
    when: "call",
    refused: "its options name one it does not know; the message names the nearest it knows",
    accepted: 'did you mean "maxAge"?',
    fix: "Spell the option as the message suggests (`maxAge` for `max-age`).",
    wrong: `${main("formatCacheControl")}\n\nconst directives = { visibility: "public" as const, maxage: 60 };\nexport const value = formatCacheControl(directives);\n`,
    right: `${main("formatCacheControl")}\n\nconst directives = { visibility: "public" as const, maxAge: 60 };\nexport const value = formatCacheControl(directives);\n`,
  },
  ERR_SVC_CONDITIONAL_VISIBILITY: cc({
    name: "visibility",
    accepted: '"public" or "private"',
    wrong: "JSON.parse('\"shared\"')",
    right: '"public"',
  }),
  ERR_SVC_CONDITIONAL_NO_STORE: cc({
    name: "noStore",
    accepted: "false when maxAge, sMaxAge or immutable is set",
    refused:
      "`noStore` was given with `maxAge`, `sMaxAge` or `immutable`, which describe storing what `no-store` forbids to store (RFC 9111 §5.2.2.5)",
    wrong: "true, maxAge: 60",
    right: "true",
    fix: "Give either `noStore` or the freshness directives, not both.",
  }),
  ERR_SVC_CONDITIONAL_NO_CACHE: flag("noCache", "no-cache"),
  ERR_SVC_CONDITIONAL_MUST_REVALIDATE: flag("mustRevalidate", "must-revalidate"),
  ERR_SVC_CONDITIONAL_IMMUTABLE: flag("immutable", "immutable"),
  ERR_SVC_CONDITIONAL_NO_TRANSFORM: flag("noTransform", "no-transform"),
  ERR_SVC_CONDITIONAL_MAX_AGE: delta("maxAge", "max-age"),
  ERR_SVC_CONDITIONAL_S_MAX_AGE: delta("sMaxAge", "s-maxage"),
  ERR_SVC_CONDITIONAL_STALE_WHILE_REVALIDATE: delta("staleWhileRevalidate", "stale-while-revalidate"),
  ERR_SVC_CONDITIONAL_DEFAULT_CACHE_CONTROL: validatorsOpt({
    name: "defaultCacheControl",
    accepted: "a non-empty string or false",
    wrong: '""',
    right: '"no-cache"',
  }),
  ERR_SVC_CONDITIONAL_WRITE_MATCH: validatorsOpt({
    name: "writeMatch",
    accepted: '"any" or "selected"',
    wrong: "JSON.parse('\"all\"')",
    right: '"selected"',
  }),
  ERR_SVC_CONDITIONAL_REQUIRED_METHODS: validatorsOpt({
    name: "requiredMethods",
    accepted: "a list of method names (RFC 9110 §9.1 tokens)",
    wrong: '["PUT, PATCH"]',
    right: '["PUT", "PATCH"]',
    fix: "List the methods one name per entry.",
  }),
  ERR_SVC_CONDITIONAL_REQUIRED: validatorsOpt({
    name: "required",
    accepted: "true or false",
    wrong: "JSON.parse('\"true\"')",
    right: "true",
  }),
  ERR_SVC_CONDITIONAL_CURRENT: option({
    raiser:
      "`preconditions()` of `@svc/conditional/express` (and of `./fastify`, `./node`, `./fetch`); `checkPreconditions()` and `evaluatePreconditions()` of `@svc/conditional` for each call",
    name: "current",
    accepted: "a function returning the current validators",
    imports: `${pre}\n\nconst tags = new Map<string, string>([["/orders/7", '"v3"']]);`,
    call: (v) => `export const gate = preconditions({ current: ${v} });`,
    wrong: "tags as never",
    right: '(req) => ({ etag: tags.get(req.url ?? "") })',
    fix: "Give `current` a function of the request answering the resource's validators `{ etag?, lastModified? }` (or `undefined` when it does not exist).",
  }),
  ERR_SVC_CONDITIONAL_INVALID_ETAG: {
    raiser:
      "`evaluatePreconditions()` and `checkPreconditions()` of `@svc/conditional` (and the `preconditions()` gates, for each request)",
    when: "call",
    refused:
      'the resource\'s current `etag` is not an entity-tag (`7` or `v7` where `"v7"` is meant): it would match no `If-Match` ever, and every retry would fail the same way',
    accepted: 'is not an entity-tag: quote it ("7" or W/"7"), RFC 9110 §8.8.3',
    fix: 'Quote the tag: `"\\"v7\\""`, or `W/"v7"` for a weak one; `representationTag()` makes one from the representation\'s bytes.',
    wrong: `${main("evaluatePreconditions")}\n\nconst version = 7;\nexport const outcome = evaluatePreconditions("PUT", { "if-match": '"7"' }, { etag: String(version) });\n`,
    right: `${main("evaluatePreconditions")}\n\nconst version = 7;\nexport const outcome = evaluatePreconditions("PUT", { "if-match": '"7"' }, { etag: \`"\${version}"\` });\n`,
  },
  ERR_SVC_CONDITIONAL_METHOD: option({
    raiser: "`evaluatePreconditions()` of `@svc/conditional`",
    when: "call",
    name: "method",
    accepted: 'a string: the request method ("GET", "PUT")',
    imports: main("evaluatePreconditions"),
    call: (v) =>
      `const req: { method?: string; headers: Record<string, string> } = { ${v}headers: { "if-match": '"v1"' } };\nexport const outcome = evaluatePreconditions(req.method!, req.headers, { etag: '"v1"' });`,
    wrong: "",
    right: 'method: "PUT", ',
    fix: "Pass the request's method; a Fetch or Node request always has one (`req.method`).",
  }),
  ERR_SVC_CONDITIONAL_HEADERS: option({
    raiser: "`evaluatePreconditions()` of `@svc/conditional`",
    when: "call",
    name: "headers",
    accepted: "an object of header fields by lower-case name (node:http's req.headers), not a Fetch Headers",
    imports: main("evaluatePreconditions"),
    call: (v) =>
      `const request = new Request("https://api.example/orders/7", { method: "PUT", headers: { "If-Match": '"v1"' } });\nexport const outcome = evaluatePreconditions("PUT", ${v}, { etag: '"v1"' });`,
    wrong: "request.headers as never",
    right: "Object.fromEntries(request.headers)",
    fix: "Pass the fields as an object by lower-case name: Node's `req.headers`, or `Object.fromEntries(request.headers)` for a Fetch request.",
  }),
  ERR_SVC_CONDITIONAL_REQ: option({
    raiser: "`checkPreconditions()` of `@svc/conditional`",
    when: "call",
    name: "req",
    accepted: "req.headers must be an object of header fields by lower-case name",
    imports: `${main("checkPreconditions")}\n\nconst req = { method: "PUT", headers: { "if-match": '"v1"' } };`,
    call: (v) => `export const outcome = await checkPreconditions(${v}, { etag: '"v1"' });`,
    wrong: "req.headers as never",
    right: "req",
    fix: "Pass the request itself (its `method` and `headers`), not its fields.",
  }),
  ERR_SVC_CONDITIONAL_IF_RANGE: option({
    raiser: "`evaluateIfRange()` of `@svc/conditional`",
    when: "call",
    name: "ifRange",
    accepted: "a string, a list of strings (one per field line) or undefined",
    imports: main("evaluateIfRange"),
    call: (v) =>
      `const headers: Record<string, string | undefined> = { range: "bytes=0-99" };\nexport const partial = evaluateIfRange(${v}, { etag: '"s1"' });`,
    wrong: 'headers["if-range"] ?? (null as never)',
    right: 'headers["if-range"]',
    fix: "Pass the `If-Range` field value, or `undefined` when the request has none (not `null`).",
  }),
  ERR_SVC_CONDITIONAL_NOW: option({
    raiser: "`evaluateIfRange()` and `lastModifiedFields()` of `@svc/conditional`",
    when: "call",
    name: "now",
    accepted: "a valid Date or undefined",
    imports: main("evaluateIfRange"),
    call: (v) => `export const partial = evaluateIfRange('"s1"', { etag: '"s1"' }, ${v});`,
    wrong: 'new Date("yesterday")',
    right: "new Date()",
    fix: "Pass a valid `Date` (the message's origination time), or nothing for the current time.",
  }),
  ERR_SVC_CONDITIONAL_DATE: option({
    raiser: "`lastModifiedFields()` of `@svc/conditional` (and the frameworks' `setLastModified()`)",
    when: "call",
    name: "date",
    accepted: "a Date: when the representation last changed",
    imports: `${main("lastModifiedFields")}\n\nconst row = { updated_at: "2026-11-25T10:00:00Z" };`,
    call: (v) => `export const fields = lastModifiedFields(${v}, undefined);`,
    wrong: "row.updated_at as never",
    right: "new Date(row.updated_at)",
    fix: "Pass a `Date`: convert a column read as a string or a number of milliseconds first.",
  }),
  ERR_SVC_CONDITIONAL_CONTENT_TYPE: option({
    raiser: "`representationTag()` of `@svc/conditional`",
    when: "call",
    name: "contentType",
    accepted: "a string: the media type the representation is sent as",
    imports: main("representationTag"),
    call: (v) =>
      `const headers: Record<string, string | undefined> = {};\nexport const etag = representationTag(${v}, undefined, '{"id":7}');`,
    wrong: 'headers["content-type"] as string',
    right: 'headers["content-type"] ?? "application/json"',
    fix: "Pass the media type the representation is sent as: it is part of what the tag identifies.",
  }),
  ERR_SVC_CONDITIONAL_LANGUAGE: option({
    raiser: "`representationTag()` of `@svc/conditional`",
    when: "call",
    name: "language",
    accepted: "a string or undefined: the Content-Language of the representation",
    imports: main("representationTag"),
    call: (v) => `export const etag = representationTag("application/json", ${v}, '{"id":7}');`,
    wrong: "null as never",
    right: "undefined",
    fix: 'Pass the representation\'s language (`"en"`), or `undefined` when it has none.',
  }),
  ERR_SVC_CONDITIONAL_BODY: option({
    raiser: "`representationTag()` of `@svc/conditional`",
    when: "call",
    name: "body",
    accepted: "a string or bytes (a Buffer or Uint8Array): the representation as sent",
    imports: main("representationTag"),
    call: (v) =>
      `const order = { id: 7 };\nexport const etag = representationTag("application/json", undefined, ${v});`,
    wrong: "order as never",
    right: "JSON.stringify(order)",
    fix: "Tag the representation as sent (its serialised string or bytes), not the data.",
  }),
  ERR_SVC_CONDITIONAL_TAG: option({
    raiser: "`strongMatch()` and `weakMatch()` of `@svc/conditional`",
    when: "call",
    name: "tag",
    accepted: "a missing tag matches none, so test for undefined first",
    imports: main("strongMatch"),
    call: (v) => `const current: { etag?: string } = {};\nexport const same = ${v};`,
    wrong: "strongMatch('\"v1\"', current.etag!)",
    right: "current.etag !== undefined && strongMatch('\"v1\"', current.etag)",
    fix: "Test for a missing tag before comparing: a resource without one matches nothing.",
  }),
  ERR_SVC_CONDITIONAL_VALUE: option({
    raiser: "`parseEtagList()` of `@svc/conditional`",
    when: "call",
    name: "value",
    accepted: "an absent field is no list, so test for undefined first",
    imports: main("parseEtagList"),
    call: (v) =>
      `const headers: Record<string, string | undefined> = {};\nconst ifNoneMatch = headers["if-none-match"];\nexport const tags = ${v};`,
    wrong: "parseEtagList(ifNoneMatch!)",
    right: "ifNoneMatch === undefined ? undefined : parseEtagList(ifNoneMatch)",
    fix: "Test for an absent `If-Match`/`If-None-Match` before parsing it.",
  }),
};
