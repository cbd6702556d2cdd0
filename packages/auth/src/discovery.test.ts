import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { type Listening, listen, listenOn } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fetchTrustingTestCa, TLS } from "../test/tls.js";
import { type BearerOptions, createBearerVerifier, KeySourceUnavailableError } from "./bearer.js";
import { DiscoveryError, discoverIssuer, metadataUrls } from "./discovery.js";
import { authenticate } from "./express.js";
import { createTokenIssuer, type TokenIssuer } from "./token-issuer.js";

const AUD = "https://api.example/";
const opened: Listening[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()));
});

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** An issuer on a real server: its routes can be swapped mid-test, and every hit is counted. */
interface IssuerServer {
  url: string;
  routes: Map<string, Route>;
  hits: Map<string, number>;
}

async function issuerServer(tls: boolean): Promise<IssuerServer> {
  const routes = new Map<string, Route>();
  const hits = new Map<string, number>();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (route) route(req, res);
    else res.writeHead(404).end();
  };
  const l = tls
    ? await listenOn(createHttpsServer(TLS, handler) as unknown as Server)
    : await listen(handler);
  opened.push(l);
  return { url: tls ? l.url.replace("http:", "https:") : l.url, routes, hits };
}

const json =
  (body: unknown): Route =>
  (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  };

/** An issuer serving OpenID Connect metadata and its JWKS, and a token issuer signing for it. */
async function oidcIssuer(
  tls: boolean,
  path = "",
): Promise<IssuerServer & { issuer: string; tokens: TokenIssuer }> {
  const server = await issuerServer(tls);
  const issuer = `${server.url}${path}`;
  const tokens = createTokenIssuer({ issuer, audience: AUD });
  server.routes.set(
    `${path}/.well-known/openid-configuration`,
    json({ issuer, jwks_uri: `${server.url}${path}/jwks.json` }),
  );
  server.routes.set(`${path}/jwks.json`, json(await tokens.jwks()));
  return { ...server, issuer, tokens };
}

/** A listening app behind authenticate(), whose error records are kept. */
async function protectedApp(bearer: BearerOptions) {
  const records: { err?: unknown; status?: number }[] = [];
  const a = express();
  a.get("/me", authenticate({ realm: "api", bearer }), (req, res) => {
    res.json(requestState(req).principal);
  });
  a.use(errorHandler({ logger: { error: (obj: never) => records.push(obj) } }));
  const l = await listen(a);
  opened.push(l);
  const get = (token: string) => fetch(`${l.url}/me`, { headers: { authorization: `Bearer ${token}` } });
  return { get, records };
}

const tlsOptions = { algorithms: ["ES256"], audience: AUD, discovery: { fetch: fetchTrustingTestCa() } };
const quiet = { allowHttp: true, onWarning: () => {} };

/** The discovery error at the bottom of a logged record's cause chain. */
function discoveryCause(record: { err?: unknown } | undefined): DiscoveryError | undefined {
  let err: unknown = record?.err;
  while (err instanceof Error) {
    if (err instanceof DiscoveryError) return err;
    err = err.cause;
  }
  return undefined;
}

describe("issuerBaseURL: OpenID Connect discovery", () => {
  it.each([
    ["https://issuer.example", "https://issuer.example/.well-known/openid-configuration"],
    ["https://issuer.example/", "https://issuer.example/.well-known/openid-configuration"],
    ["https://issuer.example/tenant/", "https://issuer.example/tenant/.well-known/openid-configuration"],
  ])("metadataUrls(%s) starts with %s (OIDC Discovery §4)", (issuer, first) => {
    expect(metadataUrls(issuer)[0]).toBe(first);
  });

  it("metadataUrls(https://issuer.example/tenant) tries the RFC 8414 §3.1 form second", () => {
    expect(metadataUrls("https://issuer.example/tenant")[1]).toBe(
      "https://issuer.example/.well-known/oauth-authorization-server/tenant",
    );
  });

  it("an https issuer: metadata, then its JWKS, each fetched once → 200 for its tokens", async () => {
    const idp = await oidcIssuer(true, "/tenant");
    const app = await protectedApp({ ...tlsOptions, issuerBaseURL: idp.issuer });
    for (const id of ["alice", "bob"]) {
      const res = await app.get((await idp.tokens.issue({ id })).access_token);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id });
    }
    expect(idp.hits.get("/tenant/.well-known/openid-configuration")).toBe(1);
    expect(idp.hits.get("/tenant/jwks.json")).toBe(1);
  });

  it("clearCache after the issuer drops a key: the discovered JWKS is downloaded again → 401 for that key's tokens", async () => {
    const idp = await oidcIssuer(false);
    const verifier = createBearerVerifier({
      ...quiet,
      algorithms: ["ES256"],
      audience: AUD,
      issuerBaseURL: idp.issuer,
    });
    const app = await protectedApp(verifier as unknown as BearerOptions);
    const t = (await idp.tokens.issue({ id: "alice" })).access_token;
    expect((await app.get(t)).status).toBe(200);
    idp.routes.set("/jwks.json", json({ keys: [] })); // the key is revoked
    verifier.clearCache();
    expect((await app.get(t)).status).toBe(401);
    expect(idp.hits.get("/jwks.json")).toBe(2);
    expect(idp.hits.get("/.well-known/openid-configuration")).toBe(1);
  });

  it("iss is checked against the issuer: a token from another issuer with the same key → 401", async () => {
    const idp = await oidcIssuer(true);
    const app = await protectedApp({ ...tlsOptions, issuerBaseURL: idp.issuer });
    const other = createTokenIssuer({ issuer: "https://other.example/", audience: AUD });
    idp.routes.set(
      "/jwks.json",
      json({ keys: [...(await idp.tokens.jwks()).keys, ...(await other.jwks()).keys] }),
    );
    expect((await app.get((await other.issue({ id: "mallory" })).access_token)).status).toBe(401);
  });

  it("404 at the OpenID path → the RFC 8414 path is read", async () => {
    const idp = await oidcIssuer(true, "/t");
    const metadata = idp.routes.get("/t/.well-known/openid-configuration") as Route;
    idp.routes.delete("/t/.well-known/openid-configuration");
    idp.routes.set("/.well-known/oauth-authorization-server/t", metadata);
    const app = await protectedApp({ ...tlsOptions, issuerBaseURL: idp.issuer });
    expect((await app.get((await idp.tokens.issue({ id: "a" })).access_token)).status).toBe(200);
  });

  it("metadata naming another issuer (a trailing slash off) → 503 ERR_DISCOVERY_ISSUER_MISMATCH, not 401", async () => {
    const idp = await oidcIssuer(true);
    idp.routes.set(
      "/.well-known/openid-configuration",
      json({ issuer: `${idp.issuer}/`, jwks_uri: `${idp.url}/jwks.json` }),
    );
    const app = await protectedApp({ ...tlsOptions, issuerBaseURL: idp.issuer });
    const res = await app.get((await idp.tokens.issue({ id: "a" })).access_token);
    expect(res.status).toBe(503);
    // No download for discovery.cooldownDuration (30 s by default): the client is told so.
    expect(res.headers.get("retry-after")).toMatch(/^(29|30)$/);
    expect(app.records[0]?.err).toBeInstanceOf(Error);
    expect(discoveryCause(app.records[0])?.code).toBe("ERR_DISCOVERY_ISSUER_MISMATCH");
    expect(idp.hits.get("/jwks.json")).toBeUndefined();
  });

  it("an https issuer whose jwks_uri is http → 503 ERR_DISCOVERY_INSECURE_JWKS_URI, nothing fetched over http", async () => {
    const idp = await oidcIssuer(true);
    const plain = await oidcIssuer(false);
    idp.routes.set(
      "/.well-known/openid-configuration",
      json({ issuer: idp.issuer, jwks_uri: `${plain.url}/jwks.json` }),
    );
    const app = await protectedApp({ ...tlsOptions, issuerBaseURL: idp.issuer });
    expect((await app.get((await idp.tokens.issue({ id: "a" })).access_token)).status).toBe(503);
    expect(discoveryCause(app.records[0])?.code).toBe("ERR_DISCOVERY_INSECURE_JWKS_URI");
    expect(plain.hits.get("/jwks.json")).toBeUndefined();
  });

  it.each([
    ["with Content-Length", false],
    ["chunked, no Content-Length", true],
  ])("metadata over discovery.maxBytes (%s) → 503 ERR_DISCOVERY_TOO_LARGE", async (_name, chunked) => {
    const idp = await oidcIssuer(true);
    const body = JSON.stringify({
      issuer: idp.issuer,
      jwks_uri: `${idp.url}/jwks.json`,
      pad: "x".repeat(4096),
    });
    idp.routes.set("/.well-known/openid-configuration", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      if (!chunked) res.end(body);
      else {
        res.write(body.slice(0, 2000));
        res.end(body.slice(2000));
      }
    });
    const app = await protectedApp({
      ...tlsOptions,
      discovery: { ...tlsOptions.discovery, maxBytes: 1024 },
      issuerBaseURL: idp.issuer,
    });
    expect((await app.get((await idp.tokens.issue({ id: "a" })).access_token)).status).toBe(503);
    expect(discoveryCause(app.records[0])?.code).toBe("ERR_DISCOVERY_TOO_LARGE");
  });

  it.each<[string, string, Route]>([
    ["500", "ERR_DISCOVERY_STATUS", (_req, res) => res.writeHead(500).end("oops")],
    ["HTML", "ERR_DISCOVERY_INVALID_JSON", (_req, res) => res.writeHead(200).end("<html></html>")],
    ["an array", "ERR_DISCOVERY_INVALID_JSON", json([])],
    ["nothing within timeoutDuration", "ERR_DISCOVERY_FETCH", () => {}],
  ])("metadata answering %s → 503 %s", async (_name, code, route) => {
    const idp = await oidcIssuer(true);
    idp.routes.set("/.well-known/openid-configuration", route);
    const app = await protectedApp({
      ...tlsOptions,
      discovery: { ...tlsOptions.discovery, timeoutDuration: 300 },
      issuerBaseURL: idp.issuer,
    });
    expect((await app.get((await idp.tokens.issue({ id: "a" })).access_token)).status).toBe(503);
    expect(discoveryCause(app.records[0])?.code).toBe(code);
  });

  it("an issuer refusing connections → 503 whose cause chain ends at ECONNREFUSED", async () => {
    const gone = await listen(() => {});
    await gone.close();
    opened.splice(opened.indexOf(gone), 1);
    const app = await protectedApp({ algorithms: ["ES256"], ...quiet, issuerBaseURL: gone.url });
    const tokens = createTokenIssuer({ issuer: gone.url, audience: AUD });
    expect((await app.get((await tokens.issue({ id: "a" })).access_token)).status).toBe(503);
    const chain: string[] = [];
    for (let err: unknown = app.records[0]?.err; err instanceof Error; err = err.cause) {
      chain.push((err as { code?: string }).code ?? err.name);
    }
    expect(chain.join(" > ")).toMatch(/KeySourceUnavailableError > ERR_DISCOVERY_FETCH > .*ECONNREFUSED/);
  });

  it("an outage: concurrent requests share one download, the cooldown holds retries, then it recovers", async () => {
    const idp = await oidcIssuer(false);
    const good = idp.routes.get("/.well-known/openid-configuration") as Route;
    idp.routes.set("/.well-known/openid-configuration", (_req, res) => res.writeHead(502).end());
    let clock = Date.now();
    const verifier = createBearerVerifier({
      algorithms: ["ES256"],
      audience: AUD,
      ...quiet,
      issuerBaseURL: idp.issuer,
      discovery: { cooldownDuration: 30_000 },
      now: () => clock,
    });
    const token = (await idp.tokens.issue({ id: "a" })).access_token;
    const cold = await Promise.allSettled(Array.from({ length: 20 }, () => verifier.verify(token)));
    expect(cold.every((r) => r.status === "rejected" && r.reason instanceof KeySourceUnavailableError)).toBe(
      true,
    );
    expect(idp.hits.get("/.well-known/openid-configuration")).toBe(1);
    idp.routes.set("/.well-known/openid-configuration", good);
    clock += 29_000;
    await expect(verifier.verify(token)).rejects.toBeInstanceOf(KeySourceUnavailableError);
    expect(idp.hits.get("/.well-known/openid-configuration")).toBe(1);
    clock += 2_000;
    await expect(verifier.verify(token)).resolves.toMatchObject({ id: "a" });
    expect(idp.hits.get("/.well-known/openid-configuration")).toBe(2);
  });

  it("metadata down: the 503s in discovery.cooldownDuration carry Retry-After = the seconds left in it", async () => {
    const idp = await oidcIssuer(false);
    idp.routes.set("/.well-known/openid-configuration", (_req, res) => res.writeHead(502).end());
    let shift = 0;
    const app = await protectedApp({
      algorithms: ["ES256"],
      audience: AUD,
      ...quiet,
      issuerBaseURL: idp.issuer,
      discovery: { cooldownDuration: 30_000 },
      now: () => Date.now() + shift,
    });
    const token = (await idp.tokens.issue({ id: "a" })).access_token;
    const first = await app.get(token);
    expect(first.status).toBe(503);
    expect(Number(first.headers.get("retry-after"))).toBeGreaterThan(20);
    expect(Number(first.headers.get("retry-after"))).toBeLessThanOrEqual(30);
    shift += 20_000;
    const later = await app.get(token);
    expect(later.status).toBe(503);
    // RFC 9110 §10.2.3: delay-seconds; 10 s of the window are left, not a fixed 5.
    expect(later.headers.get("retry-after")).toMatch(/^([1-9]|10)$/);
    expect(Number(later.headers.get("retry-after"))).toBeGreaterThan(5);
    expect(idp.hits.get("/.well-known/openid-configuration")).toBe(1);
  });

  it("metadata past cacheMaxAge with the issuer down: the known keys go on serving, one refresh is tried", async () => {
    const idp = await oidcIssuer(false);
    let clock = Date.now();
    const verifier = createBearerVerifier({
      algorithms: ["ES256"],
      audience: AUD,
      ...quiet,
      issuerBaseURL: idp.issuer,
      discovery: { cacheMaxAge: 60_000 },
      cache: false,
      now: () => clock,
    });
    const token = (await idp.tokens.issue({ id: "a" })).access_token;
    await expect(verifier.verify(token)).resolves.toMatchObject({ id: "a" });
    idp.routes.set("/.well-known/openid-configuration", (_req, res) => res.writeHead(503).end());
    clock += 61_000;
    await expect(verifier.verify(token)).resolves.toMatchObject({ id: "a" });
    await vi.waitFor(() => expect(idp.hits.get("/.well-known/openid-configuration")).toBe(2));
    await expect(verifier.verify(token)).resolves.toMatchObject({ id: "a" });
    expect(idp.hits.get("/.well-known/openid-configuration")).toBe(2);
  });

  it("the discovered JWKS failing past its cacheMaxAge: one download per failureCooldownDuration, 503s with Retry-After in it, then recovery", async () => {
    const idp = await oidcIssuer(false);
    const goodKeys = idp.routes.get("/jwks.json") as Route;
    let shift = 0;
    const app = await protectedApp({
      algorithms: ["ES256"],
      audience: AUD,
      ...quiet,
      issuerBaseURL: idp.issuer,
      // cacheMaxAge 0: the key set is always stale, so every new token needs a download.
      jwksOptions: { cacheMaxAge: 0, failureCooldownDuration: 10_000 },
      now: () => Date.now() + shift,
    });
    let n = 0;
    const fresh = async () => (await idp.tokens.issue({ id: `u${n++}` })).access_token;
    expect((await app.get(await fresh())).status).toBe(200);
    expect(idp.hits.get("/jwks.json")).toBe(1);

    idp.routes.set("/jwks.json", (_req, res) => res.writeHead(502).end());
    const tokens = await Promise.all(Array.from({ length: 10 }, fresh));
    const refused = await Promise.all(tokens.map((t) => app.get(t)));
    for (let i = 0; i < 5; i++) refused.push(await app.get(await fresh()));
    for (const res of refused) {
      expect(res.status).toBe(503);
      // RFC 9110 §10.2.3: delay-seconds, here at most the 10 s window.
      expect(res.headers.get("retry-after")).toMatch(/^([1-9]|10)$/);
    }
    expect(idp.hits.get("/jwks.json")).toBe(2);

    shift += 10_001;
    expect((await app.get(await fresh())).status).toBe(503);
    expect((await app.get(await fresh())).status).toBe(503);
    expect(idp.hits.get("/jwks.json")).toBe(3);

    idp.routes.set("/jwks.json", goodKeys);
    shift += 10_001;
    expect((await app.get(await fresh())).status).toBe(200);
    expect(idp.hits.get("/jwks.json")).toBe(4);
    // The metadata was read once: the JWKS window is the JWKS's own.
    expect(idp.hits.get("/.well-known/openid-configuration")).toBe(1);
  });

  it("discoverIssuer(issuer) returns the checked metadata, and rejects a mismatch with DiscoveryError", async () => {
    const idp = await oidcIssuer(true);
    const fetch = fetchTrustingTestCa();
    await expect(discoverIssuer(idp.issuer, { fetch })).resolves.toMatchObject({
      issuer: idp.issuer,
      jwks_uri: `${idp.url}/jwks.json`,
    });
    await expect(discoverIssuer(`${idp.issuer}/`, { fetch })).rejects.toMatchObject({
      name: "DiscoveryError",
      code: "ERR_DISCOVERY_ISSUER_MISMATCH",
    });
  });
});

describe("http: key sources", () => {
  it.each<[string, Partial<BearerOptions>, string]>([
    ["jwksUri", { jwksUri: "http://127.0.0.1:9/jwks.json" }, "ERR_SVC_AUTH_BEARER_JWKS_URI"],
    ["issuerBaseURL", { issuerBaseURL: "http://127.0.0.1:9" }, "ERR_SVC_AUTH_BEARER_ISSUER_BASE_URL"],
  ])("an http: %s without allowHttp → refused at construction with %s", (_name, source, code) => {
    const onWarning = vi.fn();
    expect(() => createBearerVerifier({ algorithms: ["ES256"], onWarning, ...source })).toThrow(
      expect.objectContaining({ name: "TypeError", code, message: expect.stringContaining("https:") }),
    );
    expect(onWarning).not.toHaveBeenCalled();
  });

  it("an http: jwksUri with allowHttp → one SVC_AUTH_INSECURE_JWKS warning at construction, none per request", async () => {
    const idp = await oidcIssuer(false);
    const onWarning = vi.fn();
    const verifier = createBearerVerifier({
      algorithms: ["ES256"],
      audience: AUD,
      jwksUri: `${idp.url}/jwks.json`,
      allowHttp: true,
      onWarning,
    });
    expect(onWarning).toHaveBeenCalledTimes(1);
    expect(onWarning).toHaveBeenCalledWith(expect.stringContaining("plain http"), "SVC_AUTH_INSECURE_JWKS");
    for (const id of ["a", "b"]) await verifier.verify((await idp.tokens.issue({ id })).access_token);
    expect(onWarning).toHaveBeenCalledTimes(1);
  });

  it("an http: issuer with allowHttp → one warning, not a second for its http: jwks_uri", async () => {
    const idp = await oidcIssuer(false);
    const onWarning = vi.fn();
    const verifier = createBearerVerifier({
      algorithms: ["ES256"],
      audience: AUD,
      issuerBaseURL: idp.issuer,
      allowHttp: true,
      onWarning,
    });
    await verifier.verify((await idp.tokens.issue({ id: "a" })).access_token);
    expect(onWarning).toHaveBeenCalledTimes(1);
  });

  it("without onWarning the warning goes to process.emitWarning with its code", () => {
    const emit = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      createBearerVerifier({
        algorithms: ["ES256"],
        audience: AUD,
        jwksUri: "http://127.0.0.1:9/jwks.json",
        allowHttp: true,
      });
      expect(emit).toHaveBeenCalledWith(
        expect.stringContaining("http://127.0.0.1:9/jwks.json"),
        expect.objectContaining({ code: "SVC_AUTH_INSECURE_JWKS" }),
      );
    } finally {
      emit.mockRestore();
    }
  });
});
