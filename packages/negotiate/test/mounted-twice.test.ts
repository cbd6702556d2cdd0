import { gunzipSync } from "node:zlib";
import { hal, halJson } from "@svc/hal";
import { reply } from "@svc/kernel";
import { rawRequest } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compression, json, representations } from "../src/index.js";
import { onExpress } from "./core.js";

const raw = (url: string, headers: Record<string, string>) => rawRequest(url, "GET", headers);

const items = Array.from({ length: 300 }, (_, i) => ({ id: i, name: `Employee ${i}` }));

// negotiate() mounted for the app and again for one route with its own representations (as
// halJson's documentation showed) wrapped the response's removeHeader around itself until the
// stack overflowed. In the pipeline a route's own representations are part of its reply: one
// representation step, one coding step.
describe("a route with its own representations (json, halJson) in the app's pipeline", () => {
  let server: Awaited<ReturnType<typeof onExpress>>;
  beforeAll(async () => {
    server = await onExpress(
      { representations: representations(), coding: compression() },
      {
        "/employees": () =>
          reply(hal({ items }).link("self", "/employees"), { representations: [json, halJson] }),
      },
    );
  });
  afterAll(async () => server.close());

  it("Accept-Encoding: gzip → 200, the body gzip-coded once", async () => {
    const res = await raw(`${server.url}/employees`, { "accept-encoding": "gzip" });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    const body = JSON.parse(gunzipSync(res.body).toString()) as { items: unknown[] };
    expect(body.items).toHaveLength(300);
  });

  it("Accept: application/hal+json → the route's halJson, coded once; the server is still up", async () => {
    const res = await raw(`${server.url}/employees`, {
      "accept-encoding": "gzip",
      accept: "application/hal+json",
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/hal\+json/);
    expect(String(res.headers.vary)).toContain("Accept-Encoding");
    expect((JSON.parse(gunzipSync(res.body).toString()) as { items: unknown[] }).items).toHaveLength(300);
    expect((await raw(`${server.url}/employees`, {})).status).toBe(200);
  });
});
