import { describe, expect, it } from "vitest";
import * as main from "./index.js";
import * as testing from "./testing.js";

describe("entry points", () => {
  it("@svc/hal → no crawlLinks (test helpers stay out of the main entry)", () => {
    expect(Object.keys(main)).not.toContain("crawlLinks");
  });

  it("@svc/hal/testing → crawlLinks and nothing else", () => {
    expect(Object.keys(testing)).toEqual(["crawlLinks"]);
    expect(typeof testing.crawlLinks).toBe("function");
  });
});
