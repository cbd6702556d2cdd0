import { express4 } from "@svc/test-utils";
import { conformance, type Row } from "@svc/test-utils/conformance";
import express from "express";
import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { type DefaultErrorFormat, type ErrorOptions, errorRendering } from "../src/index.js";
import { errorMounts, routes } from "./mapped-mounts.js";

// RFC 9457 §3: problem details as the rendering a client gets when its Accept leaves the choice to
// the server (`defaultFormat: "problem"`); a client naming the record still gets it.

const TIME = "2026-01-02T03:04:05.678Z";
const BASE = "https://errors.example/problems/";
const options: ErrorOptions = {
  defaultFormat: "problem",
  problemTypeBase: BASE,
  now: () => new Date(TIME),
  logger: { error() {} },
};
const r = routes(() => {
  throw new Error("no database in this file");
});

const PROBLEM = {
  "content-type": "application/problem+json; charset=utf-8",
  "cache-control": "no-store",
  vary: "Accept",
};
const NOT_FOUND_PROBLEM = {
  type: "about:blank",
  title: "Not Found",
  status: 404,
  detail: "Employee 8 does not exist",
  instance: "/employees/8",
  timestamp: TIME,
};

/** Element texts of a well-formed XML document (saxes throws otherwise), and its root's name. */
function xml(text: string): { root: string; ns: string; texts: Map<string, string> } {
  const texts = new Map<string, string>();
  let root = "";
  let ns = "";
  let current = "";
  const parser = new SaxesParser({ xmlns: true });
  parser.on("opentag", (tag) => {
    current = tag.local ?? tag.name;
    if (root === "") {
      root = current;
      ns = tag.uri ?? "";
    }
    texts.set(current, "");
  });
  parser.on("text", (t) => texts.set(current, (texts.get(current) ?? "") + t));
  parser.write(text).close();
  return { root, ns, texts };
}

const rows: Row[] = [
  {
    name: "no Accept → problem+json (type about:blank: the error has no code, RFC 9457 §4.2.1)",
    request: { path: "/employees/8" },
    status: 404,
    headers: PROBLEM,
    body: NOT_FOUND_PROBLEM,
  },
  {
    name: "Accept: */* → problem+json",
    request: { path: "/employees/8", headers: { Accept: "*/*" } },
    status: 404,
    headers: PROBLEM,
    body: NOT_FOUND_PROBLEM,
  },
  {
    name: "Accept: application/* → problem+json",
    request: { path: "/employees/8", headers: { Accept: "application/*" } },
    status: 404,
    headers: PROBLEM,
    body: NOT_FOUND_PROBLEM,
  },
  {
    name: "Accept: text/html (nothing the handler renders) → problem+json, never 406",
    request: { path: "/employees/8", headers: { Accept: "text/html" } },
    status: 404,
    headers: PROBLEM,
    body: NOT_FOUND_PROBLEM,
  },
  {
    name: "Accept: application/json → the record: the client chose it",
    request: { path: "/employees/8", headers: { Accept: "application/json" } },
    status: 404,
    headers: { "content-type": "application/json; charset=utf-8", vary: "Accept" },
    body: {
      timestamp: TIME,
      status: 404,
      error: "Not Found",
      message: "Employee 8 does not exist",
      path: "/employees/8",
    },
  },
  {
    name: "Accept: application/json;q=0.5, application/problem+json → problem+json by q",
    request: {
      path: "/employees/8",
      headers: { Accept: "application/json;q=0.5, application/problem+json" },
    },
    status: 404,
    headers: PROBLEM,
    body: NOT_FOUND_PROBLEM,
  },
  {
    name: "Accept: application/xml → the XML record: the client chose it",
    request: { path: "/employees/8", headers: { Accept: "application/xml" } },
    status: 404,
    headers: { "content-type": "application/xml; charset=utf-8" },
    body: (res) => {
      const doc = xml(res.text);
      expect(doc.root).toBe("error");
      expect(doc.texts.get("message")).toBe("Employee 8 does not exist");
    },
  },
  {
    name: "Accept: application/xml, application/problem+xml (equal q) → problem+xml, RFC 9457 Appendix B",
    request: { path: "/employees/8", headers: { Accept: "application/xml, application/problem+xml" } },
    status: 404,
    headers: { "content-type": "application/problem+xml; charset=utf-8", vary: "Accept" },
    body: (res) => {
      const doc = xml(res.text);
      expect(doc.root).toBe("problem");
      expect(doc.ns).toBe("urn:ietf:rfc:7807");
      expect(doc.texts.get("type")).toBe("about:blank");
      expect(doc.texts.get("title")).toBe("Not Found");
      expect(doc.texts.get("status")).toBe("404");
      expect(doc.texts.get("detail")).toBe("Employee 8 does not exist");
      expect(doc.texts.get("instance")).toBe("/employees/8");
    },
  },
  {
    name: "a malformed JSON body → 400 problem, type = problemTypeBase + code (RFC 9457 §3.1.1)",
    request: {
      method: "POST",
      path: "/employees",
      headers: { "Content-Type": "application/json" },
      body: '{"name":',
    },
    status: 400,
    headers: PROBLEM,
    body: {
      type: `${BASE}entity.parse.failed`,
      title: "Bad Request",
      status: 400,
      detail: "The request body is malformed",
      instance: "/employees",
      timestamp: TIME,
      code: "entity.parse.failed",
    },
  },
  {
    name: "an unknown route → 404 problem, instance without the query (RFC 9457 §3.1.5)",
    request: { path: "/nowhere?page=2" },
    status: 404,
    headers: PROBLEM,
    body: {
      type: "about:blank",
      title: "Not Found",
      status: 404,
      detail: "No resource matches GET /nowhere",
      instance: "/nowhere",
      timestamp: TIME,
    },
  },
  {
    name: "a thrown plain Error → 500 problem that reveals nothing",
    request: { path: "/boom" },
    status: 500,
    headers: PROBLEM,
    body: (res) => {
      expect(res.text).not.toMatch(/hunter2|db-7/);
      expect(JSON.parse(res.text)).toEqual({
        type: "about:blank",
        title: "Internal Server Error",
        status: 500,
        detail: "An unexpected error occurred",
        instance: "/boom",
        timestamp: TIME,
      });
    },
  },
];

conformance("@svc/errors defaultFormat: problem", errorMounts(options, express, r), rows);
conformance(
  "@svc/errors defaultFormat: problem (Express 4 of @svc/test-utils)",
  errorMounts(options, express4, r),
  rows,
  ["express"],
);

// The record stays the default: the same request without the option.
conformance(
  "@svc/errors defaultFormat: record (the default)",
  errorMounts({ now: () => new Date(TIME), logger: { error() {} } }, express, r),
  [
    {
      name: "no Accept → the JSON record",
      request: { path: "/employees/8" },
      status: 404,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: {
        timestamp: TIME,
        status: 404,
        error: "Not Found",
        message: "Employee 8 does not exist",
        path: "/employees/8",
      },
    },
    {
      name: "Accept: application/xml, application/problem+xml (equal q) → the XML record",
      request: { path: "/employees/8", headers: { Accept: "application/xml, application/problem+xml" } },
      status: 404,
      headers: { "content-type": "application/xml; charset=utf-8" },
    },
  ],
);

describe("errorRendering(accept, preferred): the server's order where Accept leaves the choice", () => {
  const cases: [string | undefined, DefaultErrorFormat, string][] = [
    [undefined, "record", "application/json; charset=utf-8"],
    [undefined, "problem", "application/problem+json; charset=utf-8"],
    ["*/*", "problem", "application/problem+json; charset=utf-8"],
    ["text/html", "problem", "application/problem+json; charset=utf-8"],
    ["a/b;;;=", "problem", "application/problem+json; charset=utf-8"],
    ["application/json", "problem", "application/json; charset=utf-8"],
    ["application/problem+json", "record", "application/problem+json; charset=utf-8"],
    ["text/xml", "problem", "text/xml; charset=utf-8"],
    ["application/xml, application/problem+xml", "problem", "application/problem+xml; charset=utf-8"],
    ["application/xml, application/problem+xml", "record", "application/xml; charset=utf-8"],
    ["*/*;q=0.1, application/xml", "problem", "application/xml; charset=utf-8"],
  ];
  it.each(cases)("Accept %j, %s → %s", (accept, preferred, contentType) => {
    expect(errorRendering(accept, preferred).contentType).toBe(contentType);
  });
});
