import { Readable } from "node:stream";
import { createGzip, gzipSync } from "node:zlib";
import { HttpError } from "@svc/errors";
import { errorHandler } from "@svc/errors/express";
import {
  type Coder,
  createPipeline,
  fieldText,
  type HandlerContext,
  type PipelineOptions,
  recordAuthentication,
  reply,
} from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import express from "express";
import { idempotency } from "../src/express.js";
import type { IdempotencyKeyClaim, IdempotencyOptions, IdempotencyStep } from "../src/step.js";

export const PROBLEM_BASE = "https://errors.example/";

/**
 * A content coding step for tests: gzip when the request's `Accept-Encoding` names it (a plain
 * reading, enough for tests), for any response with a `Content-Type`.
 */
export const gzipCoding: Coder = {
  preflight() {},
  choose(request, value) {
    if (value.fields["content-encoding"] != null || fieldText(value.fields["content-type"]) === undefined)
      return "identity";
    value.vary.includes("Accept-Encoding") || value.vary.push("Accept-Encoding");
    return /\bgzip\b(?!;q=0\b)/.test(String(request.view.headers["accept-encoding"] ?? ""))
      ? "gzip"
      : "identity";
  },
  encode(_coding, body) {
    if (body instanceof Uint8Array) return gzipSync(body);
    return (body as Readable).pipe(createGzip());
  },
};

export interface StepApp {
  app: express.Express;
  /** Handler executions, by route. */
  calls: Record<string, number>;
}

/** The claim the step hands a handler, as the step's own type. */
export const keyClaim = (context: HandlerContext) => context.claim as IdempotencyKeyClaim | undefined;

/**
 * An Express app whose routes run through a pipeline with the idempotency step, answering in every
 * way a handler can: data, bytes, a stream, nothing, failures. The same routes as the middleware's
 * tests had, so the same assertions hold.
 */
export function buildStepApp(
  options: IdempotencyOptions,
  hooks: {
    before?: (n: number) => Promise<void>;
    /** Sees every error on its way to the error handler (the step's 409 for a duplicate). */
    onError?: (err: unknown) => void;
    pipeline?: PipelineOptions;
    express?: typeof express;
  } = {},
): StepApp {
  const calls: Record<string, number> = {};
  const count = (route: string) => {
    calls[route] = (calls[route] ?? 0) + 1;
    return calls[route];
  };
  const framework = hooks.express ?? express;
  const app = framework() as express.Express;
  // Stands in for the auth layer: the principal it would record for the request.
  app.use((req, _res, next) => {
    const user = req.get("x-user");
    if (user) recordAuthentication(req, { id: user });
    next();
  });
  const svc = expressAdapter(createPipeline(hooks.pipeline ?? {}));
  const keys = { idempotency: idempotency(options) };
  const json = framework.json();

  app.post(
    "/orders",
    json,
    svc.handle(async (req: express.Request) => {
      const n = count("orders");
      await hooks.before?.(n);
      return reply(
        { id: n, echo: req.body },
        {
          status: 201,
          headers: {
            location: `/orders/${n}`,
            "set-cookie": `session=s${n}; Path=/`,
            "x-ratelimit-remaining": String(100 - n),
          },
        },
      );
    }, keys),
  );
  app.patch(
    "/orders/:id",
    json,
    svc.handle((req: express.Request) => {
      const n = count("patch");
      return reply({ id: req.params.id, n, echo: req.body });
    }, keys),
  );
  app.post(
    "/write",
    json,
    svc.handle(() => {
      const n = count("write");
      return reply.bytes(`alpha-beta-gamma-${n}`, "text/plain; charset=utf-8", {
        status: 201,
        headers: { location: `/w/${n}` },
      });
    }, keys),
  );
  app.post(
    "/stream",
    json,
    svc.handle(() => {
      const n = count("stream");
      const parts = Array.from({ length: 64 }, (_, i) => Buffer.alloc(4096, (i + n) % 256));
      return reply.bytes(Readable.from(parts), "application/octet-stream", { status: 201 });
    }, keys),
  );
  app.post(
    "/big",
    json,
    svc.handle((req: express.Request) => {
      count("big");
      const size = Number((req.body as { size?: number }).size ?? 0);
      return reply.bytes("x".repeat(size), "text/plain");
    }, keys),
  );
  app.post(
    "/raw",
    framework.raw({ type: "*/*" }),
    svc.handle((req: express.Request) => {
      count("raw");
      return reply({ bytes: (req.body as Buffer).length }, { status: 201 });
    }, keys),
  );
  app.post(
    "/flaky",
    json,
    svc.handle(() => {
      const n = count("flaky");
      if (n === 1) throw new Error("database timeout");
      return reply({ n }, { status: 201 });
    }, keys),
  );
  app.post(
    "/broken",
    json,
    svc.handle(() => {
      const n = count("broken");
      return reply({ n }, { status: n === 1 ? 500 : 201 });
    }, keys),
  );
  app.post(
    "/reject",
    json,
    svc.handle((_req, context) => {
      const n = count("reject");
      keyClaim(context)?.markStarted();
      return reply({ n, problem: "quantity must be positive" }, { status: 400 });
    }, keys),
  );
  // A validating middleware in front of the handler: its 400 goes through next(err).
  app.post(
    "/checked",
    json,
    (req, _res, next) => {
      const qty = (req.body as { qty?: unknown }).qty;
      next(
        typeof qty === "number" ? undefined : new HttpError(400, "qty is required", { code: "invalid_body" }),
      );
    },
    svc.handle(() => {
      const n = count("checked");
      return reply({ n }, { status: 201 });
    }, keys),
  );
  // Validates its input before it starts: a 400 here never reached the work.
  app.post(
    "/validate",
    json,
    svc.handle((req: express.Request, context) => {
      const qty = (req.body as { qty?: unknown }).qty;
      if (typeof qty !== "number" || qty <= 0) {
        return reply(
          { problem: "qty must be a positive number", padding: "x".repeat(4096) },
          { status: 400 },
        );
      }
      keyClaim(context)?.markStarted();
      const n = count("validate");
      return reply({ n, qty }, { status: 201 });
    }, keys),
  );
  app.post(
    "/nobody",
    svc.handle(() => {
      count("nobody");
      return reply.empty();
    }, keys),
  );
  app.get(
    "/orders",
    svc.handle(() => {
      count("get");
      return reply([]);
    }, keys),
  );
  app.use((err: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) => {
    hooks.onError?.(err);
    next(err);
  });
  app.use(errorHandler({ problemTypeBase: PROBLEM_BASE, logger: { error() {} } }));
  return { app, calls };
}

/**
 * An Express route handler that runs `handler` through a plain pipeline (JSON) with the step
 * (given, or made of `options`): what a route looks like under the step.
 */
export function keyed(
  step: IdempotencyOptions | IdempotencyStep,
  handler: (req: express.Request, context: HandlerContext) => unknown,
): express.RequestHandler {
  const idempotencyStep =
    typeof (step as IdempotencyStep).begin === "function"
      ? (step as IdempotencyStep)
      : idempotency(step as IdempotencyOptions);
  return expressAdapter(createPipeline()).handle(handler, {
    idempotency: idempotencyStep,
  }) as unknown as express.RequestHandler;
}
