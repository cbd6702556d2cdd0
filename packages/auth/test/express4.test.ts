import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { authenticate } from "../src/express.js";

describe(`authenticate() on Express ${version}`, () => {
  it("no credentials → 401 with a Basic challenge; good ones → 200 with requestState(req).principal", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(
      authenticate({
        realm: "employees",
        basic: {
          verify: async (user, password) => (user === "ada" && password === "secret" ? { id: "ada" } : null),
        },
      }),
    );
    app.get("/me", (req, res) => {
      res.json({ id: requestState(req).principal?.id });
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const anonymous = await fetch(`${url}/me`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic realm="employees"/);
    const ada = await fetch(`${url}/me`, {
      headers: { Authorization: `Basic ${Buffer.from("ada:secret").toString("base64")}` },
    });
    expect(ada.status).toBe(200);
    expect(await ada.json()).toEqual({ id: "ada" });
  });
});
