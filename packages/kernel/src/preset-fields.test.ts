import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { presetFields } from "./preset-fields.js";

function response(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

describe("presetFields", () => {
  it("answers the response's fields, undefined for a field not set", () => {
    const res = response();
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("Set-Cookie", ["a=1", "b=2"]);
    const preset = presetFields(res);
    expect(preset("cache-control")).toBe("no-store");
    expect(preset("set-cookie")).toEqual(["a=1", "b=2"]);
    expect(preset("expires")).toBeUndefined();
  });

  it("reads a field asked for twice in turn once, and reads again after another field", () => {
    const res = response();
    res.setHeader("Cache-Control", "no-cache");
    const getHeader = vi.spyOn(res, "getHeader");
    const preset = presetFields(res);
    expect([preset("cache-control"), preset("cache-control")]).toEqual(["no-cache", "no-cache"]);
    expect(getHeader).toHaveBeenCalledTimes(1);
    expect(preset("expires")).toBeUndefined();
    expect(preset("expires")).toBeUndefined();
    expect(getHeader).toHaveBeenCalledTimes(2);
    res.setHeader("Cache-Control", "private");
    expect(preset("cache-control")).toBe("private");
    expect(getHeader).toHaveBeenCalledTimes(3);
  });

  it("keeps an unset field's answer too, not only a set one's", () => {
    const reply = { getHeader: vi.fn((_name: string) => undefined) };
    const preset = presetFields(reply);
    preset("cache-control");
    preset("cache-control");
    expect(reply.getHeader).toHaveBeenCalledTimes(1);
  });
});
