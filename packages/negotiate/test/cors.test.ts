import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crossOrigin } from "../src/express.js";

/** CORS for listed origins only (Fetch standard §3.2), `Vary: Origin` on every other answer (RFC 9110 §12.5.5). */
const ALLOWED = "https://app.example";
const options = {
  origins: [ALLOWED, "http://localhost:5173"],
  exposedHeaders: ["ETag", "Location"],
  maxAge: 600,
};

let viaExpress: Listening;
let viaNode: Listening;
beforeAll(async () => {
  const app = express();
  app.use(crossOrigin(options));
  app.get("/thing", (_req, res) => {
    res.json({ ok: true });
  });
  app.options("/thing", (_req, res) => {
    res.setHeader("Allow", "GET, HEAD, OPTIONS");
    res.status(204).end();
  });
  viaExpress = await listen(app);

  const cors = crossOrigin(options);
  viaNode = await listen((req, res) =>
    cors(req, res, (err) => {
      res.statusCode = err ? 500 : req.method === "OPTIONS" ? 204 : 200;
      if (req.method === "OPTIONS") res.setHeader("Allow", "GET, HEAD, OPTIONS");
      res.end();
    }),
  );
});
afterAll(async () => {
  await viaExpress.close();
  await viaNode.close();
});

describe.each([
  ["Express", () => viaExpress],
  ["node:http", () => viaNode],
])("crossOrigin through %s", (_name, server) => {
  const call = (headers: Record<string, string>, method = "GET") =>
    fetch(`${server().url}/thing`, { method, headers });

  it.each([ALLOWED, "http://localhost:5173"])(
    "allowed origin %s → echoed, exposed headers, Vary: Origin",
    async (origin) => {
      const res = await call({ origin });
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
      expect(res.headers.get("access-control-expose-headers")).toBe(
        "ETag,Location,WWW-Authenticate,DPoP-Nonce",
      );
      expect(res.headers.get("vary")).toMatch(/\bOrigin\b/);
    },
  );

  it.each(["https://evil.example", "null", `${ALLOWED}.evil.example`, "https://APP.example"])(
    "other origin %s → no CORS header, Vary: Origin",
    async (origin) => {
      const res = await call({ origin });
      expect(res.status).toBe(200);
      for (const [name] of res.headers) expect(name).not.toMatch(/^access-control-/);
      expect(res.headers.get("vary")).toBe("Origin");
    },
  );

  it("no Origin (not a CORS request) → no CORS header, Vary: Origin", async () => {
    const res = await call({});
    for (const [name] of res.headers) expect(name).not.toMatch(/^access-control-/);
    expect(res.headers.get("vary")).toBe("Origin");
  });

  it("preflight from an allowed origin → 204 with methods, headers and Max-Age", async () => {
    const res = await call(
      {
        origin: ALLOWED,
        "access-control-request-method": "PUT",
        "access-control-request-headers": "if-match",
      },
      "OPTIONS",
    );
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(res.headers.get("access-control-allow-methods")).toContain("PUT");
    expect(res.headers.get("access-control-allow-headers")).toBe("if-match");
    expect(res.headers.get("access-control-max-age")).toBe("600");
    expect(res.headers.get("allow")).toBeNull();
    // RFC 9110 §8.6: "A server MUST NOT send a Content-Length header field in any response with a
    // status code of ... 204 (No Content)"; Bun's and Deno's servers remove it themselves.
    expect(res.headers.get("content-length")).toBeNull();
  });

  // Fetch standard §3.2.2: a CORS-preflight request "uses `OPTIONS` as method and includes"
  // `Access-Control-Request-Method`. An OPTIONS without it is the actual request (a script's
  // fetch(url, { method: "OPTIONS" }), after its own preflight): the route answers it.
  it("OPTIONS from an allowed origin without Access-Control-Request-Method → the route's answer, readable", async () => {
    const res = await call({ origin: ALLOWED }, "OPTIONS");
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(res.headers.get("access-control-expose-headers")).toBe(
      "ETag,Location,WWW-Authenticate,DPoP-Nonce",
    );
    expect(res.headers.get("access-control-allow-methods")).toBeNull();
    expect(res.headers.get("access-control-max-age")).toBeNull();
    expect(res.headers.get("vary")).toBe("Origin");
  });

  it("preflight from another origin → the route's OPTIONS answer, without any permission", async () => {
    const res = await call(
      { origin: "https://evil.example", "access-control-request-method": "PUT" },
      "OPTIONS",
    );
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    for (const [name] of res.headers) expect(name).not.toMatch(/^access-control-/);
    expect(res.headers.get("vary")).toBe("Origin");
  });
});

describe("crossOrigin options", () => {
  it.each([
    [undefined, "ERR_SVC_NEGOTIATE_OPTIONS"],
    [{ origins: [] }, "ERR_SVC_NEGOTIATE_ORIGINS"],
    [{ origins: "https://app.example" }, "ERR_SVC_NEGOTIATE_ORIGINS"],
    [{ origins: ["*"] }, "ERR_SVC_NEGOTIATE_ORIGINS"],
    [{ origins: ["https://app.example/"] }, "ERR_SVC_NEGOTIATE_ORIGINS"],
    [{ origins: ["https://app.example/path"] }, "ERR_SVC_NEGOTIATE_ORIGINS"],
    [{ origins: ["ftp://app.example"] }, "ERR_SVC_NEGOTIATE_ORIGINS"],
    [{ origins: [ALLOWED], exposedHeaders: ["ETag, Link"] }, "ERR_SVC_NEGOTIATE_EXPOSED_HEADERS"],
    [{ origins: [ALLOWED], exposedHeaders: "ETag" }, "ERR_SVC_NEGOTIATE_EXPOSED_HEADERS"],
    [{ origins: [ALLOWED], maxAge: -1 }, "ERR_SVC_NEGOTIATE_MAX_AGE"],
    [{ origins: [ALLOWED], maxAge: 1.5 }, "ERR_SVC_NEGOTIATE_MAX_AGE"],
    [{ origins: [ALLOWED], maxAge: "600" }, "ERR_SVC_NEGOTIATE_MAX_AGE"],
  ])("%j → TypeError %s naming what was given", (given, code) => {
    expect(() => crossOrigin(given as never)).toThrow(
      expect.objectContaining({ name: "TypeError", code, message: expect.stringMatching(/got /) }),
    );
  });
});
