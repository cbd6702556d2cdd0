import { describe, expect, it } from "vitest";
import { parseMediaType } from "./media-type.js";

describe("parseMediaType (RFC 9110 §8.3.1, SOAP 1.2 action parameter)", () => {
  it.each([
    ['application/soap+xml; charset=utf-8; action="urn:getCustomer"', "urn:getCustomer"],
    ["Application/SOAP+XML;Action=getCustomer", "getCustomer"],
    ['application/soap+xml;action="urn:a\\"b;c,d"', 'urn:a"b;c,d'],
    ['application/soap+xml; action="first"; action="second"', "first"],
    ["application/soap+xml", undefined],
  ])("%j → action %j", (value, action) => {
    const media = parseMediaType(value);
    expect(media?.type).toBe("application/soap+xml");
    expect(media?.parameters.action).toBe(action);
  });

  it.each([
    ['application/soap+xml; action="unterminated'],
    ["application/soap+xml; action"],
    ["application/soap+xml; action=a b"],
    ["soap+xml"],
    ["*/*"],
    [""],
  ])("%j → undefined", (value) => {
    expect(parseMediaType(value)).toBeUndefined();
  });

  it("a parameter named __proto__ is only data", () => {
    const media = parseMediaType("text/xml; __proto__=x; constructor=y");
    expect(Object.entries(media?.parameters ?? {})).toEqual([
      ["__proto__", "x"],
      ["constructor", "y"],
    ]);
    expect(Object.getPrototypeOf(media?.parameters)).toBeNull();
  });
});
