import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { compression, representations } from "../src/index.js";

const pipeline = () =>
  expressAdapter(createPipeline({ representations: representations(), coding: compression() }));

describe(`representations() in the pipeline on Express ${version}`, () => {
  it("svc.handle answers in the media type Accept asks for, with Vary: Accept; 406 for none", async () => {
    expect(version).toMatch(/^4\./);
    const svc = pipeline();
    const app = express4();
    app.use(svc.prepare);
    app.get(
      "/employees/1",
      svc.handle(async () => ({ id: 1, name: "Ada" })),
    );
    app.use(errorHandler({ logger: { error() {} } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const xml = await fetch(`${url}/employees/1`, { headers: { Accept: "application/xml" } });
    expect(xml.status).toBe(200);
    expect(xml.headers.get("content-type")).toMatch(/^application\/xml/);
    expect(xml.headers.get("vary")).toMatch(/Accept/);
    expect(await xml.text()).toContain("Ada");
    const json = await fetch(`${url}/employees/1`, { headers: { Accept: "application/json" } });
    expect(await json.json()).toEqual({ id: 1, name: "Ada" });
    const none = await fetch(`${url}/employees/1`, { headers: { Accept: "image/png" } });
    expect(none.status).toBe(406);
  });
});

// Express 4 does not catch a handler's rejected promise: an unhandled rejection ends a Node 20
// process. A failure after the response has started goes to next(err) like any other, where the
// error handler logs it and Express closes the connection.
describe(`the pipeline on Express ${version}: a streamed body failing mid-way`, () => {
  it("the stream errors after its first chunk → logged through next(err), connection closed, server up", async () => {
    const { Readable } = await import("node:stream");
    const logged: unknown[] = [];
    const svc = pipeline();
    const app = express4();
    app.use(svc.prepare);
    app.get(
      "/export",
      svc.handle(() => {
        let sent = false;
        const body = new Readable({
          read() {
            if (sent) this.destroy(new Error("disk gone"));
            else {
              sent = true;
              this.push("a".repeat(100));
            }
          },
        });
        return reply(null, {
          representations: [{ mediaType: "text/plain", serialize: () => body }],
        });
      }),
    );
    app.get("/ok", (_req, res) => {
      res.send("ok");
    });
    app.use(errorHandler({ logger: { error: (entry) => logged.push(entry) } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    // The 200's head may or may not have left before the connection closed: either way the client
    // never takes the cut body for a whole one.
    // Uncoded, the first chunk leaves at once, the head with it: the connection is cut.
    const outcome = await fetch(`${url}/export`, { headers: { "accept-encoding": "identity" } })
      .then((res) => res.text())
      .then(
        () => "complete",
        () => "cut",
      );
    expect(outcome).toBe("cut");
    expect(logged).toHaveLength(1);
    expect(await (await fetch(`${url}/ok`)).text()).toBe("ok");
    // Coded, the coder holds the first chunk: the failure comes before the head left, and the
    // error handler answers a 500 in its place; never a 200 read whole.
    const coded = await fetch(`${url}/export`, { headers: { "accept-encoding": "gzip" } })
      .then(async (res) => `${res.status} ${(await res.text()).length > 0 ? "whole" : "empty"}`)
      .catch(() => "cut");
    expect(coded === "cut" || coded.startsWith("500 ")).toBe(true);
    expect(logged).toHaveLength(2);
  });
});
