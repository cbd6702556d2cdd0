import { Writable } from "node:stream";
import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { type Listening, listen } from "@svc/test-utils";
import { FRAMEWORKS, type Mounts, serve } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { pino } from "pino";
import { pinoHttp } from "pino-http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticate } from "./express.js";
import { pinoRedaction, queryNamesAccessToken, REDACTED, redactUrl } from "./redaction.js";
import { createTokenIssuer } from "./token-issuer.js";

const issuer = createTokenIssuer({ issuer: "https://issuer.test/", audience: "api" });
const lines: string[] = [];
let server: Listening;

function sink(): Writable {
  return new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
}

beforeAll(async () => {
  const logger = pino({ redact: pinoRedaction }, sink());
  const a = express();
  a.use(pinoHttp({ logger }));
  a.use(
    authenticate({
      realm: "api",
      bearer: { jwks: await issuer.jwks(), algorithms: ["ES256"], audience: "api" },
      basic: { verify: () => ({ id: "bob" }) },
    }),
  );
  a.get("/me", (req, res) => {
    res.setHeader("Set-Cookie", "sid=SESSIONSECRET; HttpOnly");
    res.json(requestState(req).principal);
  });
  a.get("/boom", () => {
    throw new Error("the database is down");
  });
  a.use(errorHandler({ logger }));
  server = await listen(a);
});
afterAll(async () => {
  await server.close();
});

describe("pinoRedaction through pino-http", () => {
  it("errorHandler's 5xx line (the URL under `path`) keeps credential parameters out of the log", async () => {
    lines.length = 0;
    const basic = `Basic ${Buffer.from("bob:pw").toString("base64")}`;
    const res = await fetch(`${server.url}/boom?password=HUNTER2&code=AUTHCODE&page=2`, {
      headers: { authorization: basic },
    });
    expect(res.status).toBe(500);
    const failure = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === "request failed");
    expect(failure?.path).toBe("/boom?password=[Redacted]&code=[Redacted]&page=2");
    expect(lines.join("")).not.toMatch(/HUNTER2|AUTHCODE/);
    // Another line's `path` that is no URL is left as it is.
    lines.length = 0;
    pino({ redact: pinoRedaction }, sink()).info({ path: ["items", 0, "qty"] }, "invalid");
    expect(JSON.parse(lines[0] ?? "{}").path).toEqual(["items", 0, "qty"]);
  });

  it("Authorization, Cookie and Set-Cookie never reach the log; the rest does", async () => {
    lines.length = 0;
    const token = (await issuer.issue({ id: "alice" })).access_token;
    const res = await fetch(`${server.url}/me?page=2`, {
      headers: { authorization: `Bearer ${token}`, cookie: "sid=COOKIESECRET", "x-trace": "visible" },
    });
    expect(res.status).toBe(200);
    const log = lines.join("");
    expect(log).toContain("visible");
    expect(log).toContain("/me?page=2");
    expect(log).toContain("[Redacted]");
    expect(log).not.toContain(token);
    expect(log).not.toContain(token.split(".")[2]);
    expect(log).not.toContain("COOKIESECRET");
    expect(log).not.toContain("SESSIONSECRET");
  });

  it("Basic credentials never reach the log", async () => {
    lines.length = 0;
    const creds = Buffer.from("bob:Sup3rSecret").toString("base64");
    expect((await fetch(`${server.url}/me`, { headers: { authorization: `Basic ${creds}` } })).status).toBe(
      200,
    );
    expect(lines.join("")).not.toContain(creds);
  });

  it("?access_token=... → 400, and the token is not in the logged URL", async () => {
    lines.length = 0;
    const token = (await issuer.issue({ id: "alice" })).access_token;
    const res = await fetch(`${server.url}/me?access_token=${token}&page=3`);
    expect(res.status).toBe(400);
    const log = lines.join("");
    expect(log).toContain("access_token=[Redacted]&page=3");
    expect(log).not.toContain(token);
  });
});

/**
 * Each framework's servers log the request's fields as one does there: pino-http on Express and
 * `node:http`, a `req` serializer with the headers on Fastify, a bare `headers` object on Hono.
 */
function loggingMounts(out: string[]): Mounts {
  const logger = () =>
    pino(
      {
        redact: pinoRedaction,
        serializers: {
          req: (req: { method: string; url: string; headers: unknown }) => ({
            method: req.method,
            url: req.url,
            headers: req.headers,
          }),
        },
      },
      new Writable({
        write(chunk, _enc, cb) {
          out.push(String(chunk));
          cb();
        },
      }),
    );
  return {
    express() {
      const a = express();
      a.use(pinoHttp({ logger: logger() }));
      a.get("/me", (_req, res) => {
        res.json({ ok: true });
      });
      return a;
    },
    node() {
      const log = pinoHttp({ logger: logger() });
      return (req, res) => {
        log(req, res);
        res.setHeader("Content-Type", "application/json");
        res.end('{"ok":true}');
      };
    },
    fastify() {
      const app = Fastify({ loggerInstance: logger() });
      app.get("/me", async () => ({ ok: true }));
      return app;
    },
    fetch() {
      const app = new Hono();
      const log = logger();
      app.use(async (c, next) => {
        log.info({ headers: Object.fromEntries(c.req.raw.headers) }, "request");
        await next();
      });
      app.get("/me", (c) => c.json({ ok: true }));
      return app.fetch;
    },
  };
}

for (const framework of FRAMEWORKS) {
  describe(`pinoRedaction: the credentials of every scheme, logged on ${framework}`, () => {
    it("Authorization: DPoP, DPoP, Proxy-Authorization, Cookie → none of their values in the log", async () => {
      const out: string[] = [];
      const server = await serve(framework, loggingMounts(out));
      try {
        const res = await fetch(`${server.url}/me`, {
          headers: {
            Authorization: "DPoP TOKENSECRET.payload.signature",
            DPoP: "PROOFSECRET.payload.signature",
            "Proxy-Authorization": "Basic PROXYSECRET",
            Cookie: "sid=COOKIESECRET",
            "X-Trace": "visible",
          },
        });
        expect(res.status).toBe(200);
      } finally {
        await server.close();
      }
      const log = out.join("");
      expect(log).toContain("visible");
      expect(log).toContain(REDACTED);
      for (const secret of ["TOKENSECRET", "PROOFSECRET", "PROXYSECRET", "COOKIESECRET"])
        expect({ secret, logged: log.includes(secret) }).toEqual({ secret, logged: false });
    });
  });
}

describe("pinoRedaction: the parsed query pino-http logs next to the URL", () => {
  // pino-http's request serializer logs `req.query` (Express parses it) as well as `req.url`:
  // the values censored in the URL were written in clear one field further.
  it.each(["express 5 (simple parser)", "extended (qs) parser"])(
    "%s: password, client_secret, refresh_token, code, token in the query → not in the log",
    async (kind) => {
      const out: string[] = [];
      const logger = pino(
        { redact: pinoRedaction },
        new Writable({
          write(chunk, _enc, cb) {
            out.push(String(chunk));
            cb();
          },
        }),
      );
      const a = express();
      if (kind.startsWith("extended")) a.set("query parser", "extended");
      a.use(pinoHttp({ logger }));
      a.get("/cb", (_req, res) => {
        res.json({ ok: true });
      });
      const l = await listen(a);
      try {
        const query =
          "password=PWSECRET&Client_Secret=CSSECRET&refresh%5Ftoken=RTSECRET&code=CODESECRET" +
          "&token[x]=TKSECRET&nested[password]=NESTEDSECRET&page=7";
        expect((await fetch(`${l.url}/cb?${query}`)).status).toBe(200);
      } finally {
        await l.close();
      }
      const log = out.join("");
      expect(log).toContain('"page":"7"');
      for (const s of ["PWSECRET", "CSSECRET", "RTSECRET", "CODESECRET", "TKSECRET", "NESTEDSECRET"])
        expect({ s, logged: log.includes(s) }).toEqual({ s, logged: false });
    },
  );
});

describe("pinoRedaction with a plain pino logger", () => {
  it("bare headers objects and access_token fields are censored", () => {
    const out: string[] = [];
    const logger = pino(
      { redact: pinoRedaction },
      new Writable({
        write(chunk, _enc, cb) {
          out.push(String(chunk));
          cb();
        },
      }),
    );
    logger.info(
      { headers: { authorization: "Bearer SECRET1", cookie: "a=SECRET2" }, access_token: "SECRET3" },
      "x",
    );
    logger.info({ body: { access_token: "SECRET4" }, url: "/x?access_token=SECRET5" }, "y");
    logger.info({ req: { query: "password=SECRET6&page=2" } }, "z");
    logger.info({ req: { query: { user: { password: "SECRET7" }, page: "2" } } }, "w");
    const log = out.join("");
    for (const s of ["SECRET1", "SECRET2", "SECRET3", "SECRET4", "SECRET5", "SECRET6", "SECRET7"])
      expect(log).not.toContain(s);
    expect(log).toContain('"query":"password=[Redacted]&page=2"');
    expect(log).toContain("/x?access_token=[Redacted]");
  });
});

describe("redactUrl", () => {
  it.each([
    ["/a?access_token=abc", "/a?access_token=[Redacted]"],
    ["/a?x=1&ACCESS_TOKEN=abc&y=2", "/a?x=1&ACCESS_TOKEN=[Redacted]&y=2"],
    ["/a?my_access_token=abc", "/a?my_access_token=abc"],
    ["/a", "/a"],
    ["/a?access_token%3Dabc", "/a?access_token%3D[Redacted]"],
    // Names as a server decodes them (query parsers percent-decode names as well as values).
    ["/a?access%5Ftoken=abc", "/a?access%5Ftoken=[Redacted]"],
    ["/a?Access%5FToken%3Dabc", "/a?Access%5FToken%3D[Redacted]"],
    ["/a?access_token[]=abc&b=1", "/a?access_token[]=[Redacted]&b=1"],
    ["/a?access_token%5B%0A%5D=abc", "/a?access_token%5B%0A%5D=[Redacted]"],
    ["/a?x=%E0%A4%A&password=abc", "/a?x=%E0%A4%A&password=[Redacted]"],
    ["/a?x=1;token=abc", "/a?x=1;token=[Redacted]"],
    ["/a?access_token", "/a?access_token"],
    // A bracketed part naming a credential (qs nests `a[password]` as { a: { password } }).
    ["/a?user[password]=abc&user[name]=bob", "/a?user[password]=[Redacted]&user[name]=bob"],
  ])("%s → %s", (input, expected) => {
    expect(redactUrl(input)).toBe(expected);
  });
});

describe("query names from clients, in linear time", () => {
  // `[` runs with a line break after them made the old `/\[.*$/` name cut quadratic: 64 Ki
  // brackets took seconds. No clock is read here: 1 Mi brackets are some 10^12 steps for a
  // quadratic cut (many minutes), a few million for a linear one, so only the test's own time
  // limit can catch a quadratic cut, and no load on the machine comes near it.
  const brackets = `${"[".repeat(1 << 18)}%0Ax`;
  it("redactUrl of a name of 1 Mi `[` and an encoded line break → unchanged but for the credential", () => {
    const url = `/a?${brackets}=1&access_token=abc`;
    expect(redactUrl(url)).toBe(url.replace("access_token=abc", "access_token=[Redacted]"));
  });
  it("queryNamesAccessToken (authenticate's check) of the same name → false, then true with access_token", () => {
    expect(queryNamesAccessToken(brackets)).toBe(false);
    expect(queryNamesAccessToken(`${brackets}&access_token=abc`)).toBe(true);
  });

  it("through authenticate: 10 requests whose query is 15,000 `[` and %0Ax → 401 each", async () => {
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${server.url}/me?${"[".repeat(15_000)}%0Ax`);
      expect(res.status).toBe(401);
    }
  });
});
