import { createServer } from "node:http";
import {
  CACHE_LIMIT,
  CACHE_MAX_BYTES,
  CACHEABLE_LENGTH,
  MAX_FIELD_LENGTH,
  parseCacheUsage,
} from "@svc/kernel";
import { listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// The Accept parse cache is shared by the whole process and keyed by what clients send: it must
// hold a bounded number of bytes, not only of entries, whatever Accept values arrive.

let url = "";
let close: () => Promise<void> = async () => {};
beforeAll(async () => {
  const handleError = errorHandler({ logger: { error() {} } });
  // The error record follows Accept (RFC 9110 §12.5.1): every request goes through the cache.
  const server = createServer((req, res) => handleError(HttpError.notFound(), req, res, () => res.destroy()));
  ({ url, close } = await listenOn(server));
});
afterAll(() => close());

/** A distinct Accept of at most `length` characters (and close to it) whose last range is `last`. */
function longAccept(i: number, length: number, last: string): string {
  let accept = `text/x-${i};q=0.1`;
  // Ranges long enough that the list stays under MAX_LIST_MEMBERS (the field is then used).
  const pad = "a".repeat(Math.max(11, Math.ceil(length / 100) - 15));
  for (let n = 0; ; n++) {
    const range = `,text/r${String(n).padStart(3, "0")};p=${pad};q=0.1`;
    if (accept.length + range.length + 1 + last.length > length) return `${accept},${last}`;
    accept += range;
  }
}

async function get(accept: string): Promise<Response> {
  const res = await fetch(`${url}/x`, { headers: { accept } });
  await res.arrayBuffer();
  return res;
}

describe("the Accept parse cache: bounded in entries and in bytes", () => {
  it(`${CACHE_LIMIT} distinct Accept values of ${MAX_FIELD_LENGTH} characters → held bytes ≤ CACHE_MAX_BYTES`, async () => {
    for (let i = 0; i < CACHE_LIMIT; i++) {
      const res = await get(longAccept(i, MAX_FIELD_LENGTH - 10, "application/xml"));
      // Parsed on each request all the same: the XML record, as the client asked.
      expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    }
    const { accept } = parseCacheUsage();
    expect(accept.bytes).toBeLessThanOrEqual(CACHE_MAX_BYTES);
    expect(accept.longestKey).toBeLessThanOrEqual(CACHEABLE_LENGTH);
  });

  it(`${CACHE_LIMIT * 2} distinct Accept values of ${CACHEABLE_LENGTH} characters → held bytes ≤ CACHE_MAX_BYTES, entries ≤ CACHE_LIMIT`, async () => {
    for (let i = 0; i < CACHE_LIMIT * 2; i++) {
      const accept = longAccept(i, CACHEABLE_LENGTH, "application/problem+json");
      expect(accept.length).toBeLessThanOrEqual(CACHEABLE_LENGTH);
      const res = await get(accept);
      expect(res.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    }
    const { accept } = parseCacheUsage();
    expect(accept.bytes).toBeLessThanOrEqual(CACHE_MAX_BYTES);
    expect(accept.entries).toBeLessThanOrEqual(CACHE_LIMIT);
  });

  it("a short Accept sent again → a hit: no new entry, no new bytes", async () => {
    await get("application/xml, application/json;q=0.9");
    const before = parseCacheUsage();
    expect(before.accept.entries).toBeGreaterThan(0);
    const res = await get("application/xml, application/json;q=0.9");
    expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(parseCacheUsage()).toEqual(before);
  });
});
