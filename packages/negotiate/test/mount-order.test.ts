import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { fieldText, HttpError, type PipelineOptions, type Validators } from "@svc/kernel";
import { rawRequest } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compression, representations } from "../src/index.js";
import { onExpress } from "./core.js";

/**
 * A validators step as small as a test can make it: a strong tag of the bytes and their coding
 * (weak when coded, RFC 9110 §8.8.3), and If-None-Match.
 */
const validators: Validators = {
  validate(_request, value, coding) {
    if (!(value.body instanceof Uint8Array)) return;
    const tag = `"${createHash("sha256").update(value.body).digest("base64url")}"`;
    value.fields.etag = coding === "identity" ? tag : `W/${tag}`;
  },
  evaluate: (request, value) =>
    request.view.headers["if-none-match"] === fieldText(value.fields.etag) ? 304 : "proceed",
  notModified(_request, value) {
    value.status = 304;
    value.fields["content-type"] = null;
  },
  failed: () => HttpError.preconditionFailed(),
  beforeWrite: async () => {},
};

const body = { name: "x".repeat(200) };

// negotiate() and conditional() used to depend on their mount order: conditional() first, the
// coder sent the headers before conditional() saw the body, so a compressing app sent its bodies
// uncoded and warned. In the pipeline the order is fixed: the coding is decided, then the
// validators, then the preconditions, then the coding applied, whatever order the steps are given in.
describe.each<[string, PipelineOptions]>([
  [
    "coding before validators",
    { coding: compression({ threshold: 10 }), validators, representations: representations() },
  ],
  [
    "validators before coding",
    { validators, representations: representations(), coding: compression({ threshold: 10 }) },
  ],
])("steps given as %s", (_order, steps) => {
  let server: Awaited<ReturnType<typeof onExpress>>;
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  beforeAll(async () => {
    process.on("warning", onWarning);
    server = await onExpress(steps, { "/e": () => body });
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await server.close();
  });

  it("Accept-Encoding: gzip twice → 200 coded with its weak tag, the tag revalidates: 304; no warning", async () => {
    warnings.length = 0;
    for (let i = 0; i < 2; i++) {
      const res = await rawRequest(`${server.url}/e`, "GET", { "accept-encoding": "gzip" });
      expect(res.status).toBe(200);
      expect(res.headers["content-encoding"]).toBe("gzip");
      expect(JSON.parse(gunzipSync(res.body).toString())).toEqual(body);
      expect(res.headers.etag).toMatch(/^W\/"/);
      const again = await rawRequest(`${server.url}/e`, "GET", {
        "accept-encoding": "gzip",
        "if-none-match": res.headers.etag as string,
      });
      expect(again.status).toBe(304);
      expect(String(again.headers.vary)).toContain("Accept-Encoding");
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toHaveLength(0);
  });
});
