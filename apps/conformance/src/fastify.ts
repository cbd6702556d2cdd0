import { auth, requireScopes } from "@svc/auth/fastify";
import { errorPlugin, fastifyErrorHandler } from "@svc/errors/fastify";
import { allowedHosts, baseUrl, hrefFor } from "@svc/hal/fastify";
import { idempotency } from "@svc/idempotency/fastify";
import { requestState } from "@svc/kernel";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { crossOrigin, parseBody } from "@svc/negotiate/fastify";
import { rateLimit, rateLimitHook } from "@svc/ratelimit/fastify";
import { soap } from "@svc/soap-envelope/fastify";
import { versionedPath } from "@svc/versioning/fastify";
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import {
  authOptions,
  BODY,
  CORS,
  createService,
  HOSTS,
  LIMIT,
  PRINCIPAL_LIMIT,
  READ_SCOPE,
  SOAP_PATH,
  TRUST,
} from "./service.js";
import { soapOptions } from "./soap.js";
import { ERRORS } from "./soap-service.js";

type Params = { id: string };

/**
 * The composition on Fastify: the pipeline's `rewriteUrl` and Fastify's own `trustProxy`, the
 * plugins registered on the root in the order the other compositions mount them; `errorPlugin`
 * answers 404, 405 and `OPTIONS` from Fastify's router.
 */
export async function fastifyApp(): Promise<FastifyInstance> {
  const service = createService();
  const svc = fastifyAdapter(service.pipeline);
  const keys = { idempotency: idempotency(service.idempotencyOptions) };
  const self = (request: FastifyRequest) =>
    hrefFor(request, versionedPath(request, `/employees/${(request.params as Params).id}`));

  // frameworkErrors: a URL Fastify cannot decode, refused before any route, gets the record too.
  const app = Fastify({
    rewriteUrl: svc.rewriteUrl,
    trustProxy: TRUST,
    frameworkErrors: fastifyErrorHandler(ERRORS),
  });
  await app.register(errorPlugin, ERRORS);
  await app.register(svc.plugin);
  await app.register(crossOrigin, CORS);
  await app.register(rateLimit, LIMIT);
  await app.register(allowedHosts, { hosts: HOSTS });
  await app.register(auth, authOptions());
  await app.register(soap, { ...soapOptions(), prefix: SOAP_PATH });
  await app.register(parseBody, BODY);

  app.get(
    "/employees",
    svc.handle((request) =>
      service.list(request.query as Record<string, unknown>, request.originalUrl, baseUrl(request)),
    ),
  );
  app.post(
    "/employees",
    svc.handle((request) => service.create(request.body, requestState(request).principal?.id)),
  );
  app.get(
    "/employees/:id",
    svc.handle((request, ctx) => service.one((request.params as Params).id, self(request), ctx.version)),
  );
  app.put(
    "/employees/:id",
    svc.handle(async (request, ctx) => {
      const { id } = request.params as Params;
      await svc.preconditions(request, service.current(id, self(request), ctx.version));
      return service.update(id, request.body, self(request), ctx.version);
    }),
  );
  app.post(
    "/orders",
    svc.handle((request) => service.order(request.body, requestState(request).principal?.id), keys),
  );
  app.get(
    "/me",
    { onRequest: [rateLimitHook(PRINCIPAL_LIMIT), requireScopes(READ_SCOPE)] },
    svc.handle((request) => service.me(requestState(request).principal)),
  );
  app.get(
    "/whoami",
    svc.handle((request) => service.whoami(requestState(request))),
  );
  return app;
}
