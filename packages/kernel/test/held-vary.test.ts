import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expressGate } from "../src/express.js";
import { appendVary } from "../src/index.js";
import { setPassage, writeValue } from "../src/node.js";

/** Express 4.17.0, the oldest the peer range admits: the root's dev dependency `express4`. */
const express4 = createRequire(import.meta.url)("express4") as typeof express;

const body = new TextEncoder().encode("x");

/** How many times each response set `Vary` itself, by its request's path. */
const varySets = new Map<string, number>();

/** Counts the response's own `Vary` writes (Node.js's field checks run once per `setHeader`). */
function countVarySets(req: IncomingMessage, res: ServerResponse): void {
  const setHeader = res.setHeader;
  varySets.set(req.url ?? "", 0);
  res.setHeader = function counted(
    this: ServerResponse,
    name: string,
    value: number | string | readonly string[],
  ) {
    if (name.toLowerCase() === "vary") varySets.set(req.url ?? "", (varySets.get(req.url ?? "") ?? 0) + 1);
    return setHeader.call(this, name, value);
  };
}

// Two gates in front of every response, each with its own Vary names; each path ends the
// response its own way.
const endings: Record<string, (res: ServerResponse) => void> = {
  "/end": (res) => res.end("x"),
  "/write-value": (res) => void writeValue(res, { status: 200, fields: {}, vary: ["Accept"], body }, "GET"),
  "/value-sets-vary": (res) =>
    void writeValue(res, { status: 406, fields: { vary: "Accept-Encoding" }, vary: ["Accept"], body }, "GET"),
  "/value-removes-vary": (res) =>
    void writeValue(res, { status: 200, fields: { vary: null }, vary: [], body }, "GET"),
  "/set-between": (res) => {
    res.setHeader("Vary", "Cookie, origin");
    res.end("x");
  },
  "/append-between": (res) => {
    appendVary(res, "Accept-Language");
    res.end("x");
  },
  "/write-head-fields": (res) => {
    res.writeHead(200, { Vary: "Cookie" });
    res.end("x");
  },
  "/flush-headers": (res) => {
    res.flushHeaders();
    res.end("x");
  },
  "/star": (res) => {
    setPassage(res, { vary: ["*"] });
    res.end("x");
  },
  "/no-gate-names": (res) => res.end("x"),
};

describe("the gates' Vary names on node:http, set once with the head", () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listen((req, res) => {
      countVarySets(req, res);
      if (req.url !== "/no-gate-names") {
        setPassage(res, { fields: { "API-Supported-Versions": "1, 2" }, vary: ["API-Version", "Accept"] });
        setPassage(res, { vary: ["Origin", "accept"] });
      }
      (endings[req.url ?? ""] ?? endings["/end"])?.(res);
    });
  });
  afterAll(() => server.close());

  it.each([
    ["/end", "API-Version, Accept, Origin"],
    ["/write-value", "API-Version, Accept, Origin"],
    ["/value-sets-vary", "Accept-Encoding, Accept"],
    ["/value-removes-vary", null],
    ["/set-between", "API-Version, Accept, Origin, Cookie"],
    ["/append-between", "API-Version, Accept, Origin, Accept-Language"],
    ["/write-head-fields", "Cookie"],
    ["/flush-headers", "API-Version, Accept, Origin"],
    ["/star", "*"],
    ["/no-gate-names", null],
  ])("%s → Vary %j", async (path, vary) => {
    const response = await fetch(`${server.url}${path}`);
    expect(response.headers.get("vary")).toBe(vary);
    // The passages' other fields are set at once, as before.
    if (path !== "/no-gate-names") expect(response.headers.get("api-supported-versions")).toBe("1, 2");
    expect(await response.text()).toBe("x");
  });

  it("sets the field once for all the gates and the response's own names", async () => {
    await (await fetch(`${server.url}/write-value`)).text();
    expect(varySets.get("/write-value")).toBe(1);
    await (await fetch(`${server.url}/end`)).text();
    expect(varySets.get("/end")).toBe(1);
  });
});

describe.each([
  ["Express 5", express],
  ["Express 4", express4],
])("the gates' Vary names on %s, for a route that answers itself", (_name, framework) => {
  let server: Listening;
  beforeAll(async () => {
    const app = framework();
    app.use(expressGate(() => ({ vary: ["API-Version"] })));
    app.use(expressGate(async () => ({ fields: { "X-Gate": "on" }, vary: ["Origin"] })));
    app.get("/json", (_req, res) => {
      res.json({ ok: true });
    });
    app.get("/express-vary", (_req, res) => {
      res.vary("Accept").send("x");
    });
    app.get("/redirect", (_req, res) => {
      res.redirect("/json");
    });
    server = await listen(app);
  });
  afterAll(() => server.close());

  it.each([
    ["/json", 200, "API-Version, Origin"],
    ["/express-vary", 200, "API-Version, Origin, Accept"],
    // `res.redirect` answers through `res.format`, which varies on Accept.
    ["/redirect", 302, "API-Version, Origin, Accept"],
    // Express's final handler answers an unmatched route: the gates ran in front of it too.
    ["/nowhere", 404, "API-Version, Origin"],
  ])("%s → %i, Vary %j", async (path, status, vary) => {
    const response = await fetch(`${server.url}${path}`, { redirect: "manual" });
    expect(response.status).toBe(status);
    expect(response.headers.get("vary")).toBe(vary);
    expect(response.headers.get("x-gate")).toBe("on");
    await response.text();
  });
});
