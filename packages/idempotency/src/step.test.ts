import type { IncomingMessage, ServerResponse } from "node:http";
import { connect as connectHttp2, createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { HttpError } from "@svc/errors";
import { createPipeline, reply, type Validators } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { pipelineRequest, writeResponse } from "@svc/kernel/node";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { post } from "../test/helpers.js";
import { buildStepApp, gzipCoding } from "../test/pipeline-app.js";
import { idempotency } from "./express.js";
import { MemoryStore } from "./memory-store.js";
import type { IdempotencyOptions } from "./step.js";
import type { IdempotencyStore } from "./store.js";

// draft-ietf-httpapi-idempotency-key-header, through a response pipeline: the step records the
// pipeline's final response value, and a retry's replay is that value, coded for the retry.

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: IdempotencyOptions = {}, hooks: Parameters<typeof buildStepApp>[1] = {}) {
  const built = buildStepApp(options, hooks);
  server = await listen(built.app);
  return { url: server.url, calls: built.calls };
}

describe("idempotency() step through expressAdapter (the common cases: idempotency.test.ts)", () => {
  it("the handler throws → the key is released: the retry runs and its response is the one replayed", async () => {
    const { url, calls } = await start();
    const failed = await post(`${url}/flaky`, "f", {});
    expect(failed.status).toBe(500);
    const retry = await post(`${url}/flaky`, "f", {});
    expect(retry.status).toBe(201);
    expect(await retry.json()).toEqual({ n: 2 });
    const replay = await post(`${url}/flaky`, "f", {});
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual({ n: 2 });
    expect(calls.flaky).toBe(2);
  });

  it("a streamed body over maxStoredBytes → sent whole to the first client; the replay has its status, no body", async () => {
    const { url, calls } = await start({ maxStoredBytes: 10_000 });
    const first = Buffer.from(await (await post(`${url}/stream`, "s2", {})).arrayBuffer());
    expect(first.byteLength).toBe(64 * 4096);
    const again = await post(`${url}/stream`, "s2", {});
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-body-omitted")).toBe("true");
    expect((await again.arrayBuffer()).byteLength).toBe(0);
    expect(calls.stream).toBe(1);
  });

  it("recorded identity, replayed in the retry's coding: first identity, retry gzip, and the other way round", async () => {
    const { url, calls } = await start({}, { pipeline: { coding: gzipCoding } });
    const plain = await post(`${url}/write`, "c1", {}, { "accept-encoding": "identity" });
    expect(plain.headers.get("content-encoding")).toBeNull();
    const text = await plain.text();
    const coded = await fetch(`${url}/write`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": "c1", "accept-encoding": "gzip" },
      body: "{}",
    });
    // fetch decodes; the header says what was sent.
    expect(coded.headers.get("content-encoding")).toBe("gzip");
    expect(coded.headers.get("idempotent-replayed")).toBe("true");
    expect(coded.headers.get("vary")).toContain("Accept-Encoding");
    expect(await coded.text()).toBe(text);

    const zipped = await rawPost(url, "/write", "c2", "gzip");
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    const identity = await rawPost(url, "/write", "c2", "identity");
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(identity.headers["idempotent-replayed"]).toBe("true");
    expect(identity.body.toString()).toBe(gunzipSync(zipped.body).toString());
    expect(calls.write).toBe(2);
  });
});

/** A POST whose response is read as sent (no decoding). */
async function rawPost(url: string, path: string, key: string, acceptEncoding: string) {
  const { request } = await import("node:http");
  return new Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = request(
        `${url}${path}`,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "idempotency-key": key,
            "accept-encoding": acceptEncoding,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        },
      );
      req.on("error", reject);
      req.end("{}");
    },
  );
}

describe("fields other steps set are recorded with the response", () => {
  it("POST with an Idempotency-Key → the validators step's ETag is on the response and on its replay", async () => {
    // What @svc/conditional's validators() does: a tag of the bytes, computed by the pipeline.
    const tagging: Validators = {
      validate(_request, value) {
        value.fields.etag = `"${(value.body as Uint8Array).byteLength}"`;
      },
      evaluate: () => "proceed",
      notModified() {},
      failed: () => new HttpError(412, "failed"),
      beforeWrite: async () => {},
    };
    const app = express();
    let runs = 0;
    const svc = expressAdapter(createPipeline({ validators: tagging }));
    app.post(
      "/orders",
      svc.handle(
        () => {
          runs++;
          return reply.bytes('{"id":1}', "application/json", { status: 201 });
        },
        { idempotency: idempotency({ store: new MemoryStore() }) },
      ),
    );
    server = await listen(app);
    const send = (key?: string) =>
      fetch(`${server?.url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key ? { "idempotency-key": `"${key}"` } : {}) },
        body: "{}",
      });
    const plain = await send();
    expect(plain.headers.get("etag")).toBe('"8"');
    const first = await send("k1");
    expect(first.status).toBe(201);
    expect(await first.text()).toBe('{"id":1}');
    expect(first.headers.get("etag")).toBe('"8"');
    const replay = await send("k1");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("etag")).toBe('"8"');
    expect(await replay.text()).toBe('{"id":1}');
    expect(runs).toBe(2);
  });
});

describe("the record is stored before the response is written", () => {
  it("an HTTP/2 compatibility response, a store slower than the client → the response comes after the record", async () => {
    const events: string[] = [];
    const inner = new MemoryStore();
    const store: IdempotencyStore = {
      claim: (...a) => inner.claim(...a),
      release: (...a) => inner.release(...a),
      complete: async (key, token, response, retentionMs) => {
        // A store slower than the client: the response must still come after it.
        await new Promise((resolve) => setTimeout(resolve, 200));
        events.push(`stored ${response.status} ${Buffer.from(response.body).toString()}`);
        return inner.complete(key, token, response, retentionMs);
      },
    };
    const pipeline = createPipeline();
    const route = { idempotency: idempotency({ store }) };
    const server2 = createServer((req, res) => {
      const request = pipelineRequest(req as unknown as IncomingMessage);
      void pipeline
        .run(
          request,
          { version: undefined, refusal: undefined },
          () => reply.bytes("created", "text/plain", { status: 201 }),
          route,
        )
        .then((value) => writeResponse(res as unknown as ServerResponse, value, req.method ?? "GET"));
    });
    await new Promise<void>((resolve) => server2.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => server2.close(() => resolve())));
    const client = connectHttp2(`http://127.0.0.1:${(server2.address() as AddressInfo).port}`);
    onTestFinished(() => {
      client.close();
    });
    const body = await new Promise<string>((resolve, reject) => {
      const stream = client.request({ ":method": "POST", ":path": "/", "idempotency-key": "h2" });
      let text = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        text += chunk;
      });
      stream.on("end", () => {
        events.push(`received ${text}`);
        resolve(text);
      });
      stream.on("error", reject);
      stream.end();
    });
    expect(body).toBe("created");
    expect(events).toEqual(["stored 201 created", "received created"]);
  });
});
