import { get as httpGet, type IncomingHttpHeaders } from "node:http";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// RFC 9110 §15.5.8: a 407 "is similar to 401 (Unauthorized), but it indicates that the client
// needs to authenticate itself in order to use a proxy". An SDK's error carrying 407 for an
// outbound call is the app's own outbound proxy asking the app: this server's client cannot
// answer it, and its Proxy-Authenticate names that proxy's realm. RFC 9110 §15.6.3: "The 502 (Bad
// Gateway) status code indicates that the server, while acting as a gateway or proxy, received an
// invalid response from an inbound server it accessed while attempting to fulfill the request."

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

const CHALLENGE = 'Basic realm="corp-egress-proxy.internal"';

async function serve(thrown: () => unknown): Promise<{ url: string; logged: unknown[] }> {
  const logged: unknown[] = [];
  const app = express();
  app.get("/x", () => {
    throw thrown();
  });
  app.use(
    errorHandler({
      logger: {
        error(obj) {
          logged.push(obj);
        },
      },
    }),
  );
  const server = await listen(app);
  closers.push(server.close);
  return { url: server.url, logged };
}

/** GET through node:http: fetch (undici) turns every 407 into a network error. */
function get(url: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    httpGet(url, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    }).on("error", reject);
  });
}

describe("errorHandler: an upstream's 407 (an SDK's error, no expose flag) is a 502", () => {
  it.each([
    [
      "OpenAI-style status 407 with the proxy's Proxy-Authenticate",
      { status: 407, headers: { "proxy-authenticate": CHALLENGE } },
    ],
    [
      "Stripe-style statusCode 407 with the proxy's Proxy-Authenticate",
      { statusCode: 407, headers: { "Proxy-Authenticate": CHALLENGE, "Retry-After": "5" } },
    ],
    ["status 407 without headers (axios-style: headers on error.response)", { status: 407 }],
    [
      "status 407, expose undefined",
      { status: 407, expose: undefined, headers: { "proxy-authenticate": CHALLENGE } },
    ],
  ])("%s → 502, no Proxy-Authenticate, the realm not shown, logged", async (_label, fields) => {
    const { url, logged } = await serve(() =>
      Object.assign(new Error(`407 Proxy Authentication Required (${CHALLENGE})`), fields),
    );
    const res = await get(`${url}/x`);
    expect(res.status).toBe(502);
    expect(res.headers["proxy-authenticate"]).toBeUndefined();
    expect(res.headers["retry-after"]).toBeUndefined();
    expect(res.body).not.toContain("corp-egress-proxy");
    expect(JSON.parse(res.body)).toMatchObject({ status: 502, error: "Bad Gateway", path: "/x" });
    expect(logged).toHaveLength(1);
  });

  // An error made for this response is the app's own decision: an app that is a proxy asks its
  // client for credentials (RFC 9110 §15.5.8). Unchanged.
  it.each([
    [
      "new HttpError(407) with a challenge",
      () => new HttpError(407, "x", { headers: { "Proxy-Authenticate": CHALLENGE } }),
    ],
    [
      "an http-errors 407 (expose: true) with a challenge",
      () =>
        Object.assign(new Error("Proxy Authentication Required"), {
          status: 407,
          statusCode: 407,
          expose: true,
          headers: { "Proxy-Authenticate": CHALLENGE },
        }),
    ],
  ])("%s → 407 with it", async (_label, thrown) => {
    const { url } = await serve(thrown);
    const res = await get(`${url}/x`);
    expect(res.status).toBe(407);
    expect(res.headers["proxy-authenticate"]).toBe(CHALLENGE);
  });
});
