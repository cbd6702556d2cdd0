import { option } from "./helpers.mjs";

const HANDLER =
  "`errorHandler()` of `@svc/errors/express` (the same options in `errorPlugin` of `./fastify`, `./node` and `./fetch`)";
const express = 'import { errorHandler } from "@svc/errors/express";';
/** An option of `errorHandler()`. */
const eh = ({ name, ...rest }) =>
  option({
    raiser: HANDLER,
    name,
    imports: express,
    call: (v) => `export const handler = errorHandler({ ${name}: ${v} });`,
    ...rest,
  });
const httpError = (rest) =>
  option({
    raiser: "`new HttpError()` of `@svc/errors` (and its shorthands, `HttpError.notFound()` ...)",
    when: "call",
    imports: 'import { HttpError } from "@svc/errors";',
    ...rest,
  });
const client = 'import { clientErrorHandler } from "@svc/errors/node";';

export default {
  ERR_SVC_ERRORS_OPTIONS: option({
    raiser: "`errorHandler()` of `@svc/errors/express` and `clientErrorHandler()` of `@svc/errors/node`",
    name: "options",
    refused: "its options argument is not an object",
    accepted: "an object with the fields",
    imports: `${express}\n\n// The options read from a configuration entry that is a string.\nconst config = JSON.parse('{ "errors": "problem" }');`,
    call: (v) => `export const handler = errorHandler(${v});`,
    wrong: "config.errors",
    right: "{ defaultFormat: config.errors }",
    fix: "Pass an object of options, or nothing.",
  }),
  ERR_SVC_ERRORS_UNKNOWN_OPTION: {
    raiser: HANDLER,
    when: "construction",
    refused:
      "its options name one it does not know, a misspelling the compiler does not catch when the object is not a literal; the message names the nearest option it knows",
    accepted: 'did you mean "logger"?',
    fix: "Spell the option as the message suggests.",
    wrong: `${express}\n\nconst options = { defaultFormat: "problem" as const, loger: console };\nexport const handler = errorHandler(options);\n`,
    right: `${express}\n\nconst options = { defaultFormat: "problem" as const, logger: console };\nexport const handler = errorHandler(options);\n`,
  },
  ERR_SVC_ERRORS_LOGGER: eh({
    name: "logger",
    accepted: "an object with an error(obj, msg) method",
    wrong: "console.error as never",
    right: "console",
    fix: "Give `logger` an object with `error(obj, msg)`: a pino logger, or `console`.",
  }),
  ERR_SVC_ERRORS_CORRELATION_ID: eh({
    name: "correlationId",
    accepted: "a function (req, res) => string | undefined",
    wrong: "JSON.parse('\"x-request-id\"')",
    right:
      '(req) => {\n    const id = req.headers["x-request-id"];\n    return typeof id === "string" ? id : undefined;\n  }',
    fix: "Give `correlationId` a function of the request that answers its id (from a header, or your tracing), not the header's name.",
  }),
  ERR_SVC_ERRORS_PROBLEM_TYPE_BASE: eh({
    name: "problemTypeBase",
    accepted: "an absolute URI",
    wrong: '"/problems/"',
    right: '"https://api.example.com/problems/"',
    fix: "Give `problemTypeBase` an absolute URI (RFC 9457 §3.1.1: `type` is a URI reference that a client resolves): `https://api.example.com/problems/`.",
  }),
  ERR_SVC_ERRORS_NOW: eh({
    name: "now",
    accepted: "a function () => Date",
    wrong: "new Date() as never",
    right: "() => new Date()",
  }),
  ERR_SVC_ERRORS_DEFAULT_FORMAT: eh({
    name: "defaultFormat",
    accepted: '"record" or "problem"',
    wrong: "JSON.parse('\"problem+json\"')",
    right: '"problem"',
  }),
  ERR_SVC_ERRORS_MAP_ERROR: eh({
    name: "mapError",
    accepted: "a function (err) => HttpError | undefined, or a non-empty list of them",
    wrong: "[]",
    right: "[(err) => (err instanceof RangeError ? HttpError.badRequest(err.message) : undefined)]",
    imports: `${express}\nimport { HttpError } from "@svc/errors";`,
  }),
  ERR_SVC_ERRORS_RENDERERS: eh({
    name: "renderers",
    accepted: "a renderer { name, render(error, request) }, or a list of them",
    wrong: "JSON.parse('[\"text/csv\"]')",
    right:
      '{ name: "text/plain", render: (error) => ({ contentType: "text/plain; charset=utf-8", body: error.message }) }',
  }),
  ERR_SVC_ERRORS_WWW_AUTHENTICATE: eh({
    name: "wwwAuthenticate",
    accepted: "one or more challenges (RFC 9110 §11.6.1",
    wrong: '"realm=api"',
    right: "'Bearer realm=\"api\"'",
    fix: 'Give a challenge as RFC 9110 §11.6.1 writes one: the scheme, then its parameters, `Bearer realm="api"`.',
  }),
  ERR_SVC_ERRORS_UNREAD_BODY_MAX_BYTES: eh({
    name: "unreadBody",
    accepted: "a whole number of bytes from 0 to 16777216",
    wrong: "{ maxBytes: -1 }",
    right: "{ maxBytes: 65_536 }",
    refused:
      "`unreadBody.maxBytes`, how much of a request body nobody read is drained before the connection is kept, is not a whole number of bytes within bounds",
    fix: "Give `unreadBody.maxBytes` a whole number of bytes from 0 (close the connection rather than drain) to 16777216.",
  }),
  ERR_SVC_ERRORS_UNREAD_BODY_TIMEOUT_MS: eh({
    name: "unreadBody",
    accepted: "a number of milliseconds above 0 and at most 2147483647",
    wrong: "{ timeoutMs: 0 }",
    right: "{ timeoutMs: 5_000 }",
    refused:
      "`unreadBody.timeoutMs`, how long a body nobody read is drained before the connection is closed, is not a delay a timer can keep",
    fix: "Give `unreadBody.timeoutMs` a number of milliseconds above 0 and at most 2147483647 (the longest `setTimeout`).",
  }),
  ERR_SVC_ERRORS_UNREAD_BODY: eh({
    name: "unreadBody",
    accepted: "an object with the fields maxBytes, timeoutMs",
    wrong: 'JSON.parse("65536")',
    right: "{ maxBytes: 65_536 }",
    refused: "`unreadBody` is not an object `{ maxBytes, timeoutMs }`",
  }),
  ERR_SVC_ERRORS_HEADERS: option({
    raiser: "`clientErrorHandler()` of `@svc/errors/node`",
    name: "headers",
    accepted: "a function (socket) => [name, value] pairs",
    imports: client,
    call: (v) => `export const onClientError = clientErrorHandler({ headers: ${v} });`,
    wrong: '[["Connection", "close"]] as never',
    right: '() => [["Cache-Control", "no-store"]]',
  }),
  ERR_SVC_ERRORS_ALLOWED: option({
    raiser:
      "`methodNotAllowed()` and `allowedMethods()` of `@svc/errors/express` (and `allowedList()` of `@svc/errors`)",
    name: "allowed",
    accepted: "a non-empty array of method names (RFC 9110 §9.1 tokens)",
    imports: 'import { methodNotAllowed } from "@svc/errors/express";',
    call: (v) => `export const handler = methodNotAllowed(${v});`,
    wrong: '["GET, HEAD"]',
    right: '["GET", "HEAD"]',
    fix: 'List the methods the route allows, one name per entry (`["GET", "HEAD"]`): they are written into `Allow`.',
  }),
  ERR_SVC_ERRORS_APP: option({
    raiser: "`expressServerOptions()` of `@svc/errors/express`",
    name: "app",
    refused:
      "it was given something other than an Express application (a function with `request` and `response` prototypes)",
    accepted: "app must be an Express application",
    imports:
      'import express from "express";\nimport { expressServerOptions } from "@svc/errors/express";\n\nconst app = express();\nconst router = express.Router();',
    call: (v) => `export const serverOptions = expressServerOptions(${v} as typeof app);`,
    wrong: "router",
    right: "app",
    fix: "Pass the application (`express()`), not a router or the server.",
  }),
  ERR_SVC_ERRORS_STATUS: httpError({
    name: "status",
    accepted: "an integer from 400 to 599",
    call: (v) => `export const error = new HttpError(${v}, "An order with this reference exists");`,
    wrong: "201",
    right: "409",
    refused:
      "the status is no error status: an error record with a 2xx or 3xx status (RFC 9110 §15.5, §15.6) would tell the client that the request succeeded",
    fix: "Give an error status, 400 to 599; answer a success with the handler's result, not an `HttpError`.",
  }),
  ERR_SVC_ERRORS_CODE: httpError({
    name: "code",
    accepted: "a string of Unicode scalar values",
    call: (v) => `export const error = new HttpError(409, "Already exists", { code: ${v} });`,
    wrong: '"duplicate_\\uD800"',
    right: '"duplicate"',
    refused:
      "the `code` holds a lone surrogate (or is no string): it becomes the problem `type`'s last segment, which RFC 9457 §3.1.1 makes a URI",
    fix: "Give `code` a well-formed string: snake case, as the packages' own codes are (`duplicate`).",
  }),
  ERR_SVC_ERRORS_ERRORS: httpError({
    name: "errors",
    accepted: "must be a string",
    call: (v) =>
      `export const error = HttpError.badRequest("Invalid order", { errors: [{ field: "quantity", message: ${v} }] });`,
    wrong: 'JSON.parse("null")',
    right: '"must be at least 1"',
    refused: "an entry of `errors` is not a `{ field, message }` of two strings",
    fix: "Give `errors` an array of `{ field, message }` whose members are both strings.",
  }),
  ERR_SVC_ERRORS_EXTENSIONS: httpError({
    name: "extensions",
    accepted: "member names start with a letter",
    call: (v) => `export const error = HttpError.badRequest("Over budget", { extensions: { ${v}: 120 } });`,
    wrong: '"retry-after"',
    right: "retryAfter",
    refused:
      "a member name of `extensions` is not one a record and its XML form can carry (a letter, then letters, digits and `_`; not `xml...`; not a member of the record itself), or there are more than 100",
    fix: "Name extension members in camelCase or snake case (`retryAfter`), none of the record's own members (`status`, `message`, ...).",
  }),
};
