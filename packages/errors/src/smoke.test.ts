import { listen } from "@svc/test-utils";
import express from "express";
import { describe, expect, it } from "vitest";
import { errorHandler, HttpError } from "./index.js";

describe("errorHandler (skeleton)", () => {
  it("GET /x throwing HttpError.notFound → 404 record", async () => {
    const app = express();
    app.get("/x", () => {
      throw HttpError.notFound("nope");
    });
    app.use(errorHandler());
    const { url, close } = await listen(app);
    const res = await fetch(`${url}/x?y=1`);
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body).toMatchObject({ status: 404, error: "Not Found", message: "nope", path: "/x" });
    await close();
  });
});
