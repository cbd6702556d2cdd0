import type { IncomingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { type Body, createPipeline, fieldText, type PipelineRequest, reply } from "@svc/kernel";
import { compression } from "@svc/negotiate";
import { describe, expect, it } from "vitest";
import { idempotency } from "./express.js";
import { MemoryStore } from "./memory-store.js";

/**
 * A replay is recorded in identity and coded by the pipeline's coding step, like any response:
 * RFC 9110 §12.5.3, a retry never gets a coding its Accept-Encoding does not accept, and gets the
 * one a first request with that field would get. One reading of the field, the coding step's: this
 * table runs a first request and a replay over every field of up to three members drawn from the
 * names and weights below (with repeats and `*`), and compares their codings.
 */
const NAMES = ["gzip", "br", "identity", "*", "deflate"];
const WEIGHTS = ["", ";q=1", ";q=0.5", ";q=0", ";q=0.001"];

function* fields(): Generator<string | undefined> {
  yield undefined;
  yield "";
  const members = NAMES.flatMap((n) => WEIGHTS.map((w) => `${n}${w}`));
  for (const a of members) {
    yield a;
    for (const b of members) {
      yield `${a}, ${b}`;
      for (const c of ["gzip;q=0.5", "*;q=0.2", "identity;q=0.5", "br"]) yield `${a}, ${b}, ${c}`;
    }
  }
}

const TEXT = "a line of text that compresses well. ".repeat(40);
const pipeline = createPipeline({ coding: compression({ threshold: 0 }) });
const PREPARED = { version: undefined, refusal: undefined };

function request(acceptEncoding: string | undefined, key?: string): PipelineRequest {
  const headers: IncomingHttpHeaders = {};
  if (acceptEncoding !== undefined) headers["accept-encoding"] = acceptEncoding;
  if (key !== undefined) headers["idempotency-key"] = key;
  return { view: { method: "POST", headers }, path: "/reports" };
}

const handler = () => reply.bytes(TEXT, "text/plain; charset=utf-8", { status: 201 });

/** The coding of a response value (`identity` when it has none), or the error it was refused with. */
async function codingOf(run: Promise<{ fields: Record<string, unknown>; body: Body | undefined }>) {
  try {
    const value = await run;
    return fieldText(value.fields["content-encoding"] as string | undefined) ?? "identity";
  } catch (err) {
    return `refused ${(err as { status?: number }).status}`;
  }
}

describe("a replay is coded for the retry as a first response would be", () => {
  it("on every Accept-Encoding field of the table", async () => {
    const step = idempotency({ store: new MemoryStore({ maxEntries: 10 }) });
    const route = { idempotency: step };
    await pipeline.run(request("identity", "k"), PREPARED, handler, route);
    const disagreements: string[] = [];
    let rows = 0;
    for (const field of fields()) {
      rows++;
      // The 406 for a field that refuses every coding is the pipeline's preflight, before any step.
      const prepared = pipeline.prepare(request(field), "/reports");
      if (prepared.refusal !== undefined) continue;
      const first = await codingOf(pipeline.run(request(field), PREPARED, handler));
      const replay = await codingOf(pipeline.run(request(field, "k"), PREPARED, handler, route));
      if (first !== replay) disagreements.push(`${JSON.stringify(field)} → first ${first}, replay ${replay}`);
    }
    expect(rows).toBeGreaterThan(2_500);
    expect(disagreements.slice(0, 20)).toEqual([]);
  }, 120_000);

  it.each([
    [undefined, "identity"],
    ["gzip", "gzip"],
    ["gzip;q=0.5", "gzip"],
    ["gzip;q=0", "identity"],
    ["gzip;q=0, gzip", "identity"],
    ["x-gzip", "gzip"],
    ["br", "br"],
    ["br;q=0, gzip", "gzip"],
  ] as const)(
    "recorded in identity, a retry with Accept-Encoding %j → %s, the same bytes decoded",
    async (field, coding) => {
      const step = idempotency({ store: new MemoryStore() });
      const route = { idempotency: step };
      const first = await pipeline.run(request("identity", "t"), PREPARED, handler, route);
      expect(first.fields["content-encoding"]).toBeUndefined();
      const replay = await pipeline.run(request(field, "t"), PREPARED, handler, route);
      expect(replay.fields["idempotent-replayed"]).toBe("true");
      expect(fieldText(replay.fields["content-encoding"] as string | undefined) ?? "identity").toBe(coding);
      if (coding !== "identity") expect(replay.vary).toContain("Accept-Encoding");
      const bytes = Buffer.from(replay.body as Uint8Array);
      const decoded =
        coding === "gzip" ? gunzipSync(bytes) : coding === "br" ? brotliDecompressSync(bytes) : bytes;
      expect(decoded.toString()).toBe(TEXT);
    },
  );
});
