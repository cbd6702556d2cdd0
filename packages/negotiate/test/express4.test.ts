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
