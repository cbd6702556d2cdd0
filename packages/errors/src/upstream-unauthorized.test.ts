import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { HttpError, toHttpError } from "./index.js";

// RFC 9110 §15.5.2: a 401 carries "a WWW-Authenticate header field containing at least one
// challenge applicable to the target resource". An SDK's or HTTP client's error for an outbound
// call carries the upstream's 401 and that upstream's challenge: the credentials it refused are
// the app's (an API key), which this server's client can neither see nor fix, and the challenge
// names the upstream's resource, not this one. RFC 9110 §15.6.3: "The 502 (Bad Gateway) status
// code indicates that the server, while acting as a gateway or proxy, received an invalid response
// from an inbound server it accessed while attempting to fulfill the request." The error says
// where it came from: the upstream's response (`response`: axios, Octokit, gaxios, superagent),
// its request id (`request_id`, `requestID`: OpenAI, Anthropic; `requestId`: Stripe), or undici's
// status-code error; an auth middleware's own 401 (express-oauth2-jwt-bearer, express-jwt) has
// none of these.

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

const UPSTREAM = 'Bearer realm="payments-upstream.internal", error="invalid_token"';

async function serve(thrown: () => unknown): Promise<{ url: string; logged: Record<string, unknown>[] }> {
  const logged: Record<string, unknown>[] = [];
  const app = express();
  app.get("/x", () => {
    throw thrown();
  });
  app.use(
    errorHandler({
      logger: {
        error(obj) {
          logged.push(obj as Record<string, unknown>);
        },
      },
    }),
  );
  const server = await listen(app);
  closers.push(server.close);
  return { url: server.url, logged };
}

const sdkError = (fields: Record<string, unknown>) =>
  Object.assign(new Error(`401 Incorrect API key provided: sk-live-****cdef (${UPSTREAM})`), fields);

describe("errorHandler: an upstream's 401 (an SDK's error for an outbound call) is a 502", () => {
  it.each([
    [
      "OpenAI / Anthropic v4-style status, headers, request_id",
      {
        status: 401,
        headers: { "www-authenticate": UPSTREAM, "x-request-id": "req_1" },
        request_id: "req_1",
        error: { type: "invalid_request_error" },
      },
    ],
    [
      "OpenAI v5-style requestID",
      { status: 401, headers: { "www-authenticate": UPSTREAM }, requestID: "req_2" },
    ],
    [
      "Stripe-style statusCode, headers, requestId",
      { statusCode: 401, headers: { "www-authenticate": UPSTREAM }, requestId: "req_3", raw: {} },
    ],
    [
      "Stripe-style, the upstream sent no request id",
      { statusCode: 401, headers: { "WWW-Authenticate": UPSTREAM }, requestId: undefined },
    ],
    [
      "axios-style status with the upstream's response",
      {
        status: 401,
        isAxiosError: true,
        response: { status: 401, headers: { "www-authenticate": UPSTREAM } },
      },
    ],
    [
      "Octokit-style status, response, request",
      {
        status: 401,
        response: { status: 401, url: "https://api.upstream.example/user", headers: {} },
        request: { method: "GET", url: "https://api.upstream.example/user", headers: {} },
      },
    ],
    [
      "undici's ResponseStatusCodeError",
      {
        status: 401,
        statusCode: 401,
        code: "UND_ERR_RESPONSE_STATUS_CODE",
        headers: { "www-authenticate": UPSTREAM },
      },
    ],
    [
      "an upstream error with expose: undefined",
      { status: 401, expose: undefined, headers: { "www-authenticate": UPSTREAM }, requestId: "req_4" },
    ],
  ])("%s → 502, no WWW-Authenticate, nothing of the upstream shown, logged", async (_label, fields) => {
    const thrown = sdkError(fields);
    const { url, logged } = await serve(() => thrown);
    const res = await fetch(`${url}/x`, { headers: { Accept: "application/problem+json" } });
    expect(res.status).toBe(502);
    expect(res.headers.get("www-authenticate")).toBeNull();
    const text = await res.text();
    expect(text).not.toContain("payments-upstream");
    expect(text).not.toContain("sk-live");
    expect(JSON.parse(text)).toMatchObject({ status: 502, title: "Bad Gateway", instance: "/x" });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ err: thrown, status: 502 });
    expect(toHttpError(thrown).cause).toBe(thrown);
  });

  // An error made for this response is the app's own authentication decision: its challenge is
  // this server's, and MUST reach the client (RFC 9110 §15.5.2). Unchanged.
  it.each([
    [
      "express-oauth2-jwt-bearer's UnauthorizedError shape",
      () =>
        Object.assign(new Error("Invalid Compact JWS"), {
          status: 401,
          statusCode: 401,
          headers: { "WWW-Authenticate": 'Bearer realm="api", error="invalid_token"' },
        }),
      'Bearer realm="api", error="invalid_token"',
    ],
    [
      "HttpError.unauthorized with a challenge",
      () => HttpError.unauthorized("Log in", { headers: { "WWW-Authenticate": 'Basic realm="api"' } }),
      'Basic realm="api"',
    ],
    [
      "an http-errors 401 (expose: true) carrying a response member",
      () =>
        Object.assign(new Error("Log in"), {
          status: 401,
          expose: true,
          response: {},
          headers: { "WWW-Authenticate": 'Basic realm="api"' },
        }),
      'Basic realm="api"',
    ],
    [
      "express-jwt's UnauthorizedError shape (no headers)",
      () =>
        Object.assign(new Error("No authorization token was found"), {
          status: 401,
          code: "credentials_required",
        }),
      null,
    ],
  ])("%s → 401 with its challenge", async (_label, thrown, challenge) => {
    const { url, logged } = await serve(thrown);
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(challenge);
    expect(await res.json()).toMatchObject({ status: 401, error: "Unauthorized", path: "/x" });
    expect(logged).toHaveLength(0);
  });

  // Other upstream statuses keep the shape they had (their status, the status's own fields).
  it("an upstream 403 with a request id → 403, as before", async () => {
    const { url } = await serve(() => sdkError({ status: 403, requestId: "req_5" }));
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(403);
  });
});
