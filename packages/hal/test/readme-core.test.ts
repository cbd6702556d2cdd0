// README: core from plain node:http (begin)
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { buildErrorRecord, HttpError, isHttpError } from "@svc/errors";
import {
  compileTrust,
  createHostCheck,
  externalBaseUrl,
  hal,
  hrefFor,
  pageModel,
  parsePageRequest,
} from "../src/index.js";

const employees = [
  { id: 1, name: "Ada" },
  { id: 2, name: "Grace" },
  { id: 3, name: "Linus" },
];
const trustProxy = compileTrust("loopback"); // the gateway's addresses, compiled once
const checkHost = createHostCheck(["api.example.com", ".example.net", "127.0.0.1"], { trustProxy });

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": status < 400 ? "application/hal+json" : "application/json" });
  res.end(JSON.stringify(body));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  // null for a target that is no URL ("//[", "http://a:b/"): new URL would throw, outside any
  // handler, and end the process.
  const url = URL.parse(req.url ?? "/", "http://localhost");
  try {
    if (url === null) throw HttpError.badRequest("The request target is not a valid URL");
    const misdirected = checkHost(req); // 421 for a host the service is not for, 400 for a bad one
    if (misdirected) throw misdirected;
    if (url.pathname !== "/employees") throw HttpError.notFound();
    const { page, size } = parsePageRequest(url.searchParams, { defaultSize: 2 }); // 400 on bad input
    const rows = employees.slice((page - 1) * size, page * size);
    const items = rows.map((e) => hal(e).link("self", hrefFor(req, `/employees/${e.id}`, { trustProxy })));
    const body = pageModel({
      collection: "employees",
      items, // HalResources: JSON.stringify renders them
      page,
      size,
      totalElements: employees.length,
      url: url.pathname + url.search, // every query parameter but page is kept in the links
      origin: externalBaseUrl(req, { trustProxy }),
    });
    send(res, 200, body);
  } catch (err) {
    if (!isHttpError(err)) throw err;
    send(res, err.status, buildErrorRecord(err, url?.pathname ?? "/"));
  }
}

const server = createServer(handle);

// README: core from plain node:http (end)

import { readFileSync } from "node:fs";
import { type Listening, listenOn, simulatedProxy } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getWithHost, raw } from "./helpers.js";

let base: string;
let listening: Listening;
beforeAll(async () => {
  listening = await listenOn(server);
  base = listening.url;
});
afterAll(() => listening.close());

describe("README: the core from plain node:http", () => {
  it("the README's block is this file's code", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const block = /## Core from plain node:http[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    const source = readFileSync(new URL(import.meta.url), "utf8");
    const start = source.indexOf("\n", source.indexOf("// README: core from plain node:http (begin)")) + 1;
    const code = source.slice(start, source.indexOf("// README: core from plain node:http (end)"));
    expect(block?.trim()).toBe(code.trim().replace('from "../src/index.js"', 'from "@svc/hal"'));
  });

  it("a page of HAL items with paging links from the Host the client used", async () => {
    const res = await fetch(`${base}/employees?page=2`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/hal+json");
    expect(await res.json()).toEqual({
      _embedded: { employees: [{ _links: { self: { href: `${base}/employees/3` } }, id: 3, name: "Linus" }] },
      page: { number: 2, size: 2, totalElements: 3, totalPages: 2 },
      _links: {
        self: { href: `${base}/employees?page=2&size=2` },
        first: { href: `${base}/employees?page=1&size=2` },
        previous: { href: `${base}/employees?page=1&size=2` },
        last: { href: `${base}/employees?page=2&size=2` },
      },
    });
  });

  it("behind the trusted proxy: links under the forwarded URL", async () => {
    const proxy = await simulatedProxy(base, {
      "x-forwarded-proto": "https",
      "x-forwarded-host": "api.example.com",
    });
    try {
      const body = (await (await fetch(`${proxy.url}/employees`)).json()) as {
        _links: { next: { href: string } };
      };
      expect(body._links.next.href).toBe("https://api.example.com/employees?page=2&size=2");
    } finally {
      await proxy.close();
    }
  });

  it.each([
    ["eu.example.net", 200],
    ["evil.example", 421],
    ["bad host", 400],
  ])("Host: %s → %i", async (host, status) => {
    expect((await getWithHost(base, "/employees", host)).status).toBe(status);
  });

  // Node's parser passes such targets on (absolute-form with a bad authority, "//" plus one); the
  // URL parser refuses them, and a throw in a node:http request listener ends the process.
  it.each(["//[/x", "http://[::1/employees", "http://a:b/employees"])(
    "GET %s (a target that is no URL) → 400, and the server keeps serving",
    async (target) => {
      const reply = await raw(base, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(reply.slice(reply.indexOf("{"), reply.lastIndexOf("}") + 1))).toMatchObject({
        status: 400,
        path: "/",
      });
      expect((await fetch(`${base}/employees`)).status).toBe(200);
    },
  );

  it("size=0 → 400 error record", async () => {
    const res = await fetch(`${base}/employees?size=0`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 400, path: "/employees" });
  });
});
