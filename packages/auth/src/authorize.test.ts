import { errorHandler } from "@svc/errors/express";
import { recordAuthentication, requestState } from "@svc/kernel";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthenticateOptions } from "./authenticate.js";
import { authenticate, authorize, requireRoles, requireScopes } from "./express.js";
import { createTokenIssuer } from "./token-issuer.js";

const issuer = createTokenIssuer({ issuer: "https://issuer.test/", audience: "api" });
let server: Listening;

/** A thenable that is not a native promise (a policy client's own promise type). */
function foreignThenable(value: boolean): Promise<boolean> {
  // biome-ignore lint/suspicious/noThenProperty: the case is a hand-made thenable
  return { then: (resolve: (v: boolean) => void) => resolve(value) } as unknown as Promise<boolean>;
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
}
async function bearer(scopes: string[], roles: string[] = []): Promise<string> {
  return `Bearer ${(await issuer.issue({ id: "alice", scopes, roles })).access_token}`;
}
function get(path: string, authorization?: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { headers: authorization === undefined ? {} : { authorization } });
}

beforeAll(async () => {
  const a = express();
  const auth = authenticate({
    realm: "api",
    bearer: { jwks: await issuer.jwks(), algorithms: ["ES256"], audience: "api" },
    basic: { verify: (u, p) => (p === "pw" ? { id: u, roles: u === "root" ? ["admin"] : [] } : null) },
  });
  const optional = authenticate({
    realm: "api",
    optional: true,
    bearer: { jwks: await issuer.jwks(), algorithms: ["ES256"], audience: "api" },
  });
  const ok = (_req: express.Request, res: express.Response) => {
    res.json({ ok: true });
  };
  a.get("/read", auth, requireScopes("employees:read"), ok);
  a.get("/write", auth, requireScopes("employees:read", "employees:write"), ok);
  a.get("/admin", auth, requireRoles("admin", "owner"), ok);
  a.get(
    "/self/:id",
    auth,
    authorize<express.Request>((p, req) => p.id === req.params.id),
    ok,
  );
  a.get(
    "/throws",
    auth,
    authorize(() => {
      throw new Error("policy engine down");
    }),
    ok,
  );
  a.get(
    "/async/:id",
    auth,
    authorize<express.Request>(async (p, req) => p.id === req.params.id),
    ok,
  );
  a.get(
    "/async-throws",
    auth,
    authorize(async () => {
      throw new Error("policy engine down");
    }),
    ok,
  );
  a.get(
    "/thenable",
    auth,
    authorize(() => foreignThenable(true)),
    ok,
  );
  a.get("/optional", optional, (req, res) => {
    res.json(requestState(req).principal ?? null);
  });
  a.get("/optional/read", optional, requireScopes("employees:read"), ok);
  a.get("/unwired", requireScopes("x"), ok);
  a.use(errorHandler({ logger: { error() {} } }));
  server = await listen(a);
});
afterAll(async () => {
  await server.close();
});

describe("requireScopes", () => {
  it("a token with the scope → 200", async () => {
    expect((await get("/read", await bearer(["employees:read"]))).status).toBe(200);
  });

  it("a token without the scope → 403 with error=insufficient_scope and the needed scope", async () => {
    const res = await get("/write", await bearer(["employees:read"]));
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBe(
      'Bearer realm="api", error="insufficient_scope", scope="employees:read employees:write"',
    );
  });

  it("no credentials → 401 (not 403) with both challenges", async () => {
    const res = await get("/read");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      'Bearer realm="api", Basic realm="api", charset="UTF-8"',
    );
  });

  it("Basic credentials (no scopes) → 403 without a Bearer challenge", async () => {
    const res = await get("/read", basic("bob", "pw"));
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBeNull();
  });

  it("a guard without authenticate() in front → 500 (a wiring bug, never a pass)", async () => {
    expect((await get("/unwired")).status).toBe(500);
  });

  it("scope names with spaces or quotes → TypeError at construction", () => {
    expect(() => requireScopes("a b")).toThrow(TypeError);
    expect(() => requireScopes('a"')).toThrow(TypeError);
    expect(() => requireScopes()).toThrow(TypeError);
  });
});

describe("requireRoles", () => {
  it("one of the roles → 200", async () => {
    expect((await get("/admin", basic("root", "pw"))).status).toBe(200);
    expect((await get("/admin", await bearer([], ["owner"]))).status).toBe(200);
  });

  it("none of the roles → 403", async () => {
    expect((await get("/admin", basic("bob", "pw"))).status).toBe(403);
    const res = await get("/admin", await bearer(["employees:read"], ["user"]));
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api", error="insufficient_scope"');
  });
});

describe("authorize", () => {
  it("predicate true → 200, false → 403", async () => {
    expect((await get("/self/bob", basic("bob", "pw"))).status).toBe(200);
    expect((await get("/self/alice", basic("bob", "pw"))).status).toBe(403);
  });

  it("predicate throws → 500, never a pass", async () => {
    expect((await get("/throws", basic("bob", "pw"))).status).toBe(500);
  });

  it("async predicate: true → 200, false → 403, rejects → 500, a foreign thenable is awaited", async () => {
    expect((await get("/async/bob", basic("bob", "pw"))).status).toBe(200);
    expect((await get("/async/alice", basic("bob", "pw"))).status).toBe(403);
    expect((await get("/async-throws", basic("bob", "pw"))).status).toBe(500);
    expect((await get("/thenable", basic("bob", "pw"))).status).toBe(200);
  });

  it("a synchronous predicate is decided in the same turn (no promise per guarded request)", () => {
    const calls: unknown[] = [];
    const principal = { id: "bob", scheme: "basic", roles: [], scopes: [] };
    const req = {};
    recordAuthentication(req, principal);
    const guard = authorize((p) => p.id === "bob");
    const returned = guard(req as never, {} as never, (err?: unknown) => {
      calls.push(err ?? "next");
    });
    expect(calls).toEqual(["next"]);
    expect(returned).toBeUndefined();
    const deny = authorize(() => false);
    deny(req as never, {} as never, (err?: unknown) => {
      calls.push(err);
    });
    expect(calls[1]).toMatchObject({ status: 403 });
  });
});

describe("authenticate({ optional: true })", () => {
  it("no credentials → passes without a principal", async () => {
    const res = await get("/optional");
    expect(res.status).toBe(200);
    expect(await res.json()).toBeNull();
  });

  it("bad credentials are still a 401", async () => {
    expect((await get("/optional", "Bearer a.b.c")).status).toBe(401);
  });

  it("a guard after it without credentials → 401 with the challenge", async () => {
    const res = await get("/optional/read");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="api"');
  });
});

describe("authenticate: construction", () => {
  it("no realm, or no scheme → TypeError", () => {
    // @ts-expect-error realm is required
    expect(() => authenticate({ basic: { verify: () => null } })).toThrow(/realm/);
    expect(() => authenticate({ realm: "x" })).toThrow(/at least one scheme/);
  });

  it.each([
    ["no options", undefined, "ERR_SVC_AUTH_OPTIONS"],
    [
      "an empty realm",
      { realm: "", bearer: { algorithms: ["HS256"], secret: "s".repeat(32) } },
      "ERR_SVC_AUTH_REALM",
    ],
    ["no scheme", { realm: "x" }, "ERR_SVC_AUTH_OPTIONS"],
    // A string "false" is truthy: taken as is, it would let requests without credentials through.
    [
      "a non-boolean optional",
      { realm: "x", basic: { verify: () => null }, optional: "false" },
      "ERR_SVC_AUTH_OPTIONAL",
    ],
  ])("%s → TypeError with its code", (_label, options, code) => {
    expect(() => authenticate(options as AuthenticateOptions)).toThrow(
      expect.objectContaining({ name: "TypeError", code }),
    );
  });
});
