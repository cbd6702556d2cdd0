import { createServer } from "node:http";
import { type Listening, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compression, representations, selectEncoding } from "../src/index.js";
import { onExpress } from "./core.js";

/** Where a team moving from `negotiator` meets the same answers, through a listening server. */
describe("Accept with a media range naming a parameter twice (RFC 6838 §4.3)", () => {
  let server: Listening;
  beforeAll(async () => {
    server = await onExpress(
      { representations: representations(), coding: compression() },
      { "/things/1": () => ({ id: 1 }) },
    );
  });
  afterAll(() => server.close());

  const get = (accept: string) => fetch(`${server.url}/things/1`, { headers: { accept } });

  it.each(["text/html;LEVEL=1;level=2", "text/html;level=1;level=1", "application/json;a=1;A=2"])(
    "Accept: %s alone → the range is invalid, ignored, so no Accept: 200 JSON",
    async (accept) => {
      const res = await get(accept);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    },
  );

  it("Accept: text/html;LEVEL=1;level=2, application/xml;q=0.5 → the valid range decides: XML", async () => {
    const res = await get("text/html;LEVEL=1;level=2, application/xml;q=0.5");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
  });
});

describe("selectEncoding on a server offering identity first", () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listenOn(
      createServer((req, res) => {
        const coding = selectEncoding(req.headers["accept-encoding"], ["identity", "gzip"]);
        res.setHeader("X-Coding", coding ?? "none");
        res.end();
      }),
    );
  });
  afterAll(() => server.close());

  it.each([
    ["gzip", "gzip"],
    ["gzip, identity", "identity"],
    ["br", "identity"],
  ])(
    "Accept-Encoding: %s → %s (a listed coding wins a tie with the implied identity)",
    async (header, coding) => {
      const res = await fetch(server.url, { headers: { "accept-encoding": header } });
      expect(res.headers.get("x-coding")).toBe(coding);
    },
  );
});
