import { errorResponder } from "@svc/errors/node";
import { composeOpenApi, type OpenApiObject } from "@svc/kernel";
import { type Listening, listen } from "@svc/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { type RateLimitDraft, rateLimitOpenApi } from "../src/index.js";
import { rateLimit } from "../src/node.js";

// The fragment names the fields the limiter really sends: each header option, through a listening
// server, a first answer let through and a second refused.

const servers: Listening[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

type Doc = {
  components: { responses: Record<string, { headers: Record<string, unknown> }> };
  paths: Record<
    string,
    Record<string, { responses: Record<string, { headers?: Record<string, unknown> } | { $ref: string }> }>
  >;
};

function described(options: { legacyHeaders?: boolean; standardHeaders?: boolean | RateLimitDraft }): Doc {
  const document: OpenApiObject = {
    openapi: "3.1.0",
    info: { title: "t", version: "1" },
    paths: { "/": { get: { responses: { "200": { description: "ok" } } } } },
  };
  return composeOpenApi(document, [rateLimitOpenApi(options)]) as Doc;
}

const lower = (names: Iterable<string>) => [...names].map((n) => n.toLowerCase()).sort();
const QUOTA = /^(x-)?ratelimit/;

describe.each([
  [{}],
  [{ legacyHeaders: false }],
  [{ standardHeaders: false }],
  [{ standardHeaders: "draft-6" as const }],
  [{ standardHeaders: "draft-7" as const, legacyHeaders: false }],
  [{ standardHeaders: "draft-8" as const }],
])("rateLimitOpenApi(%j)", (options) => {
  it("describes the fields of the answers the limiter lets through and of its 429", async () => {
    const limit = rateLimit({ limit: 1, windowMs: 60_000, key: () => "one", ...options });
    const sendError = errorResponder();
    const server = await listen(async (req, res) => {
      try {
        await limit(req, res);
        res.end("ok");
      } catch (err) {
        sendError(err, req, res);
      }
    });
    servers.push(server);
    const passed = await fetch(server.url);
    const refused = await fetch(server.url);
    expect([passed.status, refused.status]).toEqual([200, 429]);
    const doc = described(options);
    const ok = doc.paths["/"]?.get?.responses["200"] as { headers?: Record<string, unknown> };
    const sentOk = lower([...passed.headers.keys()].filter((n) => QUOTA.test(n)));
    expect(lower(Object.keys(ok.headers ?? {}))).toEqual(sentOk);
    expect(doc.paths["/"]?.get?.responses["429"]).toEqual({ $ref: "#/components/responses/TooManyRequests" });
    const sent429 = lower([...refused.headers.keys()].filter((n) => QUOTA.test(n) || n === "retry-after"));
    expect(lower(Object.keys(doc.components.responses.TooManyRequests?.headers ?? {}))).toEqual(sent429);
  });
});

describe("rateLimitOpenApi options", () => {
  it.each([
    [{ legacyHeader: true }, /unknown option "legacyHeader" \(did you mean "legacyHeaders"\?\)/],
    [{ standardHeaders: "draft-5" }, /standardHeaders/],
    [{ legacyHeaders: "false" }, /legacyHeaders/],
    [{ applies: true }, /applies/],
  ])("refuses %j", (options, message) => {
    expect(() => rateLimitOpenApi(options as never)).toThrow(message);
  });

  it("leaves out the operations `applies` does not name", () => {
    const doc = composeOpenApi(
      {
        openapi: "3.1.0",
        info: { title: "t", version: "1" },
        paths: { "/health": { get: { responses: { "200": { description: "up" } } } } },
      },
      [rateLimitOpenApi({ applies: ({ path }) => path !== "/health" })],
    ) as Doc;
    expect(doc.paths["/health"]?.get?.responses).toEqual({ "200": { description: "up" } });
  });
});
