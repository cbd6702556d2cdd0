import { HttpError } from "@svc/errors";
import { describe, expect, it } from "vitest";
import { setLastModified as setExpressLastModified } from "./express.js";
import { setLastModified as setFastifyLastModified } from "./fastify.js";
import { lastModified } from "./fetch.js";
import {
  checkPreconditions,
  evaluateIfRange,
  evaluatePreconditions,
  lastModifiedFields,
  parseEtagList,
  preconditionFailed,
  preconditionsDecision,
  strongMatch,
  weakMatch,
} from "./index.js";
import { setLastModified as setNodeLastModified } from "./node.js";

/**
 * Every argument the main entry's functions refuse when they are called: a `TypeError` naming the
 * function and the argument, what it got and what it accepts, with the stable code
 * `ERR_SVC_CONDITIONAL_<ARGUMENT>` (the options of the factories are in `option-errors.test.ts`,
 * `representationTag`'s arguments in `entity-tag.test.ts`).
 */
const ACCEPTS = {
  value:
    'a string: an If-Match or If-None-Match field value ("*" or entity-tags); an absent field is no list, so test for undefined first',
  tag: 'a string: an entity-tag ("v7" or W/"v7"); a missing tag matches none, so test for undefined first',
  date: "a Date: when the representation last changed",
  now: "a valid Date or undefined: the message's origination time, undefined for the current time",
  ifRange:
    "a string, a list of strings (one per field line) or undefined: the If-Range field value, undefined when there is none",
  current:
    "an object of validators ({ etag?, lastModified? }), or undefined when the resource does not exist",
  currentLastModified: "a Date or undefined: when the resource last changed",
  currentState:
    "the current state ({ etag?, lastModified? }), undefined or null when the resource does not exist, or a function returning one",
  method: 'a string: the request method ("GET", "PUT")',
  headers:
    "an object of header fields by lower-case name (node:http's req.headers), not a Fetch Headers or a list (Object.fromEntries(headers) makes one)",
  req: "a request: an object with the header fields as headers (node:http's IncomingMessage, Express's req)",
  reqMethod: "a string or undefined: the request method, undefined for GET",
};
type Accepts = keyof typeof ACCEPTS;

const D = new Date("2026-03-01T12:00:00Z");
const IMF = "Sun, 01 Mar 2026 12:00:00 GMT";
const LATER = new Date("2026-03-01T12:05:00Z");
const fakeRes = { headersSent: false, getHeader: () => undefined, setHeader: () => undefined };
const fakeReply = { getHeader: () => undefined, header: () => undefined };
const GET = { method: "GET", headers: { "if-modified-since": IMF }, rawHeaders: [] };
const call = (f: unknown, ...args: unknown[]) => (f as (...a: unknown[]) => unknown)(...args);

// [call as written, what runs, the label the message starts with, the accepted text, the code, what it got]
const REFUSED: [string, () => unknown, string, Accepts, string, string][] = [
  [
    "parseEtagList(undefined)",
    () => call(parseEtagList, undefined),
    "parseEtagList: value",
    "value",
    "ERR_SVC_CONDITIONAL_VALUE",
    "undefined",
  ],
  [
    "parseEtagList(null)",
    () => call(parseEtagList, null),
    "parseEtagList: value",
    "value",
    "ERR_SVC_CONDITIONAL_VALUE",
    "null",
  ],
  [
    "parseEtagList(4)",
    () => call(parseEtagList, 4),
    "parseEtagList: value",
    "value",
    "ERR_SVC_CONDITIONAL_VALUE",
    "4",
  ],
  [
    "parseEtagList({ value })",
    () => call(parseEtagList, { value: '"a"' }),
    "parseEtagList: value",
    "value",
    "ERR_SVC_CONDITIONAL_VALUE",
    "an object",
  ],
  [
    'parseEtagList(["\\"a\\""])',
    () => call(parseEtagList, ['"a"']),
    "parseEtagList: value",
    "value",
    "ERR_SVC_CONDITIONAL_VALUE",
    '["\\"a\\""]',
  ],
  [
    'strongMatch(null, "\\"a\\"")',
    () => call(strongMatch, null, '"a"'),
    "strongMatch: a",
    "tag",
    "ERR_SVC_CONDITIONAL_TAG",
    "null",
  ],
  [
    'strongMatch(4, "\\"a\\"")',
    () => call(strongMatch, 4, '"a"'),
    "strongMatch: a",
    "tag",
    "ERR_SVC_CONDITIONAL_TAG",
    "4",
  ],
  [
    'strongMatch("\\"a\\"", { etag })',
    () => call(strongMatch, '"a"', { etag: '"a"' }),
    "strongMatch: b",
    "tag",
    "ERR_SVC_CONDITIONAL_TAG",
    "an object",
  ],
  [
    'strongMatch(undefined, "\\"a\\"")',
    () => call(strongMatch, undefined, '"a"'),
    "strongMatch: a",
    "tag",
    "ERR_SVC_CONDITIONAL_TAG",
    "undefined",
  ],
  [
    'weakMatch("\\"a\\"", undefined)',
    () => call(weakMatch, '"a"', undefined),
    "weakMatch: b",
    "tag",
    "ERR_SVC_CONDITIONAL_TAG",
    "undefined",
  ],
  [
    'weakMatch(null, "\\"a\\"")',
    () => call(weakMatch, null, '"a"'),
    "weakMatch: a",
    "tag",
    "ERR_SVC_CONDITIONAL_TAG",
    "null",
  ],
  [
    'weakMatch({ etag }, "\\"a\\"")',
    () => call(weakMatch, { etag: '"a"' }, '"a"'),
    "weakMatch: a",
    "tag",
    "ERR_SVC_CONDITIONAL_TAG",
    "an object",
  ],
  [
    'weakMatch("\\"a\\"", 4)',
    () => call(weakMatch, '"a"', 4),
    "weakMatch: b",
    "tag",
    "ERR_SVC_CONDITIONAL_TAG",
    "4",
  ],
  [
    "lastModifiedFields(undefined, undefined)",
    () => call(lastModifiedFields, undefined, undefined),
    "lastModifiedFields: date",
    "date",
    "ERR_SVC_CONDITIONAL_DATE",
    "undefined",
  ],
  [
    "lastModifiedFields(null, undefined)",
    () => call(lastModifiedFields, null, undefined),
    "lastModifiedFields: date",
    "date",
    "ERR_SVC_CONDITIONAL_DATE",
    "null",
  ],
  [
    "lastModifiedFields(1772366400000, undefined)",
    () => call(lastModifiedFields, D.getTime(), undefined),
    "lastModifiedFields: date",
    "date",
    "ERR_SVC_CONDITIONAL_DATE",
    "1772366400000",
  ],
  [
    "lastModifiedFields(an IMF-fixdate, undefined)",
    () => call(lastModifiedFields, IMF, undefined),
    "lastModifiedFields: date",
    "date",
    "ERR_SVC_CONDITIONAL_DATE",
    JSON.stringify(IMF),
  ],
  [
    "lastModifiedFields({ date }, undefined)",
    () => call(lastModifiedFields, { date: D }, undefined),
    "lastModifiedFields: date",
    "date",
    "ERR_SVC_CONDITIONAL_DATE",
    "an object",
  ],
  [
    "lastModifiedFields(date, undefined, null)",
    () => call(lastModifiedFields, D, undefined, null),
    "lastModifiedFields: now",
    "now",
    "ERR_SVC_CONDITIONAL_NOW",
    "null",
  ],
  [
    "lastModifiedFields(date, undefined, 4)",
    () => call(lastModifiedFields, D, undefined, 4),
    "lastModifiedFields: now",
    "now",
    "ERR_SVC_CONDITIONAL_NOW",
    "4",
  ],
  [
    "lastModifiedFields(date, undefined, Invalid Date)",
    () => call(lastModifiedFields, D, undefined, new Date(Number.NaN)),
    "lastModifiedFields: now",
    "now",
    "ERR_SVC_CONDITIONAL_NOW",
    "Invalid Date",
  ],
  [
    "setLastModified(res, undefined) (express)",
    () => call(setExpressLastModified, fakeRes, undefined),
    "lastModifiedFields: date",
    "date",
    "ERR_SVC_CONDITIONAL_DATE",
    "undefined",
  ],
  [
    "setLastModified(res, 4) (node)",
    () => call(setNodeLastModified, fakeRes, 4),
    "lastModifiedFields: date",
    "date",
    "ERR_SVC_CONDITIONAL_DATE",
    "4",
  ],
  [
    "setLastModified(reply, date, 4) (fastify)",
    () => call(setFastifyLastModified, fakeReply, D, 4),
    "lastModifiedFields: now",
    "now",
    "ERR_SVC_CONDITIONAL_NOW",
    "4",
  ],
  [
    "lastModified(null) (fetch)",
    () => call(lastModified, null),
    "lastModifiedFields: date",
    "date",
    "ERR_SVC_CONDITIONAL_DATE",
    "null",
  ],
  [
    "evaluateIfRange(null, current)",
    () => call(evaluateIfRange, null, { etag: '"a"' }),
    "evaluateIfRange: ifRange",
    "ifRange",
    "ERR_SVC_CONDITIONAL_IF_RANGE",
    "null",
  ],
  [
    "evaluateIfRange(4, current)",
    () => call(evaluateIfRange, 4, { etag: '"a"' }),
    "evaluateIfRange: ifRange",
    "ifRange",
    "ERR_SVC_CONDITIONAL_IF_RANGE",
    "4",
  ],
  [
    "evaluateIfRange({ etag }, current)",
    () => call(evaluateIfRange, { etag: '"a"' }, { etag: '"a"' }),
    "evaluateIfRange: ifRange",
    "ifRange",
    "ERR_SVC_CONDITIONAL_IF_RANGE",
    "an object",
  ],
  [
    "evaluateIfRange([4], current)",
    () => call(evaluateIfRange, [4], { etag: '"a"' }),
    "evaluateIfRange: ifRange",
    "ifRange",
    "ERR_SVC_CONDITIONAL_IF_RANGE",
    "[4]",
  ],
  [
    'evaluateIfRange("\\"a\\"", null)',
    () => call(evaluateIfRange, '"a"', null),
    "evaluateIfRange: current",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    "null",
  ],
  [
    'evaluateIfRange("\\"a\\"", "\\"a\\"")',
    () => call(evaluateIfRange, '"a"', '"a"'),
    "evaluateIfRange: current",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    '"\\"a\\""',
  ],
  [
    'evaluateIfRange("\\"a\\"", ["\\"a\\""])',
    () => call(evaluateIfRange, '"a"', ['"a"']),
    "evaluateIfRange: current",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    '["\\"a\\""]',
  ],
  [
    "evaluateIfRange(undefined, null)",
    () => call(evaluateIfRange, undefined, null),
    "evaluateIfRange: current",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    "null",
  ],
  [
    "evaluateIfRange(a date, { lastModified: a string })",
    () => call(evaluateIfRange, IMF, { lastModified: IMF }),
    "evaluateIfRange: current.lastModified",
    "currentLastModified",
    "ERR_SVC_CONDITIONAL_CURRENT",
    JSON.stringify(IMF),
  ],
  [
    "evaluateIfRange(a date, current, 4)",
    () => call(evaluateIfRange, IMF, { lastModified: D }, 4),
    "evaluateIfRange: now",
    "now",
    "ERR_SVC_CONDITIONAL_NOW",
    "4",
  ],
  [
    "evaluatePreconditions(undefined, headers, current)",
    () => call(evaluatePreconditions, undefined, { "if-match": '"a"' }, { etag: '"a"' }),
    "evaluatePreconditions: method",
    "method",
    "ERR_SVC_CONDITIONAL_METHOD",
    "undefined",
  ],
  [
    'evaluatePreconditions("PUT", undefined, current)',
    () => call(evaluatePreconditions, "PUT", undefined, { etag: '"a"' }),
    "evaluatePreconditions: headers",
    "headers",
    "ERR_SVC_CONDITIONAL_HEADERS",
    "undefined",
  ],
  [
    'evaluatePreconditions("PUT", null, current)',
    () => call(evaluatePreconditions, "PUT", null, { etag: '"a"' }),
    "evaluatePreconditions: headers",
    "headers",
    "ERR_SVC_CONDITIONAL_HEADERS",
    "null",
  ],
  [
    'evaluatePreconditions("PUT", a Fetch Headers, current)',
    () => call(evaluatePreconditions, "PUT", new Headers({ "if-match": '"b"' }), { etag: '"a"' }),
    "evaluatePreconditions: headers",
    "headers",
    "ERR_SVC_CONDITIONAL_HEADERS",
    "an object",
  ],
  [
    'evaluatePreconditions("PUT", headers, null)',
    () => call(evaluatePreconditions, "PUT", { "if-match": '"a"' }, null),
    "evaluatePreconditions: current",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    "null",
  ],
  [
    'evaluatePreconditions("PUT", headers, "\\"a\\"")',
    () => call(evaluatePreconditions, "PUT", { "if-match": '"a"' }, '"a"'),
    "evaluatePreconditions: current",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    '"\\"a\\""',
  ],
  [
    'evaluatePreconditions("GET", headers, { lastModified: a number })',
    () => call(evaluatePreconditions, "GET", { "if-modified-since": IMF }, { lastModified: D.getTime() }),
    "evaluatePreconditions: current.lastModified",
    "currentLastModified",
    "ERR_SVC_CONDITIONAL_CURRENT",
    "1772366400000",
  ],
  [
    "preconditionFailed(null)",
    () => call(preconditionFailed, null),
    "preconditionFailed: current",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    "null",
  ],
  [
    "preconditionFailed(4)",
    () => call(preconditionFailed, 4),
    "preconditionFailed: current",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    "4",
  ],
  [
    "preconditionFailed({ lastModified: a string })",
    () => call(preconditionFailed, { etag: '"a"', lastModified: IMF }),
    "preconditionFailed: current.lastModified",
    "currentLastModified",
    "ERR_SVC_CONDITIONAL_CURRENT",
    JSON.stringify(IMF),
  ],
];

// The same for checkPreconditions, which answers with a promise: it rejects.
const REJECTED: [string, () => Promise<unknown>, string, Accepts, string, string][] = [
  [
    "checkPreconditions(undefined, current)",
    () => call(checkPreconditions, undefined, { etag: '"a"' }) as Promise<unknown>,
    "checkPreconditions: req",
    "req",
    "ERR_SVC_CONDITIONAL_REQ",
    "undefined",
  ],
  [
    "checkPreconditions({ method }, current)",
    () => call(checkPreconditions, { method: "PUT" }, { etag: '"a"' }) as Promise<unknown>,
    "checkPreconditions: req.headers",
    "headers",
    "ERR_SVC_CONDITIONAL_REQ",
    "undefined",
  ],
  [
    "checkPreconditions(a Fetch Request, current)",
    () =>
      call(checkPreconditions, new Request("http://x/", { method: "PUT", headers: { "if-match": '"b"' } }), {
        etag: '"a"',
      }) as Promise<unknown>,
    "checkPreconditions: req.headers",
    "headers",
    "ERR_SVC_CONDITIONAL_REQ",
    "an object",
  ],
  [
    "checkPreconditions({ method: 4, headers }, current)",
    () =>
      call(
        checkPreconditions,
        { method: 4, headers: { "if-match": '"a"' } },
        { etag: '"a"' },
      ) as Promise<unknown>,
    "checkPreconditions: req.method",
    "reqMethod",
    "ERR_SVC_CONDITIONAL_REQ",
    "4",
  ],
  [
    "checkPreconditions(req, 4)",
    () => call(checkPreconditions, { method: "PUT", headers: { "if-match": '"a"' } }, 4) as Promise<unknown>,
    "checkPreconditions: current",
    "currentState",
    "ERR_SVC_CONDITIONAL_CURRENT",
    "4",
  ],
  [
    "checkPreconditions(req, () => 4)",
    () =>
      call(
        checkPreconditions,
        { method: "PUT", headers: { "if-match": '"a"' } },
        () => 4,
      ) as Promise<unknown>,
    "checkPreconditions: current",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    "4",
  ],
  [
    "checkPreconditions(req, () => ({ lastModified: a string }))",
    () =>
      call(checkPreconditions, { method: "GET", headers: { "if-modified-since": IMF } }, () => ({
        lastModified: IMF,
      })) as Promise<unknown>,
    "checkPreconditions: current.lastModified",
    "currentLastModified",
    "ERR_SVC_CONDITIONAL_CURRENT",
    JSON.stringify(IMF),
  ],
  [
    "preconditionsDecision({ current: () => 4 })(GET)",
    () => preconditionsDecision({ current: () => 4 as never })(GET, undefined as never),
    "preconditions: current()",
    "current",
    "ERR_SVC_CONDITIONAL_CURRENT",
    "4",
  ],
  [
    "preconditionsDecision({ current: () => ({ lastModified: a string }) })(GET)",
    () => preconditionsDecision({ current: () => ({ lastModified: IMF as never }) })(GET, undefined as never),
    "preconditions: current().lastModified",
    "currentLastModified",
    "ERR_SVC_CONDITIONAL_CURRENT",
    JSON.stringify(IMF),
  ],
];

describe("refused arguments", () => {
  it.each(REFUSED)(
    "%s → TypeError naming the argument and what it got",
    (_call, run, label, accepts, code, got) => {
      let thrown: unknown;
      try {
        run();
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect(thrown).toMatchObject({ code, message: `${label} must be ${ACCEPTS[accepts]}, got ${got}` });
    },
  );

  it.each(REJECTED)(
    "%s → rejects with a TypeError naming the argument",
    async (_call, run, label, accepts, code, got) => {
      let thrown: unknown;
      try {
        await run();
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect(thrown).toMatchObject({ code, message: `${label} must be ${ACCEPTS[accepts]}, got ${got}` });
    },
  );

  it("a current tag that is a number is no entity-tag, for evaluateIfRange as for evaluatePreconditions", () => {
    for (const run of [
      () => call(evaluateIfRange, '"7"', { etag: 7 }),
      () => call(evaluatePreconditions, "PUT", { "if-match": '"7"' }, { etag: 7 }),
      () => call(evaluatePreconditions, "PUT", {}, { etag: 7 }),
      () => call(preconditionFailed, { etag: 7 }),
    ]) {
      expect(run).toThrow(expect.objectContaining({ code: "ERR_SVC_CONDITIONAL_INVALID_ETAG" }));
    }
  });
});

describe("the legitimate edges of the same arguments answer as before", () => {
  const fresh = Object.freeze({ etag: '"a"', lastModified: D });
  it.each<[string, () => unknown, unknown]>([
    ['parseEtagList("")', () => parseEtagList(""), []],
    ['parseEtagList(" * ")', () => parseEtagList(" * "), "*"],
    ['parseEtagList("garbage")', () => parseEtagList("garbage"), []],
    ['weakMatch("W/\\"a\\"", "\\"a\\"")', () => weakMatch('W/"a"', '"a"'), true],
    ['strongMatch("1", "1") (malformed tags never match)', () => strongMatch("1", "1"), false],
    [
      "lastModifiedFields(Invalid Date, undefined)",
      () => lastModifiedFields(new Date(Number.NaN), undefined),
      {},
    ],
    [
      "lastModifiedFields(date, 4, now) (a given Date that is no string is none)",
      () => lastModifiedFields(D, 4, LATER),
      { Date: LATER.toUTCString(), "Last-Modified": IMF },
    ],
    [
      "lastModifiedFields(date, an IMF-fixdate, undefined)",
      () => lastModifiedFields(LATER, IMF, undefined),
      { "Last-Modified": IMF },
    ],
    ["lastModified(Invalid Date) (fetch)", () => lastModified(new Date(Number.NaN)), {}],
    [
      "evaluateIfRange(undefined, undefined) (no If-Range holds)",
      () => evaluateIfRange(undefined, undefined),
      true,
    ],
    ['evaluateIfRange("\\"a\\"", undefined)', () => evaluateIfRange('"a"', undefined), false],
    ['evaluateIfRange("\\"a\\"", {})', () => evaluateIfRange('"a"', {}), false],
    ['evaluateIfRange(["\\"a\\""], current)', () => evaluateIfRange(['"a"'], fresh), true],
    [
      'evaluateIfRange(["\\"a\\"", "\\"a\\""], current) (two field lines)',
      () => evaluateIfRange(['"a"', '"a"'], fresh),
      false,
    ],
    [
      "evaluateIfRange(a date, current, undefined) (now is the clock)",
      () => evaluateIfRange(IMF, fresh, undefined),
      true,
    ],
    ["evaluateIfRange(a date, current, now)", () => evaluateIfRange(IMF, fresh, D), false],
    [
      'evaluatePreconditions("GET", {}, undefined)',
      () => evaluatePreconditions("GET", {}, undefined),
      "proceed",
    ],
    [
      'evaluatePreconditions("PUT", { if-match: * }, undefined)',
      () => evaluatePreconditions("PUT", { "if-match": "*" }, undefined),
      412,
    ],
    [
      'evaluatePreconditions("GET", { if-none-match } without a prototype, current)',
      () =>
        evaluatePreconditions("GET", Object.assign(Object.create(null), { "if-none-match": '"a"' }), fresh),
      304,
    ],
    [
      'evaluatePreconditions("POST", { if-match }, a frozen {})',
      () => evaluatePreconditions("POST", { "if-match": '"x"' }, Object.freeze({})),
      412,
    ],
    [
      'evaluatePreconditions("PUT", {}, { etag: "7" }) (unconditional: the tag is not compared)',
      () => evaluatePreconditions("PUT", {}, { etag: "7" }),
      "proceed",
    ],
    ["preconditionFailed(undefined)", () => preconditionFailed(undefined).status, 412],
    ["preconditionFailed({})", () => preconditionFailed({}).status, 412],
  ])("%s answers as before", (_call, run, expected) => {
    expect(run()).toEqual(expected);
  });

  it.each<[string, () => Promise<unknown>, unknown]>([
    [
      "checkPreconditions({ method: undefined, headers: { if-match: * } }, null)",
      () => checkPreconditions({ method: undefined, headers: { "if-match": "*" } }, null),
      "proceed",
    ],
    [
      "checkPreconditions(GET, { if-none-match }, () => current)",
      () => checkPreconditions({ method: "GET", headers: { "if-none-match": '"a"' } }, () => fresh),
      304,
    ],
  ])("%s answers as before", async (_call, run, expected) => {
    expect(await run()).toEqual(expected);
  });

  it("checkPreconditions(PUT, { if-match: * }, () => null) → the 412, not a TypeError", async () => {
    await expect(
      checkPreconditions({ method: "PUT", headers: { "if-match": "*" } }, () => null),
    ).rejects.toBeInstanceOf(HttpError);
  });
});
