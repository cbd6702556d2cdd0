import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { ACCEPTS, useErrorServer } from "../test/error-server.js";
import { HttpError } from "./index.js";

// RFC 9457 §3.1.1: "type" is a URI reference; §3.1: "If a member's value type does not match the
// specified type, the member MUST be ignored", and absent it is "about:blank". An error whose
// `code` cannot be a type URI's last segment (not a string, a lone surrogate) used to make the
// problem formats a 500 while the plain record kept the error's status: the status followed Accept.

const BASE = "https://errors.example/problems/";

const serve = useErrorServer({ problemTypeBase: BASE });

/** `<name>` element texts of a well-formed problem+xml document (saxes throws otherwise). */
function xmlTexts(xml: string): Map<string, string> {
  const texts = new Map<string, string>();
  const parser = new SaxesParser({ xmlns: true });
  let current = "";
  parser.on("opentag", (tag) => {
    current = tag.local ?? tag.name;
    texts.set(current, "");
  });
  parser.on("text", (t) => texts.set(current, (texts.get(current) ?? "") + t));
  parser.write(xml).close();
  return texts;
}

/** An HttpError whose `code` was set (from plain JavaScript) after construction. */
function withCode(code: unknown): HttpError {
  const err = HttpError.conflict("Order 7 is already paid");
  (err as unknown as { code: unknown }).code = code;
  return err;
}

/** Another copy's HttpError (only the registered brand tells it), carrying `code`. */
function foreignWithCode(code: unknown): object {
  const err = new Error("Order 7 is already paid");
  Object.assign(err, { status: 409, expose: true, headers: {}, code });
  Object.defineProperty(err, Symbol.for("@svc/errors.HttpError"), { value: true });
  return err;
}

describe("HttpError code: checked at construction", () => {
  it.each([
    ["a number", 7],
    ["an object", {}],
    ["null", null],
    ["a lone high surrogate", "stock\uD800"],
    ["a lone low surrogate", "\uDC00stock"],
  ])("code %s → TypeError ERR_SVC_ERRORS_CODE", (_, code) => {
    expect(() => new HttpError(409, "x", { code: code as never })).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_CODE" }),
    );
  });

  it.each([["out_of_stock"], ["caf\u00e9 \uD83D\uDE00"], [""]])("code %j → accepted", (code) => {
    expect(new HttpError(409, "x", { code }).code).toBe(code);
  });
});

describe("a code that cannot be a type segment: the same status in every format, type about:blank", () => {
  const symbol = Symbol("stock");
  const throwing = {
    toString() {
      throw new Error("no text");
    },
  };
  it.each([
    ["a number set after construction", () => withCode(7)],
    ["an object set after construction", () => withCode({ a: 1 })],
    ["an object whose toString throws", () => withCode(throwing)],
    ["a symbol set after construction", () => withCode(symbol)],
    ["a lone surrogate set after construction", () => withCode("stock\uD800")],
    ["a lone surrogate on another copy's HttpError", () => foreignWithCode("stock\uD800")],
  ])("%s → 409 in all four formats; no code member", async (_, make) => {
    const url = await serve(make);
    for (const accept of ACCEPTS) {
      const res = await fetch(url, { headers: { Accept: accept } });
      const body = await res.text();
      expect([accept, res.status]).toEqual([accept, 409]);
      if (accept === "application/problem+json") {
        const json = JSON.parse(body) as Record<string, unknown>;
        expect(json).toMatchObject({ type: "about:blank", title: "Conflict", status: 409 });
        expect(json.detail).toBe("Order 7 is already paid");
        expect(json).not.toHaveProperty("code");
      } else if (accept === "application/problem+xml") {
        const texts = xmlTexts(body);
        expect(texts.get("type")).toBe("about:blank");
        expect(texts.get("status")).toBe("409");
        expect(texts.has("code")).toBe(false);
      } else if (accept === "application/json") {
        expect(JSON.parse(body)).toMatchObject({ status: 409, message: "Order 7 is already paid" });
      } else {
        expect(xmlTexts(body).get("status")).toBe("409");
      }
    }
  });

  it.each([
    ["out_of_stock", `${BASE}out_of_stock`],
    ["caf\u00e9 \uD83D\uDE00", `${BASE}caf%C3%A9%20%F0%9F%98%80`],
  ])("a well-formed code %j → type %s, code member kept, 409 everywhere", async (code, type) => {
    const url = await serve(() => HttpError.conflict("Order 7 is already paid", { code }));
    for (const accept of ACCEPTS) {
      const res = await fetch(url, { headers: { Accept: accept } });
      const body = await res.text();
      expect(res.status).toBe(409);
      if (accept === "application/problem+json") expect(JSON.parse(body)).toMatchObject({ type, code });
      if (accept === "application/problem+xml") {
        expect(xmlTexts(body).get("type")).toBe(type);
        expect(xmlTexts(body).get("code")).toBe(code);
      }
    }
  });
});
