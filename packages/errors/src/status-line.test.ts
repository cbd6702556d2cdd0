import { STATUS_CODES } from "node:http";
import type { AddressInfo } from "node:net";
import { listen, rawExchange } from "@svc/test-utils";
import express from "express";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { errorPlugin } from "./fastify.js";
import { HttpError } from "./index.js";
import { errorResponder } from "./node.js";

/**
 * The status line's reason phrase and the record's `error` name one status the same way: RFC 9110's
 * name, where Node.js's `http.STATUS_CODES` (which Node's `writeHead` falls back on) still has the
 * RFC 7231 one.
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.14
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.21
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-4
 */
const STATUSES: [number, string][] = [
  [413, "Content Too Large"],
  [416, "Range Not Satisfiable"],
  [421, "Misdirected Request"],
  [422, "Unprocessable Content"],
  [429, "Too Many Requests"],
  [500, "Internal Server Error"],
];

const errorFor = (path: string) => new HttpError(Number(path.split("/")[1]), "refused");
const quiet = { error() {} };

const servers: Record<string, () => Promise<{ url: string; close: () => Promise<unknown> }>> = {
  async express() {
    const app = express();
    app.use((req, _res, next) => next(errorFor(req.path)));
    app.use(errorHandler({ logger: quiet }));
    return listen(app);
  },
  async fastify() {
    const app: FastifyInstance = Fastify();
    await app.register(errorPlugin, { logger: quiet });
    app.get("/*", async (request) => {
      throw errorFor(request.url);
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    return {
      url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
      close: () => app.close(),
    };
  },
  async "node:http"() {
    const respond = errorResponder({ logger: quiet });
    return listen((req, res) => respond(errorFor(req.url ?? "/"), req, res));
  },
};

describe.each(Object.keys(servers))("the status line of an error on %s", (name) => {
  let server: { url: string; close: () => Promise<unknown> };
  beforeAll(async () => {
    server = await (servers[name] as () => Promise<typeof server>)();
  });
  afterAll(() => server.close());

  it.each(STATUSES)("%i: the status line says %s, as the record's `error` does", async (status, phrase) => {
    const { head, body } = await rawExchange(
      server.url,
      `GET /${status} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json`,
    );
    expect(head.split("\r\n")[0]).toBe(`HTTP/1.1 ${status} ${phrase}`);
    expect(JSON.parse(body)).toMatchObject({ status, error: phrase });
  });
});

it("Node.js's own table still names 413 and 422 otherwise (what the status line said before)", () => {
  expect([STATUS_CODES[413], STATUS_CODES[422]]).toEqual(["Payload Too Large", "Unprocessable Entity"]);
});
