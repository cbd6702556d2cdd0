import { rawExchange } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type Started, sqlite } from "./harness.js";

// Unusual methods and request-targets, answered alike on Express and on Fastify (this file runs
// in both framework projects): what Express's router makes of them is what the service answers.

interface Case {
  readonly line: string;
  readonly headers?: readonly string[];
  readonly status: number;
  readonly allow?: string;
  readonly message?: RegExp;
}

const cases: readonly Case[] = [
  // RFC 9110 §15.5.6: a method the resource lacks is a 405 with Allow, before any check of its
  // content (the QUERY method's Content-Type rule would otherwise answer 400 first).
  { line: "QUERY /employees", status: 405, allow: "GET, HEAD, OPTIONS, POST" },
  {
    line: "QUERY /employees",
    headers: ["Content-Type: application/json", "Content-Length: 2"],
    status: 405,
    allow: "GET, HEAD, OPTIONS, POST",
  },
  // Every operational path too, its parameters included.
  { line: "DELETE /docs/assets/swagger-ui.css", status: 405, allow: "GET, HEAD, OPTIONS" },
  { line: "OPTIONS /docs/assets/swagger-ui.css", status: 204, allow: "GET, HEAD, OPTIONS" },
  { line: "DELETE /docs/assets/", status: 404 },
  // RFC 3986 §2.1: a path no route has is a 404, however its `%` is spelled.
  { line: "GET /%ZZ", status: 404, message: /No resource matches GET \/%ZZ/ },
  { line: "GET /ws/%ZZ", status: 404 },
  { line: "GET /%", status: 404 },
  // A route's parameter that cannot be decoded: 400, with or without credentials.
  { line: "GET /employees/%ZZ", status: 400 },
  { line: "GET /employees/%ZZ", headers: [`Authorization: ${ADMIN}`], status: 400 },
  // A malformed query stays the collection's own 400, and a good path is not touched by it.
  { line: "GET /employees/7?x=%ZZ", headers: [`Authorization: ${ADMIN}`], status: 200 },
  // RFC 9112 §3.2.4: the asterisk-form names no resource of the service.
  { line: "GET *", status: 404, message: /No resource matches GET \*/ },
  { line: "OPTIONS *", status: 404, message: /No resource matches OPTIONS \*/ },
  // The SOAP endpoints' paths are compared as received, without decoding.
  { line: "GET /ws/%63ustomer?wsdl", status: 404 },
  { line: "GET /ws/CUSTOMER?wsdl", status: 200 },
  // A path below an endpoint's is no endpoint's: the record, not a fault.
  { line: "GET /ws/customer/employees", status: 404, message: /No resource matches GET/ },
  {
    line: "POST /ws/customer/x",
    headers: ["Content-Type: application/soap+xml", "Content-Length: 2"],
    status: 404,
  },
  // RFC 9112 §3.2.2: an absolute-form target is routed by its path, whatever its scheme.
  { line: "GET ftp://localhost/health", status: 200 },
  { line: "GET ws://localhost/health", status: 200 },
  { line: "GET FTP://LOCALHOST/health", status: 200 },
  { line: "GET HTTP://LOCALHOST/health", status: 200 },
  { line: "GET http://localhost/health", status: 200 },
  { line: "GET ftp://localhost/employees/%ZZ", status: 400 },
  { line: "GET ftp://localhost/nowhere", status: 404 },
];

describe("unusual methods and targets: the same answer on either framework", () => {
  let s: Started;
  beforeAll(async () => {
    s = await sqlite.start();
  });
  afterAll(() => s.stop());

  const named = cases.map((c) => {
    const fields = c.headers === undefined ? "" : ` (${c.headers.map((h) => h.split(":")[0]).join(", ")})`;
    return [`${c.line}${fields} → ${c.status}`, c] as const;
  });
  it.each(named)("%s", async (_name, c) => {
    const host = new URL(s.url).host;
    const head = [`${c.line} HTTP/1.1`, `Host: ${host}`, ...(c.headers ?? [])].join("\r\n");
    const body = c.headers?.some((h) => h.startsWith("Content-Length")) ? "{}" : "";
    const res = await rawExchange(s.url, head, body);
    expect(res.status, res.head).toBe(c.status);
    if (c.allow !== undefined) expect(res.head).toMatch(new RegExp(`\\r\\nAllow: ${c.allow}\\r\\n`, "i"));
    if (c.status >= 400) expect(JSON.parse(res.body)).toMatchObject({ status: c.status });
    if (c.message !== undefined) expect(JSON.parse(res.body).message).toMatch(c.message);
  });
});
