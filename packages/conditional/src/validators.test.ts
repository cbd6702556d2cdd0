import { createPipeline, type PipelineRequest, type Prepared, reply } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { representationTag, validators } from "./index.js";

const PREPARED: Prepared = { version: undefined, refusal: undefined };
const JSON_TAG = representationTag("application/json", undefined, '{"id":1}');

function request(method: string, headers: Record<string, string> = {}, preset: Record<string, string> = {}) {
  return {
    view: { method, headers },
    path: "/x",
    preset: (name: string) => preset[name],
  } satisfies PipelineRequest;
}

const pipeline = createPipeline({ validators: validators() });

describe("validators(): tags, cache policy and preconditions on the pipeline's bytes", () => {
  it("GET → a strong tag of the JSON bytes labelled by their type, Cache-Control: no-cache", async () => {
    const value = await pipeline.respond(request("GET"), PREPARED, { id: 1 });
    expect(value.fields.etag).toBe(JSON_TAG);
    expect(value.fields["cache-control"]).toBe("no-cache");
  });

  it.each([
    ["application/json", "application/hal+json"],
    ["application/json", "application/vnd.svc.v1+json"],
    ["application/hal+json", "application/vnd.svc.v1+json"],
  ])("the same bytes as %s and as %s → two tags", (a, b) => {
    expect(representationTag(a, undefined, "{}")).not.toBe(representationTag(b, undefined, "{}"));
  });

  it.each([
    [{ "if-none-match": JSON_TAG }, 304],
    [{ "if-none-match": `W/${JSON_TAG}` }, 304],
    [{ "if-none-match": "*" }, 304],
    [{ "if-none-match": '"other"' }, 200],
    [{ "if-match": '"other"' }, 412],
    [{ "if-match": JSON_TAG }, 200],
  ])("GET with %o → %i", async (headers, status) => {
    const outcome = pipeline.respond(request("GET", headers), PREPARED, { id: 1 });
    if (status === 412)
      await expect(outcome).rejects.toMatchObject({ status: 412, headers: { ETag: JSON_TAG } });
    else expect((await outcome).status).toBe(status);
  });

  it("304 → no representation metadata, the tag and Cache-Control kept", async () => {
    const value = await pipeline.respond(request("GET", { "if-none-match": JSON_TAG }), PREPARED, { id: 1 });
    expect(value.fields).toMatchObject({
      etag: JSON_TAG,
      "cache-control": "no-cache",
      "content-type": null,
      "content-length": null,
    });
    expect(value.body).toBeUndefined();
  });

  it.each([
    [{}, {}, "no-cache"],
    [{ "set-cookie": "a=1" }, {}, "private, no-cache"],
    [{}, { "set-cookie": "a=1" }, "private, no-cache"],
    [{ expires: "Thu, 01 Jan 2099 00:00:00 GMT" }, {}, undefined],
    [{ "cache-control": "max-age=60" }, {}, "max-age=60"],
    [{}, { "cache-control": "max-age=60" }, undefined],
  ])("reply fields %o, fields set in front %o → Cache-Control %s", async (own, preset, expected) => {
    const value = await pipeline.respond(
      request("GET", {}, preset),
      PREPARED,
      reply({ id: 1 }, { headers: own }),
    );
    expect(value.fields["cache-control"]).toBe(expected);
  });

  it("a reply's own ETag that is no entity-tag → not sent; the bytes are tagged", async () => {
    const value = await pipeline.respond(
      request("GET"),
      PREPARED,
      reply({ id: 1 }, { headers: { ETag: "7" } }),
    );
    expect(value.fields.etag).toBe(JSON_TAG);
  });

  it("Last-Modified in the future → the response's own Date", async () => {
    const value = await pipeline.respond(
      request("GET"),
      PREPARED,
      reply({ id: 1 }, { lastModified: new Date(Date.now() + 3_600_000) }),
    );
    expect(value.fields["last-modified"]).toBe(value.fields.date);
  });
});

describe("validators() before a write: preconditions(req, current)", () => {
  const current = { data: { id: 1 } };

  it.each([
    ["PUT", { "if-match": JSON_TAG }, "proceed"],
    ["PUT", { "if-match": '"stale"' }, 412],
    ["PUT", { "if-match": `W/${JSON_TAG}` }, 412],
    ["PUT", { "if-none-match": "*" }, 412],
    ["DELETE", { "if-match": "*" }, "proceed"],
  ])("%s with %o on an existing resource → %s", async (method, headers, expected) => {
    const check = pipeline.checkWrite(request(method, headers), PREPARED, current);
    if (expected === 412)
      await expect(check).rejects.toMatchObject({ status: 412, headers: { ETag: JSON_TAG } });
    else await expect(check).resolves.toBeUndefined();
  });

  it("DELETE with If-Match: * on an absent resource that the write does not create → ignored (the 404 answers, RFC 9110 §13.2.1)", async () => {
    await expect(
      pipeline.checkWrite(request("DELETE", { "if-match": "*" }), PREPARED, undefined),
    ).resolves.toBeUndefined();
  });

  it("PUT creating an absent resource: If-Match: * → 412, If-None-Match: * → proceed", async () => {
    await expect(
      pipeline.checkWrite(request("PUT", { "if-match": "*" }), PREPARED, undefined, true),
    ).rejects.toMatchObject({ status: 412 });
    await expect(
      pipeline.checkWrite(request("PUT", { "if-none-match": "*" }), PREPARED, undefined, true),
    ).resolves.toBeUndefined();
  });

  it("required: a PUT without a precondition → 428", async () => {
    const strict = createPipeline({ validators: validators({ required: true }) });
    await expect(strict.checkWrite(request("PUT"), PREPARED, current)).rejects.toMatchObject({ status: 428 });
  });
});
