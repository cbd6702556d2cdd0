import { MEDIA_TYPE, type PipelineRequest, parseCacheUsage, type Represented, reply } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { compressibleCacheSize, isCompressible } from "./headers.js";
import { hintCacheSize, mediaTypeHint } from "./media-type-hint.js";
import { json, text, xml } from "./representation.js";
import { contentTypeCacheSize, representations } from "./representer.js";

const step = representations({ offers: [json, xml, text] });

function request(accept: string | undefined): PipelineRequest {
  return { view: { method: "GET", headers: accept === undefined ? {} : { accept } }, path: "/x" };
}

async function represent(accept: string | undefined, data: unknown, label?: string): Promise<Represented> {
  return step.represent(request(accept), data, { label, fallback: false, reply: reply(data) });
}

// The content types of chosen representations are remembered by offer and media type (at most
// 128); the Accept parses by value (CACHE_LIMIT of @svc/kernel). Neither grows with what clients send.
describe("representations(): what is remembered between requests", () => {
  it("2,000 distinct Accept values → the right Content-Type each time, at most 128 content types held", async () => {
    for (let i = 0; i < 2_000; i++) {
      const accept = i % 2 === 0 ? `application/xml, text/x-${i};q=0.5` : `text/plain;q=0.9, image/x-${i}`;
      const chosen = await represent(accept, { id: i });
      expect(chosen.contentType).toBe(
        i % 2 === 0 ? "application/xml; charset=utf-8" : "text/plain; charset=utf-8",
      );
      expect(contentTypeCacheSize()).toBeLessThanOrEqual(128);
    }
    expect(parseCacheUsage().accept.entries).toBeLessThanOrEqual(500);
  });

  it("clients asking for JSON, XML, a vendor label and a HAL body in turn → each its own answer", async () => {
    const hal = { id: 1, [MEDIA_TYPE]: "application/hal+json" };
    for (let round = 0; round < 25; round++) {
      expect((await represent("application/xml", { id: 1 })).contentType).toBe(
        "application/xml; charset=utf-8",
      );
      expect((await represent(undefined, { id: 1 })).contentType).toBe("application/json; charset=utf-8");
      const labelled = await represent("application/vnd.x.v2+json", { id: 1 }, "application/vnd.x.v2+json");
      expect(labelled.contentType).toBe("application/vnd.x.v2+json; charset=utf-8");
      expect((await represent("application/hal+json", hal)).contentType).toBe(
        "application/hal+json; charset=utf-8",
      );
      expect((await represent("application/json", hal)).contentType).toBe("application/json; charset=utf-8");
    }
  });
});

// What negotiate remembers by a value a handler or a body chose: each bounded in entries and in
// key length (256 characters), whatever values come.
describe.each([
  {
    memo: "isCompressible, by Content-Type",
    limit: 200,
    ask: (value: string) => isCompressible(`application/${value}+json`),
    answer: true,
    held: compressibleCacheSize,
  },
  {
    memo: "mediaTypeHint, by the type a body names",
    limit: 64,
    ask: (value: string) => mediaTypeHint({ [MEDIA_TYPE]: `application/${value}+json` }),
    answer: (value: string) => `application/${value}+json`,
    held: hintCacheSize,
  },
])("$memo", ({ limit, ask, answer, held }) => {
  const expected = (value: string) => (typeof answer === "function" ? answer(value) : answer);

  it(`2,000 distinct values → each answered, at most ${limit} held`, () => {
    let wrong = 0;
    let most = 0;
    for (let i = 0; i < 2_000; i++) {
      if (ask(`x-${i}`) !== expected(`x-${i}`)) wrong++;
      most = Math.max(most, held());
    }
    expect({ wrong, most }).toEqual({ wrong: 0, most: limit });
  });

  it("a value longer than 256 characters → answered, not held", () => {
    ask("x-short");
    const before = held();
    const value = `x-${"a".repeat(300)}`;
    expect(ask(value)).toBe(expected(value));
    expect(ask(value)).toBe(expected(value));
    expect(held()).toBe(before);
  });
});
