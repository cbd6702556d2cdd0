import { createPipeline, type PipelineRequest, type Prepared, reply } from "@svc/kernel";
import { compression } from "@svc/negotiate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EARLIER, HIDDEN_TAGS, LISTED_TAGS, MODIFIED, NBSP, NBSP_PRECONDITIONS } from "../test/tables.js";
import { evaluateIfRange, representationTag, validators } from "./index.js";

// Tables over the pipeline's validators step with plain values (no server): what a handler's
// reply becomes for each request's preconditions. The same behaviour through a listening Express
// 5 and 4 server is in pipeline.test.ts.

const PREPARED: Prepared = { version: undefined, refusal: undefined };
const jsonTag = (body: string) => representationTag("application/json", undefined, body);

function request(
  method: string,
  headers: Record<string, string | undefined> = {},
  rawHeaders?: string[],
): PipelineRequest {
  return { view: { method, headers, rawHeaders }, path: "/r", preset: () => undefined };
}

const pipeline = createPipeline({ validators: validators() });
const coded = createPipeline({ validators: validators(), coding: compression({ threshold: 0 }) });
const GZIP = { "accept-encoding": "gzip" };

/** The status of `result` answered to `req`: 200/304 from the value, 412/428 from the rejection. */
async function statusOf(p: Promise<{ status: number }>): Promise<number> {
  try {
    return (await p).status;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

/** A write's outcome: 204 when its preconditions hold, else the refusal's status. */
async function writeStatus(p: Promise<void>): Promise<number> {
  try {
    await p;
    return 204;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

describe("a tag inside another member's quotes is no member (RFC 9110 §8.8.3, §5.6.1)", () => {
  // The current tag of {"id":1}; "v1" in the values below stands for its opaque part.
  const CURRENT = jsonTag('{"id":1}');
  const v1 = (value: string) => value.replaceAll("v1", CURRENT.slice(1, -1));
  const safe = (m: string) => m === "GET" || m === "HEAD";
  const rows = (values: string[], listed: boolean) =>
    values.flatMap((value) =>
      ["GET", "HEAD", "PUT", "DELETE", "PATCH", "POST"].flatMap((method) => [
        { value, method, field: "if-match", status: listed ? (safe(method) ? 200 : 204) : 412 },
        {
          value,
          method,
          field: "if-none-match",
          status: listed ? (safe(method) ? 304 : 412) : safe(method) ? 200 : 204,
        },
      ]),
    );

  it.each([...rows(HIDDEN_TAGS, false), ...rows(LISTED_TAGS, true)])(
    "$method $field: $value → $status",
    async ({ value, method, field, status }) => {
      const headers = { [field]: v1(value) };
      if (safe(method)) {
        const outcome = pipeline.respond(request(method, headers), PREPARED, { id: 1 });
        expect(await statusOf(outcome)).toBe(status);
        if (status === 412) await expect(outcome).rejects.toMatchObject({ headers: { ETag: CURRENT } });
      } else {
        const check = pipeline.checkWrite(request(method, headers), PREPARED, { data: { id: 1 } });
        expect(await writeStatus(check)).toBe(status);
        if (status === 412) await expect(check).rejects.toMatchObject({ headers: { ETag: CURRENT } });
      }
    },
  );
});

describe("U+00A0 (obs-text) around a precondition or an ETag is no OWS", () => {
  const lastModified = new Date(MODIFIED);
  const strict = createPipeline({ validators: validators({ required: true }) });
  let onWarning: () => void;
  beforeAll(() => {
    onWarning = () => {};
    process.on("warning", onWarning);
  });
  afterAll(() => {
    process.off("warning", onWarning);
  });

  /** GET/HEAD of `/r` (ETag "v1", Last-Modified MODIFIED), or a PUT on it (`/required`: 428 without a precondition). */
  const answer = (method: string, path: string, headers: Record<string, string>, etag = '"v1"') => {
    if (method === "GET" || method === "HEAD")
      return statusOf(
        pipeline.respond(
          request(method, headers),
          PREPARED,
          reply({ id: 1 }, { headers: { ETag: etag }, lastModified }),
        ),
      );
    const p = path === "/required" ? strict : pipeline;
    // The current state is tagged from its bytes: the table's "v1" stands for that tag.
    const tag = jsonTag('{"id":1}');
    const named = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replaceAll('"v1"', tag)]));
    return writeStatus(p.checkWrite(request(method, named), PREPARED, { data: { id: 1 }, lastModified }));
  };

  it.each(NBSP_PRECONDITIONS)(
    "%s %s %j → %d (the value is no * and no HTTP-date)",
    async (method, path, headers, status) => {
      expect(await answer(method, path, headers)).toBe(status);
    },
  );

  // The same values with OWS (SP, HTAB) inside a list, and the plain ones, still hold.
  it.each([
    ["GET", "/r", { "if-none-match": "*" }, 304],
    ["GET", "/r", { "if-none-match": `"x" ,\t"v1"\t` }, 304],
    ["PUT", "/r", { "if-match": "*" }, 204],
    ["PUT", "/r", { "if-match": `"x",\t "v1"` }, 204],
    ["PUT", "/r", { "if-none-match": "*" }, 412],
    ["GET", "/r", { "if-modified-since": MODIFIED }, 304],
    ["GET", "/r", { "if-unmodified-since": EARLIER }, 412],
    ["PUT", "/r", { "if-unmodified-since": EARLIER }, 412],
  ])("%s %s %j → %d (control)", async (method, path, headers, status) => {
    expect(await answer(method, path, headers)).toBe(status);
  });

  it.each([`"v1"${NBSP}`, `${NBSP}"v1"`, `W/"v1"${NBSP}`])(
    "a reply's ETag %j → not sent; the body's own strong tag instead",
    async (tag) => {
      const value = await pipeline.respond(
        request("GET"),
        PREPARED,
        reply({ id: 1 }, { headers: { ETag: tag } }),
      );
      expect(value.status).toBe(200);
      expect(value.fields.etag).toBe(jsonTag('{"id":1}'));
    },
  );
});

describe("evaluateIfRange (RFC 9110 §13.1.5)", () => {
  const PAST = new Date("2020-01-01T00:00:00Z");
  const lm = PAST.toUTCString();
  const current = { etag: '"s1"', lastModified: PAST };

  it.each([
    ['"s1"', true],
    ['W/"s1"', false],
    ['w/"s1"', false],
    ['"s2"', false],
    ['"s1"x', false],
    ['"s1", "s1"', false],
    ['"s2", "s1"', false],
    ['"s1', false],
    ["s1", false],
    ["*", false],
    ["", false],
    [" \t", false],
    ['"s1"\u00a0', false],
    [lm, true],
    ["Wednesday, 01-Jan-20 00:00:00 GMT", true],
    ["Wed Jan  1 00:00:00 2020", true],
    ["Wed, 01 Jan 2020 00:00:01 GMT", false],
    ["Thu, 01 Jan 2025 00:00:00 GMT", false],
    ["Tue, 31 Dec 2019 23:59:59 GMT", false],
    ["Sun, 30 Feb 2020 00:00:00 GMT", false],
    ["Wed, 01 Jan 2020 24:00:00 GMT", false],
    ["2020-01-01T00:00:00Z", false],
    [`${lm}, ${lm}`, false],
  ])('ETag "s1", Last-Modified 2020-01-01: If-Range %j → %s', (ifRange, holds) => {
    expect(evaluateIfRange(ifRange, current)).toBe(holds);
  });

  it("a weak current tag satisfies no If-Range, not even itself", () => {
    expect(evaluateIfRange('W/"w1"', { etag: 'W/"w1"' })).toBe(false);
  });

  it("a Last-Modified within the second of the Date, or later, is no strong validator (§8.8.2.2)", () => {
    const now = new Date("2026-01-01T00:00:00.500Z");
    const sameSecond = new Date("2026-01-01T00:00:00Z");
    expect(evaluateIfRange(sameSecond.toUTCString(), { lastModified: sameSecond }, now)).toBe(false);
    const future = new Date("2099-01-01T00:00:00Z");
    expect(evaluateIfRange(future.toUTCString(), { lastModified: future }, now)).toBe(false);
    expect(evaluateIfRange(lm, { lastModified: PAST }, now)).toBe(true);
  });

  it("no If-Range holds; an absent resource satisfies none", () => {
    expect(evaluateIfRange(undefined, current)).toBe(true);
    expect(evaluateIfRange('"s1"', undefined)).toBe(false);
  });
});

describe("coding: the tag of coded bytes is weak, on the 200, its 304 and its 412", () => {
  const big = Array.from({ length: 60 }, (_, i) => ({ id: i }));
  const tag = jsonTag(JSON.stringify(big));

  it.each([
    [{}, 200, `W/${tag}`],
    [{ "if-none-match": tag }, 304, `W/${tag}`],
    [{ "if-none-match": `W/${tag}` }, 304, `W/${tag}`],
    [{ "if-match": tag }, 412, `W/${tag}`],
    [{ "if-match": `W/${tag}` }, 412, `W/${tag}`],
  ])("gzip client, %j → %i with ETag %s", async (headers, status, etag) => {
    const outcome = coded.respond(request("GET", { ...GZIP, ...headers }), PREPARED, big);
    expect(await statusOf(outcome)).toBe(status);
    if (status === 412) await expect(outcome).rejects.toMatchObject({ headers: { ETag: etag } });
    else expect((await outcome).fields.etag).toBe(etag);
  });
});
