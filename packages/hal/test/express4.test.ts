import { request } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { allowedHosts, hrefFor } from "../src/express.js";
import { hal } from "../src/index.js";

describe(`allowedHosts() and hal() on Express ${version}`, () => {
  it("a HAL document with an absolute self link for an allowed host; 421 for another", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(allowedHosts(["127.0.0.1"]));
    app.get("/employees/1", (req, res) => {
      res
        .type("application/hal+json")
        .send(JSON.stringify(hal({ id: 1 }).link("self", hrefFor(req, "/employees/1"))));
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const ok = await fetch(`${url}/employees/1`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^application\/hal\+json/);
    expect(await ok.json()).toEqual({ id: 1, _links: { self: { href: `${url}/employees/1` } } });
    // fetch cannot send another Host: node:http can.
    const other = await new Promise<number | undefined>((resolve, reject) => {
      request(`${url}/employees/1`, { headers: { Host: "evil.example" } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
        .on("error", reject)
        .end();
    });
    expect(other).toBe(421);
  });
});
