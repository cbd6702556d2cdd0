import { describe, expect, it } from "vitest";
import { parseXmlString, resolveLimits } from "../xml/reader.js";
import { compileSchemas, SchemaValidationError } from "./schema.js";

// XML Schema 1.0 Part 2 §3.2 and §3.3: each built-in's lexical space and range, what it decodes
// to and what the encoder writes for a JavaScript value. One element per type: `<v>` of `xs:T`.

const NS = "urn:b";
const limits = resolveLimits();
const schemaFor = (type: string, longAs: "bigint" | "string" = "bigint") =>
  compileSchemas(
    [
      {
        root: parseXmlString(
          `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="${NS}"><xs:element name="v" type="xs:${type}"/></xs:schema>`,
          limits,
        ),
        location: "b.xsd",
      },
    ],
    { longAs },
  );
const schemas = new Map<string, ReturnType<typeof schemaFor>>();
const schema = (type: string) => {
  let s = schemas.get(type);
  if (s === undefined) {
    s = schemaFor(type);
    schemas.set(type, s);
  }
  return s;
};
const escapeText = (t: string) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;");
const decode = (type: string, text: string) =>
  schema(type).decode(parseXmlString(`<v xmlns="${NS}" xmlns:p="urn:p">${escapeText(text)}</v>`, limits));
const encode = (type: string, value: unknown) => schema(type).encode(`{${NS}}v`, value);
const inner = (xml: string) => xml.replace(/^<v[^>]*>/, "").replace(/<\/v>$/, "");

/** [type, lexical as sent, decoded value]: valid literals. */
const valid: [string, string, unknown][] = [
  ["string", " a  b ", " a  b "],
  ["normalizedString", "a\tb\nc", "a b c"],
  ["token", "  a \t b  ", "a b"],
  ["language", "en", "en"],
  ["language", "de-CH-1901", "de-CH-1901"],
  ["NMTOKEN", " a.b-c:1 ", "a.b-c:1"],
  ["NMTOKENS", " a  b\tc ", ["a", "b", "c"]],
  ["Name", "_x:y", "_x:y"],
  ["NCName", "café", "café"],
  ["ID", "id-1", "id-1"],
  ["IDREF", "id-1", "id-1"],
  ["IDREFS", "a b", ["a", "b"]],
  ["ENTITY", "e", "e"],
  ["ENTITIES", "e f", ["e", "f"]],
  ["integer", "-0012345678901234567890", -12345678901234567890n],
  ["nonPositiveInteger", "0", 0n],
  ["nonPositiveInteger", "-5", -5n],
  ["negativeInteger", "-1", -1n],
  ["long", "-9223372036854775808", -9223372036854775808n],
  ["int", "2147483647", 2147483647],
  ["short", "-32768", -32768],
  ["short", "+32767", 32767],
  ["byte", "-128", -128],
  ["byte", "127", 127],
  ["nonNegativeInteger", "0", 0n],
  ["positiveInteger", "1", 1n],
  ["unsignedLong", "18446744073709551615", 18446744073709551615n],
  ["unsignedInt", "4294967295", 4294967295],
  ["unsignedShort", "65535", 65535],
  ["unsignedByte", "255", 255],
  ["unsignedByte", "-0", 0],
  ["decimal", "-1.50", "-1.50"],
  ["float", "1.5e3", 1500],
  ["float", "INF", Number.POSITIVE_INFINITY],
  ["double", "-INF", Number.NEGATIVE_INFINITY],
  ["double", "NaN", Number.NaN],
  ["double", "-0", -0],
  ["double", ".5E-1", 0.05],
  ["double", "12.", 12],
  ["boolean", "1", true],
  ["duration", "P1Y2M3DT10H30M1.5S", "P1Y2M3DT10H30M1.5S"],
  ["duration", "-PT0S", "-PT0S"],
  ["duration", "P0D", "P0D"],
  ["dateTime", "2024-02-29T24:00:00Z", "2024-02-29T24:00:00Z"],
  ["time", "13:20:00.5-05:00", "13:20:00.5-05:00"],
  ["time", "24:00:00", "24:00:00"],
  ["date", "-0044-03-15", "-0044-03-15"],
  ["gYearMonth", "2024-02", "2024-02"],
  ["gYear", "12024Z", "12024Z"],
  ["gMonthDay", "--02-29", "--02-29"],
  ["gDay", "---31", "---31"],
  ["gMonth", "--12+14:00", "--12+14:00"],
  ["hexBinary", "0fB7", new Uint8Array([0x0f, 0xb7])],
  ["hexBinary", "", new Uint8Array([])],
  ["base64Binary", "AQID", new Uint8Array([1, 2, 3])],
  ["base64Binary", " AQ I= ", new Uint8Array([1, 2])],
  ["base64Binary", "AQ==", new Uint8Array([1])],
  ["base64Binary", "A Q  I D", new Uint8Array([1, 2, 3])],
  ["anyURI", " http://example.com/a b ", "http://example.com/a b"],
  ["QName", "p:local", "{urn:p}local"],
  ["QName", "local", `{${NS}}local`],
  ["anySimpleType", " x ", " x "],
];

/** [type, lexical]: literals outside the lexical space or the range. */
const invalid: [string, string][] = [
  ["language", "toolonglanguage"],
  ["language", "en-"],
  ["language", "e1"],
  ["NMTOKEN", "a b"],
  ["NMTOKEN", ""],
  ["NMTOKENS", " "],
  ["Name", "1a"],
  ["NCName", "a:b"],
  ["ID", ""],
  ["integer", "1.0"],
  ["nonPositiveInteger", "1"],
  ["negativeInteger", "0"],
  ["long", "9223372036854775808"],
  ["int", "2147483648"],
  ["short", "32768"],
  ["short", "-32769"],
  ["byte", "128"],
  ["byte", "-129"],
  ["nonNegativeInteger", "-1"],
  ["positiveInteger", "0"],
  ["unsignedLong", "18446744073709551616"],
  ["unsignedLong", "-1"],
  ["unsignedInt", "4294967296"],
  ["unsignedShort", "65536"],
  ["unsignedByte", "256"],
  ["float", "+INF"],
  ["float", "inf"],
  ["float", "1e"],
  ["double", "Infinity"],
  ["double", "1.2.3"],
  ["double", "0x10"],
  ["boolean", "yes"],
  ["duration", "P"],
  ["duration", "PT"],
  ["duration", "P1Y2MT"],
  ["duration", "P1S"],
  ["duration", "P-1D"],
  ["duration", "1D"],
  ["time", "24:00:01"],
  ["time", "13:60:00"],
  ["time", "1:00:00"],
  ["date", "2023-02-29"],
  ["gYearMonth", "2024-13"],
  ["gYearMonth", "0000-01"],
  ["gYear", "0000"],
  ["gYear", "02024"],
  ["gMonthDay", "--02-30"],
  ["gMonthDay", "--04-31"],
  ["gDay", "---32"],
  ["gDay", "---00"],
  ["gMonth", "--13"],
  ["gMonth", "--12--"],
  ["hexBinary", "abc"],
  ["hexBinary", "zz"],
  ["base64Binary", "AQI"],
  ["base64Binary", "AQ=I"],
  ["base64Binary", "AQJ="],
  ["base64Binary", "AR=="],
  ["base64Binary", "AQ*D"],
  ["QName", "a:b:c"],
  ["QName", "undeclared:x"],
  ["QName", ":x"],
];

describe("built-in types: valid literals decode to their JavaScript values (Part 2 §3.2, §3.3)", () => {
  it.each(valid)("xs:%s %j", (type, text, expected) => {
    expect(decode(type, text)).toEqual(expected);
  });
});

describe("built-in types: invalid literals are refused", () => {
  it.each(invalid)("xs:%s %j → SchemaValidationError", (type, text) => {
    expect(() => decode(type, text)).toThrow(SchemaValidationError);
  });
});

/** [type, JavaScript value, lexical written]. */
const encoded: [string, unknown, string][] = [
  ["short", -5, "-5"],
  ["unsignedLong", 18446744073709551615n, "18446744073709551615"],
  ["integer", "00042", "00042"],
  ["float", Number.POSITIVE_INFINITY, "INF"],
  ["double", Number.NEGATIVE_INFINITY, "-INF"],
  ["double", Number.NaN, "NaN"],
  ["double", 1e21, "1e+21"],
  ["double", 0.1, "0.1"],
  ["hexBinary", new Uint8Array([0xca, 0xfe]), "CAFE"],
  ["base64Binary", new Uint8Array([1, 2, 3, 4]), "AQIDBA=="],
  ["base64Binary", Buffer.from("hi"), "aGk="],
  ["base64Binary", "aGk=", "aGk="],
  ["token", "  a \t b ", "a b"],
  ["NMTOKENS", ["a", "b"], "a b"],
  ["language", "en-GB", "en-GB"],
  ["gYear", "2024", "2024"],
  ["duration", "PT1H", "PT1H"],
];

describe("built-in types: JavaScript values encode to their canonical or given lexical", () => {
  it.each(encoded)("xs:%s %o → %j", (type, value, lexical) => {
    expect(inner(encode(type, value))).toBe(lexical);
  });
});

const notEncoded: [string, unknown][] = [
  ["short", 40000],
  ["byte", 1.5],
  ["unsignedInt", -1],
  ["float", "fast"],
  ["double", 1n],
  ["hexBinary", [1, 2]],
  ["base64Binary", "not base64!"],
  ["NMTOKENS", ["a b"]],
  ["NMTOKENS", []],
  ["language", "english language"],
  ["QName", "no:clark"],
  ["gDay", new Date()],
];

describe("built-in types: values outside the type are not encoded", () => {
  it.each(notEncoded)("xs:%s %o → SchemaValidationError", (type, value) => {
    expect(() => encode(type, value)).toThrow(SchemaValidationError);
  });
});

describe("xs:QName values are resolved and written with their namespace declared", () => {
  it("a Clark name is written with a declared prefix and decodes to itself", () => {
    const xml = encode("QName", "{urn:other}thing");
    expect(xml).toBe(`<v xmlns="${NS}" xmlns:q="urn:other">q:thing</v>`);
    expect(schema("QName").decode(parseXmlString(xml, limits))).toBe("{urn:other}thing");
  });
  it("a name without a namespace inside a namespaced element cannot be written", () => {
    expect(() => encode("QName", "thing")).toThrow(/no namespace/);
  });
});

describe("xs:integer has a documented digit limit (Part 2 §5.4)", () => {
  it("10,000 digits decode; 10,001 are refused without converting them", () => {
    expect(decode("integer", "9".repeat(10_000))).toBe(10n ** 10_000n - 1n);
    expect(() => decode("integer", `1${"0".repeat(10_000)}`)).toThrow(/more than 10000 digits/);
  });
});

describe("xs:long and the unbounded integers follow longAs", () => {
  it.each(["long", "integer", "unsignedLong", "positiveInteger"])(
    'xs:%s, longAs "string" → canonical string',
    (type) => {
      const s = schemaFor(type, "string");
      expect(s.decode(parseXmlString(`<v xmlns="${NS}">+0042</v>`, limits))).toBe("42");
    },
  );
});

describe("linear-time lexical checks: long hostile literals are refused, not backtracked over", () => {
  // Each of these would make a backtracking expression with overlapping quantifiers retry from
  // every position; run on 200,000 characters they must simply be refused.
  const n = 200_000;
  const hostile: [string, string][] = [
    ["duration", `P${"1".repeat(n)}`],
    ["double", `${"1".repeat(n)}x`],
    ["gYear", `${"1".repeat(n)}-`],
    ["language", `${"a-".repeat(n / 2)}-`],
    ["NCName", `${"a".repeat(n)}:`],
    ["base64Binary", `${"A ".repeat(n / 2)}=`],
    ["hexBinary", `${"a".repeat(n)}g`],
    ["time", `${"1".repeat(n)}`],
  ];
  it.each(hostile)("xs:%s of %# → refused", (type, text) => {
    expect(() => decode(type, text)).toThrow(SchemaValidationError);
  });
});
