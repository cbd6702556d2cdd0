import { express4, type Listening, listen } from "@svc/test-utils";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chain } from "../src/express.js";
import { isHttpError } from "../src/index.js";

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.append("X-Ran", name);
    next();
  };

function app(framework: typeof express): express.Express {
  const app = framework();
  app.get("/in-order", chain(mark("a"), mark("b"), mark("c")), (_req, res) => {
    res.send("done");
  });
  app.get(
    "/next-error",
    chain(mark("a"), (_req, _res, next) => next(new Error("from next")), mark("never")),
    (_req, res) => {
      res.send("not reached");
    },
  );
  app.get(
    "/throws",
    chain(mark("a"), () => {
      throw new Error("thrown");
    }),
  );
  app.get(
    "/rejects",
    chain(mark("a"), async () => {
      await Promise.resolve();
      throw new Error("rejected");
    }),
  );
  app.get(
    "/rejects-empty",
    chain(mark("a"), () => Promise.reject(undefined)),
  );
  app.get(
    "/async-next",
    chain(async (_req, _res, next) => {
      await new Promise((r) => setTimeout(r, 5));
      next();
    }, mark("after")),
    (_req, res) => {
      res.send("done");
    },
  );
  app.get(
    "/skip-route",
    chain((_req, _res, next) => next("route")),
    (_req, res) => {
      res.send("skipped");
    },
  );
  app.get("/skip-route", (_req, res) => {
    res.send("next route");
  });
  // Mounted app-wide, as the READMEs mount the middleware every request passes: the routes after
  // it see the request as the router gave it (path and url untouched by the chain).
  const routed = framework.Router();
  routed.use(
    chain(mark("a"), (req: Request, res: Response, next: NextFunction) => {
      res.setHeader("X-Seen", `${req.baseUrl} ${req.url}`);
      next();
    }),
  );
  routed.get("/:id", (req, res) => {
    res.send(`item ${req.params.id}`);
  });
  app.use("/items", routed);
  app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
    res.status(isHttpError(err) ? err.status : 500).send(`error: ${err.message}`);
  });
  return app;
}

describe.each([
  ["Express 5", express],
  ["Express 4", express4],
])("chain on %s", (_name, framework) => {
  let server: Listening;
  beforeAll(async () => {
    server = await listen(app(framework));
  });
  afterAll(() => server.close());

  it("runs every handler in order, then the next layer", async () => {
    const res = await fetch(`${server.url}/in-order`);
    expect(res.headers.get("x-ran")).toBe("a, b, c");
    expect(await res.text()).toBe("done");
  });

  it.each([
    ["/next-error", "from next"],
    ["/throws", "thrown"],
    ["/rejects", "rejected"],
    ["/rejects-empty", "A chained middleware's promise was rejected without a reason"],
  ])("%s: the error skips the rest and reaches the error handler", async (path, message) => {
    const res = await fetch(`${server.url}${path}`);
    expect(res.status).toBe(500);
    expect(res.headers.get("x-ran")).toBe("a");
    expect(await res.text()).toBe(`error: ${message}`);
  });

  it("an async handler calling next later continues the chain", async () => {
    const res = await fetch(`${server.url}/async-next`);
    expect(res.headers.get("x-ran")).toBe("after");
    expect(await res.text()).toBe("done");
  });

  it('next("route") is passed on to the router', async () => {
    expect(await (await fetch(`${server.url}/skip-route`)).text()).toBe("next route");
  });

  it("on a mounted router, the handlers see the mount's baseUrl and url; the routes after it match", async () => {
    const res = await fetch(`${server.url}/items/7`);
    expect(res.headers.get("x-seen")).toBe("/items /7");
    expect(res.headers.get("x-ran")).toBe("a");
    expect(await res.text()).toBe("item 7");
  });
});

describe("chain: refused at once", () => {
  it.each([
    ["no handler", [], "chain: handlers must be at least one middleware function, got []"],
    ["not a function", [mark("a"), "b"], "chain: handlers[1] must be a middleware function"],
    [
      "an error handler (four parameters)",
      [(_err: unknown, _req: unknown, _res: unknown, _next: unknown) => undefined],
      "an error handler (err, req, res, next) goes after the chain",
    ],
  ])("%s → TypeError ERR_SVC_KERNEL_HANDLER", (_what, handlers, message) => {
    let thrown: unknown;
    try {
      chain(...(handlers as RequestHandler[]));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as { code?: string }).code).toBe("ERR_SVC_KERNEL_HANDLER");
    expect((thrown as Error).message).toContain(message);
  });
});
