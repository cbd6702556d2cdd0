import { get as httpGet, type IncomingHttpHeaders } from "node:http";
import { listen } from "@svc/test-utils";
import express, { type Express } from "express";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ErrorHandlerOptions, errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// RFC 9110 §15.5.8: "The proxy MUST send a Proxy-Authenticate header field (Section 11.7.1)
// containing a challenge applicable to that proxy for the request."

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

const warnings: { code: string; message: string }[] = [];
const onWarning = (w: Error) => {
  const code = (w as Error & { code?: string }).code ?? "";
  if (code.startsWith("SVC_ERRORS_")) warnings.push({ code, message: w.message });
};
beforeAll(() => {
  process.on("warning", onWarning);
});
afterAll(() => {
  process.off("warning", onWarning);
});

async function serve(options: ErrorHandlerOptions = {}): Promise<string> {
  const app: Express = express();
  app.get("/bare", () => {
    throw new HttpError(407, "Proxy credentials are required");
  });
  app.get("/http-errors", () => {
    // http-errors' shape (createError(407)): no headers at all.
    throw Object.assign(new Error("Proxy Authentication Required"), {
      status: 407,
      statusCode: 407,
      expose: true,
    });
  });
  app.get("/blank", () => {
    throw new HttpError(407, "x", { headers: { "Proxy-Authenticate": " " } });
  });
  app.get("/crlf", () => {
    throw new HttpError(407, "x", {
      headers: { "Proxy-Authenticate": 'Basic realm="p"\r\nSet-Cookie: a=b' },
    });
  });
  app.get("/own", () => {
    throw new HttpError(407, "x", { headers: { "proxy-authenticate": 'Basic realm="proxy"' } });
  });
  app.get("/set-earlier", (_req, res, next) => {
    res.setHeader("Proxy-Authenticate", 'Basic realm="earlier"');
    next(new HttpError(407));
  });
  app.use(errorHandler({ logger: { error() {} }, ...options }));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

/**
 * GET through node:http: fetch (undici) turns every 407 into a network error, as the Fetch
 * standard says for a request without a window.
 */
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

/** process.emitWarning is delivered on the next tick. */
const delivered = () => new Promise((resolve) => setImmediate(resolve));

describe("errorHandler: a 407 without a Proxy-Authenticate challenge", () => {
  it.each([
    ["new HttpError(407) without headers", ["/bare"]],
    ["a thrown http-errors 407 without headers", ["/http-errors"]],
    ['a 407 whose Proxy-Authenticate is " "', ["/blank"]],
    ["a 407 whose Proxy-Authenticate holds CR LF (dropped)", ["/crlf"]],
    ["new HttpError(407) three times, then an http-errors 407", ["/bare", "/bare", "/bare", "/http-errors"]],
  ])("%s → sent as it is, one SVC_ERRORS_407_WITHOUT_CHALLENGE warning", async (_label, paths) => {
    warnings.length = 0;
    const url = await serve();
    for (const path of paths) {
      const res = await get(`${url}${path}`);
      expect(res.status).toBe(407);
      // No challenge: none at all, or the blank one the error carried, as a 401's without the option.
      expect(String(res.headers["proxy-authenticate"] ?? "").trim()).toBe("");
      expect(JSON.parse(res.body)).toMatchObject({ status: 407, error: "Proxy Authentication Required" });
    }
    await delivered();
    expect(warnings.map((w) => w.code)).toEqual(["SVC_ERRORS_407_WITHOUT_CHALLENGE"]);
    expect(warnings[0]?.message).toMatch(/407 .*without a Proxy-Authenticate challenge.*RFC 9110 §15\.5\.8/);
  });

  it("a 407 without a challenge, wwwAuthenticate given → no WWW-Authenticate (401s only), the 407 warning", async () => {
    warnings.length = 0;
    const url = await serve({ wwwAuthenticate: 'Bearer realm="api"' });
    const res = await get(`${url}/bare`);
    expect(res.status).toBe(407);
    expect(res.headers["www-authenticate"]).toBeUndefined();
    await delivered();
    expect(warnings.map((w) => w.code)).toEqual(["SVC_ERRORS_407_WITHOUT_CHALLENGE"]);
  });

  it.each([
    ['a 407 with its own "proxy-authenticate" → kept', "/own", 'Basic realm="proxy"'],
    [
      "a 407 after middleware set Proxy-Authenticate on the response → kept",
      "/set-earlier",
      'Basic realm="earlier"',
    ],
  ])("%s, no warning", async (_label, path, challenge) => {
    warnings.length = 0;
    const url = await serve();
    const res = await get(`${url}${path}`);
    expect(res.status).toBe(407);
    expect(res.headers["proxy-authenticate"]).toBe(challenge);
    await delivered();
    expect(warnings).toEqual([]);
  });
});
