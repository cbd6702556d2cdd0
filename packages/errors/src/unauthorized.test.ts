import { listen } from "@svc/test-utils";
import express, { type Express } from "express";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ErrorHandlerOptions, errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// RFC 9110 §15.5.2: "The server generating a 401 response MUST send a WWW-Authenticate header
// field (Section 11.6.1) containing at least one challenge applicable to the target resource."

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

const warnings: Error[] = [];
const onWarning = (w: Error) => {
  if ((w as Error & { code?: string }).code === "SVC_ERRORS_401_WITHOUT_CHALLENGE") warnings.push(w);
};
beforeAll(() => {
  process.on("warning", onWarning);
});
afterAll(() => {
  process.off("warning", onWarning);
});

async function serve(options: ErrorHandlerOptions, setup: (app: Express) => void): Promise<string> {
  const app = express();
  setup(app);
  app.use(errorHandler({ logger: { error() {} }, ...options }));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

function routes(app: Express): void {
  app.get("/bare", () => {
    throw HttpError.unauthorized("Credentials are required");
  });
  app.get("/http-errors", () => {
    // http-errors' shape (createError(401, "Login first")): no headers at all.
    throw Object.assign(new Error("Login first"), { status: 401, statusCode: 401, expose: true });
  });
  app.get("/own", () => {
    throw HttpError.unauthorized("Token expired", {
      headers: { "www-authenticate": 'Bearer realm="own", error="invalid_token"' },
    });
  });
  app.get("/crlf", () => {
    throw HttpError.unauthorized("x", {
      headers: { "WWW-Authenticate": 'Bearer realm="a"\r\nSet-Cookie: a=b' },
    });
  });
  app.get("/blank", () => {
    throw HttpError.unauthorized("x", { headers: { "WWW-Authenticate": "  " } });
  });
  app.get("/set-earlier", (_req, res, next) => {
    res.setHeader("WWW-Authenticate", 'Basic realm="earlier"');
    next(HttpError.unauthorized());
  });
  app.get("/forbidden", () => {
    throw HttpError.forbidden();
  });
}

const DEFAULT = 'Bearer realm="api", Basic realm="api", charset="UTF-8"';

describe("errorHandler({ wwwAuthenticate }): the challenge a 401 without one gets", () => {
  it.each([
    ["HttpError.unauthorized() without headers", "/bare", DEFAULT],
    ["a thrown http-errors 401 without headers", "/http-errors", DEFAULT],
    ['a 401 with its own "www-authenticate" → kept', "/own", 'Bearer realm="own", error="invalid_token"'],
    ["a 401 whose challenge holds CR LF (dropped) → the default", "/crlf", DEFAULT],
    ['a 401 whose challenge is "  " → the default', "/blank", DEFAULT],
    [
      "a 401 after middleware set WWW-Authenticate on the response → kept",
      "/set-earlier",
      'Basic realm="earlier"',
    ],
  ])("%s", async (_name, path, challenge) => {
    const url = await serve({ wwwAuthenticate: DEFAULT }, routes);
    const res = await fetch(`${url}${path}`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(challenge);
    expect(((await res.json()) as { status: number }).status).toBe(401);
  });

  it("a 403 → no WWW-Authenticate added", async () => {
    const url = await serve({ wwwAuthenticate: DEFAULT }, routes);
    const res = await fetch(`${url}/forbidden`);
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBeNull();
  });

  it("HEAD of a bare 401 → the default challenge, no body", async () => {
    const url = await serve({ wwwAuthenticate: "Negotiate" }, routes);
    const res = await fetch(`${url}/bare`, { method: "HEAD" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Negotiate");
  });
});

describe("errorHandler() without wwwAuthenticate: no scheme invented, one warning", () => {
  it("GET /bare twice, /http-errors → 401s without WWW-Authenticate, one SVC_ERRORS_401_WITHOUT_CHALLENGE warning", async () => {
    warnings.length = 0;
    const url = await serve({}, routes);
    for (const path of ["/bare", "/bare", "/http-errors"]) {
      const res = await fetch(`${url}${path}`);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBeNull();
    }
    // process.emitWarning is delivered on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/401 .*without a WWW-Authenticate challenge.*wwwAuthenticate/);
  });

  it("a 401 carrying its challenge → no warning", async () => {
    warnings.length = 0;
    const url = await serve({}, routes);
    const res = await fetch(`${url}/own`);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="own", error="invalid_token"');
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toHaveLength(0);
  });
});
