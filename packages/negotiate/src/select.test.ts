import { describe, expect, it } from "vitest";
import { selectEncoding } from "./encoding.js";
import { matchMediaType, selectMediaType } from "./index.js";
import { selectLanguage } from "./language.js";

const OFFERS = ["application/json", "application/xml", "text/csv", "text/plain", "text/html"];

describe("selectMediaType (RFC 9110 §12.5.1)", () => {
  it.each([
    [undefined, "application/json"],
    ["", "application/json"],
    ["*/*", "application/json"],
    ["application/xml", "application/xml"],
    ["text/*", "text/csv"],
    ["application/xml;q=0.9, application/json", "application/json"],
    ["application/json;q=0.5, application/xml;q=0.9", "application/xml"],
    ["application/json;charset=utf-8", "application/json"],
    ["application/json;charset=UTF8", "application/json"],
    ['application/json;profile="https://example.com/p"', "application/json"],
    ["application/json;version=2", undefined],
    ["*/*;q=0", undefined],
    ["*/*, application/json;q=0", "application/xml"],
    ["image/png", undefined],
    ["application/xml, */*", "application/xml"],
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"],
    ["application/json;q=2", "application/json"],
    ["application/xml;q=2", "application/json"],
    ["application/xml;q=abc, text/plain", "text/plain"],
    ["garbage", "application/json"],
    [";;;,,,", "application/json"],
    ["application/vnd.svc.v2+json", undefined],
    ["application/vnd.svc.v2+xml", undefined],
    ["application/problem+json, application/xml;q=0.5", "application/xml"],
    ["application/json;q=0.1, text/plain;q=0.1", "application/json"],
  ])("Accept: %s → %s", (accept, expected) => {
    expect(selectMediaType(accept, OFFERS)).toBe(expected);
  });

  it("sends a structured-suffix type the client asked for only when the representation declares it", () => {
    expect(matchMediaType("application/vnd.svc.v2+json", OFFERS)).toBeUndefined();
    expect(matchMediaType("application/vnd.svc.v2+json", OFFERS, "application/vnd.svc.v2+json")).toEqual({
      offer: "application/json",
      mediaType: "application/vnd.svc.v2+json",
      q: 1,
    });
  });

  it("prefers an offer of the exact vendor type over the suffix match", () => {
    const m = matchMediaType("application/hal+json", ["application/json", "application/hal+json"]);
    expect(m?.offer).toBe("application/hal+json");
    expect(m?.mediaType).toBe("application/hal+json");
  });

  it("a charset other than UTF-8 does not match a UTF-8 text offer", () => {
    expect(selectMediaType("text/plain;charset=iso-8859-1", ["text/plain"])).toBeUndefined();
  });

  it("no offers → undefined", () => {
    expect(selectMediaType("*/*", [])).toBeUndefined();
  });
});

describe("selectLanguage (RFC 9110 §12.5.4)", () => {
  it.each([
    [undefined, "en"],
    ["", "en"],
    ["de", "de"],
    ["de-AT", "de"],
    ["fr-CH, fr;q=0.9, en;q=0.8", "en"],
    ["en-GB;q=0.5, de;q=0.9", "de"],
    ["*", "en"],
    ["*;q=0", undefined],
    ["de;q=0, *", "en"],
    ["en;q=2", "en"],
    ["!!!", "en"],
    ["de-CH;q=0, de-AT", "de"],
    ["de-AT, de-CH;q=0", "de"],
    ["de-CH;q=0.1, de-AT;q=0.9, en;q=0.5", "de"],
  ])("Accept-Language: %s → %s", (header, expected) => {
    expect(selectLanguage(header, ["en", "de"])).toBe(expected);
  });

  it("a range matches a more specific offer", () => {
    expect(selectLanguage("en", ["de", "en-US"])).toBe("en-US");
  });
});

describe("selectEncoding (RFC 9110 §12.5.3)", () => {
  const offers = ["br", "gzip", "deflate"];
  it.each([
    [undefined, "identity"],
    ["", "identity"],
    ["gzip", "gzip"],
    ["gzip, br", "br"],
    ["gzip;q=1, br;q=0.5", "gzip"],
    ["identity", "identity"],
    ["*", "br"],
    ["identity;q=0", undefined],
    ["*;q=0", undefined],
    ["identity;q=0, gzip", "gzip"],
    ["compress", "identity"],
    ["gzip;q=0", "identity"],
    ["gzip;q=2", "identity"],
    ["zstd", "identity"],
    ["x-gzip", "gzip"],
    ["X-GZIP, identity;q=0", "gzip"],
    ["gzip;q=0, x-gzip", "identity"],
  ])("Accept-Encoding: %s → %s", (header, expected) => {
    expect(selectEncoding(header, offers)).toBe(expected);
  });

  // identity offered first: a coding the client names wins a tie with the identity it implies.
  it.each([
    ["gzip", "gzip"],
    ["gzip;q=0.5", "gzip"],
    ["br", "identity"],
    ["gzip, identity", "identity"],
    ["gzip;q=0.5, identity;q=0.5", "identity"],
    ["*", "identity"],
    ["gzip;q=0.5, *;q=0.5", "identity"],
    ["identity;q=0, gzip", "gzip"],
  ])("Accept-Encoding: %s, offers [identity, gzip] → %s", (header, expected) => {
    expect(selectEncoding(header, ["identity", "gzip"])).toBe(expected);
  });
});
