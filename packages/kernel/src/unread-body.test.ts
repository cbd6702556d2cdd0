import { describe, expect, it } from "vitest";
import {
  MAX_UNREAD_BODY_BYTES,
  resolveUnreadBody,
  UNREAD_BODY_DEFAULTS,
  unreadBodyAction,
} from "./unread-body.js";

describe("unreadBodyAction", () => {
  const bounds = { maxBytes: 100, timeoutMs: 1000 };
  const cases: [string | undefined, string | undefined, string][] = [
    [undefined, undefined, "keep"],
    ["0", undefined, "keep"],
    ["1", undefined, "discard"],
    ["100", undefined, "discard"],
    ["101", undefined, "close"],
    ["99999999999999999999", undefined, "close"],
    ["1,1", undefined, "close"],
    [undefined, "chunked", "close"],
    ["10", "chunked", "close"],
  ];
  for (const [length, coding, action] of cases) {
    it(`Content-Length: ${length}, Transfer-Encoding: ${coding} → ${action}`, () => {
      expect(unreadBodyAction(length, coding, bounds)).toBe(action);
    });
  }
});

describe("resolveUnreadBody", () => {
  it("undefined → the defaults (64 KiB, 1 s)", () => {
    expect(resolveUnreadBody("errors", undefined, "errorHandler")).toEqual({
      maxBytes: 65_536,
      timeoutMs: 1000,
    });
    expect(UNREAD_BODY_DEFAULTS).toEqual({ maxBytes: 65_536, timeoutMs: 1000 });
  });
  it("{ maxBytes: 0 } → closes every unread body, the default time", () => {
    expect(resolveUnreadBody("errors", { maxBytes: 0 }, "errorHandler")).toEqual({
      maxBytes: 0,
      timeoutMs: 1000,
    });
  });
  const refused: [unknown, string][] = [
    [{ maxBytes: -1 }, "ERR_SVC_ERRORS_UNREAD_BODY_MAX_BYTES"],
    [{ maxBytes: 1.5 }, "ERR_SVC_ERRORS_UNREAD_BODY_MAX_BYTES"],
    [{ maxBytes: MAX_UNREAD_BODY_BYTES + 1 }, "ERR_SVC_ERRORS_UNREAD_BODY_MAX_BYTES"],
    [{ maxBytes: "64kb" }, "ERR_SVC_ERRORS_UNREAD_BODY_MAX_BYTES"],
    [{ timeoutMs: 0 }, "ERR_SVC_ERRORS_UNREAD_BODY_TIMEOUT_MS"],
    [{ timeoutMs: 2 ** 31 }, "ERR_SVC_ERRORS_UNREAD_BODY_TIMEOUT_MS"],
    [{ timeoutMS: 10 }, "ERR_SVC_ERRORS_UNKNOWN_OPTION"],
    [5, "ERR_SVC_ERRORS_UNREAD_BODY"],
  ];
  for (const [value, code] of refused) {
    it(`${JSON.stringify(value)} → TypeError ${code}`, () => {
      expect(() => resolveUnreadBody("errors", value as never, "errorHandler")).toThrow(
        expect.objectContaining({ name: "TypeError", code }),
      );
    });
  }
  it("a misspelt name is refused with the one meant", () => {
    expect(() => resolveUnreadBody("errors", { timeoutMS: 10 } as never, "errorHandler")).toThrow(
      /unknown option "unreadBody.timeoutMS" \(did you mean "unreadBody.timeoutMs"\?\)/,
    );
  });
});
