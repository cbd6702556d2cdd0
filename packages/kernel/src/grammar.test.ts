import { describe, expect, it } from "vitest";
import {
  isToken,
  isToken68,
  MAX_FIELD_LENGTH,
  MAX_LIST_MEMBERS,
  matchMediaType,
  parseMediaRanges,
  parseMediaType,
  parseParameters,
  parseQList,
  parseQValue,
  quoteString,
  selectMediaType,
  splitList,
  trimOws,
} from "./grammar.js";

describe("isToken / isToken68 (RFC 9110 §5.6.2, §11.2)", () => {
  it.each([
    ["gzip", true],
    ["!#$%&'*+-.^_`|~09AZaz", true],
    ["", false],
    ["a b", false],
    ["a,b", false],
    ['a"b', false],
    ["a/b", false],
    ["é", false],
  ])("isToken(%j) → %s", (value, expected) => {
    expect(isToken(value)).toBe(expected);
  });

  it.each([
    ["eyJhbGciOi.eyJzdWIi.c2ln", true],
    ["dXNlcjpwYXNz", true],
    ["abc==", true],
    ["a/b+c~d", true],
    ["=abc", false],
    ["ab=c", false],
    ["a b", false],
    ["", false],
  ])("isToken68(%j) → %s", (value, expected) => {
    expect(isToken68(value)).toBe(expected);
  });
});

describe("parseQValue (RFC 9110 §12.4.2)", () => {
  it.each([
    ["0", 0],
    ["0.", 0],
    ["0.5", 0.5],
    ["0.123", 0.123],
    ["1", 1],
    ["1.000", 1],
    ["0.1234", undefined],
    ["1.001", undefined],
    ["2", undefined],
    ["-0", undefined],
    [".5", undefined],
    ["", undefined],
    ["abc", undefined],
  ])("q=%j → %s", (value, expected) => {
    expect(parseQValue(value)).toBe(expected);
  });
});

describe("splitList (RFC 9110 §5.6.1)", () => {
  it.each([
    ["a,b", ["a", "b"]],
    [" a , b ,", ["a", "b"]],
    [",,, ,", []],
    ['a;p="x,y", b', ['a;p="x,y"', "b"]],
    ['a;p="x\\",y", b', ['a;p="x\\",y"', "b"]],
    ['a;p="open, b', undefined],
    ["", []],
  ])("%j → %j", (value, expected) => {
    expect(splitList(value)).toEqual(expected);
  });

  it("a value over MAX_FIELD_LENGTH or MAX_LIST_MEMBERS is disregarded", () => {
    expect(splitList("a".repeat(MAX_FIELD_LENGTH + 1))).toBeUndefined();
    expect(
      splitList(
        Array(MAX_LIST_MEMBERS + 1)
          .fill("a")
          .join(","),
      ),
    ).toBeUndefined();
    expect(splitList(Array(MAX_LIST_MEMBERS).fill("a").join(","))).toHaveLength(MAX_LIST_MEMBERS);
  });
});

describe("parseParameters (RFC 9110 §5.6.6)", () => {
  it.each([
    ["", []],
    [";a=b", [["a", "b"]]],
    [
      " ; A=B ;c=d",
      [
        ["a", "B"],
        ["c", "d"],
      ],
    ],
    [";;a=b;;", [["a", "b"]]],
    ['; a="x y"', [["a", "x y"]]],
    ['; a="x\\"y\\\\z"', [["a", 'x"y\\z']]],
    ['; a="x;b=c"', [["a", "x;b=c"]]],
    ['; a=""', [["a", ""]]],
    ["; profile=https://example.com/p", [["profile", "https://example.com/p"]]],
    ["a=b", undefined],
    [";a", undefined],
    [";a=", undefined],
    [";=b", undefined],
    [";a b=c", undefined],
    [";a=b c", undefined],
    ['; a="unterminated', undefined],
    ['; a="x"y', undefined],
    ['; a=x"y', undefined],
  ])("%j → %j", (value, expected) => {
    expect(parseParameters(value)).toEqual(expected);
  });
});

describe("parseMediaType (RFC 9110 §8.3.1)", () => {
  it.each([
    ["text/html", { type: "text", subtype: "html", parameters: [] }],
    ["Text/HTML; Charset=UTF-8", { type: "text", subtype: "html", parameters: [["charset", "UTF-8"]] }],
    [
      'application/soap+xml; action="urn:a\\"b"',
      { type: "application", subtype: "soap+xml", parameters: [["action", 'urn:a"b']] },
    ],
    ["*/*", { type: "*", subtype: "*", parameters: [] }],
    ["*/html", undefined],
    ["text", undefined],
    ["/html", undefined],
    ["text/", undefined],
    ["te xt/html", undefined],
    ["text/html; charset", undefined],
    ["", undefined],
  ])("%j → %j", (value, expected) => {
    expect(parseMediaType(value)).toEqual(expected);
  });
});

describe("parseMediaRanges (RFC 9110 §12.5.1)", () => {
  const brief = (accept: string) => parseMediaRanges(accept)?.map((r) => [r.essence, r.q, r.parameters]);
  it.each([
    ["text/html", [["text/html", 1, []]]],
    ["TEXT/HTML;LEVEL=1", [["text/html", 1, [["level", "1"]]]]],
    ["text/html;q=0.5;ext=1", [["text/html", 0.5, []]]],
    ["text/html ; Q=0.5", [["text/html", 0.5, []]]],
    [
      "text/*, */*;q=0",
      [
        ["text/*", 1, []],
        ["*/*", 0, []],
      ],
    ],
    ["text/html;q=2, text/plain", [["text/plain", 1, []]]],
    ["text/html;q=abc, text/plain", [["text/plain", 1, []]]],
    [
      'text/html;p="a,b";q=0.1, text/plain',
      [
        ["text/html", 0.1, [["p", "a,b"]]],
        ["text/plain", 1, []],
      ],
    ],
    ["*/html, text", undefined],
    // RFC 6838 §4.3: a parameter named twice, whatever its case, makes the range invalid.
    ["text/html;LEVEL=1;level=2", undefined],
    ["text/html;level=1;level=1, text/plain", [["text/plain", 1, []]]],
    ["text/html;level=1;q=0.5;ext=1;ext=2", [["text/html", 0.5, [["level", "1"]]]]],
    ["garbage", undefined],
    [";;;,,,", undefined],
    ["", undefined],
  ])("Accept: %j → %j", (accept, expected) => {
    expect(brief(accept)).toEqual(expected);
  });

  it("knows a structured suffix", () => {
    expect(parseMediaRanges("application/vnd.svc.v2+json")?.[0]?.suffix).toBe("json");
    expect(parseMediaRanges("application/json")?.[0]?.suffix).toBeUndefined();
  });

  it("a huge header is disregarded in bounded time", { timeout: 2000 }, () => {
    // Inputs that make backtracking parsers go quadratic: long runs of one character, unclosed quotes.
    expect(parseMediaRanges(`text/html;a="${"\\".repeat(MAX_FIELD_LENGTH)}`)).toBeUndefined();
    expect(parseMediaRanges(`${"a,".repeat(MAX_LIST_MEMBERS)}text/html`)).toBeUndefined();
    expect(parseMediaRanges(`text/html${";".repeat(MAX_FIELD_LENGTH - 9)}`)?.[0]?.essence).toBe("text/html");
    expect(parseMediaRanges(`text/html;a=${" ".repeat(MAX_FIELD_LENGTH - 20)}b`)).toBeUndefined();
    expect(parseMediaRanges(`text/html;q=0${"0".repeat(MAX_FIELD_LENGTH - 20)}`)).toBeUndefined();
  });
});

describe("parseQList (RFC 9110 §12.4.2)", () => {
  it.each([
    [
      "gzip, br;q=0.5",
      [
        { value: "gzip", q: 1 },
        { value: "br", q: 0.5 },
      ],
    ],
    ["GZIP;Q=0", [{ value: "gzip", q: 0 }]],
    ["gzip;q=2, br", [{ value: "br", q: 1 }]],
    ["gzip;q=, br", [{ value: "br", q: 1 }]],
    ["gzip;q, br", [{ value: "br", q: 1 }]],
    ["a b, br", [{ value: "br", q: 1 }]],
    ["*;q=0.1", [{ value: "*", q: 0.1 }]],
    ["", []],
  ])("%j → %j", (value, expected) => {
    expect(parseQList(value)).toEqual(expected);
  });

  it("applies the member syntax it is given", () => {
    expect(parseQList("de-CH, x_y", (v) => /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/.test(v))).toEqual([
      { value: "de-ch", q: 1 },
    ]);
  });
});

describe("quoteString (RFC 9110 §5.6.4)", () => {
  it.each([
    ["api", '"api"', "api"],
    ['a"b\\c', '"a\\"b\\\\c"', 'a"b\\c'],
    ["a\r\nb\u0000", '"ab"', "ab"],
  ])("%j → %s, read back as %j", (value, expected, back) => {
    expect(quoteString(value)).toBe(expected);
    expect(parseParameters(`;x=${expected}`)).toEqual([["x", back]]);
  });
});

describe("selectMediaType (RFC 9110 §12.5.1)", () => {
  const OFFERS = ["application/json", "application/xml", "text/csv", "text/plain", "text/html"];
  it.each([
    [undefined, "application/json"],
    ["", "application/json"],
    ["*/*", "application/json"],
    ["application/xml", "application/xml"],
    ["APPLICATION/XML", "application/xml"],
    ["text/*", "text/csv"],
    // Equal q: the server's order decides, not the client's.
    ["application/xml, application/json", "application/json"],
    ["application/xml;q=0.9, application/json", "application/json"],
    ["application/json;q=0.5, application/xml;q=0.9", "application/xml"],
    ["application/json;charset=utf-8", "application/json"],
    ["application/json;CHARSET=UTF8", "application/json"],
    ['application/json;profile="https://example.com/p"', "application/json"],
    ["application/json;version=2", undefined],
    // q=0 excludes by specificity: the most specific range decides a type's q.
    ["*/*;q=0", undefined],
    ["*/*, application/json;q=0", "application/xml"],
    ["application/json;q=0, */*", "application/xml"],
    ["application/*;q=0, application/json", "application/json"],
    ["text/*;q=0, text/plain, application/*;q=0", "text/plain"],
    ["image/png", undefined],
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"],
    ["application/xml;q=2", "application/json"],
    ["application/xml;q=abc, text/plain", "text/plain"],
    ["garbage", "application/json"],
    [`application/xml, ${"x/y,".repeat(MAX_LIST_MEMBERS)}`, "application/json"],
    // The same range twice: the higher weight wins, in either order (as negotiator decides).
    ["application/json;q=0, application/xml;q=0.001, application/json", "application/json"],
    ["application/json, application/xml;q=0.001, application/json;q=0", "application/json"],
    // A structured-suffix type no representation declares matches nothing (RFC 9110 §8.3).
    ["application/vnd.svc.v2+json", undefined],
    ["application/vnd.svc.v2+xml", undefined],
    ["application/problem+json", undefined],
    ["application/problem+json, application/xml;q=0.5", "application/xml"],
    ["application/foo+xml, text/plain;q=0.1", "text/plain"],
    ["application/vnd.svc.v1+json;q=0", undefined],
  ])("Accept: %s → %s", (accept, expected) => {
    expect(selectMediaType(accept, OFFERS)).toBe(expected);
  });

  it.each([
    ["application/vnd.svc.v2+json", "application/vnd.svc.v2+json"],
    ["application/vnd.svc.v1+json;q=0, application/vnd.svc.v2+json", "application/vnd.svc.v2+json"],
    ["application/vnd.svc.v1+json;q=0.5, application/vnd.svc.v2+json", "application/vnd.svc.v2+json"],
    ["application/vnd.svc.v1+json, application/vnd.svc.v2+json", "application/vnd.svc.v2+json"],
    ["application/*;q=0, application/vnd.svc.v2+json", "application/vnd.svc.v2+json"],
    ["application/vnd.svc.v2+json;q=0.5, application/json", "application/json"],
    ["application/vnd.svc.v2+json;q=0", undefined],
    ["application/vnd.svc.v2+json;q=0, application/json", "application/json"],
  ])("Accept: %s, the JSON declared application/vnd.svc.v2+json, sends %s", (accept, mediaType) => {
    const declared = "application/vnd.svc.v2+json";
    expect(matchMediaType(accept, ["application/json", "application/xml"], declared)?.mediaType).toBe(
      mediaType,
    );
  });

  it.each([
    ["application/problem+json", undefined, undefined],
    ["application/problem+json", false, undefined],
    ["application/foo+xml", undefined, undefined],
    ["application/problem+json", "application/hal+json", undefined],
    ["application/problem+json, application/json;q=0.1", undefined, "application/json"],
    ["application/problem+json, application/xml;q=0.1", "application/hal+json", "application/xml"],
  ] as const)(
    "Accept: %s, declared %s → a suffix type is never echoed for an undeclared representation (sent as %s)",
    (accept, declared, mediaType) => {
      expect(matchMediaType(accept, ["application/json", "application/xml"], declared)?.mediaType).toBe(
        mediaType,
      );
    },
  );

  it.each([
    [
      "application/vnd.svc.v9+json, application/vnd.svc.v2+json",
      "application/vnd.svc.v2+json",
      "application/vnd.svc.v2+json",
    ],
    [
      "application/vnd.svc.vx+json;q=0.5, application/vnd.svc.v2+json;q=0.4",
      "application/vnd.svc.v2+json",
      "application/vnd.svc.v2+json",
    ],
    // Named for another offer: the label wins there, never a second version's label on this one.
    [
      "application/vnd.svc.v2+xml, application/vnd.svc.v1+json",
      "application/vnd.svc.v2+xml",
      "application/vnd.svc.v2+xml",
    ],
    [
      "application/vnd.svc.v1+json, application/vnd.svc.v2+xml;q=0.5",
      "application/vnd.svc.v2+xml",
      "application/vnd.svc.v2+xml",
    ],
    // Not named by the client (or refused by it): nothing the representation declares matches.
    ["application/vnd.svc.v9+json", "application/vnd.svc.v2+json", undefined],
    [
      "application/vnd.svc.v9+json, application/vnd.svc.v2+json;q=0",
      "application/vnd.svc.v2+json",
      undefined,
    ],
    ["application/vnd.svc.v9+json", "application/json", undefined],
  ])("Accept: %s, response labelled %s → sent as %s", (accept, committed, mediaType) => {
    expect(matchMediaType(accept, ["application/json", "application/xml"], committed)?.mediaType).toBe(
      mediaType,
    );
  });

  it.each([
    ["application/*+json", undefined],
    ["application/*+json, application/xml;q=0.5", "application/xml"],
    ["application/*+xml", undefined],
  ])("Accept: %s → no wildcard is ever sent as a Content-Type (sent as %s)", (accept, mediaType) => {
    expect(matchMediaType(accept, ["application/json", "application/xml"])?.mediaType).toBe(mediaType);
  });

  it("an offer of the exact vendor type beats the suffix match", () => {
    const m = matchMediaType("application/hal+json", ["application/json", "application/hal+json"]);
    expect(m).toEqual({ offer: "application/hal+json", mediaType: "application/hal+json", q: 1 });
  });

  it("an offer's parameters take part: charset, and ranges naming a parameter", () => {
    expect(selectMediaType("text/plain;charset=iso-8859-1", ["text/plain"])).toBeUndefined();
    expect(selectMediaType("text/xml", ["application/xml; charset=utf-8", "text/xml; charset=utf-8"])).toBe(
      "text/xml; charset=utf-8",
    );
    expect(selectMediaType("text/html;level=1;q=0, text/html", ["text/html;level=1", "text/html"])).toBe(
      "text/html",
    );
  });

  it("no offers → undefined; no Accept → the first offer, parameters stripped from mediaType", () => {
    expect(selectMediaType("*/*", [])).toBeUndefined();
    expect(matchMediaType(undefined, ["text/xml; charset=utf-8"])?.mediaType).toBe("text/xml");
  });
});

describe("trimOws (RFC 9110 §5.6.3: OWS is SP and HTAB only)", () => {
  it.each([
    [' \t"v1"\t ', '"v1"'],
    ["*", "*"],
    ["", ""],
    [" \t ", ""],
    ["\u00a0*", "\u00a0*"],
    ["a\u00a0", "a\u00a0"],
    ["\u3000x\r\n", "\u3000x\r\n"],
  ])("%j → %j", (value, trimmed) => {
    expect(trimOws(value)).toBe(trimmed);
  });
});
