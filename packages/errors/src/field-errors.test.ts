import { listen } from "@svc/test-utils";
import express, { type Express } from "express";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { type ErrorLogger, type FieldError, HttpError } from "./index.js";

// HttpError option `errors`: [{ field, message }], both strings. A null or a number from plain
// JavaScript is the calling code's bug, refused where the error is built; the client still gets a
// well-formed record (a 500: the server's bug), never "null" as a field name nor a stack trace.

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

function recordingLogger(): ErrorLogger & { calls: Record<string, unknown>[] } {
  const calls: Record<string, unknown>[] = [];
  return {
    calls,
    error(obj) {
      calls.push(obj as Record<string, unknown>);
    },
  };
}

async function serve(setup: (app: Express) => void) {
  const app = express();
  setup(app);
  const logger = recordingLogger();
  app.use(errorHandler({ logger }));
  const server = await listen(app);
  closers.push(server.close);
  return { url: server.url, logger };
}

const BAD: [string, unknown][] = [
  ["[{ field: null, message }]", [{ field: null, message: "is required" }]],
  ["[{ field: 42, message }]", [{ field: 42, message: "is required" }]],
  ["[{ field, message: undefined }]", [{ field: "name" }]],
  ["[{ field, message: { toString } }]", [{ field: "name", message: { toString: () => "x" } }]],
  ["[{ field, message: Symbol() }]", [{ field: "name", message: Symbol("m") }]],
  ["[null]", [null]],
  ['["name is required"]', ["name is required"]],
  [
    "[valid, { field: null }]",
    [
      { field: "a", message: "b" },
      { field: null, message: "b" },
    ],
  ],
  ['"name is required" (not an array)', "name is required"],
  ["{ field, message } (not an array)", { field: "name", message: "is required" }],
];

describe("HttpError option errors with a field or message that is not a string", () => {
  it.each(BAD)(
    "new HttpError(400, msg, { errors: %s }) → TypeError ERR_SVC_ERRORS_ERRORS",
    (_label, errors) => {
      expect(() => new HttpError(400, "Invalid", { errors: errors as FieldError[] })).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_ERRORS" }),
      );
    },
  );

  it.each(
    BAD.flatMap(([label, errors]) => [
      [label, "application/json", errors, "application/json; charset=utf-8"],
      [label, "application/xml", errors, "application/xml; charset=utf-8"],
    ]),
  )(
    "a route throwing HttpError with errors %s, Accept: %s → the 500 record, logged once",
    async (_l, accept, errors, type) => {
      const { url, logger } = await serve((app) =>
        app.get("/employees", () => {
          throw HttpError.badRequest("Invalid", { errors: errors as FieldError[] });
        }),
      );
      const res = await fetch(`${url}/employees`, { headers: { Accept: accept as string } });
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(res.headers.get("content-type")).toBe(type);
      expect(text).not.toMatch(/null|TypeError|field-errors\.test|at /);
      expect(text).toContain("An unexpected error occurred");
      expect(logger.calls).toHaveLength(1);
      expect(logger.calls[0]?.err).toMatchObject({ code: "ERR_SVC_ERRORS_ERRORS" });
    },
  );

  it("another copy's HttpError (by its brand) with errors [{ field: null }] → the 500 record", async () => {
    const { url } = await serve((app) =>
      app.get("/b", () => {
        throw Object.assign(new Error("Invalid"), {
          status: 400,
          expose: true,
          headers: {},
          errors: [{ field: null, message: 7 }],
          [Symbol.for("@svc/errors.HttpError")]: true,
        });
      }),
    );
    const res = await fetch(`${url}/b`);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("null");
  });

  it("an HttpError whose errors were replaced after construction with [{ field: 1 }] → the 500 record", async () => {
    const { url } = await serve((app) =>
      app.get("/b", () => {
        const err = HttpError.badRequest("Invalid", { errors: [{ field: "a", message: "b" }] });
        Object.assign(err, { errors: [{ field: 1, message: "b" }] });
        throw err;
      }),
    );
    const res = await fetch(`${url}/b`, { headers: { Accept: "application/xml" } });
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("<field>1</field>");
  });

  it("an entry changed to { field: null } after the HttpError was built → sent as it was built", async () => {
    const { url } = await serve((app) =>
      app.get("/b", () => {
        const entry: { field: unknown; message: unknown } = { field: "name", message: "is required" };
        const err = HttpError.badRequest("Invalid", { errors: [entry as FieldError] });
        entry.field = null;
        throw err;
      }),
    );
    const res = await fetch(`${url}/b`, { headers: { Accept: "application/xml" } });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(
      "<errors><error><field>name</field><message>is required</message></error></errors>",
    );
  });

  it('errors [{ field: "", message: "" }] and [] → accepted, sent as given', async () => {
    const { url } = await serve((app) => {
      app.get("/empty-strings", () => {
        throw HttpError.badRequest("Invalid", { errors: [{ field: "", message: "" }] });
      });
      app.get("/none", () => {
        throw HttpError.badRequest("Invalid", { errors: [] });
      });
    });
    const a = await fetch(`${url}/empty-strings`);
    expect(a.status).toBe(400);
    expect(((await a.json()) as { errors: unknown }).errors).toEqual([{ field: "", message: "" }]);
    const b = await fetch(`${url}/none`);
    expect(b.status).toBe(400);
    expect(await b.json()).not.toHaveProperty("errors");
  });
});
