import { type Listening, listen } from "@svc/test-utils";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chain } from "../src/chain.js";

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.append("X-Ran", name);
    next();
  };

let server: Listening;
beforeAll(async () => {
  const app = express();
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
  app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).send(`error: ${err.message}`);
  });
  server = await listen(app);
});
afterAll(() => server.close());

describe("chain", () => {
  it("runs every handler in order, then the next layer", async () => {
    const res = await fetch(`${server.url}/in-order`);
    expect(res.headers.get("x-ran")).toBe("a, b, c");
    expect(await res.text()).toBe("done");
  });

  it.each([
    ["/next-error", "from next"],
    ["/throws", "thrown"],
    ["/rejects", "rejected"],
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
});
