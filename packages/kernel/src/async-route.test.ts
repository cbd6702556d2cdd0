import { express4, type Listening, listen } from "@svc/test-utils";
import type { NextFunction, Request, Response } from "express";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asyncRoute } from "./express.js";
import { HttpError, isHttpError } from "./http-error.js";

const employees = new Map([["1", { id: "1", name: "Ada" }]]);

function app(make: typeof express) {
  const a = make();
  a.get(
    "/employees/:id",
    asyncRoute(async (req: Request<{ id: string }>, res: Response) => {
      await new Promise((resolve) => setImmediate(resolve));
      const employee = employees.get(req.params.id);
      if (!employee) throw HttpError.notFound(`Employee ${req.params.id} does not exist`);
      res.json(employee);
    }),
  );
  a.get(
    "/sync-throw",
    asyncRoute(() => {
      throw HttpError.badRequest("no");
    }),
  );
  a.get(
    "/reject-empty",
    asyncRoute(() => Promise.reject(undefined)),
  );
  a.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    res
      .status(isHttpError(err) ? err.status : 500)
      .json({ message: err instanceof Error ? err.message : "?" });
  });
  return a;
}

describe.each([
  ["Express 4", express4 as typeof express],
  ["Express 5", express],
])("asyncRoute on %s", (_name, make) => {
  let server: Listening;
  beforeAll(async () => {
    server = await listen(app(make));
  });
  afterAll(() => server.close());

  it("GET /employees/1 → 200", async () => {
    const res = await fetch(`${server.url}/employees/1`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: "1", name: "Ada" });
  });

  it("GET /employees/42 (the async handler throws HttpError.notFound) → 404 from the error handler, the server still up", async () => {
    const res = await fetch(`${server.url}/employees/42`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: "Employee 42 does not exist" });
    expect((await fetch(`${server.url}/employees/1`)).status).toBe(200);
  });

  it("a synchronous throw → the error handler; a promise rejected without a reason → 500", async () => {
    expect((await fetch(`${server.url}/sync-throw`)).status).toBe(400);
    const res = await fetch(`${server.url}/reject-empty`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      message: "The route handler's promise was rejected without a reason",
    });
  });
});

it("asyncRoute(not a function) → TypeError ERR_SVC_KERNEL_HANDLER", () => {
  expect(() => asyncRoute("x" as never)).toThrow(expect.objectContaining({ code: "ERR_SVC_KERNEL_HANDLER" }));
});
