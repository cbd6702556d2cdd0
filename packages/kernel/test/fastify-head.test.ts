import { fastifyPipelineApp } from "@svc/test-utils/conformance";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fastifyAdapter } from "../src/fastify.js";
import { type Coder, createPipeline } from "../src/index.js";

/** A coder that codes every response (gzip's name, the bytes reversed: enough for the fields). */
const coding: Coder = {
  preflight: () => undefined,
  choose: () => "gzip",
  encode: (_coding, body) => (Buffer.isBuffer(body) ? Buffer.from(body).reverse() : body),
};

describe("@svc/kernel/fastify: HEAD of a coded response on Fastify's own HEAD route", () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    const svc = fastifyAdapter(createPipeline({ coding }));
    app = fastifyPipelineApp(svc);
    app.get(
      "/item",
      svc.handle(() => ({ name: "a representation long enough to code" })),
    );
    await app.listen({ port: 0, host: "127.0.0.1" });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/item`;
  });
  afterAll(() => app.close());

  it("GET → coded", async () => {
    const res = await fetch(url);
    expect(res.headers.get("content-encoding")).toBe("gzip");
  });

  it("HEAD → the GET's fields: Content-Encoding, and no Content-Length (never 0)", async () => {
    const res = await fetch(url, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(res.headers.get("content-length")).toBeNull();
  });
});
