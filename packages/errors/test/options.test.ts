import { checkBooleanOption, checkOptionNames } from "@svc/kernel/internal";
import { describeOptions, type OptionCase, refusal } from "@svc/test-utils";
import { describe, expect, it } from "vitest";
import { errorHandler, expressServerOptions, methodNotAllowed } from "../src/express.js";
import { HttpError } from "../src/index.js";
import { clientErrorHandler } from "../src/node.js";

const rows: OptionCase[] = [
  [
    "new HttpError(status)",
    () => new HttpError(200),
    "ERR_SVC_ERRORS_STATUS",
    /HttpError status must be an integer from 400 to 599, got 200/,
    () => new HttpError(599),
  ],
  [
    "new HttpError(status) (not an integer)",
    () => new HttpError("404" as never),
    "ERR_SVC_ERRORS_STATUS",
    /HttpError status must be an integer from 400 to 599, got "404"/,
    () => new HttpError(400),
  ],
  [
    "new HttpError(status, message, { errors }) (field null)",
    () => new HttpError(400, "Invalid", { errors: [{ field: null as never, message: "is required" }] }),
    "ERR_SVC_ERRORS_ERRORS",
    /HttpError options\.errors\[0\]\.field must be a string, got null/,
    () => new HttpError(400, "Invalid", { errors: [{ field: "name", message: "is required" }] }),
  ],
  [
    "new HttpError(status, message, { errors }) (not an array)",
    () => new HttpError(400, "Invalid", { errors: "name is required" as never }),
    "ERR_SVC_ERRORS_ERRORS",
    /HttpError options\.errors must be an array of \{ field, message \}, got "name is required"/,
    () => new HttpError(400, "Invalid", { errors: [] }),
  ],
  [
    "new HttpError(status, message, { code }) (lone surrogate)",
    () => new HttpError(409, "Taken", { code: "taken\uD800" }),
    "ERR_SVC_ERRORS_CODE",
    /HttpError code must be a string of Unicode scalar values .*, got "taken\\ud800"/,
    () => new HttpError(409, "Taken", { code: "taken" }),
  ],
  [
    "errorHandler(options)",
    () => errorHandler("x" as never),
    "ERR_SVC_ERRORS_OPTIONS",
    /errorHandler: options must be an object with the fields logger, correlationId, problemTypeBase, now, wwwAuthenticate, unreadBody, defaultFormat, mapError, renderers, got "x"/,
    () => errorHandler(),
  ],
  [
    "errorHandler: unknown name",
    () => errorHandler({ loger: console } as never),
    "ERR_SVC_ERRORS_UNKNOWN_OPTION",
    /errorHandler: unknown option "loger" \(did you mean "logger"\?\); options must be an object with the fields logger, /,
    () => errorHandler({}),
  ],
  [
    "errorHandler: logger",
    () => errorHandler({ logger: { info() {} } as never }),
    "ERR_SVC_ERRORS_LOGGER",
    /errorHandler: logger must be an object with an error\(obj, msg\) method, got an object/,
    () => errorHandler({ logger: { error() {} } }),
  ],
  [
    "errorHandler: correlationId",
    () => errorHandler({ correlationId: "x" as never }),
    "ERR_SVC_ERRORS_CORRELATION_ID",
    /errorHandler: correlationId must be a function \(req, res\) => string \| undefined, got "x"/,
    () => errorHandler({ correlationId: () => "c" }),
  ],
  [
    "errorHandler: problemTypeBase",
    () => errorHandler({ problemTypeBase: "/problems/" }),
    "ERR_SVC_ERRORS_PROBLEM_TYPE_BASE",
    /errorHandler: problemTypeBase must be an absolute URI, got "\/problems\/"/,
    () => errorHandler({ problemTypeBase: "https://example.com/problems/" }),
  ],
  [
    "errorHandler: problemTypeBase (not a string)",
    () => errorHandler({ problemTypeBase: 7 as never }),
    "ERR_SVC_ERRORS_PROBLEM_TYPE_BASE",
    /must be an absolute URI, got 7/,
    () => errorHandler({ problemTypeBase: "urn:problems:" }),
  ],
  [
    "errorHandler: defaultFormat",
    () => errorHandler({ defaultFormat: "problem+json" as never }),
    "ERR_SVC_ERRORS_DEFAULT_FORMAT",
    /errorHandler: defaultFormat must be "record" or "problem", got "problem\+json"/,
    () => errorHandler({ defaultFormat: "problem" }),
  ],
  [
    "errorHandler: misspelt defaultFormat",
    () => errorHandler({ defaultFromat: "problem" } as never),
    "ERR_SVC_ERRORS_UNKNOWN_OPTION",
    /errorHandler: unknown option "defaultFromat" \(did you mean "defaultFormat"\?\)/,
    () => errorHandler({ defaultFormat: "record" }),
  ],
  [
    "errorHandler: mapError (not a function)",
    () => errorHandler({ mapError: "zod" as never }),
    "ERR_SVC_ERRORS_MAP_ERROR",
    /errorHandler: mapError must be a function \(err\) => HttpError \| undefined, or a non-empty list of them, got "zod"/,
    () => errorHandler({ mapError: () => undefined }),
  ],
  [
    "errorHandler: mapError (an empty list)",
    () => errorHandler({ mapError: [] }),
    "ERR_SVC_ERRORS_MAP_ERROR",
    /errorHandler: mapError must be a function .*, got \[\]/,
    () => errorHandler({ mapError: [() => undefined, () => undefined] }),
  ],
  [
    "errorHandler: mapError (a list with a non-function)",
    () => errorHandler({ mapError: [() => undefined, null as never] }),
    "ERR_SVC_ERRORS_MAP_ERROR",
    /errorHandler: mapError must be a function .*, got \[a function, null\]/,
    () => errorHandler({ mapError: [() => undefined] }),
  ],
  [
    "errorHandler: renderers (a function)",
    () => errorHandler({ renderers: (() => undefined) as never }),
    "ERR_SVC_ERRORS_RENDERERS",
    /errorHandler: renderers must be a renderer \{ name, render\(error, request\) \}, or a list of them, got a function/,
    () => errorHandler({ renderers: [{ name: "csv", render: () => undefined }] }),
  ],
  [
    "errorHandler: misspelt mapError",
    () => errorHandler({ mapErrors: () => undefined } as never),
    "ERR_SVC_ERRORS_UNKNOWN_OPTION",
    /errorHandler: unknown option "mapErrors" \(did you mean "mapError"\?\)/,
    () => errorHandler({ mapError: () => undefined }),
  ],
  [
    "errorHandler: now",
    () => errorHandler({ now: new Date() as never }),
    "ERR_SVC_ERRORS_NOW",
    /errorHandler: now must be a function \(\) => Date, got /,
    () => errorHandler({ now: () => new Date(0) }),
  ],
  [
    "errorHandler: unreadBody.maxBytes",
    () => errorHandler({ unreadBody: { maxBytes: -1 } }),
    "ERR_SVC_ERRORS_UNREAD_BODY_MAX_BYTES",
    /errorHandler: unreadBody\.maxBytes must be a whole number of bytes from 0 to 16777216, got -1/,
    () => errorHandler({ unreadBody: { maxBytes: 0 } }),
  ],
  [
    "errorHandler: unreadBody.timeoutMs",
    () => errorHandler({ unreadBody: { timeoutMs: Number.POSITIVE_INFINITY } }),
    "ERR_SVC_ERRORS_UNREAD_BODY_TIMEOUT_MS",
    /errorHandler: unreadBody\.timeoutMs must be a number of milliseconds above 0/,
    () => errorHandler({ unreadBody: { timeoutMs: 250 } }),
  ],
  [
    'errorHandler: wwwAuthenticate "" (no challenge)',
    () => errorHandler({ wwwAuthenticate: "" }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: 'Bearer realm="api", Basic realm="api", charset="UTF-8"' }),
  ],
  [
    "errorHandler: wwwAuthenticate Bearer realm=@x (a value that is no token)",
    () => errorHandler({ wwwAuthenticate: "Bearer realm=@x" }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: "Negotiate" }),
  ],
  [
    'errorHandler: wwwAuthenticate Bearer realm="api (unterminated quoted-string)',
    () => errorHandler({ wwwAuthenticate: 'Bearer realm="api' }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: "Negotiate YIIBhgYGKwYBBQUCoIIBejCCAXag==" }),
  ],
  [
    "errorHandler: wwwAuthenticate CR LF in the value",
    () => errorHandler({ wwwAuthenticate: 'Bearer realm="a"\r\nSet-Cookie: a=b' }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: 'Bearer realm = "a\\"b", scope="x y"' }),
  ],
  [
    "errorHandler: wwwAuthenticate realm=api (a parameter without a scheme)",
    () => errorHandler({ wwwAuthenticate: "realm=api" }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () =>
      errorHandler({ wwwAuthenticate: 'Newauth realm=apps, type=1, title="Login", Basic realm="simple"' }),
  ],
  [
    "errorHandler: wwwAuthenticate Basic abc==, realm=x (a parameter after token68)",
    () => errorHandler({ wwwAuthenticate: "Basic abc==, realm=x" }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: "Digest realm=a, , nonce=b" }),
  ],
  [
    "errorHandler: wwwAuthenticate , , (empty list)",
    () => errorHandler({ wwwAuthenticate: ", ," }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: "Basic abc==" }),
  ],
  [
    'errorHandler: wwwAuthenticate Bearer  realm="a" x (text after the value)',
    () => errorHandler({ wwwAuthenticate: 'Bearer  realm="a" x' }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: "Bearer" }),
  ],
  [
    "errorHandler: wwwAuthenticate Bearer,realm=a (a parameter without a challenge)",
    () => errorHandler({ wwwAuthenticate: "Bearer,realm=a" }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: 'Bearer realm="api", Basic realm="api", charset="UTF-8"' }),
  ],
  [
    "errorHandler: wwwAuthenticate Bearer realm=a b (a space in a token)",
    () => errorHandler({ wwwAuthenticate: "Bearer realm=a b" }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: "Negotiate" }),
  ],
  [
    "errorHandler: wwwAuthenticate Béarer (not a token)",
    () => errorHandler({ wwwAuthenticate: "B\u00e9arer" }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: "Negotiate YIIBhgYGKwYBBQUCoIIBejCCAXag==" }),
  ],
  [
    "errorHandler: wwwAuthenticate 42",
    () => errorHandler({ wwwAuthenticate: 42 as never }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () => errorHandler({ wwwAuthenticate: 'Bearer realm = "a\\"b", scope="x y"' }),
  ],
  [
    "errorHandler: wwwAuthenticate an array",
    () => errorHandler({ wwwAuthenticate: ['Bearer realm="a"'] as never }),
    "ERR_SVC_ERRORS_WWW_AUTHENTICATE",
    /errorHandler: wwwAuthenticate must be one or more challenges \(RFC 9110 §11\.6\.1/,
    () =>
      errorHandler({ wwwAuthenticate: 'Newauth realm=apps, type=1, title="Login", Basic realm="simple"' }),
  ],
  [
    "clientErrorHandler(options)",
    () => clientErrorHandler(null as never),
    "ERR_SVC_ERRORS_OPTIONS",
    /clientErrorHandler: options must be an object with the fields headers, logger, now, got null/,
    () => clientErrorHandler(),
  ],
  [
    "clientErrorHandler: unknown name",
    () => clientErrorHandler({ header: () => [] } as never),
    "ERR_SVC_ERRORS_UNKNOWN_OPTION",
    /unknown option "header" \(did you mean "headers"\?\)/,
    () => clientErrorHandler({}),
  ],
  [
    "clientErrorHandler: headers",
    () => clientErrorHandler({ headers: [["X", "1"]] as never }),
    "ERR_SVC_ERRORS_HEADERS",
    /clientErrorHandler: headers must be a function \(socket\) => \[name, value\] pairs, got \[\["X", "1"\]\]/,
    () => clientErrorHandler({ headers: () => [] }),
  ],
  [
    "clientErrorHandler: logger",
    () => clientErrorHandler({ logger: console.error as never }),
    "ERR_SVC_ERRORS_LOGGER",
    /clientErrorHandler: logger must be an object with an error\(obj, msg\) method/,
    () => clientErrorHandler({ logger: { error() {} } }),
  ],
  [
    "clientErrorHandler: now",
    () => clientErrorHandler({ now: 0 as never }),
    "ERR_SVC_ERRORS_NOW",
    /clientErrorHandler: now must be a function \(\) => Date, got 0/,
    () => clientErrorHandler({ now: () => new Date(0) }),
  ],
  [
    "methodNotAllowed: allowed",
    () => methodNotAllowed("GET" as never),
    "ERR_SVC_ERRORS_ALLOWED",
    /methodNotAllowed: allowed must be a non-empty array of method names \(RFC 9110 §9.1 tokens\), got "GET"/,
    () => methodNotAllowed(["GET"]),
  ],
  [
    "methodNotAllowed: allowed (not a token)",
    () => methodNotAllowed(["GET, POST"]),
    "ERR_SVC_ERRORS_ALLOWED",
    /got \["GET, POST"\]/,
    () => methodNotAllowed(["GET", "POST"]),
  ],
  [
    "expressServerOptions: app",
    () => expressServerOptions({} as never),
    "ERR_SVC_ERRORS_APP",
    /expressServerOptions: app must be an Express application/,
    () => expressServerOptions(Object.assign(() => {}, { request: {}, response: {} }) as never),
  ],
];

describeOptions("@svc/errors: every option refused at construction with a stable code", rows);

describe("checkOptionNames and checkBooleanOption", () => {
  it.each([
    ["langauges", "languages"],
    ["Languages", "languages"],
    ["compresion", "compression"],
  ])("%s → refused, suggests %s", (given, near) => {
    const err = refusal(() =>
      checkOptionNames("negotiate", { [given]: 1 }, ["languages", "compression"], "negotiate"),
    );
    expect(err).toMatchObject({ code: "ERR_SVC_NEGOTIATE_UNKNOWN_OPTION" });
    expect(err.message).toContain(`unknown option "${given}" (did you mean "${near}"?)`);
  });

  it("a name far from every known one → refused without a guess", () => {
    const err = refusal(() => checkOptionNames("hal", { zzzzzz: 1 }, ["trustProxy"], "allowedHosts"));
    expect(err.message).toBe(
      'allowedHosts: unknown option "zzzzzz"; options must be an object with the fields trustProxy',
    );
  });

  it("a nested object: the path is named, the nested option's code for a non-object", () => {
    const err = refusal(() =>
      checkOptionNames("negotiate", { levle: 1 }, ["level", "threshold"], "negotiate", "compression"),
    );
    expect(err.message).toContain('unknown option "compression.levle" (did you mean "compression.level"?)');
    expect(refusal(() => checkOptionNames("negotiate", 3, ["level"], "negotiate", "compression")).code).toBe(
      "ERR_SVC_NEGOTIATE_COMPRESSION",
    );
  });

  it("undefined and known names → accepted; arrays refused", () => {
    expect(() => checkOptionNames("x", undefined, ["a"], "x")).not.toThrow();
    expect(() => checkOptionNames("x", { a: 1 }, ["a"], "x")).not.toThrow();
    expect(refusal(() => checkOptionNames("x", [], ["a"], "x")).code).toBe("ERR_SVC_X_OPTIONS");
  });

  it('checkBooleanOption: "false" → refused; true, false, undefined → accepted', () => {
    expect(
      refusal(() => checkBooleanOption("conditional", "required", "false", "preconditions: required")),
    ).toMatchObject({
      code: "ERR_SVC_CONDITIONAL_REQUIRED",
      message: 'preconditions: required must be true or false, got "false"',
    });
    for (const ok of [true, false, undefined]) expect(() => checkBooleanOption("x", "y", ok)).not.toThrow();
  });
});
