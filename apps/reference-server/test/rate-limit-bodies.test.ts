import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type Started, sqlite } from "./harness.js";

/**
 * Spec part 8 rule 1: a client over the limit gets 429 with Retry-After, whatever it sends. A
 * request body that could not be parsed (malformed JSON, an unsupported media type) used to be
 * refused before the rate limit counted the request, so such requests were never limited and the
 * server read and parsed each one without end.
 */
describe("the rate limit counts writes whose body is refused (RATE_LIMIT_MAX=2)", () => {
  let s: Started;
  beforeAll(async () => {
    s = await sqlite.start({ RATE_LIMIT_MAX: "2", RATE_LIMIT_WINDOW_SECONDS: "60" });
  });
  afterAll(() => s?.stop());

  it("the admin sending malformed JSON, then XML: 400, 415, then 429 with Retry-After", async () => {
    const bodies = [
      ["application/json", "{bad"],
      ["application/xml", "<department/>"],
      ["application/json", "{bad"],
      ["application/xml", "<department/>"],
    ];
    const statuses: number[] = [];
    let last: Response | undefined;
    for (const [type, body] of bodies) {
      last = await fetch(`${s.url}/departments`, {
        method: "POST",
        headers: { authorization: ADMIN, "content-type": type as string },
        body: body as string,
      });
      await last.arrayBuffer();
      statuses.push(last.status);
    }
    expect(statuses).toEqual([400, 415, 429, 429]);
    expect(last?.headers.get("retry-after")).toMatch(/^\d+$/);
  });
});
