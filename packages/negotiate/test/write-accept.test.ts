import { createServer } from "node:http";
import { errorHandler } from "@svc/errors";
import { type Listening, listen, listenOn } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNegotiator, negotiate } from "../src/index.js";

/**
 * RFC 9110 §12.5.1: once a request that changes state has run its handler, `Accept` is disregarded
 * rather than refused, so no write runs for a response that is then refused.
 */
describe.each(["express", "node:http"])("a write whose Accept nothing meets, through %s", (kind) => {
  let server: Listening;
  let writes = 0;
  beforeAll(async () => {
    if (kind === "express") {
      const app = express();
      app.use(negotiate());
      app.all("/things", async (req, res) => {
        if (req.method !== "GET") writes++;
        await res.status(req.method === "POST" ? 201 : 200).represent({ id: 1, name: "a" });
      });
      app.use(errorHandler());
      server = await listen(app);
    } else {
      const negotiator = createNegotiator();
      const handleError = errorHandler();
      server = await listenOn(
        createServer((req, res) => {
          const fail = (err: unknown) => handleError(err, req, res, () => res.destroy());
          negotiator.negotiate(req, res);
          if (req.method !== "GET") writes++;
          const status = req.method === "POST" ? 201 : 200;
          negotiator.represent(req, res, { id: 1, name: "a" }, { status }).catch(fail);
        }),
      );
    }
  });
  afterAll(() => server.close());

  it.each(["POST", "PUT", "PATCH", "DELETE"])(
    "%s, Accept: image/png → the handler runs once, the default (JSON) is sent, not 406",
    async (method) => {
      const before = writes;
      const res = await fetch(`${server.url}/things`, { method, headers: { accept: "image/png" } });
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
