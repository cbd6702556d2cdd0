import { errorHandler } from "@svc/errors";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { negotiate } from "../src/index.js";

describe(`negotiate() on Express ${version}`, () => {
  it("res.represent answers in the media type Accept asks for, with Vary: Accept; 406 for none", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(negotiate());
    app.get("/employees/1", async (_req, res) => {
      await res.represent({ id: 1, name: "Ada" });
    });
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

// Express 4 does not catch a handler's rejected promise: `res.represent`'s own rejection became
// an unhandled rejection, which ends a Node 20 process. A failure after the response has started
// goes to next(err) like any other (the README: "the promise itself does not reject inside an
// Express app"), where the error handler logs it and Express closes the connection.
describe(`negotiate() on Express ${version}: a streamed body failing mid-way`, () => {
  it("the stream errors after its first chunk → logged through next(err), connection closed, server up", async () => {
    const { Readable } = await import("node:stream");
    const logged: unknown[] = [];
    const app = express4();
    app.use(negotiate());
    app.get("/export", (_req, res) => {
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
      return res.represent(null, {
        representations: [{ mediaType: "text/plain", serialize: () => body }],
      });
    });
    app.get("/ok", (_req, res) => {
      res.send("ok");
    });
    app.use(errorHandler({ logger: { error: (entry) => logged.push(entry) } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    // The 200's head may or may not have left before the connection closed: either way the client
    // never takes the cut body for a whole one.
    const outcome = await fetch(`${url}/export`)
      .then((res) => res.text())
      .then(
        () => "complete",
        () => "cut",
      );
    expect(outcome).toBe("cut");
    expect(logged).toHaveLength(1);
    expect(await (await fetch(`${url}/ok`)).text()).toBe("ok");
  });
});
