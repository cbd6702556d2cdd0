import etag from "etag";
import { describe, expect, it } from "vitest";
import { parseEtagList, strongMatch, weakMatch } from "./entity-tag.js";
import { formatCacheControl } from "./options.js";
import { representationTag } from "./validators.js";

const jsonTag = (body: string | Uint8Array) => representationTag("application/json", undefined, body);

describe("entity-tag comparison (RFC 9110 §8.8.3.2)", () => {
  it.each([
    ['W/"1"', 'W/"1"', false, true],
    ['W/"1"', 'W/"2"', false, false],
    ['W/"1"', '"1"', false, true],
    ['"1"', '"1"', true, true],
    ["1", "1", false, false],
  ])("%s vs %s → strong %s, weak %s", (a, b, strong, weak) => {
    expect(strongMatch(a, b)).toBe(strong);
    expect(weakMatch(a, b)).toBe(weak);
  });

  it("parses lists and *, dropping malformed members", () => {
    expect(parseEtagList("*")).toBe("*");
    expect(parseEtagList('"a", W/"b" ,"c"')).toEqual([
      { weak: false, opaque: '"a"' },
      { weak: true, opaque: '"b"' },
      { weak: false, opaque: '"c"' },
    ]);
    expect(parseEtagList("garbage")).toEqual([]);
  });

  it.each([
    ['x"v1"', []],
    ['"v1" "v2"', []],
    ['"v1"x, "v2"', [{ weak: false, opaque: '"v2"' }]],
    ['w/"v1"', []],
    ['W/ "v1"', []],
    ['"v 1", "v2"', [{ weak: false, opaque: '"v2"' }]],
    [
      '"a,b" , ,W/"c",',
      [
        { weak: false, opaque: '"a,b"' },
        { weak: true, opaque: '"c"' },
      ],
    ],
    ['"unterminated, "v2', []],
    ["", []],
  ])("If-Match: %s → %j (a malformed member never matches, RFC 9110 §8.8.3)", (value, tags) => {
    expect(parseEtagList(value)).toEqual(tags);
  });

  it.each([
    ["a run of spaces", `"a"${" ".repeat(100_000)}x`],
    ["a run of tabs and spaces", `W/"a"${" \t".repeat(50_000)}"b"`],
    ["unterminated tags", '"'.concat("a, ".repeat(30_000))],
    ["weak prefixes", "W/".repeat(50_000)],
  ])("a 100 kB list of %s is parsed in linear time", (_what, value) => {
    const started = performance.now();
    parseEtagList(value);
    expect(performance.now() - started).toBeLessThan(200);
  });

  const viewOf = (text: string, offset: number, length: number) => {
    const whole = Buffer.from(text);
    return new Uint8Array(whole.buffer, whole.byteOffset + offset, length);
  };
  it.each([
    ["empty", ""],
    ["ASCII JSON", '{"id":42,"name":"Ada"}'],
    ["multi-byte UTF-8", '{"name":"Zoë 🚀 Ünïcödé"}'],
    ["a Buffer", Buffer.from('<employee id="1"/>')],
    ["a Uint8Array view into a larger buffer", viewOf('xx{"a":1}yy', 2, 7)],
    ["a Uint8Array slice with an offset", Buffer.from("prefix-body-suffix").subarray(7, 11)],
    ["64 KiB", "x".repeat(65536)],
  ])("representationTag of %s is the etag package's strong tag of the labelled bytes", (_what, body) => {
    const labelled = Buffer.concat([
      Buffer.from("application/json\n\n"),
      typeof body === "string" ? Buffer.from(body) : Buffer.from(body),
    ]);
    expect(jsonTag(body)).toBe(
      etag(labelled, { weak: false }).replace(/^"[0-9a-f]+-/, `"${Buffer.byteLength(body).toString(16)}-`),
    );
  });

  it.each([
    ["4", 4, "got 4"],
    ["undefined", undefined, "got undefined"],
    ["null", null, "got null"],
    ["an object", { id: 42 }, "got an object"],
    ["an ArrayBuffer (not a view of one)", new ArrayBuffer(2), "got an object"],
    ["a boolean", true, "got true"],
  ])(
    "representationTag(…, %s) → TypeError ERR_SVC_CONDITIONAL_BODY naming what it got",
    (_what, body, got) => {
      let thrown: unknown;
      try {
        jsonTag(body as never);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect(thrown).toMatchObject({
        code: "ERR_SVC_CONDITIONAL_BODY",
        message: `representationTag: body must be a string or bytes (a Buffer or Uint8Array): the representation as sent, ${got}`,
      });
    },
  );

  const ACCEPTS = {
    ERR_SVC_CONDITIONAL_CONTENT_TYPE:
      'representationTag: contentType must be a string: the media type the representation is sent as ("application/json")',
    ERR_SVC_CONDITIONAL_LANGUAGE:
      'representationTag: language must be a string or undefined: the Content-Language of the representation ("en"), undefined for none',
  };
  it.each<[string, keyof typeof ACCEPTS, unknown[], string]>([
    [
      'undefined, undefined, "{}"',
      "ERR_SVC_CONDITIONAL_CONTENT_TYPE",
      [undefined, undefined, "{}"],
      "undefined",
    ],
    ['null, undefined, "{}"', "ERR_SVC_CONDITIONAL_CONTENT_TYPE", [null, undefined, "{}"], "null"],
    ['4, undefined, "{}"', "ERR_SVC_CONDITIONAL_CONTENT_TYPE", [4, undefined, "{}"], "4"],
    [
      '{ type }, undefined, "{}"',
      "ERR_SVC_CONDITIONAL_CONTENT_TYPE",
      [{ type: "text/plain" }, undefined, "{}"],
      "an object",
    ],
    [
      "undefined, undefined, undefined",
      "ERR_SVC_CONDITIONAL_CONTENT_TYPE",
      [undefined, undefined, undefined],
      "undefined",
    ],
    [
      '"application/json", null, "{}"',
      "ERR_SVC_CONDITIONAL_LANGUAGE",
      ["application/json", null, "{}"],
      "null",
    ],
    ['"application/json", 4, "{}"', "ERR_SVC_CONDITIONAL_LANGUAGE", ["application/json", 4, "{}"], "4"],
    [
      '"application/json", { tag }, "{}"',
      "ERR_SVC_CONDITIONAL_LANGUAGE",
      ["application/json", { tag: "en" }, "{}"],
      "an object",
    ],
    [
      '"application/json", ["en"], "{}"',
      "ERR_SVC_CONDITIONAL_LANGUAGE",
      ["application/json", ["en"], "{}"],
      '["en"]',
    ],
  ])("representationTag(%s) → TypeError %s naming what it got", (_call, code, args, got) => {
    let thrown: unknown;
    try {
      (representationTag as (...args: unknown[]) => string)(...args);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({ code, message: `${ACCEPTS[code]}, got ${got}` });
  });

  it("representationTag of a DataView is the tag of the bytes it views", () => {
    const bytes = Buffer.from('{"a":1}');
    expect(jsonTag(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength) as never)).toBe(
      jsonTag(bytes),
    );
  });

  it("representationTag is strong and depends on the bytes and the representation", () => {
    expect(jsonTag("{}")).toMatch(/^"/);
    expect(jsonTag("{}")).toBe(jsonTag(Buffer.from("{}")));
    expect(jsonTag("{}")).not.toBe(jsonTag("<a/>"));
    expect(jsonTag("{}")).not.toBe(representationTag("application/hal+json", undefined, "{}"));
  });
});

describe("formatCacheControl (RFC 9111 §5.2.2)", () => {
  it.each([
    [{ visibility: "public", maxAge: 60 }, "public, max-age=60"],
    [{ visibility: "private", noCache: true }, "private, no-cache"],
    [{ noStore: true }, "no-store"],
    [{ maxAge: 0, mustRevalidate: true, sMaxAge: 10 }, "max-age=0, s-maxage=10, must-revalidate"],
  ] as const)("%j → %s", (options, expected) => {
    expect(formatCacheControl(options)).toBe(expected);
  });

  it.each([
    [{}],
    [{ maxAge: -1 }],
    [{ maxAge: 1.5 }],
    [{ noStore: true, maxAge: 5 }],
    [{ visibility: "shared" }],
  ])("rejects %j", (options) => {
    expect(() => formatCacheControl(options as never)).toThrow(TypeError);
  });
});
