import type { IncomingMessage, ServerResponse } from "node:http";
import type { Mounts } from "@svc/test-utils/conformance";
import type express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { jwtVerify, SignJWT } from "jose";
import { z } from "zod";
import { errorHandler, notFound } from "../src/express.js";
import { errorPlugin } from "../src/fastify.js";
import { notFoundHandler, onError } from "../src/fetch.js";
import { type ErrorOptions, HttpError, malformedBody } from "../src/index.js";
import { errorResponder, notFoundError } from "../src/node.js";

/** An employee as the routes take it: what zod checks before anything else runs. */
export const Employee = z.object({ name: z.string().min(1), salary: z.number().positive() });

const secret = new TextEncoder().encode("a test secret of thirty-two bytes!!");
/** A token that expired in 2001 (`exp` 1000000000): jose's jwtVerify throws `JWTExpired`. */
const expiredToken = new SignJWT({ sub: "ada" })
  .setProtectedHeader({ alg: "HS256" })
  .setExpirationTime(1_000_000_000)
  .sign(secret);

/** A failure no mapper knows, for the mappers that fail. */
export class OddError extends Error {
  override name = "OddError";
}

/**
 * The routes, once, framework-free; each framework's route calls one. `duplicate()` throws the
 * error the test file got from PostgreSQL (a real `pg` unique violation).
 */
export function routes(duplicate: () => never) {
  return {
    employee(id: string) {
      if (id !== "7") throw HttpError.notFound(`Employee ${id} does not exist`);
      return { id: 7, name: "Ada" };
    },
    create(body: unknown) {
      return Employee.parse(body); // throws a ZodError
    },
    async me() {
      return (await jwtVerify(await expiredToken, secret)).payload; // throws JWTExpired
    },
    duplicate,
    boom(): never {
      throw new Error("password=hunter2 rejected by db-7.internal");
    },
    odd(): never {
      throw new OddError("a failure no mapper expects");
    },
  };
}

type Routes = ReturnType<typeof routes>;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, data: unknown): void {
  const body = JSON.stringify(data);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * One server per framework with the same routes and the same `@svc/errors` options: Express (the
 * `express` the test file imports, so the `(express 4)` project runs it on Express 4 as well, or
 * `@svc/test-utils`' `express4`), `node:http`, Fastify and Hono.
 */
export function errorMounts(options: ErrorOptions, app: typeof express, r: Routes): Mounts {
  return {
    express() {
      const server = app();
      server.disable("x-powered-by");
      server.use(app.json());
      // Express 4 does not hand a rejected promise to the error handler: each route catches its own.
      server.get("/employees/:id", (req, res) => {
        res.json(r.employee(req.params.id as string));
      });
      server.post("/employees", (req, res) => {
        res.status(201).json(r.create(req.body));
      });
      server.get("/me", (_req, res, next) => {
        r.me().then((me) => res.json(me), next);
      });
      server.post("/departments", () => r.duplicate());
      server.get("/boom", () => r.boom());
      server.get("/odd", () => r.odd());
      server.use(notFound());
      server.use(errorHandler(options));
      return server;
    },
    node() {
      const sendError = errorResponder(options);
      return (req: IncomingMessage, res: ServerResponse) => {
        const run = async () => {
          const path = (req.url ?? "/").split("?")[0] as string;
          const id = /^\/employees\/([^/]+)$/.exec(path)?.[1];
          if (req.method === "GET" && id !== undefined) return sendJson(res, 200, r.employee(id));
          if (req.method === "POST" && path === "/employees") {
            let body: unknown;
            try {
              body = JSON.parse(await readBody(req));
            } catch (err) {
              throw malformedBody(err);
            }
            return sendJson(res, 201, r.create(body));
          }
          if (req.method === "GET" && path === "/me") return sendJson(res, 200, await r.me());
          if (req.method === "POST" && path === "/departments") return r.duplicate();
          if (req.method === "GET" && path === "/boom") return r.boom();
          if (req.method === "GET" && path === "/odd") return r.odd();
          throw notFoundError(req);
        };
        run().catch((err) => sendError(err, req, res));
      };
    },
    async fastify() {
      const server = Fastify();
      await server.register(errorPlugin, options);
      server.get("/employees/:id", async (request) => r.employee((request.params as { id: string }).id));
      server.post("/employees", async (request, reply) => reply.code(201).send(r.create(request.body)));
      server.get("/me", () => r.me());
      server.post("/departments", async () => r.duplicate());
      server.get("/boom", async () => r.boom());
      server.get("/odd", async () => r.odd());
      return server;
    },
    fetch() {
      const server = new Hono();
      server.get("/employees/:id", (c) => c.json(r.employee(c.req.param("id"))));
      server.post("/employees", async (c) => c.json(r.create(await c.req.json()), 201));
      server.get("/me", async (c) => c.json(await r.me()));
      server.post("/departments", () => r.duplicate());
      server.get("/boom", () => r.boom());
      server.get("/odd", () => r.odd());
      server.notFound(notFoundHandler(options as never));
      server.onError(onError(options as never));
      return server.fetch;
    },
  };
}
