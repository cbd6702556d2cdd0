import { describe, expect, it } from "vitest";
import { checkPreconditions, evaluatePreconditions, preconditionFailed } from "./core.js";

// RFC 9110 §8.8.3: entity-tag = [ weak ] opaque-tag, opaque-tag = DQUOTE *etagc DQUOTE. A current
// tag that is no entity-tag (`7` where `"7"` is meant) is the application's mistake: the core throws
// a TypeError naming it rather than answer a 412 carrying a tag no retry can pass. A reply's own
// such ETag is dropped by validators() (pipeline-bodies.test.ts).

describe("the core refuses a current tag that is no entity-tag (TypeError, never a 412 carrying it)", () => {
  const code = { code: "ERR_SVC_CONDITIONAL_INVALID_ETAG" };

  it.each([
    ["GET", { "if-none-match": "7" }],
    ["GET", { "if-none-match": '"7"' }],
    ["GET", { "if-match": "7" }],
    ["PUT", { "if-match": '"7"' }],
    ["PUT", { "if-unmodified-since": "Thu, 01 Jan 2026 00:00:00 GMT" }],
  ])("evaluatePreconditions(%s, %j, { etag: '7' }) throws", (method, headers) => {
    expect(() => evaluatePreconditions(method, headers, { etag: "7" })).toThrow(TypeError);
    expect(() => evaluatePreconditions(method, headers, { etag: "7" })).toThrow(
      expect.objectContaining(code),
    );
  });

  it("an unconditional request compares no tag: proceed, as checkPreconditions does", async () => {
    expect(evaluatePreconditions("GET", {}, { etag: "7" })).toBe("proceed");
    expect(await checkPreconditions({ method: "GET", headers: {} }, { etag: "7" })).toBe("proceed");
  });

  it("checkPreconditions and preconditionFailed throw the same TypeError", async () => {
    await expect(
      checkPreconditions({ method: "PUT", headers: { "if-match": "7" } }, { etag: "7" }),
    ).rejects.toThrow(expect.objectContaining(code));
    expect(() => preconditionFailed({ etag: '"a b"' })).toThrow(expect.objectContaining(code));
    expect(preconditionFailed({ etag: 'W/"7"' }).headers).toMatchObject({ ETag: 'W/"7"' });
  });
});
