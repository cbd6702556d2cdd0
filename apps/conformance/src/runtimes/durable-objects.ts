import { onError } from "@svc/errors/fetch";
import { DurableObjectStore as IdempotencyStore } from "@svc/idempotency/durable-object";
import { idempotency } from "@svc/idempotency/fetch";
import { createPipeline, reply } from "@svc/kernel";
import { fetchAdapter } from "@svc/kernel/fetch";
import { representations } from "@svc/negotiate";
import { type DurableObjectNamespaceLike, DurableObjectStore } from "@svc/ratelimit/durable-object";
import { rateLimit } from "@svc/ratelimit/fetch";
import { Hono } from "hono";

/**
 * The Durable Object stores as a Worker composes them (the READMEs' "Cloudflare Workers"), run by
 * workerd through miniflare with the bindings `RATE_LIMIT` (class `RateLimitObject`),
 * `IDEMPOTENCY` (`IdempotencyObject`) and `BROKEN` (`BrokenObject`, whose every call fails: an
 * object that is unreachable or whose storage failed). `durable-objects.test.ts` sends the
 * requests. The client is the address in `X-Client-IP`, so each case counts in its own bucket.
 */
export { IdempotencyObject } from "@svc/idempotency/durable-object";
export { RateLimitObject } from "@svc/ratelimit/durable-object";

/** An object whose every call fails, as one whose storage is down. */
export class BrokenObject {
  fetch(): Response {
    throw new Error("storage unavailable");
  }
}

interface Env {
  RATE_LIMIT: DurableObjectNamespaceLike;
  IDEMPOTENCY: DurableObjectNamespaceLike;
  BROKEN: DurableObjectNamespaceLike;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function build(env: Env): Hono {
  const quiet = { warn() {} };
  const limited = (
    limit: number,
    windowMs: number,
    namespace: DurableObjectNamespaceLike,
    failMode: "open" | "closed" = "closed",
  ) =>
    rateLimit({
      limit,
      windowMs,
      failMode,
      logger: quiet,
      clientAddressHeader: "x-client-ip",
      store: new DurableObjectStore({ namespace, prefix: `rl:${limit}:${windowMs}:` }),
    });
  // The negotiated representations: the kernel's default JSON one names Node's Buffer, absent
  // from workerd without nodejs_compat.
  const svc = fetchAdapter(createPipeline({ representations: representations() }));
  const keyed = (namespace: DurableObjectNamespaceLike, retentionMs = 86_400_000) => ({
    idempotency: idempotency({
      store: new IdempotencyStore({ namespace }),
      required: true,
      retentionMs,
      logger: quiet,
      scope: (request) => request.headers.get("x-client-ip") ?? "anonymous",
    }),
  });
  const app = new Hono({ getPath: svc.getPath });
  app.use(svc.middleware);
  app.get("/limited", limited(10, 60_000, env.RATE_LIMIT), (c) => c.text("ok"));
  app.get("/window", limited(2, 2000, env.RATE_LIMIT), (c) => c.text("ok"));
  app.get("/broken-closed", limited(10, 60_000, env.BROKEN), (c) => c.text("ok"));
  app.get("/broken-open", limited(10, 60_000, env.BROKEN, "open"), (c) => c.text("ok"));
  let runs = 0;
  const routes: [string, ReturnType<typeof keyed>, number][] = [
    ["/orders", keyed(env.IDEMPOTENCY), 0],
    ["/slow", keyed(env.IDEMPOTENCY), 1500],
    ["/short", keyed(env.IDEMPOTENCY, 1000), 0],
    ["/broken", keyed(env.BROKEN), 0],
  ];
  for (const [path, route, delay] of routes) {
    app.post(path, async (c) => {
      const body: unknown = await c.req.json();
      return svc.respond(
        c.req.raw,
        async () => {
          runs += 1;
          const run = runs;
          if (delay > 0) await sleep(delay);
          return reply({ run, order: body }, { status: 201 });
        },
        { route, body },
      );
    });
  }
  app.onError(onError({ logger: { error() {} } }));
  return app;
}

let app: Hono | undefined;

export default {
  fetch(request: Request, env: Env): Response | Promise<Response> {
    app ??= build(env);
    return app.fetch(request, env);
  },
};
