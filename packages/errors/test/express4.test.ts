import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { allowedMethods, errorHandler, notFound } from "../src/express.js";
import { HttpError } from "../src/index.js";

describe(`errorHandler(), notFound(), allowedMethods() on Express ${version}`, () => {
  it("a thrown HttpError, an unmatched route and a wrong method each become the error record", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app
      .route("/employees/:id")
      .get((req, _res, next) => next(HttpError.notFound(`Employee ${req.params.id} does not exist`)))
      .all(allowedMethods(["GET", "HEAD", "OPTIONS"]));
    app.use(notFound());
    app.use(errorHandler({ logger: { error() {} } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const missing = await fetch(`${url}/employees/42`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: 404, message: "Employee 42 does not exist" });
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);
    const put = await fetch(`${url}/employees/42`, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });
});
