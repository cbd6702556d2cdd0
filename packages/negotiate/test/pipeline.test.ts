import { gunzipSync } from "node:zlib";
import { createPipeline, isHttpError, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen, rawRequest } from "@svc/test-utils";
import express, { type NextFunction, type Request, type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compression, json, representations, xml } from "../src/index.js";

let server: Listening;
let writes = 0;

beforeAll(async () => {
  const svc = expressAdapter(
    createPipeline({
      representations: representations({ offers: [json, xml] }),
      coding: compression({ threshold: 10 }),
    }),
  );
  const app = express();
  app.use(svc.prepare);
  app.get(
    "/things/1",
    svc.handle(() => ({ id: 1, name: "a thing with a name long enough to be worth coding" })),
  );
  app.post(
    "/things",
    svc.handle(() => {
      writes++;
      return reply(
        { id: 2 },
        { status: 201, headers: { Location: "/things/2" }, only: ["application/json"] },
      );
    }),
  );
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = isHttpError(err) ? err.status : 500;
    if (isHttpError(err)) for (const [k, v] of Object.entries(err.headers ?? {})) res.setHeader(k, v);
    res.status(status).json({ status, message: (err as Error).message });
  });
  server = await listen(app);
});

afterAll(() => server.close());

describe("representations() and compression() in the pipeline (Express 4 and 5)", () => {
  it.each([
    ["application/json", "application/json; charset=utf-8"],
    ["application/xml", "application/xml; charset=utf-8"],
    ["application/xml;q=0.5, application/json", "application/json; charset=utf-8"],
  ])("GET, Accept: %s → %s, Vary: Accept, Accept-Encoding", async (accept, type) => {
    const res = await rawRequest(`${server.url}/things/1`, "GET", { accept });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe(type);
    expect(res.headers.vary).toBe("Accept, Accept-Encoding");
  });

  it("GET, Accept: image/png → 406 naming the types available", async () => {
    const res = await fetch(`${server.url}/things/1`, { headers: { accept: "image/png" } });
    expect(res.status).toBe(406);
    expect(((await res.json()) as { message: string }).message).toMatch(
      /application\/json, application\/xml/,
    );
  });

  it("GET, Accept-Encoding: gzip → coded once, Content-Length of the coded bytes", async () => {
    const res = await rawRequest(`${server.url}/things/1`, "GET", { "accept-encoding": "gzip" });
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(res.headers["content-length"]).toBe(String(res.body.length));
    expect(JSON.parse(gunzipSync(res.body).toString()).id).toBe(1);
  });

  it("GET, Accept-Encoding: identity;q=0 → 406 before the handler, Vary: Accept-Encoding", async () => {
    const res = await rawRequest(`${server.url}/things/1`, "GET", { "accept-encoding": "identity;q=0" });
    expect(res.status).toBe(406);
  });

  it("POST, Accept: image/png (nothing offered fits) → 406 before the handler: no write", async () => {
    const before = writes;
    const res = await fetch(`${server.url}/things`, { method: "POST", headers: { accept: "image/png" } });
    expect(res.status).toBe(406);
    expect(writes).toBe(before);
  });

  it("POST, Accept: application/xml, the reply only JSON → the write runs once, JSON is sent (Accept disregarded, RFC 9110 §12.5.1), never a 406", async () => {
    const before = writes;
    const res = await fetch(`${server.url}/things`, {
      method: "POST",
      headers: { accept: "application/xml" },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(writes).toBe(before + 1);
  });
});
