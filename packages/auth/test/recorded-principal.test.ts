import type { IncomingMessage, ServerResponse } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { errorResponder } from "@svc/errors/node";
import { type Principal, recordAuthentication } from "@svc/kernel";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { authorize, requireRoles, requireScopes } from "../src/express.js";
import { recordedAuthContext } from "../src/index.js";
import { requireRoles as nodeRequireRoles } from "../src/node.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** An Express app whose own middleware runs `before`, then `guard`, then answers 200. */
async function expressApp(
  before: (req: express.Request) => void,
  guard: express.RequestHandler,
): Promise<string> {
  const app = express();
  app.get(
    "/",
    (req, _res, next) => {
      before(req);
      next();
    },
    guard,
    (_req, res) => {
      res.json({ ok: true });
    },
  );
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

describe("Express guards read the principal recorded in the exchange, not req.principal", () => {
  it('req.principal = { id: "x", roles: ["admin"] } set by the app without authenticate → requireRoles("admin") does not pass', async () => {
    const url = await expressApp((req) => {
      req.principal = { id: "x", roles: ["admin"], scopes: [], scheme: "bearer" };
    }, requireRoles("admin"));
    const res = await fetch(url);
    expect(res.status).not.toBe(200);
    expect(res.status).toBe(500);
  });

  it('a principal with roles ["admin"] recorded with recordAuthentication → requireRoles("admin") passes', async () => {
    const url = await expressApp(
      (req) => recordAuthentication(req, { id: "x", roles: ["admin"], scopes: [] } as Principal),
      requireRoles("admin"),
    );
    expect((await fetch(url)).status).toBe(200);
  });

  it('a principal recorded with an id only → requireRoles("admin") and requireScopes("read") answer 403', async () => {
    const idOnly = (req: express.Request) => recordAuthentication(req, { id: "x" });
    expect((await fetch(await expressApp(idOnly, requireRoles("admin")))).status).toBe(403);
    expect((await fetch(await expressApp(idOnly, requireScopes("read")))).status).toBe(403);
  });

  it("a principal recorded with an id only → authorize((p) => p.id === 'x') passes, with empty roles", async () => {
    const seen: unknown[] = [];
    const url = await expressApp(
      (req) => recordAuthentication(req, { id: "x" }),
      authorize((p) => {
        seen.push(p.roles);
        return p.id === "x";
      }),
    );
    expect((await fetch(url)).status).toBe(200);
    expect(seen).toEqual([[]]);
  });
});

describe("node:http guards read the principal recorded in the exchange", () => {
  /** A server that records `principal` for every request, then checks `requireRoles("admin")`. */
  async function nodeServer(principal: Principal): Promise<string> {
    const guard = nodeRequireRoles("admin");
    const sendError = errorResponder({ logger: { error() {} } });
    const listening = await listen((req: IncomingMessage, res: ServerResponse) => {
      recordAuthentication(req, principal);
      guard(recordedAuthContext(req), req).then(
        () => res.end("ok"),
        (err: unknown) => sendError(err, req, res),
      );
    });
    closers.push(listening.close);
    return listening.url;
  }

  it('a principal with roles ["admin"] recorded with recordAuthentication → 200', async () => {
    expect(
      (await fetch(await nodeServer({ id: "x", roles: ["admin"], scopes: [] } as Principal))).status,
    ).toBe(200);
  });

  it("a principal recorded with an id only → 403", async () => {
    expect((await fetch(await nodeServer({ id: "x" }))).status).toBe(403);
  });
});
