import { STATUS_CODES } from "node:http";
import { describe, expect, it } from "vitest";
import { reasonPhrase } from "./status.js";

// RFC 9110 §15 renamed these; every other code keeps the phrase Node.js gives it.
const renamed: Record<number, string> = {
  413: "Content Too Large",
  422: "Unprocessable Content",
};

describe("reasonPhrase", () => {
  const codes = Object.keys(STATUS_CODES).map(Number);
  it.each(codes)("%i: RFC 9110's name, else Node.js's", (status) => {
    expect(reasonPhrase(status)).toBe(renamed[status] ?? STATUS_CODES[status]);
  });

  it.each([
    [499, "Client Error"],
    [599, "Server Error"],
    [299, "Unknown Status"],
  ])("unregistered %i → %s", (status, phrase) => {
    expect(reasonPhrase(status)).toBe(phrase);
  });
});
