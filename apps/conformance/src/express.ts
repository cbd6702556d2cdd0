import type { RequestListener } from "node:http";
import { authenticate, requireScopes } from "@svc/auth/express";
import { allowedMethods, errorHandler, notFound } from "@svc/errors/express";
import { allowedHosts, baseUrl, hrefFor } from "@svc/hal/express";
import { idempotency } from "@svc/idempotency/express";
import { requestState } from "@svc/kernel";
import { chain, expressAdapter } from "@svc/kernel/express";
import { crossOrigin, parseBody } from "@svc/negotiate/express";
import { rateLimit } from "@svc/ratelimit/express";
import { soapEndpoint } from "@svc/soap-envelope/express";
import { versionedPath } from "@svc/versioning/express";
import type express from "express";
import {
  authOptions,
  BODY,
  COLLECTION_METHODS,
  CORS,
  createService,
  HOSTS,
  ITEM_METHODS,
  LIMIT,
  ME_METHODS,
  ORDER_METHODS,
  PRINCIPAL_LIMIT,
  READ_SCOPE,
  SOAP_PATH,
  TRUST,
  WHOAMI_METHODS,
} from "./service.js";
import { soapOptions } from "./soap.js";
import { ERRORS } from "./soap-service.js";

type Req = express.Request;

/** Who sent `req`, as the packages decided (`requestState`), never a property of Express's request. */
const principalOf = (req: Req) => requestState(req).principal;

/** How the Express composition's router compares paths. */
export interface ExpressRouting {
  /**
   * Express's own defaults (`case sensitive routing` and `strict routing` off): `/Orders` and
   * `/orders/` are `/orders`. Without it the routes match exactly, as Fastify's and Hono's do.
   * @see https://expressjs.com/en/api.html#app.settings.table
   */
  folding?: boolean;
}

/**
 * The composition on Express (`express` is Express 5's or Express 4's module): gates in front as
 * middleware, the pipeline's `prepare` before the routes, the error record last.
 */
export function expressApp(framework: typeof express, routing: ExpressRouting = {}): RequestListener {
  const service = createService();
  const svc = expressAdapter(service.pipeline);
  const keys = { idempotency: idempotency(service.idempotencyOptions) };
  const self = (req: Req) => hrefFor(req, versionedPath(req, `/employees/${req.params.id}`));

  const app = framework();
  app.disable("x-powered-by");
  app.set("trust proxy", TRUST);
  // Routes match as Fastify's and Hono's routers match them: case-sensitive, `/x/` is not `/x`.
  if (routing.folding !== true) {
    app.set("case sensitive routing", true);
    app.set("strict routing", true);
  }
  // The version first: its fields are on every response, a gate's refusal included. Every
  // request passes these, so they are one router layer (@svc/kernel's README, "Express: one layer
  // for the middleware every request passes").
  app.use(
    chain(svc.prepare, crossOrigin(CORS), rateLimit(LIMIT), allowedHosts(HOSTS), authenticate(authOptions())),
  );
  app.use(SOAP_PATH, soapEndpoint(soapOptions()));
  app.use(parseBody(BODY));

  app
    .route("/employees")
    .get(
      svc.handle((req: Req) =>
        service.list(req.query as Record<string, unknown>, req.originalUrl, baseUrl(req)),
      ),
    )
    .post(svc.handle((req: Req) => service.create(req.body, principalOf(req)?.id)))
    .all(allowedMethods(COLLECTION_METHODS));
  app
    .route("/employees/:id")
    .get(svc.handle((req: Req, ctx) => service.one(req.params.id as string, self(req), ctx.version)))
    .put(
      svc.handle(async (req: Req, ctx) => {
        await svc.preconditions(req, service.current(req.params.id as string, self(req), ctx.version));
        return service.update(req.params.id as string, req.body, self(req), ctx.version);
      }),
    )
    .all(allowedMethods(ITEM_METHODS));
  app
    .route("/orders")
    .post(svc.handle((req: Req) => service.order(req.body, principalOf(req)?.id), keys))
    .all(allowedMethods(ORDER_METHODS));
  app
    .route("/me")
    .get(
      rateLimit(PRINCIPAL_LIMIT),
      requireScopes(READ_SCOPE),
      svc.handle((req: Req) => service.me(principalOf(req))),
    )
    .all(allowedMethods(ME_METHODS));
  app
    .route("/whoami")
    .get(svc.handle((req: Req) => service.whoami(requestState(req))))
    .all(allowedMethods(WHOAMI_METHODS));
  app.use(notFound());
  // A refusal in front of the SOAP endpoint (429, 401) is a fault there (`soapFaults`).
  app.use(errorHandler(ERRORS));
  return app as unknown as RequestListener;
}
