import type { IncomingMessage, ServerResponse } from "node:http";
import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import * as onExpress from "@svc/negotiate/express";
import * as onFastify from "@svc/negotiate/fastify";
import * as onFetch from "@svc/negotiate/fetch";
import * as onNode from "@svc/negotiate/node";
import { express4 } from "@svc/test-utils";
import { conformance, fallbackErrors, type Mounts, type Row } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CrossOriginOptions, crossOriginGate } from "../src/index.js";

const APP = "https://app.example";
const looked: string[] = [];
const options: CrossOriginOptions = {
  origins: [
    APP,
    /^https:\/\/[a-z0-9-]{1,63}\.preview\.example$/,
    // A lookup that answers later: a promise.
    async (origin) => {
      looked.push(origin);
      return origin === "https://partner.example";
    },
  ],
  credentials: true,
  privateNetwork: true,
};

function mounts(opts: CrossOriginOptions = options, expressApp: () => express.Express = express): Mounts {
  return {
    express() {
      const app = expressApp();
      app.use(onExpress.crossOrigin(opts));
      app.get("/me", (_req, res) => {
        res.json({ me: "ada" });
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const cors = onNode.crossOrigin(opts);
      return (req: IncomingMessage, res: ServerResponse) => {
        cors(req, res).then(
          (answered) => {
            if (!answered) res.writeHead(200, { "content-type": "application/json" }).end('{"me":"ada"}');
          },
          (err) => fallbackErrors.node(err, req, res),
        );
      };
    },
    async fastify() {
      const app = Fastify();
      await app.register(onFastify.crossOrigin, opts);
      app.get("/me", async () => ({ me: "ada" }));
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono();
      app.use(onFetch.crossOrigin(opts));
      app.get("/me", (c) => c.json({ me: "ada" }));
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return app.fetch;
    },
  };
}

const get = (origin: string) => ({ path: "/me", headers: { origin } });
const preflight = (origin: string, extra: Record<string, string> = {}) => ({
  method: "OPTIONS",
  path: "/me",
  headers: { origin, "access-control-request-method": "GET", ...extra },
});

const rows: Row[] = [
  {
    name: "Origin: listed, credentials → the origin itself (never *), Allow-Credentials: true, Vary: Origin",
    request: get(APP),
    status: 200,
    headers: {
      "access-control-allow-origin": APP,
      "access-control-allow-credentials": "true",
      vary: /\bOrigin\b/,
    },
  },
  {
    name: "Origin matching the pattern → allowed",
    request: get("https://pr-42.preview.example"),
    status: 200,
    headers: {
      "access-control-allow-origin": "https://pr-42.preview.example",
      "access-control-allow-credentials": "true",
    },
  },
  {
    name: "Origin the async function allows → allowed",
    request: get("https://partner.example"),
    status: 200,
    headers: {
      "access-control-allow-origin": "https://partner.example",
      "access-control-allow-credentials": "true",
    },
  },
  {
    name: "Origin of another site → not reflected, no credentials, Vary: Origin",
    request: get("https://evil.example"),
    status: 200,
    headers: {
      "access-control-allow-origin": null,
      "access-control-allow-credentials": null,
      vary: /\bOrigin\b/,
    },
  },
  {
    name: "Origin: null → not allowed by a pattern or a function",
    request: get("null"),
    status: 200,
    headers: { "access-control-allow-origin": null, "access-control-allow-credentials": null },
  },
  {
    name: "Origin suffix trick (https://app.example.evil.example) → not allowed",
    request: get("https://pr-1.preview.example.evil.example"),
    status: 200,
    headers: { "access-control-allow-origin": null },
  },
  {
    name: "preflight with Access-Control-Request-Private-Network: true → Allow-Private-Network: true",
    request: preflight(APP, { "access-control-request-private-network": "true" }),
    status: 204,
    headers: {
      "access-control-allow-origin": APP,
      "access-control-allow-credentials": "true",
      "access-control-allow-private-network": "true",
      vary: "Origin, Access-Control-Request-Headers, Access-Control-Request-Private-Network",
    },
  },
  {
    name: "preflight without Access-Control-Request-Private-Network → no Allow-Private-Network",
    request: preflight(APP),
    status: 204,
    headers: { "access-control-allow-private-network": null, "access-control-allow-credentials": "true" },
  },
];

conformance("negotiate crossOrigin credentials", mounts(), rows);
conformance("negotiate crossOrigin credentials (Express 4)", mounts(options, express4), rows, ["express"]);

conformance("negotiate crossOrigin without privateNetwork", mounts({ origins: [APP], credentials: true }), [
  {
    name: "preflight asking for private network access, not enabled → no Allow-Private-Network",
    request: preflight(APP, { "access-control-request-private-network": "true" }),
    status: 204,
    headers: { "access-control-allow-origin": APP, "access-control-allow-private-network": null },
  },
]);

conformance("negotiate crossOrigin with an explicit null entry", mounts({ origins: ["null"] }), [
  {
    name: 'Origin: null with origins ["null"] → allowed',
    request: get("null"),
    status: 200,
    headers: { "access-control-allow-origin": "null", "access-control-allow-credentials": null },
  },
]);

conformance("negotiate crossOrigin any origin", mounts({ origins: "*" }), [
  {
    name: 'origins "*" without credentials → Access-Control-Allow-Origin: *',
    request: get("https://anyone.example"),
    status: 200,
    headers: { "access-control-allow-origin": "*", "access-control-allow-credentials": null },
  },
]);

describe("crossOriginGate: refusals published on svc:negotiate", () => {
  const heard: unknown[] = [];
  const listener = (m: unknown) => heard.push(m);
  beforeAll(() => subscribeDiagnostics("svc:negotiate", listener));
  afterAll(() => unsubscribeDiagnostics("svc:negotiate", listener));
  it("another origin → cross-origin-refused, reason origin; private network not enabled → reason private-network", async () => {
    const gate = crossOriginGate({ origins: [APP] });
    heard.length = 0;
    await gate({ method: "GET", headers: { origin: "https://evil.example" } });
    await gate({
      method: "OPTIONS",
      headers: {
        origin: APP,
        "access-control-request-method": "GET",
        "access-control-request-private-network": "true",
      },
    });
    expect(heard).toEqual([
      {
        request: expect.anything(),
        decision: "cross-origin-refused",
        origin: "https://evil.example",
        reason: "origin",
      },
      {
        request: expect.anything(),
        decision: "cross-origin-refused",
        origin: APP,
        reason: "private-network",
      },
    ]);
  });
  it("the function is never asked about the null origin", async () => {
    looked.length = 0;
    await crossOriginGate(options)({ method: "GET", headers: { origin: "null" } });
    expect(looked).toEqual([]);
  });
});
