import type { IncomingMessage, ServerResponse } from "node:http";
import { isHttpError } from "@svc/errors";
import { errorHandler } from "@svc/errors/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type CurrentState,
  checkPreconditions,
  preconditionFailed,
  type RepresentationTags,
} from "./core.js";
import { preconditions } from "./express.js";
import { representationTag } from "./validators.js";

// One state, two representations with their own strong tags (RFC 9110 §8.8.3).
const JSON_BODY = '{"id":1,"name":"Ada"}';
const XML_BODY = "<employee><id>1</id><name>Ada</name></employee>";
const JSON_TAG = representationTag("application/json", undefined, JSON_BODY);
const XML_TAG = representationTag("application/xml", undefined, XML_BODY);

/** How often the XML tag was computed: only when the JSON tag did not match. */
let xmlComputed = 0;
let exists = true;

function tags(): RepresentationTags {
  return {
    "application/json": JSON_TAG,
    "application/xml": async () => {
      xmlComputed++;
      return representationTag("application/xml", undefined, XML_BODY);
    },
  };
}
const state = (): CurrentState | undefined => (exists ? { etag: tags() } : undefined);

let viaExpress: Listening;
let viaNode: Listening;
let reads = 0;
beforeAll(async () => {
  const app = express();
  const check = preconditions({ current: state });
  app.put("/doc", check, (_req, res) => {
    res.json({ ok: true });
  });
  app.get("/doc", check, (_req, res) => {
    res.json({ ok: true });
  });
  app.use(errorHandler({ logger: { error: () => {} } }));
  viaExpress = await listen(app);
  // The core alone, from node:http: the state is read only for a conditional request.
  viaNode = await listen(async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const outcome = await checkPreconditions(req, async () => {
        reads++;
        return state();
      });
      res.writeHead(outcome === 304 ? 304 : 200).end();
    } catch (err) {
      const status = isHttpError(err) ? err.status : 500;
      const etag = isHttpError(err) ? err.headers?.ETag : undefined;
      res.writeHead(status, etag === undefined ? {} : { ETag: etag }).end();
    }
  });
});
afterAll(async () => {
  await viaExpress.close();
  await viaNode.close();
});
beforeEach(() => {
  xmlComputed = 0;
  reads = 0;
  exists = true;
});

// [case, method, headers, status, whether the XML tag had to be computed]
const table: Array<[string, string, Record<string, string>, number, boolean]> = [
  ["If-Match: the JSON tag → proceeds, XML never serialized", "PUT", { "if-match": JSON_TAG }, 200, false],
  ["If-Match: the XML tag → proceeds", "PUT", { "if-match": XML_TAG }, 200, true],
  ["If-Match: list naming the XML tag → proceeds", "PUT", { "if-match": `"x", ${XML_TAG}` }, 200, true],
  ["If-Match: weak XML tag → 412 (strong comparison)", "PUT", { "if-match": `W/${XML_TAG}` }, 412, true],
  ["If-Match: stale → 412", "PUT", { "if-match": '"stale"' }, 412, true],
  ["If-Match: * → proceeds, no tag compared", "PUT", { "if-match": "*" }, 200, false],
  ["If-None-Match: the XML tag on a write → 412", "PUT", { "if-none-match": XML_TAG }, 412, true],
  ["If-None-Match: weak JSON tag on a write → 412", "PUT", { "if-none-match": `W/${JSON_TAG}` }, 412, false],
  ["If-None-Match: other tag → proceeds", "PUT", { "if-none-match": '"other"' }, 200, true],
  ["GET If-None-Match: the XML tag → 304", "GET", { "if-none-match": XML_TAG }, 304, true],
  ["no precondition → proceeds, no tag computed", "PUT", {}, 200, false],
];

describe("one current tag per representation (RFC 9110 §8.8.3, §13.1.1, §13.2.2)", () => {
  describe.each([
    ["preconditions() in Express", () => viaExpress],
    ["checkPreconditions() from node:http", () => viaNode],
  ])("%s", (_name, server) => {
    it.each(table)("%s", async (_case, method, headers, status, serializedXml) => {
      const res = await fetch(`${server().url}/doc`, { method, headers });
      expect(res.status).toBe(status);
      expect(xmlComputed > 0).toBe(serializedXml);
    });

    it("a 412 carries the default representation's tag", async () => {
      const res = await fetch(`${server().url}/doc`, { method: "PUT", headers: { "if-match": '"stale"' } });
      expect(res.status).toBe(412);
      expect(res.headers.get("etag")).toBe(JSON_TAG);
    });

    it("If-Match: * on a missing resource → 412", async () => {
      exists = false;
      const res = await fetch(`${server().url}/doc`, { method: "PUT", headers: { "if-match": "*" } });
      expect(res.status).toBe(412);
    });
  });

  it("checkPreconditions reads the state only for a conditional request", async () => {
    await fetch(`${viaNode.url}/doc`, { method: "PUT" });
    expect(reads).toBe(0);
    await fetch(`${viaNode.url}/doc`, { method: "PUT", headers: { "if-match": JSON_TAG } });
    expect(reads).toBe(1);
  });

  it("a representation without a tag is skipped", async () => {
    const req = { method: "PUT", headers: { "if-match": XML_TAG } };
    const current = { etag: { "text/csv": () => undefined, "application/xml": XML_TAG } };
    await expect(checkPreconditions(req, current)).resolves.toBe("proceed");
  });
});

describe("preconditionFailed", () => {
  it("a changed resource: 412 with its validators", () => {
    const modified = new Date("2026-03-01T12:00:00Z");
    const err = preconditionFailed({ etag: '"v2"', lastModified: modified });
    expect(err.status).toBe(412);
    expect(err.code).toBe("precondition_failed");
    // With the Date that Last-Modified was checked against (RFC 9110 §8.8.2.1).
    expect(err.headers).toEqual({
      ETag: '"v2"',
      "Last-Modified": modified.toUTCString(),
      Date: expect.stringMatching(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/),
    });
    expect(err.message).toMatch(/changed/);
  });

  it("a missing resource: 412 saying so, without validators", () => {
    const err = preconditionFailed(undefined);
    expect(err.status).toBe(412);
    expect(err.headers ?? {}).toEqual({});
    expect(err.message).toMatch(/does not exist/);
  });
});
