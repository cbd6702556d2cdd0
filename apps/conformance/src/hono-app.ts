import { type AuthVariables, authenticate, requireScopes } from "@svc/auth/fetch";
import { allowedMethods, notFoundHandler, onError } from "@svc/errors/fetch";
import { compileTrust } from "@svc/hal";
import { allowedHosts, baseUrl, hrefFor } from "@svc/hal/fetch";
import { idempotency } from "@svc/idempotency/fetch";
import { recordRouteTemplate, requestState } from "@svc/kernel";
import { fetchAdapter, honoConnection } from "@svc/kernel/fetch";
import { crossOrigin, parseBody } from "@svc/negotiate/fetch";
import { rateLimit } from "@svc/ratelimit/fetch";
import { versionedPath } from "@svc/versioning/fetch";
import { type Context, Hono } from "hono";
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
import { ERRORS } from "./soap-service.js";

type Env = { Variables: AuthVariables };

/** The SOAP endpoint on Hono: its route. */
export interface SoapOnHono {
  answer(c: Context): Response | Promise<Response>;
}

/**
 * The composition on Hono, on whatever server runs it: the pipeline's `getPath` and middleware,
 * gates as middleware in the order the other compositions mount them, each package that reads
 * forwarded fields given the trust and the connection (`honoConnection(c)`: what the server hands
 * Hono as `c.env` beside the `Request`, or what `withConnection` was told). `soap` mounts the SOAP
 * endpoint (`hono.ts`, and `runtimes/workerd.ts` with its contract in memory); without it,
 * `SOAP_PATH` is no route.
 */
export function honoComposition(
  soap: ((trustProxy: ReturnType<typeof compileTrust>) => SoapOnHono) | undefined,
): (request: Request, env?: unknown) => Response | Promise<Response> {
  const service = createService();
  const trustProxy = compileTrust(TRUST);
  const svc = fetchAdapter(service.pipeline);
  const route = { idempotency: idempotency(service.idempotencyOptions) };
  const readBody = parseBody(BODY);
  const endpoint = soap?.(trustProxy);
  const by = (c: Context<Env>) => requestState(c.req.raw).principal?.id;
  const self = (c: Context<Env>) =>
    hrefFor(c.req.raw, versionedPath(c, `/employees/${c.req.param("id")}`), {
      info: honoConnection(c),
      trustProxy,
    });

  const app = new Hono<Env>({ getPath: svc.getPath });
  app.use(svc.middleware);
  app.use(crossOrigin(CORS));
  app.use(rateLimit({ ...LIMIT, trustProxy: TRUST }));
  app.use(allowedHosts(HOSTS, { trustProxy }));
  app.use(authenticate(authOptions()));
  if (endpoint !== undefined) app.all(SOAP_PATH, endpoint.answer);

  app.get("/employees", (c) => {
    const url = new URL(c.req.url);
    const origin = baseUrl(c.req.raw, { info: honoConnection(c), trustProxy });
    return svc.respond(c.req.raw, () => service.list(url.searchParams, url.pathname + url.search, origin));
  });
  app.post("/employees", async (c) => {
    const body = await readBody(c.req.raw);
    return svc.respond(c.req.raw, () => service.create(body, by(c)), { body });
  });
  app.all("/employees", allowedMethods(COLLECTION_METHODS));
  app.get("/employees/:id", (c) =>
    svc.respond(c.req.raw, (ctx) => service.one(c.req.param("id"), self(c), ctx.version)),
  );
  app.put("/employees/:id", async (c) => {
    const body = await readBody(c.req.raw);
    const id = c.req.param("id");
    return svc.respond(
      c.req.raw,
      async (ctx) => {
        await svc.preconditions(c.req.raw, service.current(id, self(c), ctx.version));
        return service.update(id, body, self(c), ctx.version);
      },
      { body },
    );
  });
  app.all("/employees/:id", allowedMethods(ITEM_METHODS));
  app.post("/orders", async (c) => {
    const body = await readBody(c.req.raw);
    return svc.respond(c.req.raw, () => service.order(body, by(c)), { route, body });
  });
  app.all("/orders", allowedMethods(ORDER_METHODS));
  app.get("/me", rateLimit({ ...PRINCIPAL_LIMIT, trustProxy: TRUST }), requireScopes(READ_SCOPE), (c) =>
    svc.respond(c.req.raw, () => service.me(requestState(c.req.raw).principal)),
  );
  app.all("/me", allowedMethods(ME_METHODS));
  app.get("/whoami", (c) => {
    // Hono keeps the matched route's template on its own request (`c.req.routePath`).
    recordRouteTemplate(c.req.raw, c.req.routePath);
    return svc.respond(c.req.raw, () => service.whoami(requestState(c.req.raw)));
  });
  app.all("/whoami", allowedMethods(WHOAMI_METHODS));
  // With the endpoint, a refusal in front of it (429, 401) is a fault there (`soapFaults`).
  const errors = endpoint === undefined ? { wwwAuthenticate: ERRORS.wwwAuthenticate } : ERRORS;
  app.notFound(notFoundHandler(errors));
  app.onError(onError(errors));
  return app.fetch;
}
