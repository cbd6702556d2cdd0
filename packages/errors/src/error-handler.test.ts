import { connect } from "node:net";
import { listen } from "@svc/test-utils";
import express, { type Express } from "express";
import { afterEach, describe, expect, it, vi } from "vitest";
import { allowedMethods, errorHandler, methodNotAllowed, notFound } from "./express.js";
import { type ErrorLogger, HttpError } from "./index.js";

interface LogCall {
  obj: Record<string, unknown>;
  msg: string | undefined;
}

function recordingLogger(): ErrorLogger & { calls: LogCall[] } {
  const calls: LogCall[] = [];
  return {
    calls,
    error(obj, msg) {
      calls.push({ obj: obj as Record<string, unknown>, msg });
    },
  };
}

interface Json {
  [key: string]: unknown;
  message?: string;
  error?: string;
  type?: string;
}

async function readJson(res: Response): Promise<Json> {
  return (await res.json()) as Json;
}

const FIXED_NOW = new Date("2026-01-02T03:04:05.678Z");
let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

async function serve(setup: (app: Express) => void, logger = recordingLogger()) {
  const app = express();
  setup(app);
  app.use(notFound());
  app.use(errorHandler({ logger, now: () => FIXED_NOW }));
  const server = await listen(app);
  closers.push(server.close);
  return { url: server.url, logger };
}

const SECRET = "SELECT * FROM users WHERE password = 'hunter2'";

describe("error record shape", () => {
  it("HttpError.notFound on GET /employees/7?x=1 → 404 { timestamp, status, error, message, path }", async () => {
    const { url } = await serve((app) =>
      app.get("/employees/:id", () => {
        throw HttpError.notFound("Employee 7 does not exist");
      }),
    );
    const res = await fetch(`${url}/employees/7?x=1&y=2`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await readJson(res)).toEqual({
      timestamp: "2026-01-02T03:04:05.678Z",
      status: 404,
      error: "Not Found",
      message: "Employee 7 does not exist",
      path: "/employees/7",
    });
  });

  it("unmatched route → 404 record naming the method and path", async () => {
    const { url } = await serve(() => {});
    const res = await fetch(`${url}/nothing/here?q=1`, { method: "DELETE" });
    expect(res.status).toBe(404);
    const body = await readJson(res);
    expect(body).toMatchObject({ status: 404, error: "Not Found", path: "/nothing/here" });
    expect(body.message).toBe("No resource matches DELETE /nothing/here");
  });

  it.each([
    [400, "Bad Request"],
    [401, "Unauthorized"],
    [403, "Forbidden"],
    [406, "Not Acceptable"],
    [409, "Conflict"],
    [413, "Content Too Large"],
    [415, "Unsupported Media Type"],
    [422, "Unprocessable Content"],
    [429, "Too Many Requests"],
    [500, "Internal Server Error"],
    [503, "Service Unavailable"],
  ])("status %i → error %j (RFC 9110 reason phrase)", async (status, phrase) => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw new HttpError(status, "m");
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(status);
    expect((await readJson(res)).error).toBe(phrase);
  });

  it("validation failure → 400 with errors [{ field, message }]", async () => {
    const { url } = await serve((app) =>
      app.post("/employees", () => {
        throw HttpError.badRequest("The employee is invalid", {
          errors: [
            { field: "name", message: "is required" },
            { field: "salary", message: "must be a number" },
          ],
        });
      }),
    );
    const res = await fetch(`${url}/employees`, { method: "POST" });
    expect(res.status).toBe(400);
    const body = await readJson(res);
    expect(body.errors).toEqual([
      { field: "name", message: "is required" },
      { field: "salary", message: "must be a number" },
    ]);
    expect(Object.keys(body)).toEqual(["timestamp", "status", "error", "message", "path", "errors"]);
  });

  it("business rule → 422 with the rule's message", async () => {
    const { url } = await serve((app) =>
      app.post("/employees", () => {
        throw HttpError.unprocessable("salary must be positive");
      }),
    );
    const res = await fetch(`${url}/employees`, { method: "POST" });
    expect(res.status).toBe(422);
    expect(await readJson(res)).toMatchObject({
      error: "Unprocessable Content",
      message: "salary must be positive",
    });
  });

  // RFC 9112 §3.2.2: a server MUST accept an absolute-form target; Express routes it by its path,
  // and the record's path (the problem's instance) is that path, not a URI with the client's host.
  it.each([
    ["http://evil.example/nowhere?q=1", "/nowhere", "application/json"],
    ["HTTPS://evil.example:8443/nowhere#x", "/nowhere", "application/problem+json"],
    ["http://evil.example", "/", "application/json"],
    ["http://evil.example?q=1", "/", "application/json"],
  ])("GET %s (absolute-form) → 404 record whose path is %s", async (target, path, accept) => {
    const { url } = await serve(() => {});
    const { hostname, port } = new URL(url);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) }, () =>
        socket.end(
          `GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\nAccept: ${accept}\r\nConnection: close\r\n\r\n`,
        ),
      );
      let text = "";
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 404 /);
    const body = reply.slice(reply.indexOf("\r\n\r\n") + 4);
    expect(body).not.toContain("evil.example");
    const json = JSON.parse(body) as Json;
    expect(json[accept === "application/json" ? "path" : "instance"]).toBe(path);
    expect(json[accept === "application/json" ? "message" : "detail"]).toBe(
      `No resource matches GET ${path}`,
    );
  });

  // RFC 9457 §3.1.5: instance is a URI reference, resolved against the document's URI (RFC 3986
  // §5.2). "//evil.example/x" is a network-path reference (§4.2) naming another host, "/\\evil…" is
  // resolved as one by WHATWG URL parsers, and `"`, `<`, `%` alone are no URI characters at all.
  it.each([
    ["//evil.example/x", "/.//evil.example/x", "//evil.example/x"],
    ["http://api.example//evil.example/x?q", "/.//evil.example/x", "//evil.example/x"],
    ["/\\evil.example/x", "/%5Cevil.example/x", "/\\evil.example/x"],
    ['/a"b<c>{|}^`', "/a%22b%3Cc%3E%7B%7C%7D%5E%60", '/a"b<c>{|}^`'],
    ["/50%/x%2Fy", "/50%25/x%2Fy", "/50%/x%2Fy"],
  ])(
    "GET %s (problem+json) → instance %s, a reference to this server's path",
    async (target, instance, path) => {
      const { url } = await serve(() => {});
      const { hostname, port } = new URL(url);
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect({ host: hostname, port: Number(port) }, () =>
          socket.end(
            `GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\nAccept: application/problem+json\r\nConnection: close\r\n\r\n`,
          ),
        );
        let text = "";
        socket.on("data", (chunk: Buffer) => {
          text += chunk.toString("latin1");
        });
        socket.on("end", () => resolve(text));
        socket.on("error", reject);
      });
      expect(reply).toMatch(/^HTTP\/1\.1 404 /);
      const json = JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)) as Json;
      expect(json.instance).toBe(instance);
      expect(new URL(json.instance as string, "https://api.example/v1/").href).toBe(
        `https://api.example${instance.replace(/^\/\./, "")}`,
      );
      expect(json.detail).toBe(`No resource matches GET ${path}`);
    },
  );

  it("HEAD → status and headers, no body", async () => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw HttpError.notFound();
      }),
    );
    const res = await fetch(`${url}/x`, { method: "HEAD" });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.text()).toBe("");
  });
});

describe("5xx: nothing of the exception reaches the client", () => {
  it("thrown Error with SQL in its message → 500 generic, logged once with correlation id", async () => {
    const { url, logger } = await serve((app) =>
      app.get("/boom", () => {
        throw new Error(SECRET);
      }),
    );
    const res = await fetch(`${url}/boom`, { headers: { "X-Correlation-ID": "corr-123" } });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("SELECT");
    expect(text).not.toContain("Error:");
    expect(text).not.toContain("at ");
    expect(JSON.parse(text)).toMatchObject({
      status: 500,
      error: "Internal Server Error",
      message: "An unexpected error occurred",
    });
    expect(logger.calls).toHaveLength(1);
    const call = logger.calls[0];
    expect(call?.obj.correlationId).toBe("corr-123");
    expect((call?.obj.err as Error | undefined)?.message).toBe(SECRET);
    expect(call?.obj.status).toBe(500);
  });

  // Express 5 hands a route handler's rejected promise to next(err); Express 4 leaves it unhandled
  // (an async handler there must call next(err) itself), so this runs on 5 only.
  it.skipIf(process.env.EXPRESS_MAJOR === "4")(
    "async handler rejecting with a TypeError → 500, class name not shown",
    async () => {
      const { url, logger } = await serve((app) =>
        app.get("/boom", async () => {
          await Promise.resolve();
          throw new TypeError("Cannot read properties of undefined (reading 'salary')");
        }),
      );
      const res = await fetch(`${url}/boom`);
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(text).not.toMatch(/TypeError|salary|undefined/);
      expect(logger.calls).toHaveLength(1);
    },
  );

  it("HttpError 503 with a secret message → generic message, Retry-After kept", async () => {
    const { url } = await serve((app) =>
      app.get("/db", () => {
        throw HttpError.serviceUnavailable(30, "connect ECONNREFUSED 10.0.0.5:5432");
      }),
    );
    const res = await fetch(`${url}/db`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");
    const text = await res.text();
    expect(text).not.toContain("ECONNREFUSED");
    expect(JSON.parse(text).message).toBe("The service is temporarily unavailable; try again later");
  });

  it("throwing a non-Error (a string) → 500, logged", async () => {
    const { url, logger } = await serve((app) =>
      app.get("/s", () => {
        throw "plain string";
      }),
    );
    const res = await fetch(`${url}/s`);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("plain string");
    expect(logger.calls).toHaveLength(1);
  });

  it("4xx are not logged as errors", async () => {
    const { url, logger } = await serve((app) =>
      app.get("/x", () => {
        throw HttpError.forbidden();
      }),
    );
    await fetch(`${url}/x`);
    await fetch(`${url}/missing`);
    expect(logger.calls).toHaveLength(0);
  });

  it("correlation id from res.locals wins over the request header", async () => {
    const { url, logger } = await serve((app) =>
      app.get("/boom", (_req, res) => {
        res.locals.correlationId = "from-locals";
        throw new Error("x");
      }),
    );
    await fetch(`${url}/boom`, { headers: { "X-Correlation-ID": "from-header" } });
    expect(logger.calls[0]?.obj.correlationId).toBe("from-locals");
  });
});

describe("what Express 5 and its body parsers raise", () => {
  const jsonApp = (app: Express) => {
    app.use(express.json({ limit: 64 }));
    app.post("/echo", (req, res) => {
      res.json(req.body);
    });
  };

  it("malformed JSON body → 400, parser text not shown", async () => {
    const { url, logger } = await serve(jsonApp);
    const res = await fetch(`${url}/echo`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '{"name": ',
    });
    expect(res.status).toBe(400);
    const body = await readJson(res);
    expect(body).toMatchObject({
      status: 400,
      error: "Bad Request",
      message: "The request body is malformed",
      path: "/echo",
    });
    expect(JSON.stringify(body)).not.toMatch(/Unexpected|JSON\.parse|position/);
    expect(logger.calls).toHaveLength(0);
  });

  it("body over the limit → 413", async () => {
    const { url } = await serve(jsonApp);
    const res = await fetch(`${url}/echo`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ padding: "x".repeat(500) }),
    });
    expect(res.status).toBe(413);
    expect(await readJson(res)).toMatchObject({
      error: "Content Too Large",
      message: "The request body is larger than the limit of 64 bytes",
    });
  });

  // body-parser answers a `verify` option that throws with 403, or with the status the thrown error
  // carries (a webhook signature scheme's 401 and its challenge): the app's decision, not a
  // malformed body (RFC 9110 §15.5.1 vs §15.5.4). The thrown message stays hidden: it may quote
  // the signature that was expected.
  it.each([
    ["an Error", 403, () => new Error("expected sha256=c0ffee"), null],
    [
      "an error with status 401 and a challenge",
      401,
      () =>
        Object.assign(new Error("expected sha256=c0ffee"), {
          status: 401,
          headers: { "WWW-Authenticate": 'Signature realm="hooks"', "Set-Cookie": "a=b" },
        }),
      'Signature realm="hooks"',
    ],
  ] as const)(
    "express.json({ verify }) throwing %s → %i, its message not shown",
    async (_label, status, thrown, challenge) => {
      const { url } = await serve((app) => {
        app.use(
          express.json({
            verify: () => {
              throw thrown();
            },
          }),
        );
        app.post("/hook", (_req, res) => {
          res.end();
        });
      });
      const res = await fetch(`${url}/hook`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      });
      expect(res.status).toBe(status);
      expect(res.headers.get("www-authenticate")).toBe(challenge);
      expect(res.headers.get("set-cookie")).toBeNull();
      const body = await readJson(res);
      expect(body.message).toBe("The request body failed verification");
      expect(JSON.stringify(body)).not.toContain("c0ffee");
    },
  );

  it("unsupported charset → 415", async () => {
    const { url } = await serve(jsonApp);
    const res = await fetch(`${url}/echo`, {
      method: "POST",
      headers: { "Content-Type": "application/json; charset=klingon" },
      body: "{}",
    });
    expect(res.status).toBe(415);
    expect((await readJson(res)).message).toContain("klingon");
  });

  it("unsupported Content-Encoding → 415", async () => {
    const { url } = await serve(jsonApp);
    const res = await fetch(`${url}/echo`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Encoding": "x-compress-9000" },
      body: "{}",
    });
    expect(res.status).toBe(415);
  });

  it("http-errors-style error (status 409, expose) keeps status and message", async () => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw Object.assign(new Error("Email already taken"), { status: 409, expose: true });
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(409);
    expect((await readJson(res)).message).toBe("Email already taken");
  });

  // An SDK's error for its own upstream call (Stripe's statusCode, Octokit's status) carries a
  // status but says nothing about exposure: its message is about the upstream, not for the client.
  it.each([
    [{ statusCode: 401 }, 401, "Invalid API Key provided: sk_live_****abcd", "Unauthorized"],
    [{ status: 404 }, 404, "Not Found - https://internal.example/repos/acme/payroll", "Not Found"],
    [{ status: 409, expose: undefined }, 409, "duplicate key value violates unique constraint", "Conflict"],
  ])("error with %j and no expose: true → %i, generic message", async (fields, status, secret, phrase) => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw Object.assign(new Error(secret), fields);
      }),
    );
    const res = await fetch(`${url}/x`, { headers: { Accept: "application/problem+json" } });
    expect(res.status).toBe(status);
    const text = await res.text();
    expect(text).not.toContain(secret.slice(0, 20));
    expect((JSON.parse(text) as Json).detail).toBe(phrase);
  });

  // An SDK's error also carries its upstream response's headers (OpenAI's `status` with `headers`,
  // Stripe's `statusCode` with `headers`): they describe that response, not this one. Sent on, the
  // upstream's cookie, Alt-Svc, HSTS or CORS grant applied to this origin (RFC 6265 §4.1, RFC 7838
  // §3, RFC 6797 §6.1.2), and its account id reached the client.
  it.each([
    ["OpenAI-style status 429", { status: 429 }, 429],
    ["Stripe-style statusCode 402", { statusCode: 402 }, 402],
  ])(
    "%s with the upstream's headers and no expose flag → its status, none of its headers",
    async (_label, fields, status) => {
      const { url } = await serve((app) =>
        app.get("/x", () => {
          throw Object.assign(new Error("upstream said no"), fields, {
            headers: {
              "set-cookie": "__cf_bm=upstream; Domain=.upstream.example; Secure",
              "alt-svc": 'h3=":443"; ma=86400',
              "access-control-allow-origin": "*",
              "openai-organization": "org-internal-1234",
              "strict-transport-security": "max-age=63072000; includeSubDomains; preload",
            },
          });
        }),
      );
      const res = await fetch(`${url}/x`);
      expect(res.status).toBe(status);
      for (const name of [
        "set-cookie",
        "alt-svc",
        "access-control-allow-origin",
        "openai-organization",
        "strict-transport-security",
      ])
        expect(res.headers.get(name)).toBeNull();
      expect(await readJson(res)).toMatchObject({ status });
    },
  );

  it("a middleware's 401 without an expose flag (express-oauth2-jwt-bearer's shape) keeps its challenge, and only that", async () => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw Object.assign(new Error("Unauthorized"), {
          status: 401,
          statusCode: 401,
          headers: { "WWW-Authenticate": 'Bearer realm="api", error="invalid_token"', "X-Upstream": "1" },
        });
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", error="invalid_token"');
    expect(res.headers.get("x-upstream")).toBeNull();
  });

  it("http-errors-style error with statusCode 502 → 502, message hidden, logged", async () => {
    const { url, logger } = await serve((app) =>
      app.get("/x", () => {
        throw Object.assign(new Error("upstream 10.1.2.3 said no"), { statusCode: 502 });
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(502);
    expect(await res.text()).not.toContain("10.1.2.3");
    expect(logger.calls).toHaveLength(1);
  });

  it("error with an out-of-range status (302) → 500", async () => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw Object.assign(new Error("weird"), { status: 302 });
      }),
    );
    expect((await fetch(`${url}/x`)).status).toBe(500);
  });
});

describe("negotiated error bodies (never a 406)", () => {
  const throwing = (app: Express) =>
    app.get("/orders/:id", () => {
      throw HttpError.notFound("Order <5> & co", { code: "order_not_found" });
    });

  it("Accept: application/problem+json → RFC 9457 problem details plus timestamp", async () => {
    const { url } = await serve(throwing);
    const res = await fetch(`${url}/orders/5?expand=1`, { headers: { Accept: "application/problem+json" } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    expect(await readJson(res)).toEqual({
      type: "about:blank",
      title: "Not Found",
      status: 404,
      detail: "Order <5> & co",
      instance: "/orders/5",
      timestamp: "2026-01-02T03:04:05.678Z",
      code: "order_not_found",
    });
  });

  it("problemTypeBase + code → type URI under the base", async () => {
    const app = express();
    throwing(app);
    app.use(errorHandler({ problemTypeBase: "https://api.example.com/problems/", now: () => FIXED_NOW }));
    const server = await listen(app);
    closers.push(server.close);
    const res = await fetch(`${server.url}/orders/5`, { headers: { Accept: "application/problem+json" } });
    expect((await readJson(res)).type).toBe("https://api.example.com/problems/order_not_found");
  });

  // RFC 9457 §3.1.1: `type` is a URI; a URN base (accepted at setup) is not hierarchical, so
  // resolving the code against it threw inside the handler and Express answered with its own page.
  // A base ending in "#" (one page, an anchor per problem) lost its path and fragment to
  // resolution (https://api.example.com/order_not_found) where the docs promise base + code.
  it.each([
    ["urn:example:problems:", "urn:example:problems:order_not_found"],
    ["tag:example.com,2026:problems/", "tag:example.com,2026:problems/order_not_found"],
    ["https://api.example.com/problems#", "https://api.example.com/problems#order_not_found"],
    ["https://api.example.com/problems?type=", "https://api.example.com/problems?type=order_not_found"],
    ["https://API.example.com", "https://api.example.com/order_not_found"],
  ])("problemTypeBase %s + code → type %s (base + code)", async (base, type) => {
    const app = express();
    throwing(app);
    app.use(errorHandler({ problemTypeBase: base, now: () => FIXED_NOW }));
    const server = await listen(app);
    closers.push(server.close);
    for (const accept of ["application/problem+json", "application/problem+xml"]) {
      const res = await fetch(`${server.url}/orders/5`, { headers: { Accept: accept } });
      expect(res.status).toBe(404);
      const text = await res.text();
      if (accept.endsWith("json")) expect((JSON.parse(text) as Json).type).toBe(type);
      else expect(text).toContain(`<type>${type}</type>`);
    }
  });

  it("Accept: application/xml → the record as escaped, well-formed XML", async () => {
    const { url } = await serve(throwing);
    const res = await fetch(`${url}/orders/5`, { headers: { Accept: "application/xml" } });
    expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(await res.text()).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<error><timestamp>2026-01-02T03:04:05.678Z</timestamp>' +
        "<status>404</status><error>Not Found</error><message>Order &lt;5&gt; &amp; co</message>" +
        "<path>/orders/5</path></error>",
    );
  });

  it("Accept: application/problem+xml → RFC 9457 Appendix B form", async () => {
    const { url } = await serve(throwing);
    const res = await fetch(`${url}/orders/5`, { headers: { Accept: "application/problem+xml" } });
    expect(res.headers.get("content-type")).toBe("application/problem+xml; charset=utf-8");
    const text = await res.text();
    expect(text).toContain('<problem xmlns="urn:ietf:rfc:7807">');
    expect(text).toContain("<title>Not Found</title>");
  });

  it.each([
    ["image/png", "application/json; charset=utf-8"],
    ["*/*", "application/json; charset=utf-8"],
    ["application/json;q=0, */*;q=0", "application/json; charset=utf-8"],
    ["text/html;q=2, @@@", "application/json; charset=utf-8"],
    // RFC 9110 §12.5.1: labelled with the XML type the client listed, not another one.
    ["text/xml", "text/xml; charset=utf-8"],
    // Equal q: the server's order (JSON first), as @svc/negotiate decides for a success.
    ["text/xml, application/json", "application/json; charset=utf-8"],
    ["application/xml, application/json", "application/json; charset=utf-8"],
    ["application/xml, application/json;q=0.9", "application/xml; charset=utf-8"],
    // A vendor type only matches through its suffix: labelling the record application/xml would
    // name a type the client did not accept, so it gets the JSON record, as for no match.
    ["application/vnd.svc.v2+json", "application/json; charset=utf-8"],
    ["application/vnd.svc.v2+xml", "application/json; charset=utf-8"],
    ["application/vnd.svc.v2+xml, application/xml;q=0.5", "application/xml; charset=utf-8"],
    ["application/xml, text/xml", "application/xml; charset=utf-8"],
    ['application/json; charset="utf-8", application/xml;q=0.1', "application/json; charset=utf-8"],
    ["application/json; charset=latin1, application/xml;q=0.1", "application/xml; charset=utf-8"],
    ["application/json;q=0.5, application/problem+json", "application/problem+json; charset=utf-8"],
  ])("Accept: %j → %s, never 406", async (accept, type) => {
    const { url } = await serve(throwing);
    const res = await fetch(`${url}/orders/5`, { headers: { Accept: accept } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe(type);
  });

  it("adds Vary: Accept to what is there", async () => {
    const { url } = await serve((app) =>
      app.get("/x", (_req, res) => {
        res.setHeader("Vary", "Origin, accept");
        throw HttpError.notFound();
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.headers.get("vary")).toBe("Origin, accept");
  });
});

describe("error headers", () => {
  it("429 keeps Retry-After and headers set before the error (rate-limit headers)", async () => {
    const { url } = await serve((app) =>
      app.get("/x", (_req, res) => {
        res.setHeader("X-RateLimit-Limit", "10");
        throw HttpError.tooManyRequests(7.2);
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("8");
    expect(res.headers.get("x-ratelimit-limit")).toBe("10");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  // RFC 9110 §10.2.3: `Retry-After = HTTP-date / delay-seconds`, `delay-seconds = 1*DIGIT`.
  it.each([
    [Number.NaN, null],
    [Number.POSITIVE_INFINITY, "2147483648"],
    [1e21, "2147483648"],
    [Number.NEGATIVE_INFINITY, "0"],
    [-5, "0"],
    [2.1, "3"],
  ])("tooManyRequests(%s) and serviceUnavailable(same) → Retry-After %s", async (seconds, expected) => {
    const { url } = await serve((app) => {
      app.get("/429", () => {
        throw HttpError.tooManyRequests(seconds);
      });
      app.get("/503", () => {
        throw HttpError.serviceUnavailable(seconds);
      });
    });
    const limited = await fetch(`${url}/429`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe(expected);
    const unavailable = await fetch(`${url}/503`);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get("retry-after")).toBe(expected);
  });

  it("401 carries WWW-Authenticate", async () => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw HttpError.unauthorized("Credentials are required", {
          headers: { "WWW-Authenticate": 'Bearer realm="svc"' },
        });
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="svc"');
  });

  it("methodNotAllowed(['GET','post']) → 405 with Allow: GET, POST", async () => {
    const { url } = await serve((app) => {
      app
        .route("/employees")
        .get((_req, res) => {
          res.json([]);
        })
        .all(methodNotAllowed(["GET", "post"]));
    });
    const res = await fetch(`${url}/employees`, { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, POST");
    expect((await readJson(res)).message).toBe("Method PUT is not allowed on /employees");
  });

  // RFC 9110 §15.5.6: "The origin server MUST generate an Allow header field in a 405 response".
  it.each([
    ["new HttpError(405) without headers", () => new HttpError(405, "no")],
    [
      "an http-errors-style 405 without headers",
      () => Object.assign(new Error("no"), { status: 405, expose: true }),
    ],
    [
      "an http-errors-style 405 whose headers lack Allow",
      () => Object.assign(new Error("no"), { status: 405, expose: true, headers: { "X-Other": "1" } }),
    ],
  ])("%s → never a 405 without Allow: a logged 500", async (_label, make) => {
    const { url, logger } = await serve((app) =>
      app.delete("/x", () => {
        throw make();
      }),
    );
    const res = await fetch(`${url}/x`, { method: "DELETE" });
    expect(res.status).toBe(500);
    expect(res.headers.get("allow")).toBeNull();
    expect(logger.calls).toHaveLength(1);
  });

  it.each([
    ["new HttpError(405) with allow: GET", () => new HttpError(405, "no", { headers: { allow: "GET" } })],
    [
      "an http-errors-style 405 with Allow: GET",
      () => Object.assign(new Error("no"), { status: 405, expose: true, headers: { Allow: "GET" } }),
    ],
    [
      "HttpError.methodNotAllowed([]) (Allow empty: no method is allowed)",
      () => HttpError.methodNotAllowed([]),
    ],
  ])("%s → 405 with its Allow", async (_label, make) => {
    const { url } = await serve((app) =>
      app.delete("/x", () => {
        throw make();
      }),
    );
    const res = await fetch(`${url}/x`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.has("allow")).toBe(true);
  });

  // RFC 9110 §10.2.1: Allow "lists the set of methods advertised as supported by the target
  // resource"; allowedMethods answers OPTIONS itself (§9.3.7), so OPTIONS is one of them.
  it("allowedMethods(['GET', 'HEAD']) → OPTIONS 204 and PUT 405 both with Allow: GET, HEAD, OPTIONS", async () => {
    const { url } = await serve((app) => {
      app
        .route("/r")
        .get((_req, res) => {
          res.json([]);
        })
        .all(allowedMethods(["GET", "HEAD"]));
    });
    const options = await fetch(`${url}/r`, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    const put = await fetch(`${url}/r`, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it("allowedMethods answers OPTIONS with 204 + Allow and other methods with 405 + the same Allow", async () => {
    const { url } = await serve((app) => {
      app
        .route("/employees")
        .get((_req, res) => {
          res.json([]);
        })
        .all(allowedMethods(["GET", "head", "OPTIONS"]));
    });
    const options = await fetch(`${url}/employees`, { method: "OPTIONS" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(await options.text()).toBe("");
    const put = await fetch(`${url}/employees`, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(() => allowedMethods([])).toThrow(TypeError);
  });

  it("drops representation headers a handler set before failing (ETag, Content-Disposition)", async () => {
    const { url } = await serve((app) =>
      app.get("/x", (_req, res) => {
        res.setHeader("ETag", '"abc"');
        res.setHeader("Content-Disposition", 'inline; filename="x.pdf"');
        res.setHeader("Content-Type", "application/pdf");
        throw HttpError.notFound();
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.headers.get("etag")).toBeNull();
    expect(res.headers.get("content-disposition")).toBeNull();
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  });

  // RFC 9112 §4: the reason-phrase is a textual description of the status code; a handler's own
  // (`res.statusMessage = "Created"` for the 201 it meant to send) described another status.
  it('a reason phrase the failed handler set ("Created") → the status line of the 500 is not "500 Created"', async () => {
    const { url } = await serve((app) =>
      app.post("/x", (_req, res) => {
        res.status(201);
        res.statusMessage = "Created";
        throw new Error("the insert failed");
      }),
    );
    const res = await fetch(`${url}/x`, { method: "POST" });
    expect(res.status).toBe(500);
    expect(res.statusText).toBe("Internal Server Error");
  });
});

describe("an error's own headers that cannot be sent (RFC 9110 §5.1, §5.5)", () => {
  /** What `http-errors` and SDK errors look like: a status and a `headers` object. */
  function httpErrorsStyle(status: number, headers: Record<string, unknown>): Error {
    return Object.assign(new Error("Slow down"), { status, expose: true, headers });
  }

  it('headers {"X-Bad\\r\\n": "v", "Retry-After": "a\\r\\nb"} → the 429 problem record without them, server stays up', async () => {
    const { url, logger } = await serve((app) =>
      app.get("/x", () => {
        throw httpErrorsStyle(429, { "X-Bad\r\n": "v", "Retry-After": "a\r\nb", "X-Kept": "yes" });
      }),
    );
    const res = await fetch(`${url}/x`, { headers: { Accept: "application/problem+json" } });
    expect(res.status).toBe(429);
    expect(res.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    expect(await readJson(res)).toMatchObject({
      status: 429,
      title: "Too Many Requests",
      detail: "Slow down",
    });
    expect(res.headers.get("retry-after")).toBeNull();
    expect(res.headers.get("x-kept")).toBe("yes");
    expect(res.headers.get("cache-control")).toBe("no-store");
    // The server is still up, and the dropped fields were logged by name for the developer.
    expect((await fetch(`${url}/missing`)).status).toBe(404);
    expect(logger.calls).toHaveLength(1);
    expect(logger.calls[0]?.obj).toMatchObject({ status: 429, droppedHeaders: ["X-Bad\r\n", "Retry-After"] });
  });

  it("an HttpError with a non-token name, NUL, a char above U+00FF, undefined, an object → only the valid ones", async () => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw HttpError.serviceUnavailable(30, "down", {
          headers: {
            "Bad Name": "v",
            "": "empty",
            "X-Nul": "a\u0000b",
            "X-Wide": "\u0100",
            "X-Undefined": undefined as unknown as string,
            "X-Object": {} as unknown as string,
            "X-Tab": "a\tb",
          },
        });
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(503);
    expect(await readJson(res)).toMatchObject({ status: 503, error: "Service Unavailable" });
    expect(res.headers.get("retry-after")).toBe("30");
    expect(res.headers.get("x-tab")).toBe("a\tb");
    for (const name of ["x-nul", "x-wide", "x-undefined", "x-object"])
      expect(res.headers.get(name)).toBeNull();
  });

  it("an error's Transfer-Encoding, Content-Length, Content-Encoding → ignored: the record is framed and labelled by the handler", async () => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw httpErrorsStyle(502, {
          "Transfer-Encoding": "chunked",
          "Content-Length": "5",
          "Content-Encoding": "gzip",
          "Content-Type": "text/html",
        });
      }),
    );
    const res = await fetch(`${url}/x`);
    expect(res.status).toBe(502);
    expect(res.headers.get("transfer-encoding")).toBeNull();
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await readJson(res)).toMatchObject({ status: 502, error: "Bad Gateway" });
  });
});

describe("a precompressed file whose stream fails before the first byte", () => {
  // RFC 9110 §8.4: Content-Encoding says how the content is coded; the error record is not gzip,
  // and a client that trusts the label fails to decode it (fetch rejects the body).
  it("Content-Encoding: gzip (and Content-Digest) set by the handler → dropped, the record readable", async () => {
    const { url } = await serve((app) =>
      app.get("/report.csv", (_req, res) => {
        res.setHeader("Content-Type", "text/csv");
        res.setHeader("Content-Encoding", "gzip");
        res.setHeader("Content-Digest", "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:");
        throw HttpError.notFound("No report for that day");
      }),
    );
    const res = await fetch(`${url}/report.csv`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("content-digest")).toBeNull();
    expect((await readJson(res)).message).toBe("No report for that day");
  });
});

describe("a streaming handler that set Transfer-Encoding itself, then failed", () => {
  // RFC 9112 §6.2: a sender MUST NOT send Content-Length in a message that has Transfer-Encoding;
  // with both, a proxy may frame the message one way and the client another (request smuggling's
  // response-side twin, §6.3 rule 3).
  it("Transfer-Encoding: chunked set before the error → one framing, Content-Length only", async () => {
    const { url } = await serve((app) =>
      app.get("/events", (_req, res) => {
        res.setHeader("Transfer-Encoding", "chunked");
        throw HttpError.notFound("No such stream");
      }),
    );
    const { hostname, port } = new URL(url);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) }, () =>
        socket.end("GET /events HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
      );
      let text = "";
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    const head = reply.slice(0, reply.indexOf("\r\n\r\n")).toLowerCase();
    expect(head).toMatch(/^http\/1\.1 404 /);
    expect(head).not.toContain("transfer-encoding");
    expect(head).toMatch(/\r\ncontent-length: \d+/);
    expect(JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)).message).toBe("No such stream");
  });
});

describe("RFC 9457 §3.2 extension members (HttpError option extensions)", () => {
  const unavailable = (app: Express) =>
    app.get("/ready", () => {
      throw HttpError.serviceUnavailable(5, "pool exhausted: secret", {
        extensions: { checks: { database: "DOWN", redis: "not used" }, attempts: [1, 2] },
      });
    });

  it("a 503 with extensions → the record plus its members, message still generic, Retry-After kept", async () => {
    const { url } = await serve(unavailable);
    const res = await fetch(`${url}/ready`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const text = await res.text();
    // The record's members first, then the extensions, in the order given.
    expect(Object.keys(JSON.parse(text))).toEqual([
      "timestamp",
      "status",
      "error",
      "message",
      "path",
      "checks",
      "attempts",
    ]);
    expect(JSON.parse(text)).toEqual({
      timestamp: "2026-01-02T03:04:05.678Z",
      status: 503,
      error: "Service Unavailable",
      message: "The service is temporarily unavailable; try again later",
      path: "/ready",
      checks: { database: "DOWN", redis: "not used" },
      attempts: [1, 2],
    });
  });

  it("Accept: application/problem+json → the members follow the problem's own", async () => {
    const { url } = await serve(unavailable);
    const res = await fetch(`${url}/ready`, { headers: { Accept: "application/problem+json" } });
    expect(await readJson(res)).toMatchObject({
      type: "about:blank",
      status: 503,
      checks: { database: "DOWN", redis: "not used" },
      attempts: [1, 2],
    });
  });

  it.each([
    [
      "application/xml",
      "<path>/ready</path><checks><database>DOWN</database><redis>not used</redis></checks><attempts><i>1</i><i>2</i></attempts></error>",
    ],
    [
      "application/problem+xml",
      "<checks><database>DOWN</database><redis>not used</redis></checks><attempts><i>1</i><i>2</i></attempts></problem>",
    ],
  ])("Accept: %s → the members as elements (RFC 9457 Appendix B)", async (accept, tail) => {
    const { url } = await serve(unavailable);
    const text = await (await fetch(`${url}/ready`, { headers: { Accept: accept } })).text();
    expect(text.endsWith(tail)).toBe(true);
  });

  it.each([["application/json"], ["application/problem+json"]])(
    "a BigInt member (9007199254740993n), Accept: %s → a JSON number with every digit",
    async (accept) => {
      const { url } = await serve((app) =>
        app.get("/x", () => {
          throw HttpError.conflict("taken", { extensions: { holderId: 9007199254740993n } });
        }),
      );
      const res = await fetch(`${url}/x`, { headers: { Accept: accept } });
      expect(res.status).toBe(409);
      expect(await res.text()).toContain('"holderId":9007199254740993');
    },
  );

  it.each([
    ["application/json"],
    ["application/problem+json"],
    ["application/xml"],
    ["application/problem+xml"],
  ])(
    "a member that cannot be rendered (a cycle, a throwing toJSON), Accept: %s → 500 record, logged",
    async (accept) => {
      const cycle: Record<string, unknown> = { name: "loop" };
      cycle.self = cycle;
      const { url, logger } = await serve((app) => {
        app.get("/cycle", () => {
          throw HttpError.conflict("taken", { extensions: { cycle } });
        });
        app.get("/tojson", () => {
          throw HttpError.conflict("taken", {
            extensions: {
              bad: {
                toJSON() {
                  throw new Error("at /srv/app/secret.js:12");
                },
              },
            },
          });
        });
      });
      for (const path of ["/cycle", "/tojson"]) {
        const res = await fetch(`${url}${path}`, { headers: { Accept: accept } });
        const text = await res.text();
        expect(res.status).toBe(500);
        expect(text).not.toContain("secret.js");
        expect(text).toContain(path);
      }
      expect(logger.calls.length).toBeGreaterThanOrEqual(1);
    },
  );

  it.each([["application/xml"], ["application/problem+xml"]])(
    "Accept: %s → members as JSON has them: a Date as its ISO text, a function or symbol left out, never its source",
    async (accept) => {
      const { url } = await serve((app) =>
        app.get("/x", () => {
          throw HttpError.conflict("taken", {
            extensions: {
              since: new Date("2026-01-02T03:04:05.678Z"),
              detailHolder: {
                name: "Ada",
                helper() {
                  return "/srv/app/secret.js";
                },
                tag: Symbol("secret.js"),
              },
            },
          });
        }),
      );
      const text = await (await fetch(`${url}/x`, { headers: { Accept: accept } })).text();
      expect(text).not.toContain("secret.js");
      expect(text).toContain(
        "<since>2026-01-02T03:04:05.678Z</since><detailHolder><name>Ada</name></detailHolder>",
      );
    },
  );

  // XML Schema Part 1 §2.6.2: xsi:nil="true" marks an element with no value; an empty element is
  // the empty string. A null member was <managerId></managerId>, the XML of "" too, so a client
  // could not tell them apart; @svc/negotiate's XML writes null as nil, the root declaring xsi.
  const XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
  const nullable = (app: Express) =>
    app.get("/x", () => {
      throw HttpError.conflict("taken", {
        extensions: { managerId: null, note: "", list: [null, "", () => 1], holder: { since: null } },
      });
    });
  it.each([
    [
      "application/xml",
      `<error ${XSI}><timestamp>`,
      '<path>/x</path><managerId xsi:nil="true"/><note></note><list><i xsi:nil="true"/><i></i><i xsi:nil="true"/></list><holder><since xsi:nil="true"/></holder></error>',
    ],
    [
      "application/problem+xml",
      `<problem xmlns="urn:ietf:rfc:7807" ${XSI}><type>`,
      '<managerId xsi:nil="true"/><note></note><list><i xsi:nil="true"/><i></i><i xsi:nil="true"/></list><holder><since xsi:nil="true"/></holder></problem>',
    ],
  ])(
    'extensions { managerId: null, note: "", list: [null, "", fn] }, Accept: %s → null as xsi:nil, "" empty',
    async (accept, head, tail) => {
      const { url } = await serve(nullable);
      const text = await (await fetch(`${url}/x`, { headers: { Accept: accept } })).text();
      expect(text.startsWith(`<?xml version="1.0" encoding="UTF-8"?>\n${head}`)).toBe(true);
      expect(text.endsWith(tail)).toBe(true);
      const json = await (await fetch(`${url}/x`, { headers: { Accept: "application/json" } })).json();
      expect(json).toMatchObject({
        managerId: null,
        note: "",
        list: [null, "", null],
        holder: { since: null },
      });
    },
  );
  it.each([["application/xml"], ["application/problem+xml"]])(
    "extensions without null, Accept: %s → no xsi namespace declared",
    async (accept) => {
      const { url } = await serve(unavailable);
      const text = await (await fetch(`${url}/ready`, { headers: { Accept: accept } })).text();
      expect(text).not.toContain("xmlns:xsi");
    },
  );

  it("a value with markup is escaped in XML", async () => {
    const { url } = await serve((app) =>
      app.get("/x", () => {
        throw HttpError.conflict("taken", { extensions: { holder: "<a & b>" } });
      }),
    );
    const text = await (await fetch(`${url}/x`, { headers: { Accept: "application/xml" } })).text();
    expect(text).toContain("<holder>&lt;a &amp; b&gt;</holder>");
  });

  it.each([["status"], ["message"], ["type"], ["code"], ["errors"], ["1st"], ["has-dash"], ["x y"], [""]])(
    "an extension named %j → TypeError at construction",
    (name) => {
      expect(() => new HttpError(400, "bad", { extensions: { [name]: 1 } })).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_EXTENSIONS" }),
      );
    },
  );

  it("extensions that are not an object → TypeError", () => {
    expect(() => new HttpError(400, "bad", { extensions: "x" as never })).toThrow(TypeError);
  });
});

describe("headers already sent", () => {
  it("error after the response started → connection closed, no second response, logged once", async () => {
    const { url, logger } = await serve((app) =>
      app.get("/stream", (_req, res, next) => {
        res.writeHead(200, { "Content-Type": "text/plain" });
        res.write("partial ");
        setTimeout(() => next(new Error("stream broke")), 10);
      }),
    );
    const res = await fetch(`${url}/stream`);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect(logger.calls).toHaveLength(1);
  });
});

describe("headers already sent: Express's default handler not involved (Express 4 in its variant)", () => {
  afterEach(() => vi.restoreAllMocks());

  // Express's default handler (finalhandler) prints the error with console.error outside the
  // "test" env; production is what users run, so the app is set to it.
  async function started(route: (res: import("express").Response, fail: (err: unknown) => void) => void) {
    const logger = recordingLogger();
    const app = express();
    app.set("env", "production");
    app.get("/stream", (_req, res, next) => route(res, (e) => next(e)));
    app.use(errorHandler({ logger, now: () => FIXED_NOW }));
    const server = await listen(app);
    closers.push(server.close);
    const consoleError = vi.spyOn(console, "error").mockImplementation(() => {});
    return { url: server.url, logger, consoleError };
  }

  it.each([
    [500, 1],
    [404, 0],
  ])(
    "%i after 8 of 100 Content-Length bytes → truncated response, %i line(s) on the configured logger, none on console.error",
    async (status, lines) => {
      const { url, logger, consoleError } = await started((res, fail) => {
        res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": "100" });
        res.write("partial ");
        setTimeout(() => fail(new HttpError(status, "stream broke")), 10);
      });
      const res = await fetch(`${url}/stream`);
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(logger.calls).toHaveLength(lines);
      expect(consoleError).not.toHaveBeenCalled();
    },
  );

  it("Error after a chunked response started → no last chunk (truncated), logged once, none on console.error", async () => {
    const { url, logger, consoleError } = await started((res, fail) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.write("partial ");
      setTimeout(() => fail(new Error("stream broke")), 10);
    });
    const res = await fetch(`${url}/stream`);
    await expect(res.text()).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(logger.calls).toHaveLength(1);
    expect(consoleError).not.toHaveBeenCalled();
  });

  it("Error after res.end('done') → the complete response stands, logged once, none on console.error", async () => {
    const { url, logger, consoleError } = await started((res, fail) => {
      res.end("done");
      fail(new Error("after end"));
    });
    const res = await fetch(`${url}/stream`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("done");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(logger.calls).toHaveLength(1);
    expect(consoleError).not.toHaveBeenCalled();
  });
});

describe("construction-time validation", () => {
  it("logger without error() → TypeError", () => {
    expect(() => errorHandler({ logger: {} as ErrorLogger })).toThrow(TypeError);
  });
  it("relative problemTypeBase → TypeError", () => {
    expect(() => errorHandler({ problemTypeBase: "/problems/" })).toThrow(/absolute URI/);
  });
  it.each([
    [
      { logger: { info() {} } as never },
      "errorHandler: logger must be an object with an error(obj, msg) method, got an object",
      "ERR_SVC_ERRORS_LOGGER",
    ],
    [
      { problemTypeBase: "/problems/" },
      'errorHandler: problemTypeBase must be an absolute URI, got "/problems/"',
      "ERR_SVC_ERRORS_PROBLEM_TYPE_BASE",
    ],
  ])(
    "%j → a TypeError naming the option, what was given and what is accepted, with its code",
    (options, message, code) => {
      let thrown: unknown;
      try {
        errorHandler(options);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect(thrown).toMatchObject({ message, code });
    },
  );
  it("new HttpError(405) without an Allow header → TypeError ERR_SVC_ERRORS_HEADERS (RFC 9110 §15.5.6)", () => {
    expect(() => new HttpError(405)).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_HEADERS" }),
    );
    expect(() => new HttpError(405, "x", { headers: { "Retry-After": "1" } })).toThrow(/Allow/);
  });
  it("methodNotAllowed([]) → TypeError", () => {
    expect(() => methodNotAllowed([])).toThrow(TypeError);
  });
});

describe("no logger and no req.log → fallbackLogger on stderr", () => {
  afterEach(() => vi.restoreAllMocks());

  it("GET /jwks-down (500 whose cause is fetch failed ← ECONNREFUSED) → one stderr line with the whole cause chain", async () => {
    const app = express();
    app.get("/jwks-down", () => {
      const socket = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
      const fetchFailed = new TypeError("fetch failed", { cause: socket });
      throw new Error("The JSON Web Key Set could not be fetched", { cause: fetchFailed });
    });
    app.use(errorHandler());
    const server = await listen(app);
    closers.push(server.close);
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    vi.spyOn(process.stderr, "write").mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
      const text = String(chunk);
      if (text.includes('"msg":"request failed"')) lines.push(text);
      else return write(chunk, ...rest);
      return true;
    }) as typeof process.stderr.write);
    const res = await fetch(`${server.url}/jwks-down`);
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(body).not.toContain("ECONNREFUSED");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({ level: 50, status: 500, method: "GET", path: "/jwks-down" });
    expect(line.err.message).toBe("The JSON Web Key Set could not be fetched");
    expect(line.err.cause).toMatchObject({ type: "TypeError", message: "fetch failed" });
    expect(line.err.cause.cause).toMatchObject({
      message: "connect ECONNREFUSED 127.0.0.1:9",
      code: "ECONNREFUSED",
    });
  });
});

describe("hostile thrown values: the record still goes out (RFC 9457 §6)", () => {
  afterEach(() => vi.restoreAllMocks());

  /** Each throws inside any property read, so the handler must not read it unguarded. */
  const hostile: [string, () => unknown][] = [
    [
      "an object whose status getter throws",
      () =>
        Object.defineProperty({}, "status", {
          enumerable: true,
          get() {
            throw new Error("getter at /srv/app/secret.js:12");
          },
        }),
    ],
    [
      "a Proxy that throws on every trap",
      () =>
        new Proxy(
          {},
          {
            get() {
              throw new Error("trap at /srv/app/secret.js:12");
            },
            has() {
              throw new Error("trap at /srv/app/secret.js:12");
            },
            ownKeys() {
              throw new Error("trap at /srv/app/secret.js:12");
            },
            getPrototypeOf() {
              throw new Error("trap at /srv/app/secret.js:12");
            },
            getOwnPropertyDescriptor() {
              throw new Error("trap at /srv/app/secret.js:12");
            },
          },
        ),
    ],
    [
      "an Error whose message and name getters throw",
      () => {
        const err = new Error("x");
        for (const name of ["message", "name"]) {
          Object.defineProperty(err, name, {
            get() {
              throw new Error("getter at /srv/app/secret.js:12");
            },
          });
        }
        return err;
      },
    ],
  ];

  it.each(hostile)("%s, with the fallback logger → 500 record, not Express's page", async (_name, make) => {
    const app = express();
    app.get("/h", (_req, _res, next) => next(make()));
    app.use(errorHandler({ now: () => FIXED_NOW }));
    const server = await listen(app);
    closers.push(server.close);
    const write = process.stderr.write.bind(process.stderr);
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
      const text = String(chunk);
      if (text.includes('"msg":"request failed"')) lines.push(text);
      else return write(chunk, ...rest);
      return true;
    }) as typeof process.stderr.write);
    const res = await fetch(`${server.url}/h`);
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(text).not.toContain("secret.js");
    expect(JSON.parse(text)).toMatchObject({
      status: 500,
      message: "An unexpected error occurred",
      path: "/h",
    });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ status: 500, path: "/h" });
  });

  // isHttpError also recognises another copy's HttpError by its registered brand, so the value's
  // shape is not this copy's guarantee: an older copy, or anything carrying the brand, may hold a
  // status no error response can have (RFC 9110 §15: 4xx and 5xx report errors).
  const BRAND = Symbol.for("@svc/errors.HttpError");
  it.each([
    ["status 200", { status: 200, headers: {} }],
    ["status 302 with Location", { status: 302, headers: { Location: "https://evil.example/" } }],
    ["status 600", { status: 600, headers: {} }],
    ['status "404"', { status: "404", headers: {} }],
    ["status NaN", { status: Number.NaN, headers: {} }],
    ["headers null", { status: 404, headers: null }],
    ["expose true on a 500", { status: 500, expose: true, headers: {} }],
  ])("a branded HttpError look-alike with %s → the 500 record", async (_label, shape) => {
    const { url } = await serve((app) =>
      app.get("/b", () => {
        throw Object.assign(new Error("internal detail at /srv/app/secret.js"), shape, { [BRAND]: true });
      }),
    );
    const res = await fetch(`${url}/b`, { redirect: "manual" });
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(res.headers.get("location")).toBeNull();
    expect(text).not.toContain("secret.js");
    expect(JSON.parse(text)).toMatchObject({ status: 500, message: "An unexpected error occurred" });
  });

  it("a well-formed HttpError of another copy (409, code, header, extension) → rendered as it came", async () => {
    const { url } = await serve((app) =>
      app.get("/b", () => {
        throw Object.assign(new Error("Order 7 is already paid"), {
          status: 409,
          expose: true,
          headers: { "Retry-After": "3" },
          code: "already_paid",
          extensions: { orderId: 7 },
          [BRAND]: true,
        });
      }),
    );
    const res = await fetch(`${url}/b`, { headers: { Accept: "application/problem+json" } });
    expect(res.status).toBe(409);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(await res.json()).toMatchObject({
      detail: "Order 7 is already paid",
      code: "already_paid",
      orderId: 7,
    });
  });

  it("a logger whose error() throws → the 500 record is still sent", async () => {
    const logger: ErrorLogger = {
      error() {
        throw new Error("log transport down at /srv/app/secret.js:12");
      },
    };
    const { url } = await serve(
      (app) =>
        app.get("/h", () => {
          throw new Error("boom");
        }),
      logger as ReturnType<typeof recordingLogger>,
    );
    vi.spyOn(process.stderr, "write").mockImplementation((() => true) as typeof process.stderr.write);
    const res = await fetch(`${url}/h`);
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(text).not.toContain("secret.js");
    expect(JSON.parse(text)).toMatchObject({ status: 500, message: "An unexpected error occurred" });
  });
});
