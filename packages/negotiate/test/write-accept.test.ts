import { createServer } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { pipelineRequest, writeResponse } from "@svc/kernel/node";
import { type Listening, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { representations } from "../src/index.js";
import { onExpress } from "./core.js";

/**
 * RFC 9110 §12.5.1: a request that changes state is refused (406) before its handler runs when
 * nothing offered is acceptable; once its handler has run, `Accept` is disregarded rather than
 * refused, so no write runs for a response that is then refused.
 */
describe.each(["express", "node:http"])("a write whose Accept nothing meets, through %s", (kind) => {
  let server: Listening;
  let writes = 0;
  const handler = (method: string) => {
    if (method !== "GET") writes++;
    return reply({ id: 1, name: "a" }, { status: method === "POST" ? 201 : 200 });
  };
  // The reply narrowed to JSON: what the handler answers with after its write.
  const narrowed = (method: string) => {
    writes++;
    return reply({ id: 1, name: "a" }, { status: method === "POST" ? 201 : 200, only: ["application/json"] });
  };
  beforeAll(async () => {
    const steps = { representations: representations() };
    if (kind === "express") {
      server = await onExpress(steps, {
        "/things": (request) => handler(request.view.method ?? "GET"),
        "/narrowed": (request) => narrowed(request.view.method ?? "GET"),
      });
    } else {
      const pipeline = createPipeline(steps);
      const handleError = errorHandler();
      server = await listenOn(
        createServer((req, res) => {
          const fail = (err: unknown) => handleError(err, req, res, () => res.destroy());
          const request = pipelineRequest(req, res);
          const prepared = pipeline.prepare(request, req.url ?? "/");
          if (prepared.refusal !== undefined) return fail(prepared.refusal);
          const route = request.path === "/narrowed" ? narrowed : handler;
          pipeline
            .run(request, prepared, () => route(req.method ?? "GET"))
            .then((value) => writeResponse(res, value, req.method ?? "GET"))
            .catch(fail);
        }),
      );
    }
  });
  afterAll(() => server.close());

  it.each(["POST", "PUT", "PATCH", "DELETE"])(
    "%s, Accept: image/png → 406 before the handler: no write runs",
    async (method) => {
      const before = writes;
      const res = await fetch(`${server.url}/things`, { method, headers: { accept: "image/png" } });
      expect(res.status).toBe(406);
      expect(writes).toBe(before);
    },
  );

  it.each(["POST", "PUT", "PATCH", "DELETE"])(
    "%s, Accept: application/xml, the reply only JSON → the handler runs once, the default (JSON) is sent, not 406",
    async (method) => {
      const before = writes;
      const res = await fetch(`${server.url}/narrowed`, { method, headers: { accept: "application/xml" } });
      expect(res.status).toBe(method === "POST" ? 201 : 200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await res.json()).toEqual({ id: 1, name: "a" });
      expect(writes).toBe(before + 1);
    },
  );

  it("POST, Accept: application/xml → still XML (a representation the client accepts is chosen)", async () => {
    const res = await fetch(`${server.url}/things`, {
      method: "POST",
      headers: { accept: "application/xml" },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
  });

  it("GET, Accept: image/png → 406 (a read changed nothing)", async () => {
    const res = await fetch(`${server.url}/things`, { headers: { accept: "image/png" } });
    expect(res.status).toBe(406);
  });
});
