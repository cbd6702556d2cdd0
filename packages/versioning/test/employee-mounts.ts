import type { IncomingMessage, ServerResponse } from "node:http";
import { type ApiVersion, HttpError, type Pipeline } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { fetchAdapter } from "@svc/kernel/fetch";
import { nodeAdapter } from "@svc/kernel/node";
import {
  fallbackErrors,
  fastifyPipelineApp,
  honoPipelineApp,
  type Mounts,
} from "@svc/test-utils/conformance";
import type express from "express";

const employee = (version: ApiVersion | undefined) => ({ id: 7, version });

/**
 * `GET /employees/7` answering `{ id: 7, version }` under `pipeline` on every framework, each
 * server recording in `seen` the request object the pipeline is handed. Express is given by the
 * test file (which imports it itself, so that it also runs on Express 4).
 */
export function employeeMounts(
  expressModule: typeof express,
  pipeline: () => Pipeline,
  seen: object[] = [],
): Mounts {
  return {
    express() {
      const svc = expressAdapter(pipeline());
      const app = expressModule();
      app.use((req, _res, next) => {
        seen.push(req);
        next();
      });
      app.use(svc.prepare);
      app.get(
        "/employees/7",
        svc.handle((_req: express.Request, ctx) => employee(ctx.version)),
      );
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const svc = nodeAdapter(pipeline());
      return (req: IncomingMessage, res: ServerResponse) => {
        seen.push(req);
        const run = async () => {
          const ready = await svc.prepare(req, res);
          if (ready.path.split("?")[0] !== "/employees/7") throw HttpError.notFound();
          return svc.respond(req, res, (ctx) => employee(ctx.version));
        };
        run().catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    fastify() {
      const svc = fastifyAdapter(pipeline());
      const app = fastifyPipelineApp(svc);
      app.server.on("request", (req: IncomingMessage) => seen.push(req));
      app.get(
        "/employees/7",
        svc.handle((_request, ctx) => employee(ctx.version)),
      );
      return app;
    },
    fetch() {
      const svc = fetchAdapter(pipeline());
      const app = honoPipelineApp(svc);
      app.get("/employees/7", (c) => svc.respond(c.req.raw, (ctx) => employee(ctx.version)));
      return (request: Request) => {
        seen.push(request);
        return app.fetch(request);
      };
    },
  };
}
