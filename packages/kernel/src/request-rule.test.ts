import { describe, expect, it } from "vitest";
import { createPipeline } from "./core.js";
import { expressAdapter } from "./express.js";
import { fastifyAdapter } from "./fastify.js";
import { checkRequestRule, type RequestHead, type RequestRule, refuseRequest } from "./request-rule.js";

const JSON_IN: RequestRule = { methods: ["GET", "POST", "PATCH", "PUT"], consumes: ["application/json"] };
const SOAP_IN: RequestRule = { methods: ["POST"], consumes: ["application/soap+xml"], contentCodings: [] };
const GZIP_IN: RequestRule = { consumes: ["application/json"], contentCodings: ["gzip", "br"] };

/** Each row: the request, the rule, and the refusal's status and fields (`undefined`: taken). */
const rows: ReadonlyArray<
  readonly [string, RequestHead, RequestRule, number | undefined, Record<string, string>?, string?]
> = [
  ["PUT at a POST route → 405 Allow: POST", { method: "PUT" }, SOAP_IN, 405, { Allow: "POST" }],
  ["post (methods are case-sensitive) → 405", { method: "post" }, SOAP_IN, 405, { Allow: "POST" }],
  [
    "DELETE → 405 naming every method, in the order given",
    { method: "DELETE" },
    JSON_IN,
    405,
    { Allow: "GET, POST, PATCH, PUT" },
  ],
  [
    "a 60-character method → the message shows 40 and …",
    { method: "X".repeat(60) },
    SOAP_IN,
    405,
    { Allow: "POST" },
    `${"X".repeat(40)}… is not allowed here`,
  ],
  [
    "a coding of 41 characters outside the BMP → 40 shown whole, then …",
    { method: "POST", contentType: "application/soap+xml", contentEncoding: "\u{1F600}".repeat(41) },
    SOAP_IN,
    415,
    { "Accept-Encoding": "identity" },
    `Content-Encoding "${"\u{1F600}".repeat(40)}…" is not supported; send the message uncoded`,
  ],
  ["no methods declared: any method", { method: "BREW" }, {}, undefined],
  ["POST application/json", { method: "POST", contentType: "application/json" }, JSON_IN, undefined],
  [
    "POST Application/JSON; charset=utf-8 (case and parameters aside)",
    { method: "POST", contentType: "Application/JSON; charset=utf-8" },
    JSON_IN,
    undefined,
  ],
  [
    "POST text/plain → 415 Accept-Post",
    { method: "POST", contentType: "text/plain" },
    JSON_IN,
    415,
    { "Accept-Post": "application/json" },
    "Content-Type must be application/json",
  ],
  [
    "PATCH text/plain → 415 Accept-Patch",
    { method: "PATCH", contentType: "text/plain" },
    JSON_IN,
    415,
    { "Accept-Patch": "application/json" },
  ],
  ["PUT text/plain → 415, no Accept-* field", { method: "PUT", contentType: "text/plain" }, JSON_IN, 415, {}],
  [
    "POST without Content-Type → 415",
    { method: "POST" },
    SOAP_IN,
    415,
    { "Accept-Post": "application/soap+xml" },
  ],
  [
    "POST */* (a range, no media type) → 415",
    { method: "POST", contentType: "*/*" },
    SOAP_IN,
    415,
    { "Accept-Post": "application/soap+xml" },
  ],
  ["POST malformed Content-Type → 415", { method: "POST", contentType: "soap" }, SOAP_IN, 415],
  ["GET without content: not looked at", { method: "GET", contentType: "text/plain" }, JSON_IN, undefined],
  [
    "POST Content-Encoding: gzip where only uncoded content is read → 415 Accept-Encoding: identity",
    { method: "POST", contentType: "application/soap+xml", contentEncoding: "GZIP " },
    SOAP_IN,
    415,
    { "Accept-Encoding": "identity" },
    'Content-Encoding "gzip" is not supported; send the message uncoded',
  ],
  [
    "POST Content-Encoding: identity",
    { method: "POST", contentType: "application/soap+xml", contentEncoding: "identity" },
    SOAP_IN,
    undefined,
  ],
  [
    "POST Content-Encoding: (empty)",
    { method: "POST", contentType: "application/soap+xml", contentEncoding: " " },
    SOAP_IN,
    undefined,
  ],
  [
    "POST Content-Encoding: identity, identity (a list, not identity) → 415",
    { method: "POST", contentType: "application/soap+xml", contentEncoding: "identity, identity" },
    SOAP_IN,
    415,
    { "Accept-Encoding": "identity" },
  ],
  [
    "POST Content-Encoding: gzip, br where both are decoded",
    { method: "POST", contentType: "application/json", contentEncoding: "gzip, br" },
    GZIP_IN,
    undefined,
  ],
  [
    "POST Content-Encoding: zstd → 415 naming the codings and identity",
    { method: "POST", contentType: "application/json", contentEncoding: "zstd" },
    GZIP_IN,
    415,
    { "Accept-Encoding": "gzip, br, identity" },
    'Content-Encoding "zstd" is not supported; send it coded gzip or br, or uncoded',
  ],
  [
    "the coding is decided before the media type",
    { method: "POST", contentType: "text/plain", contentEncoding: "gzip" },
    SOAP_IN,
    415,
    { "Accept-Encoding": "identity" },
  ],
  [
    "the method is decided before the content",
    { method: "PUT", contentType: "text/plain", contentEncoding: "gzip" },
    SOAP_IN,
    405,
    { Allow: "POST" },
  ],
];

describe("refuseRequest: the method and content a route takes", () => {
  for (const [name, request, rule, status, fields, message] of rows) {
    it(name, () => {
      const refusal = refuseRequest(request, rule);
      expect(refusal?.status).toBe(status);
      if (fields !== undefined) expect(refusal?.headers).toEqual(fields);
      if (message !== undefined) expect(refusal?.message).toBe(message);
    });
  }
});

describe("run(): the route's methods and media types decided before its handler", () => {
  const pipeline = createPipeline();
  const run = (method: string, headers: Record<string, string>) => {
    let ran = false;
    const value = pipeline.run(
      { view: { method, headers }, path: "/things" },
      { version: undefined, refusal: undefined },
      () => {
        ran = true;
        return { ok: true };
      },
      { methods: ["POST"], consumes: ["application/json"] },
    );
    return { value, ran: () => ran };
  };

  it("DELETE → rejects with the 405, the handler not run", async () => {
    const { value, ran } = run("DELETE", {});
    await expect(value).rejects.toMatchObject({ status: 405, headers: { Allow: "POST" } });
    expect(ran()).toBe(false);
  });

  it("POST text/csv → rejects with the 415 naming Accept-Post, the handler not run", async () => {
    const { value, ran } = run("POST", { "content-type": "text/csv" });
    await expect(value).rejects.toMatchObject({
      status: 415,
      headers: { "Accept-Post": "application/json" },
    });
    expect(ran()).toBe(false);
  });

  it("POST application/json → the handler runs", async () => {
    const { value, ran } = run("POST", { "content-type": "application/json" });
    expect((await value).status).toBe(200);
    expect(ran()).toBe(true);
  });
});

describe("checkRequestRule: a route's rule refused where it is declared", () => {
  const refused: ReadonlyArray<readonly [string, RequestRule, string]> = [
    [
      'methods: "POST" (a string, read a character at a time)',
      { methods: "POST" as never },
      "ERR_SVC_KERNEL_METHODS",
    ],
    ['methods: ["GET POST"] (not a token)', { methods: ["GET POST"] }, "ERR_SVC_KERNEL_METHODS"],
    [
      'consumes: ["application/*"] (a range matches no Content-Type)',
      { consumes: ["application/*"] },
      "ERR_SVC_KERNEL_CONSUMES",
    ],
    [
      'consumes: ["application/json; charset=utf-8"] (parameters)',
      { consumes: ["application/json; charset=utf-8"] },
      "ERR_SVC_KERNEL_CONSUMES",
    ],
    ['consumes: ["json"] (no subtype)', { consumes: ["json"] }, "ERR_SVC_KERNEL_CONSUMES"],
    ['contentCodings: "gzip"', { contentCodings: "gzip" as never }, "ERR_SVC_KERNEL_CONTENT_CODINGS"],
    ["contentCodings: [1]", { contentCodings: [1] as never }, "ERR_SVC_KERNEL_CONTENT_CODINGS"],
  ];
  for (const [name, rule, code] of refused) {
    it(`${name} → ${code}`, () => {
      expect(() => checkRequestRule(rule)).toThrow(expect.objectContaining({ code }));
    });
  }

  it("lists of tokens and media types, and no rule at all → taken", () => {
    expect(() =>
      checkRequestRule({ methods: ["POST"], consumes: ["Application/JSON"], contentCodings: [] }),
    ).not.toThrow();
    expect(() => checkRequestRule({})).not.toThrow();
  });

  it("Express's and Fastify's handle() refuse it when the route is declared, before any request", () => {
    const rule = { consumes: ["application/*"] };
    expect(() => expressAdapter(createPipeline()).handle(() => ({}), rule)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_KERNEL_CONSUMES" }),
    );
    expect(() => fastifyAdapter(createPipeline()).handle(() => ({}), rule)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_KERNEL_CONSUMES" }),
    );
  });

  it("a rule given to run() is refused at its first request (a rejection, not a 405 for every method)", async () => {
    const value = createPipeline().run(
      { view: { method: "POST", headers: {} }, path: "/things" },
      { version: undefined, refusal: undefined },
      () => ({ ok: true }),
      { methods: "POST" as never },
    );
    await expect(value).rejects.toMatchObject({ code: "ERR_SVC_KERNEL_METHODS" });
  });
});
