import { listen } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { type CapturedResponse, captureResponse } from "./capture.js";

describe("captureResponse", () => {
  it("an end that throws (status code 1000) records nothing; the 500 sent after it is the response", async () => {
    const seen: CapturedResponse[] = [];
    const { url, close } = await listen((_req, res) => {
      captureResponse(res, 1024, (captured) => seen.push(captured));
      res.statusCode = 1000;
      try {
        res.end("first");
      } catch {
        res.statusCode = 500;
        res.end("failed");
      }
    });
    onTestFinished(close);
    const res = await fetch(url);
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("failed");
    expect(seen.map((c) => [c.status, c.body?.toString()])).toEqual([[500, "failed"]]);
  });
});
