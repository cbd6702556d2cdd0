import type { IncomingMessage, ServerResponse } from "node:http";
import { type Listening, listen } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchView } from "../src/fetch.js";
import { compileTrust, exchangeOf, requestFacts } from "../src/index.js";
import { nodeView } from "../src/node.js";

describe("the exchange carries the view and the facts resolved for it", () => {
  let server: Listening;
  beforeAll(async () => {
    const trust = compileTrust("loopback");
    server = await listen((req: IncomingMessage, res: ServerResponse) => {
      const view = nodeView(req);
      // A limiter asks for the client; then the links ask for the origin with the same trust.
      const limiter = requestFacts(view, trust);
      const client = limiter.client;
      req.headers["x-forwarded-for"] = "198.51.100.9";
      const links = requestFacts(req, trust);
      res.end(
        JSON.stringify({
          recorded: exchangeOf(req).view === req && view === req,
          client,
          linksClient: links.client,
          origin: links.origin,
          linksVary: links.vary,
          limiterVary: limiter.vary,
        }),
      );
    });
  });
  afterAll(() => server.close());

  it("X-Forwarded-For: 192.0.2.60, the same trust asked twice → one reading: the client as first read", async () => {
    const res = await fetch(server.url, {
      headers: { "x-forwarded-for": "192.0.2.60", "x-forwarded-host": "shop.example" },
    });
    expect(await res.json()).toEqual({
      recorded: true,
      client: "192.0.2.60",
      linksClient: "192.0.2.60",
      origin: "http://shop.example",
      // Each asker's Vary names the fields of the facts it read.
      linksVary: ["X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-For"],
      limiterVary: ["X-Forwarded-For"],
    });
  });
});

describe("fetchView records its view in the Request's exchange", () => {
  it("fetchView(request) → exchangeOf(request).view, and the view stands for the Request", () => {
    const request = new Request("http://api.example/employees", {
      headers: { "x-forwarded-for": "192.0.2.1" },
    });
    const view = fetchView(request);
    expect(exchangeOf(request).view).toBe(view);
    expect(exchangeOf(view)).toBe(exchangeOf(request));
    expect(Object.keys(view)).not.toContain("raw");
    expect(requestFacts(view, true)).not.toBe(requestFacts(view, true));
    expect(exchangeOf(request).facts).toHaveLength(1);
  });
});
