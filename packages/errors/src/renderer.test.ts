import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { type ErrorRenderer, errorValue, HttpError } from "./index.js";
import { errorConfig } from "./options.js";

const text = (body: unknown) => new TextDecoder().decode(body as Uint8Array);

/** Renders the errors of `/csv/...` as CSV, `Vary: X-Format`. */
const csv: ErrorRenderer = {
  name: "csv",
  render: (error, request) =>
    request.url?.startsWith("/csv/")
      ? { contentType: "text/csv; charset=utf-8", body: `status\n${error.status}\n`, vary: ["X-Format"] }
      : undefined,
};

const view = (url: string, accept?: string) => ({
  method: "GET",
  url,
  headers: accept === undefined ? {} : { accept },
});

const tooMany = () => HttpError.tooManyRequests(7);

describe("errorValue with renderers: the first that answers renders the content, the handler the rest", () => {
  it("a request the renderer answers → its content and type, the error's status and fields, no-store, its Vary", () => {
    const { value, logs } = errorValue(tooMany(), view("/csv/report"), errorConfig({ renderers: csv }));
    expect(value.status).toBe(429);
    expect(value.fields["content-type"]).toBe("text/csv; charset=utf-8");
    expect(value.fields["retry-after"]).toBe("7");
    expect(value.fields["cache-control"]).toBe("no-store");
    // The failed handler's representation fields are removed as for the record.
    expect(value.fields.etag).toBeNull();
    expect(value.vary).toEqual(["X-Format"]);
    expect(text(value.body)).toBe("status\n429\n");
    // The 4xx's own line (info, for a logger that has it), and nothing about the rendering.
    expect(logs.filter((l) => l.level !== "info")).toEqual([]);
  });

  it("a request it does not answer → the record, by Accept, Vary: Accept", () => {
    const { value } = errorValue(
      tooMany(),
      view("/json", "application/xml"),
      errorConfig({ renderers: [csv] }),
    );
    expect(value.fields["content-type"]).toBe("application/xml; charset=utf-8");
    expect(value.vary).toEqual(["Accept"]);
    expect(text(value.body)).toMatch(/^<\?xml/);
  });

  it("two that answer → the first in the list", () => {
    const other: ErrorRenderer = {
      name: "other",
      render: () => ({ contentType: "text/plain", body: "other" }),
    };
    expect(
      text(errorValue(tooMany(), view("/csv/x"), errorConfig({ renderers: [other, csv] })).value.body),
    ).toBe("other");
    expect(
      text(errorValue(tooMany(), view("/csv/x"), errorConfig({ renderers: [csv, other] })).value.body),
    ).toBe("status\n429\n");
  });

  it("bytes as the body → sent as they are", () => {
    const bytes: ErrorRenderer = {
      name: "bytes",
      render: () => ({ contentType: "application/octet-stream", body: new Uint8Array([1, 2, 3]) }),
    };
    expect([
      ...(errorValue(tooMany(), view("/"), errorConfig({ renderers: bytes })).value.body as Uint8Array),
    ]).toEqual([1, 2, 3]);
  });

  it.each([
    [
      "throws",
      () => {
        throw new Error("renderer bug");
      },
      "errorHandler: a renderer threw",
    ],
    ["returns a number", () => 42, "errorHandler: a renderer returned no rendering"],
    [
      "returns a Content-Type with a line break",
      () => ({ contentType: "text/csv\r\nX-Evil: 1", body: "" }),
      "errorHandler: a renderer returned no rendering",
    ],
    [
      "returns a body that is an object",
      () => ({ contentType: "text/csv", body: { a: 1 } }),
      "errorHandler: a renderer returned no rendering",
    ],
    [
      "returns a Vary that is no field name",
      () => ({ contentType: "text/csv", body: "", vary: ["a b"] }),
      "errorHandler: a renderer returned no rendering",
    ],
  ])(
    "a renderer that %s → logged naming it, the next renderer answers (here the record), the status kept",
    (_name, render, msg) => {
      const broken = { name: "broken", render } as unknown as ErrorRenderer;
      const { value, logs, error } = errorValue(tooMany(), view("/x"), errorConfig({ renderers: [broken] }));
      expect(value.status).toBe(429);
      expect(error.status).toBe(429);
      expect(value.fields["content-type"]).toBe("application/json; charset=utf-8");
      expect(value.fields["retry-after"]).toBe("7");
      expect(logs.filter((l) => l.level !== "info")).toEqual([
        expect.objectContaining({ msg, entry: expect.objectContaining({ renderer: "broken" }) }),
      ]);
    },
  );

  it("a 5xx rendered by a renderer → one failure line, the exception not in the content", () => {
    const { value, logs } = errorValue(
      new Error("password=hunter2"),
      view("/csv/x"),
      errorConfig({ renderers: csv }),
    );
    expect(value.status).toBe(500);
    expect(text(value.body)).toBe("status\n500\n");
    expect(logs).toHaveLength(1);
    expect(logs[0]?.msg).toBe("request failed");
  });

  it("svc:errors names the renderer that rendered the error, and none for the record", () => {
    const messages: Record<string, unknown>[] = [];
    const listener = (m: unknown) => messages.push(m as Record<string, unknown>);
    subscribeDiagnostics("svc:errors", listener);
    try {
      errorValue(tooMany(), view("/csv/x"), errorConfig({ renderers: csv }), { request: {} });
      errorValue(tooMany(), view("/x"), errorConfig({ renderers: csv }), { request: {} });
    } finally {
      unsubscribeDiagnostics("svc:errors", listener);
    }
    expect(messages.map((m) => m.renderer)).toEqual(["csv", undefined]);
    expect(messages.map((m) => m.status)).toEqual([429, 429]);
  });
});

describe("the renderers option, checked at construction", () => {
  it.each([
    ["a string", "soap"],
    ["a function", () => undefined],
    ["an empty name", { name: "", render: () => undefined }],
    ["no render", { name: "x" }],
    ["a list holding null", [csv, null]],
  ])("%s → TypeError ERR_SVC_ERRORS_RENDERERS", (_name, renderers) => {
    expect(() => errorConfig({ renderers: renderers as never }, "errorHandler")).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_ERRORS_RENDERERS" }),
    );
  });

  it("an empty list → no renderer, the record for every request", () => {
    const { value } = errorValue(tooMany(), view("/csv/x"), errorConfig({ renderers: [] }));
    expect(value.fields["content-type"]).toBe("application/json; charset=utf-8");
  });
});
