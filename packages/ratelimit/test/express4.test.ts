import { errorHandler } from "@svc/errors/express";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { rateLimit } from "../src/express.js";
import { inTurn } from "./requests.js";

describe(`rateLimit() on Express ${version}`, () => {
  it("limit 2: 200, 200, then 429 with Retry-After", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(rateLimit({ limit: 2, windowMs: 60_000 }));
    app.get("/", (_req, res) => {
      res.send("ok");
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const { statuses, last } = await inTurn(url, 3);
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
