import type { IncomingMessage, ServerOptions } from "node:http";
import { createRequire } from "node:module";
import express from "express";
import { describe, expect, it } from "vitest";
import { expressServerOptions } from "../src/express.js";
import { listenWith } from "./listen-with.js";

/** Express 4, installed beside Express 5 under the alias `express4` (a dev dependency). */
const express4 = createRequire(import.meta.url)("express4") as typeof express;

/** Listens on an ephemeral loopback port with `options`, recording each request's prototype as Node built it. */
async function serve(options: ServerOptions, app: (req: IncomingMessage, res: never) => void) {
  const built: object[] = [];
  const { url } = await listenWith(options, (req, res) => {
    built.push(Object.getPrototypeOf(req), Object.getPrototypeOf(res));
    app(req, res as never);
  });
  return { url, built };
}

describe.each([
  ["Express 5", express],
  ["Express 4", express4],
])("expressServerOptions with %s", (_name, createExpress) => {
  function appWithExtensions() {
    const app = createExpress();
    // An extension made before the call and one made after it: both reach every request.
    (app.request as unknown as { before(): string }).before = () => "added before";
    const classes = expressServerOptions(app);
    (app.response as unknown as { after(this: express.Response): void }).after = function after() {
      this.json({ seen: "added after" });
    };
    return { app, classes };
  }

  it("requests and responses are built with the app's prototypes, which Express then keeps", async () => {
    const { app, classes } = appWithExtensions();
    const seen: Record<string, boolean> = {};
    app.get("/", (req, res) => {
      seen.request = Object.getPrototypeOf(req) === classes.IncomingMessage.prototype;
      seen.response = Object.getPrototypeOf(res) === classes.ServerResponse.prototype;
      seen.appRequest = Object.getPrototypeOf(req) === app.request;
      res.json({ host: req.get("host"), before: (req as unknown as { before(): string }).before() });
    });
    const { url, built } = await serve(classes, app);
    const res = await fetch(`${url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ host: new URL(url).host, before: "added before" });
    expect(seen).toEqual({ request: true, response: true, appRequest: true });
    // What Node built is what the handler saw: Express's setPrototypeOf changed nothing.
    expect(built).toEqual([classes.IncomingMessage.prototype, classes.ServerResponse.prototype]);
  });

  it("response methods added to app.response after the call work", async () => {
    const { app, classes } = appWithExtensions();
    app.get("/after", (_req, res) => (res as unknown as { after(): void }).after());
    const { url } = await serve(classes, app);
    expect(await (await fetch(`${url}/after`)).json()).toEqual({ seen: "added after" });
  });

  it("without it, Express switches the prototype of every request (the work it saves)", async () => {
    const app = createExpress();
    let switched = false;
    app.get("/", (req, res) => {
      switched = Object.getPrototypeOf(req) === app.request;
      res.end();
    });
    const { url, built } = await serve({}, app);
    await (await fetch(`${url}/`)).arrayBuffer();
    expect(switched).toBe(true);
    expect(built[0]).not.toBe(app.request);
  });

  it("a second call for the same app returns the same classes", () => {
    const app = createExpress();
    const first = expressServerOptions(app);
    expect(expressServerOptions(app)).toBe(first);
    expect(app.request).toBe(first.IncomingMessage.prototype);
  });
});

it.each([undefined, null, {}, { request: {}, response: {} }])(
  "%j is not an Express app → TypeError",
  (app) => {
    expect(() => expressServerOptions(app as never)).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_APP" }),
    );
  },
);

it("the Express 4 under test is Express 4", () => {
  const { version } = createRequire(import.meta.url)("express4/package.json") as { version: string };
  expect(version).toMatch(/^4\./);
});
