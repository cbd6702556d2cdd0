import type { IncomingMessage, ServerResponse } from "node:http";
import { express4, type Listening, listen } from "@svc/test-utils";
import express, { type NextFunction, type Request, type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chain, expressGate } from "../src/express.js";
import { HttpError, headlessMiddleware, isHttpError, type ResponseValue } from "../src/index.js";
import { setPassage, writeResponse } from "../src/node.js";

type Middleware = (req: IncomingMessage, res: ServerResponse, next: NextFunction) => void;

/** A gate of the packages' kind: its `Vary` names through `setPassage`, then `next()`. */
const varies = (...names: string[]): Middleware =>
  headlessMiddleware((_req: IncomingMessage, res: ServerResponse, next: NextFunction) => {
    setPassage(res, { vary: names });
    next();
  });

/** A gate of the packages' kind that answers, through `writeResponse`. */
const answers = (value: ResponseValue): Middleware =>
  headlessMiddleware((req: IncomingMessage, res: ServerResponse, next: NextFunction) => {
    writeResponse(res, value, req.method ?? "GET").catch(next);
  });

/** Counts the `Vary` fields set on each response, for the `X-Vary-Writes` the route answers. */
function countVaryWrites(_req: Request, res: Response, next: NextFunction): void {
  let writes = 0;
  const set = res.setHeader;
  res.setHeader = function counted(this: Response, name: string, value: number | string | readonly string[]) {
    if (name.toLowerCase() === "vary") writes++;
    return set.call(this, name, value);
  } as typeof res.setHeader;
  res.locals.varyWrites = () => writes;
  next();
}

function sendDone(_req: Request, res: Response): void {
  res.setHeader("X-Vary-Writes", String(res.locals.varyWrites()));
  res.send("done");
}

function app(framework: typeof express): express.Express {
  const app = framework();
  app.use(countVaryWrites);
  app.get("/route-answers", chain(varies("API-Version", "Accept"), varies("Origin")), sendDone);
  app.get(
    "/gate-of-yours",
    chain(
      varies("API-Version"),
      expressGate(() => ({ fields: { "X-Gate": "on" }, vary: ["Origin"] })),
    ),
    sendDone,
  );
  app.get(
    "/set-in-front",
    (_req, res, next) => {
      res.setHeader("Vary", "Cookie, origin");
      next();
    },
    chain(varies("API-Version"), varies("Origin")),
    sendDone,
  );
  app.get(
    "/foreign-answers",
    chain(varies("API-Version"), (_req: Request, res: Response) => {
      res.end("answered");
    }),
  );
  app.get(
    "/foreign-between",
    chain(
      varies("API-Version"),
      (_req: Request, res: Response, next: NextFunction) => {
        res.setHeader("X-Seen-Vary", String(res.getHeader("vary")));
        next();
      },
      varies("Origin"),
    ),
    sendDone,
  );
  app.get(
    "/gate-answers",
    chain(
      varies("API-Version"),
      answers({ status: 204, fields: {}, vary: ["Origin", "API-Version"], body: undefined }),
    ),
  );
  app.get(
    "/own-vary",
    chain(
      varies("API-Version"),
      answers({
        status: 200,
        fields: { vary: "Accept-Language" },
        vary: [],
        body: new Uint8Array([111, 107]),
      }),
    ),
  );
  app.get(
    "/refused",
    chain(
      varies("API-Version"),
      headlessMiddleware((_req: IncomingMessage, _res: ServerResponse, next: NextFunction) => {
        next(HttpError.forbidden());
      }),
    ),
  );
  app.get(
    "/throws",
    chain(
      varies("API-Version"),
      headlessMiddleware(() => {
        throw HttpError.forbidden();
      }),
    ),
  );
  app.get("/after-chain", chain(varies("API-Version")), varies("Origin"), sendDone);
  app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
    res.status(isHttpError(err) ? err.status : 500).send(`error: ${err.message}`);
  });
  return app;
}

describe.each([
  ["Express 5", express],
  ["Express 4", express4],
])("the Vary names of a chain's gates on %s", (_name, framework) => {
  let server: Listening;
  beforeAll(async () => {
    server = await listen(app(framework));
  });
  afterAll(() => server.close());

  const get = (path: string) => fetch(`${server.url}${path}`);

  it("are set once, in order, before the route answers", async () => {
    const res = await get("/route-answers");
    expect(res.headers.get("vary")).toBe("API-Version, Accept, Origin");
    expect(res.headers.get("x-vary-writes")).toBe("1");
  });

  it("are set once with those of a gate of yours under expressGate", async () => {
    const res = await get("/gate-of-yours");
    expect(res.headers.get("x-gate")).toBe("on");
    expect(res.headers.get("vary")).toBe("API-Version, Origin");
    expect(res.headers.get("x-vary-writes")).toBe("1");
  });

  it("follow a Vary set in front of the chain, without repeating its names", async () => {
    const res = await get("/set-in-front");
    expect(res.headers.get("vary")).toBe("Cookie, origin, API-Version");
  });

  it("are on the response of a middleware of another kind that answers itself", async () => {
    const res = await get("/foreign-answers");
    expect(await res.text()).toBe("answered");
    expect(res.headers.get("vary")).toBe("API-Version");
  });

  it("are on the response before a middleware of another kind runs", async () => {
    const res = await get("/foreign-between");
    expect(res.headers.get("x-seen-vary")).toBe("API-Version");
    expect(res.headers.get("vary")).toBe("API-Version, Origin");
  });

  it("are set with the names of the answer a gate writes, once", async () => {
    const res = await get("/gate-answers");
    expect(res.status).toBe(204);
    expect(res.headers.get("vary")).toBe("API-Version, Origin");
  });

  it("give way to a Vary among the answer's own fields, as any field set in front does", async () => {
    const res = await get("/own-vary");
    expect(res.headers.get("vary")).toBe("Accept-Language");
  });

  it.each(["/refused", "/throws"])("%s: are on the error handler's response", async (path) => {
    const res = await get(path);
    expect(res.status).toBe(403);
    expect(res.headers.get("vary")).toBe("API-Version");
  });

  it("are not held past the chain", async () => {
    const res = await get("/after-chain");
    expect(res.headers.get("vary")).toBe("API-Version, Origin");
    expect(res.headers.get("x-vary-writes")).toBe("2");
  });
});
