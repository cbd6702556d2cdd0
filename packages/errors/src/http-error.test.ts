import { describe, expect, it } from "vitest";
import { buildErrorRecord, HttpError, isHttpError, reasonPhrase, stripQuery, toHttpError } from "./index.js";

describe("HttpError", () => {
  it("expose defaults to true below 500 and false from 500", () => {
    expect(new HttpError(404).expose).toBe(true);
    expect(new HttpError(500).expose).toBe(false);
    expect(new HttpError(503, "x", { expose: true }).expose).toBe(true);
  });

  it.each([0, 200, 302, 399, 600, 404.5, Number.NaN])("status %s → TypeError", (status) => {
    expect(() => new HttpError(status)).toThrow(TypeError);
  });

  it("message defaults to the reason phrase", () => {
    expect(new HttpError(409).message).toBe("Conflict");
  });

  it("keeps cause, code and errors", () => {
    const cause = new Error("root");
    const err = HttpError.badRequest("bad", {
      cause,
      code: "invalid",
      errors: [{ field: "a", message: "b" }],
    });
    expect(err.cause).toBe(cause);
    expect(err.code).toBe("invalid");
    expect(err.errors).toEqual([{ field: "a", message: "b" }]);
  });

  it("a 5xx record never shows its message even when expose is forced", () => {
    const record = buildErrorRecord(new HttpError(500, "secret", { expose: true }), "/p");
    expect(record.message).toBe("An unexpected error occurred");
  });

  it("isHttpError recognises a look-alike from another copy of the package", () => {
    const foreign = Object.assign(Object.create(Error.prototype), {
      [Symbol.for("@svc/errors.HttpError")]: true,
    });
    expect(isHttpError(foreign)).toBe(true);
    expect(isHttpError(new Error("x"))).toBe(false);
    expect(isHttpError(null)).toBe(false);
  });

  it("tooManyRequests rounds Retry-After up and never below 0", () => {
    expect(HttpError.tooManyRequests(0.2).headers["Retry-After"]).toBe("1");
    expect(HttpError.tooManyRequests(-5).headers["Retry-After"]).toBe("0");
  });
});

describe("toHttpError", () => {
  it.each([
    [{ type: "entity.parse.failed", status: 400 }, 400],
    [{ type: "entity.too.large", status: 413, limit: 10 }, 413],
    [{ type: "charset.unsupported", status: 415, charset: "x" }, 415],
    [{ type: "encoding.unsupported", status: 415, encoding: "x" }, 415],
    [{ type: "request.aborted", status: 400 }, 400],
    [{ status: 404, message: "nope", expose: true }, 404],
    [{ statusCode: 418 }, 418],
    [{ status: "400" }, 500],
    [{}, 500],
    [null, 500],
    [42, 500],
  ])("%j → %i", (input, status) => {
    expect(toHttpError(input).status).toBe(status);
  });

  it("a content-type parser's SyntaxError with statusCode 400 → the malformed body's record", () => {
    const parsed = Object.assign(new SyntaxError("Unexpected end of JSON input"), { statusCode: 400 });
    const error = toHttpError(parsed);
    expect(error).toMatchObject({
      status: 400,
      message: "The request body is malformed",
      code: "entity.parse.failed",
    });
    expect(error.cause).toBe(parsed);
    // The application's own SyntaxError, with no status, stays the server's 500.
    expect(toHttpError(new SyntaxError("Unexpected token")).status).toBe(500);
  });

  it("an http-errors style error with expose false keeps a generic message", () => {
    expect(toHttpError({ status: 400, message: "internal detail", expose: false }).message).toBe(
      "Bad Request",
    );
  });
});

describe("helpers", () => {
  it("reasonPhrase uses RFC 9110 names and class fallbacks", () => {
    expect(reasonPhrase(413)).toBe("Content Too Large");
    expect(reasonPhrase(499)).toBe("Client Error");
    expect(reasonPhrase(599)).toBe("Server Error");
  });

  it("stripQuery drops query and fragment", () => {
    expect(stripQuery("/a/b?c=1#d")).toBe("/a/b");
    expect(stripQuery("/a#x")).toBe("/a");
  });
});
