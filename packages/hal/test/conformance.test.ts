import type { IncomingMessage, ServerResponse } from "node:http";
import { compileTrust, hal, pageModel, parsePageRequest } from "@svc/hal";
import * as onExpress from "@svc/hal/express";
import * as onFastify from "@svc/hal/fastify";
import * as onFetch from "@svc/hal/fetch";
import * as onNode from "@svc/hal/node";
import { type ForwardedHeaders, HttpError } from "@svc/kernel";
import { honoConnection } from "@svc/kernel/fetch";
import { conformance, errorStatus, fallbackErrors, type Mounts, type Row } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { expect } from "vitest";

/** The service answers for api.example.com and for the loopback address the harness sends to. */
const HOSTS = ["api.example.com", "127.0.0.1"];
const trustProxy = compileTrust("loopback");

const employees = [1, 2, 3, 4, 5].map((id) => ({ id, name: `employee ${id}` }));

/** The routes, once, framework-free: what each framework's route hands them. */
const routes = {
  employee: (id: string, href: (path: string) => string) => {
    const employee = employees.find((e) => String(e.id) === id);
    if (employee === undefined) throw HttpError.notFound();
    return hal(employee)
      .link("self", href(`/employees/${id}`))
      .link("collection", href("/employees"));
  },
  page: (query: URLSearchParams, url: string, origin: string) => {
    const { page, size } = parsePageRequest(query, { defaultSize: 2 });
    return pageModel({
      collection: "employees",
      items: employees.slice((page - 1) * size, page * size),
      page,
      size,
      totalElements: employees.length,
      url,
      origin,
    });
  },
};

const HAL = "application/hal+json";

/** The service on each framework, reading `family` behind the loopback proxy (the default when undefined). */
const mountsWith = (family?: ForwardedHeaders): Mounts => {
  const forwardedHeaders = family === undefined ? {} : { forwardedHeaders: family };
  const trusting = { trustProxy, ...forwardedHeaders };
  return {
    express() {
      const app = express();
      app.disable("x-powered-by");
      app.use(onExpress.allowedHosts(HOSTS, { trustProxy: "loopback", ...forwardedHeaders }));
      app.get("/employees/:id", (req, res) => {
        const doc = routes.employee(req.params.id, (path) => onExpress.hrefFor(req, path, trusting));
        res.type(HAL).send(JSON.stringify(doc));
      });
      app.get("/employees", (req, res) => {
        const url = new URL(req.originalUrl, "http://x");
        const body = routes.page(url.searchParams, req.originalUrl, onExpress.baseUrl(req, trusting));
        res.type(HAL).send(JSON.stringify(body));
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const checkHost = onNode.allowedHosts(HOSTS, { trustProxy: "loopback", ...forwardedHeaders });
      return (req: IncomingMessage, res: ServerResponse) => {
        const send = (body: unknown) => {
          res.setHeader("Content-Type", HAL);
          res.end(JSON.stringify(body));
        };
        const run = async () => {
          await checkHost(req, res);
          const url = new URL(req.url ?? "/", "http://x");
          const id = /^\/employees\/([^/]+)$/.exec(url.pathname)?.[1];
          if (id !== undefined)
            return send(routes.employee(id, (path) => onNode.hrefFor(req, path, trusting)));
          if (url.pathname === "/employees") {
            return send(routes.page(url.searchParams, req.url ?? "/", onNode.baseUrl(req, trusting)));
          }
          throw HttpError.notFound();
        };
        run().catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    async fastify() {
      const app = Fastify();
      await app.register(onFastify.allowedHosts, {
        hosts: HOSTS,
        trustProxy: "loopback",
        ...forwardedHeaders,
      });
      app.get("/employees/:id", async (request, reply) => {
        const { id } = request.params as { id: string };
        const doc = routes.employee(id, (path) => onFastify.hrefFor(request, path, trusting));
        return reply.type(HAL).send(JSON.stringify(doc));
      });
      app.get("/employees", async (request, reply) => {
        const url = new URL(request.url, "http://x");
        const body = routes.page(url.searchParams, request.url, onFastify.baseUrl(request, trusting));
        return reply.type(HAL).send(JSON.stringify(body));
      });
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono();
      app.use(onFetch.allowedHosts(HOSTS, { trustProxy: "loopback", ...forwardedHeaders }));
      app.get("/employees/:id", (c) => {
        const info = honoConnection(c);
        const doc = routes.employee(c.req.param("id"), (path) =>
          onFetch.hrefFor(c.req.raw, path, { info, ...trusting }),
        );
        return c.body(JSON.stringify(doc), 200, { "content-type": HAL });
      });
      app.get("/employees", (c) => {
        const url = new URL(c.req.url);
        const origin = onFetch.baseUrl(c.req.raw, { info: honoConnection(c), ...trusting });
        const body = routes.page(url.searchParams, url.pathname + url.search, origin);
        return c.body(JSON.stringify(body), 200, { "content-type": HAL });
      });
      app.notFound(() => {
        throw HttpError.notFound();
      });
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return app.fetch;
    },
  };
};

const selfOf = (text: string) => JSON.parse(text)._links.self.href;

const rows: Row[] = [
  {
    name: "Host: api.example.com → self link on that host",
    request: { path: "/employees/2", headers: [["Host", "api.example.com"]] },
    status: 200,
    headers: { "content-type": /^application\/hal\+json/ },
    body: {
      id: 2,
      name: "employee 2",
      _links: {
        self: { href: "http://api.example.com/employees/2" },
        collection: { href: "http://api.example.com/employees" },
      },
    },
  },
  {
    name: "X-Forwarded-Proto/-Host from a trusted proxy → the client's URL",
    request: {
      path: "/employees/2",
      headers: { "X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.com" },
    },
    status: 200,
    body: (r) => expect(selfOf(r.text)).toBe("https://api.example.com/employees/2"),
  },
  {
    name: "Forwarded: proto=https;host=api.example.com → not read (the proxy sets X-Forwarded-*): the Host's URL",
    request: {
      path: "/employees/2",
      headers: [
        ["Host", "127.0.0.1"],
        ["Forwarded", "proto=https;host=api.example.com"],
      ],
    },
    status: 200,
    body: (r) => expect(selfOf(r.text)).toBe("http://127.0.0.1/employees/2"),
  },
  {
    name: "X-Forwarded-For, X-Forwarded-Host: api.example.com, X-Forwarded-Proto: https and a client's Forwarded: host=evil.example;proto=http → https://api.example.com",
    request: {
      path: "/employees/2",
      headers: [
        ["Host", "127.0.0.1"],
        ["Forwarded", "host=evil.example;proto=http"],
        ["X-Forwarded-For", "203.0.113.66"],
        ["X-Forwarded-Host", "api.example.com"],
        ["X-Forwarded-Proto", "https"],
      ],
    },
    status: 200,
    body: (r) => expect(selfOf(r.text)).toBe("https://api.example.com/employees/2"),
  },
  {
    name: "X-Forwarded-Prefix: /api → the prefix in the links",
    request: {
      path: "/employees/2",
      headers: {
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "api.example.com",
        "X-Forwarded-Prefix": "/api",
      },
    },
    status: 200,
    body: (r) => expect(selfOf(r.text)).toBe("https://api.example.com/api/employees/2"),
  },
  {
    name: "Host: evil.example → 421",
    request: { path: "/employees/2", headers: [["Host", "evil.example"]] },
    status: 421,
    body: errorStatus(421),
  },
  {
    name: "GET http://api.example.com/employees/2 (absolute-form) with Host: evil.example → self link on the target's host",
    request: { path: "http://api.example.com/employees/2", headers: [["Host", "evil.example"]] },
    status: 200,
    body: (r) => expect(selfOf(r.text)).toBe("http://api.example.com/employees/2"),
  },
  {
    name: "GET http://evil.example/employees/2 (absolute-form) with Host: api.example.com → 421",
    request: { path: "http://evil.example/employees/2", headers: [["Host", "api.example.com"]] },
    status: 421,
    body: errorStatus(421),
  },
  {
    name: "X-Forwarded-Host: evil.example from a trusted proxy → 421",
    request: { path: "/employees/2", headers: { "X-Forwarded-Host": "evil.example" } },
    status: 421,
  },
  {
    name: "two Host lines → 400",
    request: {
      path: "/employees/2",
      headers: [
        ["Host", "api.example.com"],
        ["Host", "evil.example"],
      ],
    },
    status: 400,
    body: errorStatus(400),
  },
  {
    name: "page 2 of 3 → self, first, previous, next, last on the forwarded origin",
    request: {
      path: "/employees?page=2&size=2",
      headers: { "X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.com" },
    },
    status: 200,
    body: (r) => {
      const doc = JSON.parse(r.text);
      expect(doc.page).toEqual({ number: 2, size: 2, totalElements: 5, totalPages: 3 });
      expect(doc._embedded.employees.map((e: { id: number }) => e.id)).toEqual([3, 4]);
      const href = (rel: string) => doc._links[rel]?.href;
      expect(href("self")).toBe("https://api.example.com/employees?page=2&size=2");
      expect(href("first")).toBe("https://api.example.com/employees?page=1&size=2");
      expect(href("previous")).toBe("https://api.example.com/employees?page=1&size=2");
      expect(href("next")).toBe("https://api.example.com/employees?page=3&size=2");
      expect(href("last")).toBe("https://api.example.com/employees?page=3&size=2");
    },
  },
  {
    name: "page=0 → 400",
    request: { path: "/employees?page=0" },
    status: 400,
  },
];

conformance("hal", mountsWith(), rows);

/** With `forwardedHeaders: "forwarded"`: the reverse, RFC 7239 `Forwarded` alone. */
const rfc7239Rows: Row[] = [
  {
    name: "Forwarded: host=api.example.com;proto=https and a client's X-Forwarded-Host: evil.example, X-Forwarded-Proto: http → https://api.example.com",
    request: {
      path: "/employees/2",
      headers: [
        ["Host", "127.0.0.1"],
        ["Forwarded", "for=203.0.113.66;host=api.example.com;proto=https"],
        ["X-Forwarded-Host", "evil.example"],
        ["X-Forwarded-Proto", "http"],
      ],
    },
    status: 200,
    body: (r) => expect(selfOf(r.text)).toBe("https://api.example.com/employees/2"),
  },
  {
    name: "X-Forwarded-Host: evil.example alone → not read: the Host's URL",
    request: {
      path: "/employees/2",
      headers: [
        ["Host", "api.example.com"],
        ["X-Forwarded-Host", "evil.example"],
        ["X-Forwarded-Prefix", "/api"],
      ],
    },
    status: 200,
    body: (r) => expect(selfOf(r.text)).toBe("http://api.example.com/employees/2"),
  },
  {
    name: "Forwarded: host=evil.example → 421",
    request: { path: "/employees/2", headers: { Forwarded: "host=evil.example" } },
    status: 421,
  },
];

conformance('hal, forwardedHeaders "forwarded"', mountsWith("forwarded"), rfc7239Rows);

/**
 * The same trust set the way each framework sets it, no `trustProxy` option where the framework
 * has a setting of its own: Express's `trust proxy`, Fastify's `trustProxy` server option; the
 * option on node:http and the Fetch API, which have none.
 */
function frameworkTrust(setting: string): Mounts {
  const trust = compileTrust(setting);
  return {
    express() {
      const app = express();
      app.set("trust proxy", setting);
      app.use(onExpress.allowedHosts(HOSTS));
      app.get("/employees/:id", (req, res) => {
        const doc = routes.employee(req.params.id, (path) => onExpress.hrefFor(req, path));
        res.type(HAL).send(JSON.stringify(doc));
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const checkHost = onNode.allowedHosts(HOSTS, { trustProxy: setting });
      return (req: IncomingMessage, res: ServerResponse) => {
        const run = async () => {
          await checkHost(req, res);
          const id = /^\/employees\/([^/?]+)/.exec(req.url ?? "/")?.[1];
          if (id === undefined) throw HttpError.notFound();
          const doc = routes.employee(id, (path) => onNode.hrefFor(req, path, { trustProxy: trust }));
          res.setHeader("Content-Type", HAL);
          res.end(JSON.stringify(doc));
        };
        run().catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    async fastify() {
      const app = Fastify({ trustProxy: setting });
      await app.register(onFastify.allowedHosts, { hosts: HOSTS });
      app.get("/employees/:id", async (request, reply) => {
        const { id } = request.params as { id: string };
        const doc = routes.employee(id, (path) => onFastify.hrefFor(request, path));
        return reply.type(HAL).send(JSON.stringify(doc));
      });
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono();
      app.use(onFetch.allowedHosts(HOSTS, { trustProxy: setting }));
      app.get("/employees/:id", (c) => {
        const info = honoConnection(c);
        const doc = routes.employee(c.req.param("id"), (path) =>
          onFetch.hrefFor(c.req.raw, path, { info, trustProxy: trust }),
        );
        return c.body(JSON.stringify(doc), 200, { "content-type": HAL });
      });
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return app.fetch;
    },
  };
}

const trustRows = (trusted: boolean): Row[] => {
  const from = trusted ? "a trusted peer" : "an untrusted peer";
  return [
    {
      name: `X-Forwarded-Proto: https from ${from} → ${trusted ? "https" : "http"} links`,
      request: {
        path: "/employees/2",
        headers: [
          ["Host", "api.example.com"],
          ["X-Forwarded-Proto", "https"],
        ],
      },
      status: 200,
      body: (r) => expect(selfOf(r.text)).toBe(`${trusted ? "https" : "http"}://api.example.com/employees/2`),
    },
    {
      name: `Forwarded: proto=https;host=api.example.com from ${from} → Host (X-Forwarded-* is the family read)`,
      request: {
        path: "/employees/2",
        headers: [
          ["Host", "127.0.0.1"],
          ["Forwarded", "proto=https;host=api.example.com"],
        ],
      },
      status: 200,
      body: (r) => expect(selfOf(r.text)).toBe("http://127.0.0.1/employees/2"),
    },
    {
      name: `X-Forwarded-Host: evil.example from ${from} → ${trusted ? "421" : "ignored"}`,
      request: {
        path: "/employees/2",
        headers: [
          ["Host", "api.example.com"],
          ["X-Forwarded-Host", "evil.example"],
        ],
      },
      status: trusted ? 421 : 200,
    },
  ];
};

// The harness connects from the loopback address: trusted by "loopback", not by "10.0.0.0/8".
conformance("hal behind the framework's trust (loopback)", frameworkTrust("loopback"), trustRows(true));
conformance("hal behind the framework's trust (10.0.0.0/8)", frameworkTrust("10.0.0.0/8"), trustRows(false));
