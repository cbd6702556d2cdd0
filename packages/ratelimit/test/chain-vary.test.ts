import type { IncomingMessage, ServerResponse } from "node:http";
import { headlessMiddleware } from "@svc/kernel";
import { chain } from "@svc/kernel/express";
import { setPassage } from "@svc/kernel/node";
import { type Listening, listen } from "@svc/test-utils";
import express, { type NextFunction, type Request, type Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";

/** A gate of the packages' kind in front of the limiter: `Vary: API-Version`, then `next()`. */
const versioned = headlessMiddleware((_req: IncomingMessage, res: ServerResponse, next: NextFunction) => {
  setPassage(res, { vary: ["API-Version"] });
  next();
});

describe("rateLimit in a chain, behind a gate that varies", () => {
  let server: Listening;
  beforeAll(async () => {
    const app = express();
    app.get(
      "/default",
      chain(versioned, rateLimit({ limit: 1, windowMs: 60_000, key: () => "d" })),
      (_req, res) => {
        res.send("ok");
      },
    );
    app.get(
      "/handler",
      chain(
        versioned,
        rateLimit({
          limit: 1,
          windowMs: 60_000,
          key: () => "h",
          // Yours answers by itself: the chain must have set the gates' names before it runs.
          handler: (_req, res) => {
            res.statusCode = 429;
            res.end("slow down");
          },
        }),
      ),
      (_req, res) => {
        res.send("ok");
      },
    );
    app.use((err: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
      res.status(err.status ?? 500).send(err.message);
    });
    server = await listen(app);
  });
  afterAll(() => server.close());

  it.each(["/default", "/handler"])("%s: the gate's Vary is on the 200 and on the 429", async (path) => {
    const first = await fetch(`${server.url}${path}`);
    expect(first.status).toBe(200);
    expect(first.headers.get("vary")).toBe("API-Version");
    const second = await fetch(`${server.url}${path}`);
    expect(second.status).toBe(429);
    expect(second.headers.get("vary")).toBe("API-Version");
  });
});
