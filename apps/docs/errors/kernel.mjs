import { option } from "./helpers.mjs";

const pipeline = 'import { createPipeline } from "@svc/kernel";';
const TRUST = "true, false, a hop count, addresses or a function";
const ROUTING = "`expressRouting()` of `@svc/kernel/fastify`";
const routingImports = 'import { expressRouting } from "@svc/kernel/fastify";';

export default {
  ERR_SVC_KERNEL_TRUST_PROXY: {
    raiser:
      "An @svc Fastify plugin (`rateLimit` of `@svc/ratelimit/fastify`, `errorPlugin` of `@svc/errors/fastify`, every `./fastify` entry) registered on an instance whose own `trustProxy` server option is a hop count; or `compileTrust()` of `@svc/kernel` given a value it does not take",
    when: "registration",
    refused:
      "Fastify's own `trustProxy` server option, `Fastify({ trustProxy: 1 })`: a hop count, which Fastify 5.12.1 and later read as trusting no peer (`request.ip` is then the proxy) while Express and the @svc packages read it as trusting the nearest hops. Left as it is, the packages and Fastify would name different clients",
    accepted: "pass Fastify({ trustProxy: fastifyTrustProxy(1) }) of @svc/kernel/fastify",
    fix: 'Give Fastify the function `fastifyTrustProxy(1)` of `@svc/kernel/fastify` instead of the bare count: `Fastify({ trustProxy: fastifyTrustProxy(1) })` means the same hops on every framework and every Fastify release. Addresses and ranges (`"loopback, 10.0.0.0/8"`), `true` and `false` are taken as they are.',
    wrong: `import Fastify from "fastify";
import { rateLimit } from "@svc/ratelimit/fastify";

// TRUST_PROXY=1: the server sits behind one proxy.
const app = Fastify({ trustProxy: JSON.parse(process.env.TRUST_PROXY ?? "1") });
await app.register(rateLimit, { limit: 100, windowMs: 60_000 });
await app.ready();
`,
    right: `import Fastify from "fastify";
import { fastifyTrustProxy } from "@svc/kernel/fastify";
import { rateLimit } from "@svc/ratelimit/fastify";

const app = Fastify({ trustProxy: fastifyTrustProxy(1) });
await app.register(rateLimit, { limit: 100, windowMs: 60_000 });
await app.ready();
await app.close();
`,
  },
  ERR_SVC_KERNEL_OPTIONS: option({
    raiser: "`createPipeline()` of `@svc/kernel`, or `expressRouting()` of `@svc/kernel/fastify`",
    name: "options",
    refused: "its options argument is not an object",
    accepted: "an object of steps",
    imports: pipeline,
    call: (v) =>
      `// The steps read from a configuration object that may be missing.\nconst steps = ${v};\nexport const svc = createPipeline(steps);`,
    wrong: 'JSON.parse("null") as {}',
    right: "{}",
    fix: "Pass an object of steps (`representations`, `coding`, `validators`, `versioning`), or nothing at all.",
  }),
  ERR_SVC_KERNEL_REQUEST_PROPERTIES: option({
    raiser: "`expressAdapter()` of `@svc/kernel/express`",
    name: "requestProperties",
    accepted: "true or false",
    imports: `${pipeline}\nimport { expressAdapter } from "@svc/kernel/express";`,
    call: (v) =>
      `// The handlers written against 0.1 still read req.apiVersion.\nexport const svc = expressAdapter(createPipeline(), { requestProperties: ${v} });`,
    wrong: "JSON.parse('\"true\"')",
    right: "true",
    fix: "Give `requestProperties` `true` (also write `req.apiVersion` and `req.apiVersionPrefix`, for handlers written against 0.1 and 0.2) or `false`, the default; handlers read the version with `requestState(req).version` of `@svc/kernel`.",
  }),
  ERR_SVC_KERNEL_UNKNOWN_OPTION: {
    raiser:
      "`createPipeline()` of `@svc/kernel`, or `expressRouting()` of `@svc/kernel/fastify` (its options are `notFound` and `methodNotAllowed`)",
    when: "construction",
    refused:
      "its options name a step it does not know, a misspelling the compiler does not catch when the object is not a literal; the message names the nearest step it knows",
    accepted: "an object with the fields versioning, representations, coding, validators",
    fix: "Spell the step as the message suggests: `versioning`, `representations`, `coding` or `validators`.",
    wrong: `import { createPipeline } from "@svc/kernel";
import { compression, representations } from "@svc/negotiate";

const steps = { coding: compression(), representation: representations() };
export const svc = createPipeline(steps);
`,
    right: `import { createPipeline } from "@svc/kernel";
import { compression, representations } from "@svc/negotiate";

const steps = { coding: compression(), representations: representations() };
export const svc = createPipeline(steps);
`,
  },
  ERR_SVC_KERNEL_METHODS: option({
    raiser:
      "`handle()` of a pipeline's adapter (`@svc/kernel/express`, `@svc/kernel/fastify`), or the pipeline's first request of a route",
    name: "methods",
    refused:
      "the route's `methods` is not a list of methods (tokens): a string where a list belongs would be read a character at a time",
    accepted: "a list of methods (tokens, RFC 9110 §9.1)",
    imports:
      'import { createPipeline } from "@svc/kernel";\nimport { expressAdapter } from "@svc/kernel/express";',
    call: (v) =>
      `const svc = expressAdapter(createPipeline());\nexport const handler = svc.handle(() => ({ ok: true }), { methods: ${v} });`,
    wrong: '"POST" as never',
    right: '["POST"]',
  }),
  ERR_SVC_KERNEL_CONSUMES: option({
    raiser:
      "`handle()` of a pipeline's adapter (`@svc/kernel/express`, `@svc/kernel/fastify`), or the pipeline's first request of a route",
    name: "consumes",
    refused:
      "the route's `consumes` is not a list of media types `type/subtype`: a range (`application/*`) or a type with parameters would match no request's `Content-Type`",
    accepted: "a list of media types type/subtype (RFC 9110 §8.3.1)",
    imports:
      'import { createPipeline } from "@svc/kernel";\nimport { expressAdapter } from "@svc/kernel/express";',
    call: (v) =>
      `const svc = expressAdapter(createPipeline());\nexport const handler = svc.handle(() => ({ ok: true }), { consumes: ${v} });`,
    wrong: '["application/*"]',
    right: '["application/json"]',
  }),
  ERR_SVC_KERNEL_CONTENT_CODINGS: option({
    raiser:
      "`handle()` of a pipeline's adapter (`@svc/kernel/express`, `@svc/kernel/fastify`), or the pipeline's first request of a route",
    name: "contentCodings",
    refused: "the route's `contentCodings` is not a list of content codings (tokens)",
    accepted: "a list of content codings (tokens, RFC 9110 §8.4.1)",
    imports:
      'import { createPipeline } from "@svc/kernel";\nimport { expressAdapter } from "@svc/kernel/express";',
    call: (v) =>
      `const svc = expressAdapter(createPipeline());\nexport const handler = svc.handle(() => ({ ok: true }), { contentCodings: ${v} });`,
    wrong: '"gzip" as never',
    right: '["gzip"]',
  }),
  ERR_SVC_KERNEL_REPRESENTATIONS: option({
    raiser: "`createPipeline()` of `@svc/kernel`",
    name: "representations",
    refused:
      "its step `representations` is not a step: an object with the methods `preflight`, `represent` and `variants`",
    accepted: "a step with preflight, represent, variants",
    imports:
      'import { createPipeline } from "@svc/kernel";\nimport { representations } from "@svc/negotiate";',
    call: (v) => `export const svc = createPipeline({ representations: ${v} });`,
    wrong: "representations as never",
    right: "representations()",
    fix: "Give the step a factory makes (`representations()` of `@svc/negotiate`), not the factory itself.",
  }),
  ERR_SVC_KERNEL_CODING: option({
    raiser: "`createPipeline()` of `@svc/kernel`",
    name: "coding",
    refused: "its step `coding` is not a step: an object with the methods `preflight`, `choose` and `encode`",
    accepted: "a step with preflight, choose, encode",
    imports: 'import { createPipeline } from "@svc/kernel";\nimport { compression } from "@svc/negotiate";',
    call: (v) => `export const svc = createPipeline({ coding: ${v} });`,
    wrong: "compression as never",
    right: "compression()",
    fix: "Give the step a factory makes (`compression()` of `@svc/negotiate`), not the factory itself.",
  }),
  ERR_SVC_KERNEL_HANDLER: option({
    raiser:
      "`chain()` and `asyncRoute()` of `@svc/kernel/express`, `withConnection()` of `@svc/kernel/fetch`",
    name: "handlers",
    refused:
      "a handler given to it is missing or not a middleware function `(req, res, next)` (an error handler, with four parameters, goes after the chain)",
    accepted: "a middleware function (req, res, next) => ...",
    imports:
      'import type { RequestHandler } from "express";\nimport { chain } from "@svc/kernel/express";\n\nconst handlers: Record<string, RequestHandler> = {\n  audit: (_req, _res, next) => next(),\n};',
    call: (v) => `export const middleware = chain(${v});`,
    wrong: "handlers.audi!",
    right: "handlers.audit!",
    fix: "Give `chain()` middleware functions `(req, res, next)`; register an error handler `(err, req, res, next)` after the chain with `app.use()`.",
  }),
  ERR_SVC_KERNEL_CONNECTION_OF: option({
    raiser: "`withConnection()` of `@svc/kernel/fetch`",
    name: "connectionOf",
    refused: "its second argument, which tells the gates the client's address, is not a function",
    accepted: "a function (request) => { address } | undefined",
    imports:
      'import { withConnection } from "@svc/kernel/fetch";\n\nconst app = { fetch: (_request: Request) => new Response("ok") };',
    call: (v) => `export default { fetch: withConnection(app.fetch, ${v}) };`,
    wrong: '{ address: "203.0.113.7" } as never',
    right: '(request) => ({ address: request.headers.get("cf-connecting-ip") ?? undefined })',
    fix: "Pass a function of the request that returns `{ address }` (on Cloudflare, from `CF-Connecting-IP`), or `undefined` when it cannot tell.",
  }),
  ERR_SVC_KERNEL_STATUS: option({
    raiser: "`reply()` of `@svc/kernel` (what a pipeline handler returns)",
    when: "call",
    name: "status",
    refused:
      "the status given to the response is not a final status: a 1xx would leave the client waiting for a response that never comes",
    accepted: "a final status code, a whole number from 200 to 599",
    imports: 'import { reply } from "@svc/kernel";',
    call: (v) => `export const answer = reply({ id: 7 }, { status: ${v} });`,
    wrong: "102",
    right: "201",
    fix: "Give a status from 200 to 599; an interim response (1xx) is Node's to send (`res.writeProcessing()`), not a handler's result.",
  }),
  ERR_SVC_KERNEL_CONTENT_TYPE: option({
    raiser: "`reply.bytes()` of `@svc/kernel`",
    when: "call",
    name: "contentType",
    refused: "the content given as bytes has no media type",
    accepted: "a media type, such as image/png",
    imports: 'import { reply } from "@svc/kernel";\n\nconst png = new Uint8Array([137, 80, 78, 71]);',
    call: (v) => `export const answer = reply.bytes(png, ${v});`,
    wrong: '""',
    right: '"image/png"',
    fix: 'Name the bytes\' media type (`"image/png"`, `"application/pdf"`): it is the `Content-Type` written, and no negotiation picks one for bytes.',
  }),
  ERR_SVC_KERNEL_FORWARDED_HEADERS: option({
    raiser: "`requestFacts()` of `@svc/kernel`",
    when: "request",
    name: "forwardedHeaders",
    refused: "the family of forwarded fields to read is neither of the two the proxies set",
    accepted: '"x-forwarded" (X-Forwarded-For, -Proto, -Host, -Prefix) or "forwarded" (RFC 7239 Forwarded)',
    imports:
      'import { compileTrust, requestFacts, type ForwardedHeaders } from "@svc/kernel";\n\nconst req = { method: "GET", url: "/", headers: { host: "api.example.com", forwarded: "for=203.0.113.7" }, socket: { remoteAddress: "127.0.0.1" } };',
    call: (v) =>
      `const family = ${v};\nexport const facts = requestFacts(req as never, compileTrust("loopback"), family);`,
    wrong: '"x-forwarded-for" as ForwardedHeaders',
    right: '"forwarded" as ForwardedHeaders',
    fix: 'Name the family your proxy sets: `"x-forwarded"` (the default) or `"forwarded"`.',
  }),
  ERR_SVC_KERNEL_NOT_FOUND: option({
    raiser: ROUTING,
    name: "notFound",
    refused:
      "the 404 of a request whose `:name` parameter matched an empty segment is not made by a function",
    accepted: "a function (target) => Error",
    imports: `${routingImports}\nimport { notFoundError } from "@svc/errors";`,
    call: (v) =>
      `// The 404 of GET /orders/ (an empty :id), worded as the error record words every 404.\nexport const routing = expressRouting({ notFound: ${v} });`,
    wrong: 'notFoundError({ method: "GET", url: "/" }) as never',
    right: "notFoundError",
    fix: "Pass the function itself (`notFoundError` of `@svc/errors`, not the error it returns): `expressRouting` calls it with each such request's method and target.",
  }),
  ERR_SVC_KERNEL_METHOD_NOT_ALLOWED: option({
    raiser: ROUTING,
    name: "methodNotAllowed",
    refused: "the 405 of a method a path lacks is not made by a function",
    accepted: "a function (target, allowed) => Error",
    imports: `${routingImports}\nimport { methodNotAllowedError } from "@svc/errors";`,
    call: (v) =>
      `// The 405 of DELETE /orders, worded as the error record words every 405.\nexport const routing = expressRouting({ methodNotAllowed: ${v} });`,
    wrong: 'methodNotAllowedError({ method: "DELETE", url: "/orders" }, ["GET", "HEAD"]) as never',
    right: "methodNotAllowedError",
    fix: "Pass the function itself (`methodNotAllowedError` of `@svc/errors`, not the error it returns): `expressRouting` calls it with each such request's method and target, and the path's `Allow` list.",
  }),
  ERR_SVC_KERNEL_ALLOW: option({
    raiser: "`allowedMethods()` of what `expressRouting()` of `@svc/kernel/fastify` returns",
    when: "call",
    name: "allow",
    refused: "a path's `Allow` list is not a non-empty array of method names",
    accepted: "a non-empty array of method names (RFC 9110 §9.1 tokens), CONNECT aside",
    imports: `${routingImports}\n\nconst routing = expressRouting();`,
    call: (v) =>
      `// The methods of /orders, as the configuration lists them.\nexport const route = routing.allowedMethods("/orders", ${v});`,
    wrong: '"GET, HEAD, POST".split(",")',
    right: '"GET, HEAD, POST".split(", ")',
    fix: 'List each method once, as a token without spaces (`["GET", "HEAD", "POST"]`); `OPTIONS` is added when missing, since the route answers it.',
  }),
  ERR_SVC_KERNEL_FIELDS: option({
    raiser: "`allowedMethods()` of what `expressRouting()` of `@svc/kernel/fastify` returns",
    when: "call",
    name: "fields",
    refused: "the fields of a path's OPTIONS answer are not an object of field names to string values",
    accepted: "an object of field names to string values",
    imports: `${routingImports}\n\nconst routing = expressRouting();`,
    call: (v) =>
      `// OPTIONS /orders tells what POST takes (RFC 9110 §10.2.1 lists Allow; Accept-Post beside it).\nexport const route = routing.allowedMethods("/orders", ["GET", "HEAD", "POST"], { fields: ${v} });`,
    wrong: '{ "Accept-Post": ["application/json", "application/xml"] } as never',
    right: '{ "Accept-Post": "application/json, application/xml" }',
    fix: "Give each field its value as one string, a list joined with `, `.",
  }),
  ERR_SVC_KERNEL_ROUTE_ORDER: {
    raiser: `The plugin of ${ROUTING}, for a route added after the 405 answers of its path`,
    when: "registration",
    refused:
      "a route of a path added after the plugin added that path's 405 and OPTIONS route: those are added in the context of the path's first route once it has loaded what it registered so far, so a route added after an awaited `register` comes too late, and its method would be one the path refuses",
    accepted: "add every route of a path before the plugin that adds them awaits a register",
    fix: "Add a path's routes together, before the context awaits a `register`; or give the path's methods first, with `app.route(routing.allowedMethods(path, methods))`, in the context whose hooks its 405s should run behind.",
    wrong: `${routingImports}
import Fastify from "fastify";

const routing = expressRouting();
const app = Fastify({ ...routing.serverOptions });
await app.register(routing.plugin);
app.register(async (orders) => {
  orders.get("/orders", async () => []);
  await orders.register(async () => {});
  orders.post("/orders", async () => ({}));
});
await app.ready();
`,
    right: `${routingImports}
import Fastify from "fastify";

const routing = expressRouting();
const app = Fastify({ ...routing.serverOptions });
await app.register(routing.plugin);
app.register(async (orders) => {
  orders.get("/orders", async () => []);
  orders.post("/orders", async () => ({}));
  await orders.register(async () => {});
});
await app.ready();
await app.close();
`,
  },
};

export { TRUST };
