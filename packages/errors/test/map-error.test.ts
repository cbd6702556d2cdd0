import { express4, serviceUrl } from "@svc/test-utils";
import {
  conformance,
  type DiagnosticRow,
  diagnosticsTable,
  FRAMEWORKS,
  type Row,
  recording,
  send,
  serve,
} from "@svc/test-utils/conformance";
import express from "express";
import { errors } from "jose";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { type ErrorMapper, type ErrorOptions, HttpError, mappedError } from "../src/index.js";
import { errorMounts, OddError, routes } from "./mapped-mounts.js";

// `mapError`: a team's own and third-party errors become records without a try/catch in every
// handler, through a listening server of each framework.

const TIME = "2026-01-02T03:04:05.678Z";
const BASE = "https://errors.example/problems/";

// The mappers of the README, as an application writes them.

/** zod's ZodError → 422 with one `errors` entry per failed field. */
const fromZod: ErrorMapper = (err) =>
  err instanceof ZodError
    ? HttpError.unprocessable("The request content is invalid", {
        cause: err,
        code: "validation_failed",
        errors: err.issues.map((issue) => ({
          field: issue.path.map(String).join(".") || "(content)",
          message: issue.message,
        })),
      })
    : undefined;

/** jose's JWTExpired → 401 with the RFC 6750 §3.1 `invalid_token` challenge. */
const fromJose: ErrorMapper = (err) =>
  err instanceof errors.JWTExpired
    ? HttpError.unauthorized("The access token has expired", {
        cause: err,
        code: "token_expired",
        headers: { "WWW-Authenticate": 'Bearer realm="api", error="invalid_token"' },
      })
    : undefined;

/** A PostgreSQL unique violation (SQLSTATE 23505, as `pg` reports it in `code`) → 409. */
const fromPostgres: ErrorMapper = (err) =>
  err instanceof Error && (err as { code?: unknown }).code === "23505"
    ? HttpError.conflict("It exists already", { cause: err, code: "duplicate" })
    : undefined;

const postgresUrl = serviceUrl("DATABASE_URL");
/** A real unique violation from PostgreSQL, got once (a temporary table: nothing to clean up). */
let duplicate: Error | undefined;
beforeAll(async () => {
  if (!postgresUrl) return;
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query("CREATE TEMP TABLE departments (name text PRIMARY KEY)");
    await client.query("INSERT INTO departments VALUES ('Research')");
    await client.query("INSERT INTO departments VALUES ('Research')").catch((err: Error) => {
      duplicate = err;
    });
  } finally {
    await client.end();
  }
});

const r = routes(() => {
  if (duplicate === undefined) throw new Error("no unique violation: PostgreSQL was not reached");
  throw duplicate;
});

const lines: { entry: Record<string, unknown>; msg: string; level: string }[] = [];
const logger = {
  error: (entry: Record<string, unknown>, msg: string) => lines.push({ entry, msg, level: "error" }),
  info: (entry: Record<string, unknown>, msg: string) => lines.push({ entry, msg, level: "info" }),
};
const options: ErrorOptions = {
  mapError: [fromZod, fromJose, fromPostgres],
  problemTypeBase: BASE,
  now: () => new Date(TIME),
  logger,
};

const rows: Row[] = [
  {
    name: "a ZodError → 422 with an `errors` entry per field",
    request: {
      method: "POST",
      path: "/employees",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: "", salary: -1 }),
    },
    status: 422,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    body: {
      timestamp: TIME,
      status: 422,
      error: "Unprocessable Content",
      message: "The request content is invalid",
      path: "/employees",
      errors: [
        { field: "name", message: "Too small: expected string to have >=1 characters" },
        { field: "salary", message: "Too small: expected number to be >0" },
      ],
    },
  },
  {
    name: "a ZodError, Accept: application/problem+json → errors as an extension member (RFC 9457 §3.2)",
    request: {
      method: "POST",
      path: "/employees",
      headers: { "Content-Type": "application/json", Accept: "application/problem+json" },
      body: JSON.stringify({ name: "Ada" }),
    },
    status: 422,
    headers: { "content-type": "application/problem+json; charset=utf-8" },
    body: {
      type: `${BASE}validation_failed`,
      title: "Unprocessable Content",
      status: 422,
      detail: "The request content is invalid",
      instance: "/employees",
      timestamp: TIME,
      code: "validation_failed",
      errors: [{ field: "salary", message: "Invalid input: expected number, received undefined" }],
    },
  },
  {
    name: "jose's JWTExpired → 401 with its challenge",
    request: { path: "/me" },
    status: 401,
    headers: { "www-authenticate": 'Bearer realm="api", error="invalid_token"' },
    body: {
      timestamp: TIME,
      status: 401,
      error: "Unauthorized",
      message: "The access token has expired",
      path: "/me",
    },
  },
  ...(postgresUrl
    ? [
        {
          name: "pg's unique violation (23505) → 409, nothing of the database shown",
          request: {
            method: "POST",
            path: "/departments",
            headers: { "Content-Type": "application/json" },
            body: '{"name":"Research"}',
          },
          status: 409,
          body: (res: { text: string }) => {
            expect(res.text).not.toMatch(/departments_pkey|Research|duplicate key/);
            expect(JSON.parse(res.text)).toEqual({
              timestamp: TIME,
              status: 409,
              error: "Conflict",
              message: "It exists already",
              path: "/departments",
            });
          },
        } satisfies Row,
      ]
    : []),
  {
    name: "an HttpError is not handed to the mappers → its own 404",
    request: { path: "/employees/8" },
    status: 404,
    body: (res) =>
      expect(JSON.parse(res.text)).toMatchObject({ status: 404, message: "Employee 8 does not exist" }),
  },
  {
    name: "an error no mapper knows → the default 500",
    request: { path: "/boom" },
    status: 500,
    body: (res) =>
      expect(JSON.parse(res.text)).toMatchObject({ status: 500, message: "An unexpected error occurred" }),
  },
];

conformance("@svc/errors mapError", errorMounts(options, express, r), rows);
conformance("@svc/errors mapError (Express 4 of @svc/test-utils)", errorMounts(options, express4, r), rows, [
  "express",
]);

/** A mapper with a bug: it reads a member of what it is given that is not there. */
const throwing: ErrorMapper = (err) => {
  if (err instanceof OddError) throw new TypeError("Cannot read properties of undefined (reading 'issues')");
  return undefined;
};
/** A mapper returning what is not an HttpError. */
const invalid: ErrorMapper = (err) => (err instanceof OddError ? ({ status: 400 } as never) : undefined);

describe.each(FRAMEWORKS)("a mapper that fails → a logged 500, never a crash, on %s", (framework) => {
  const failing: [string, ErrorMapper, string, (logged: unknown) => void][] = [
    [
      "throws",
      throwing,
      "threw",
      (logged) => {
        expect(logged).toBeInstanceOf(AggregateError);
        expect((logged as AggregateError).errors[0]).toBeInstanceOf(TypeError);
        expect((logged as Error).message).toMatch(/mapError \(mapper 1\) threw/);
      },
    ],
    [
      "returns a plain object",
      invalid,
      "invalid",
      (logged) => {
        expect(logged).toBeInstanceOf(TypeError);
        expect((logged as Error).message).toMatch(
          /mapError \(mapper 1\) returned an object, not an HttpError/,
        );
      },
    ],
  ];
  for (const [name, mapper, , check] of failing) {
    it(`a mapper that ${name}: GET /odd → 500 record, the error logged as the failure's cause`, async () => {
      lines.length = 0;
      const server = await serve(
        framework,
        errorMounts({ ...options, mapError: [fromZod, mapper] }, express, r),
      );
      try {
        const res = await send(server.url, { path: "/odd" });
        expect(res.status).toBe(500);
        expect(JSON.parse(res.text)).toEqual({
          timestamp: TIME,
          status: 500,
          error: "Internal Server Error",
          message: "An unexpected error occurred",
          path: "/odd",
        });
        const failed = lines.filter((l) => l.level === "error");
        expect(failed).toHaveLength(1);
        expect(failed[0]?.msg).toBe("request failed");
        const logged = failed[0]?.entry.err;
        check(logged);
        expect((logged as Error).cause).toBeInstanceOf(OddError);
        // The server still answers: nothing escaped the error handler.
        expect((await send(server.url, { path: "/employees/7" })).status).toBe(200);
      } finally {
        await server.close();
      }
    });
  }

  it("a mapped 4xx is logged at info with the error as thrown", async () => {
    lines.length = 0;
    const server = await serve(framework, errorMounts(options, express, r));
    try {
      expect((await send(server.url, { path: "/me" })).status).toBe(401);
    } finally {
      await server.close();
    }
    // Fastify writes its own 4xx line (request.log), as its default error handler does.
    if (framework === "fastify") return;
    expect(lines).toEqual([
      {
        level: "info",
        msg: "The access token has expired",
        entry: expect.objectContaining({ status: 401, err: expect.any(errors.JWTExpired) }),
      },
    ]);
  });
});

// The decision on `svc:errors`: which mapper made the record, or failed to.
const heardRows: DiagnosticRow[] = [
  {
    name: "a ZodError → 422 made by mapper 0",
    request: {
      method: "POST",
      path: "/employees",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    },
    status: 422,
    message: {
      decision: "record",
      status: 422,
      code: "validation_failed",
      error: expect.any(ZodError),
      mapper: { index: 0, outcome: "mapped" },
    },
  },
  {
    name: "JWTExpired → 401 made by mapper 1",
    request: { path: "/me" },
    status: 401,
    message: {
      decision: "record",
      status: 401,
      code: "token_expired",
      error: expect.any(errors.JWTExpired),
      mapper: { index: 1, outcome: "mapped" },
    },
  },
  {
    name: "an HttpError → no mapper member",
    request: { path: "/employees/8" },
    status: 404,
    message: { decision: "record", status: 404, code: undefined, error: expect.any(HttpError) },
  },
  {
    name: "an error every mapper passed on → the default 500, no mapper member",
    request: { path: "/boom" },
    status: 500,
    message: { decision: "record", status: 500, code: undefined, error: expect.any(Error) },
  },
  {
    name: "an error mapper 2 throws on → 500, mapper 2 threw",
    request: { path: "/odd" },
    status: 500,
    message: {
      decision: "record",
      status: 500,
      code: undefined,
      error: expect.any(OddError),
      mapper: { index: 2, outcome: "threw" },
    },
  },
];
diagnosticsTable(
  "svc:errors",
  (seen) => recording(errorMounts({ ...options, mapError: [fromZod, fromJose, throwing] }, express, r), seen),
  heardRows,
);

describe("mappedError(thrown, mappers): the core of mapError", () => {
  const zod = new ZodError([]);
  it("the first HttpError returned wins; undefined passes on", () => {
    const first = mappedError(zod, [() => undefined, fromZod, () => HttpError.badRequest()]);
    expect(first.error.status).toBe(422);
    expect(first.mapper).toEqual({ index: 1, outcome: "mapped" });
    expect(first.logged).toBe(zod);
  });
  it("no mapper returns one → the built-in rules (a status-carrying error keeps its status)", () => {
    const upstream = Object.assign(new Error("gone"), { status: 410, expose: true });
    expect(mappedError(upstream, [fromZod]).error.status).toBe(410);
    expect(mappedError(upstream, [fromZod]).mapper).toBeUndefined();
  });
  it("a mapper is asked before the built-in rules (an SDK's 401 becomes the team's 502)", () => {
    const sdk = Object.assign(new Error("bad key"), { status: 401 });
    const toBadGateway: ErrorMapper = (err) =>
      err === sdk ? new HttpError(502, undefined, { cause: err }) : undefined;
    expect(mappedError(sdk, [toBadGateway]).error.status).toBe(502);
  });
  it("a mapper returning a promise → 500, invalid (mappers are synchronous)", () => {
    const out = mappedError(zod, [(async () => HttpError.badRequest()) as unknown as ErrorMapper]);
    expect(out.error.status).toBe(500);
    expect(out.mapper).toEqual({ index: 0, outcome: "invalid" });
    expect((out.logged as Error).message).toMatch(/returned a promise/);
    expect((out.logged as Error).cause).toBe(zod);
  });
  it.each([null, undefined, "oops", 7])("thrown %j reaches the mappers safely", (thrown) => {
    expect(mappedError(thrown, [fromZod, fromJose, fromPostgres]).error.status).toBe(500);
  });
});

afterAll(() => {
  lines.length = 0;
});
