import { createServer } from "node:http";
import { isHttpError } from "@svc/errors";
import { errorHandler } from "@svc/errors/express";
import { type Listening, listen, listenOn } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raw } from "../test/helpers.js";
import { hrefFor } from "./base-url.js";
import { allowedHosts } from "./express.js";
import { createHostCheck } from "./host-check.js";

// RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
// request message that lacks a Host header field and to any request message that contains more
// than one Host header field line or a Host header field with an invalid field value." Node keeps
// the first Host line and drops the others, so the host check passed (or 421'd) on the first
// while a proxy or cache in front may have read the last.
const request = (version: string, hosts: readonly string[], extra: readonly string[] = []) =>
  [`GET /where HTTP/${version}`, ...hosts.map((h) => `${h}`), ...extra, "Connection: close", "", ""].join(
    "\r\n",
  );
const status = (reply: string) => Number(reply.slice(9, 12));
const body = (reply: string) => reply.slice(reply.indexOf("\r\n\r\n") + 4);

describe("a request with more than one Host line, through real servers (RFC 9112 §3.2)", () => {
  const servers: Listening[] = [];
  let bases: Record<"list" | "any" | "plain", string>;
  beforeAll(async () => {
    const app = (hosts: readonly string[] | "*") => {
      const a = express();
      a.use(allowedHosts(hosts));
      a.get("/where", (req, res) => {
        res.json({ _links: { self: { href: hrefFor(req, "/where") } } });
      });
      a.use(errorHandler({ logger: { error() {} } }));
      return a;
    };
    // The framework-free check on node:http, as the README's core example uses it.
    const check = createHostCheck(["api.example.com"]);
    const plain = createServer((req, res) => {
      const error = check(req);
      if (error !== undefined && isHttpError(error)) {
        res.writeHead(error.status, { "content-type": "application/json" });
        res.end(JSON.stringify({ status: error.status, code: error.code, message: error.message }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ href: hrefFor(req, "/where") }));
    });
    const started = await Promise.all([listen(app(["api.example.com"])), listen(app("*")), listenOn(plain)]);
    servers.push(...started);
    const [list, any, plainUrl] = started.map((s) => s.url) as [string, string, string];
    bases = { list, any, plain: plainUrl };
  });
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  it.each([
    ["1.1", ["Host: api.example.com", "Host: evil.example"]],
    ["1.1", ["Host: evil.example", "Host: api.example.com"]],
    ["1.1", ["Host: api.example.com", "Host: api.example.com"]],
    ["1.1", ["Host: api.example.com", "host: evil.example"]],
    ["1.1", ["HOST: api.example.com", "Host:"]],
    ["1.0", ["Host: api.example.com", "Host: evil.example"]],
  ] as const)("HTTP/%s with %j → 400 invalid_host, no link", async (version, hosts) => {
    for (const which of ["list", "any", "plain"] as const) {
      const reply = await raw(bases[which], request(version, hosts));
      expect({ which, status: status(reply) }).toEqual({ which, status: 400 });
      expect(body(reply)).toContain("more than one Host");
      expect(body(reply)).not.toContain("href");
    }
  });

  it.each([
    ["1.1", ["Host: api.example.com"], 200],
    ["1.1", ["Host: api.example.com", "X-Host: evil.example", "Hosts: evil.example"], 200],
    ["1.1", ["Host: evil.example"], 421],
    ["1.0", [], 421],
  ] as const)("HTTP/%s with %j → %i as before", async (version, hosts, expected) => {
    for (const which of ["list", "plain"] as const) {
      const reply = await raw(bases[which], request(version, hosts));
      expect({ which, status: status(reply) }).toEqual({ which, status: expected });
      if (expected === 200) expect(body(reply)).toContain("http://api.example.com/where");
    }
  });
});
