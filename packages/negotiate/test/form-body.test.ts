import type { IncomingMessage, ServerResponse } from "node:http";
import * as onExpress from "@svc/negotiate/express";
import * as onFastify from "@svc/negotiate/fastify";
import * as onFetch from "@svc/negotiate/fetch";
import * as onNode from "@svc/negotiate/node";
import { express4 } from "@svc/test-utils";
import { conformance, errorStatus, fallbackErrors, type Mounts, type Row } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { expect } from "vitest";
import type { ParseBodyOptions } from "../src/index.js";

const options: ParseBodyOptions = {
  types: ["json", "urlencoded"],
  form: { maxPairs: 3, maxKeyBytes: 24, maxValueBytes: 32 },
};

/** What a body became: its JSON, and whether any prototype was reached. */
function describeBody(value: unknown) {
  return {
    body: value ?? null,
    polluted:
      ({} as Record<string, unknown>).polluted !== undefined ||
      Object.getPrototypeOf(value ?? {}) !== Object.prototype,
  };
}

/** `POST /form`: the body parsed with `options`, answered 201 with it. */
function mounts(expressApp: () => express.Express = express): Mounts {
  return {
    express() {
      const app = expressApp();
      app.post("/form", onExpress.parseBody(options), (req: onExpress.ParsedBodyRequest, res) => {
        res.status(201).json(describeBody(req.body));
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const readBody = onNode.parseBody(options);
      return (req: IncomingMessage, res: ServerResponse) => {
        readBody(req, res).then(
          (value) => {
            res
              .writeHead(201, { "content-type": "application/json" })
              .end(JSON.stringify(describeBody(value)));
          },
          (err) => fallbackErrors.node(err, req, res),
        );
      };
    },
    async fastify() {
      const app = Fastify();
      await app.register(onFastify.parseBody, options);
      app.post("/form", async (request, reply) => reply.code(201).send(describeBody(request.body)));
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const readBody = onFetch.parseBody(options);
      const app = new Hono();
      app.post("/form", async (c) => c.json(describeBody(await readBody(c.req.raw)), 201));
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return app.fetch;
    },
  };
}

const form = (body: string) => ({
  method: "POST",
  path: "/form",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body,
});

const rows: Row[] = [
  {
    name: "name=Ada+L%C3%B6w&tag=a&tag=b → { name, tag: [a, b] } (URLSearchParams: + is space, UTF-8 escapes)",
    request: form("name=Ada+L%C3%B6w&tag=a&tag=b"),
    status: 201,
    body: { body: { name: "Ada Löw", tag: ["a", "b"] }, polluted: false },
  },
  {
    name: "__proto__[polluted]=1&constructor=x&__proto__=y → own fields, no prototype reached",
    request: form("__proto__%5Bpolluted%5D=1&constructor=x&__proto__=y"),
    status: 201,
    body: { body: { "__proto__[polluted]": "1", constructor: "x", ["__proto__"]: "y" }, polluted: false },
  },
  {
    name: "a[b]=1 → the flat name a[b], not an object",
    request: form("a%5Bb%5D=1&a[c]=2"),
    status: 201,
    body: { body: { "a[b]": "1", "a[c]": "2" }, polluted: false },
  },
  {
    name: "4 pairs over maxPairs 3 → 400",
    request: form("a=1&b=2&c=3&d=4"),
    status: 400,
    body: (r) =>
      expect(JSON.parse(r.text)).toEqual({
        status: 400,
        message: "Form body: more than 3 name/value pairs are not accepted",
      }),
  },
  {
    name: "empty sequences (a=1&&&b=2) do not count as pairs → 201",
    request: form("a=1&&&&b=2&c=3"),
    status: 201,
    body: { body: { a: "1", b: "2", c: "3" }, polluted: false },
  },
  {
    name: "a name of 25 bytes over maxKeyBytes 24 → 400",
    request: form(`${"k".repeat(25)}=1`),
    status: 400,
    body: errorStatus(400),
  },
  {
    name: "a value of 33 bytes (decoded) over maxValueBytes 32 → 400",
    request: form(`v=${"%C3%A9".repeat(17)}`),
    status: 400,
    body: errorStatus(400),
  },
  {
    name: "a form on a route not reading forms is left unread → 201 null",
    request: { ...form("a=1"), headers: { "content-type": "text/plain" } },
    status: 201,
    body: { body: null, polluted: false },
  },
];

conformance("negotiate urlencoded", mounts(), rows);
conformance("negotiate urlencoded (Express 4)", mounts(express4), rows, ["express"]);
