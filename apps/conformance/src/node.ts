import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { authenticate, requireScopes } from "@svc/auth/node";
import { errorResponder, methodNotAllowedError, notFoundError } from "@svc/errors/node";
import { compileTrust } from "@svc/hal";
import { allowedHosts, baseUrl, hrefFor } from "@svc/hal/node";
import { idempotency } from "@svc/idempotency/node";
import { HttpError, recordRouteTemplate, requestState } from "@svc/kernel";
import { nodeAdapter } from "@svc/kernel/node";
import { crossOrigin, parseBody } from "@svc/negotiate/node";
import { rateLimit } from "@svc/ratelimit/node";
import { soapEndpoint } from "@svc/soap-envelope/node";
import { versionedPath } from "@svc/versioning/node";
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

/**
 * The composition on `node:http`: no router and no framework setting, so each check is awaited in
 * the server's own dispatch, in the order the other compositions mount them, and each package that
 * reads forwarded fields is given the trust.
 */
export function nodeApp(): RequestListener {
  const service = createService();
  const trustProxy = compileTrust(TRUST);
  const svc = nodeAdapter(service.pipeline);
  const keys = { idempotency: idempotency(service.idempotencyOptions) };
  const cors = crossOrigin(CORS);
  const limit = rateLimit({ ...LIMIT, trustProxy: TRUST });
  const limitPrincipal = rateLimit({ ...PRINCIPAL_LIMIT, trustProxy: TRUST });
  const checkHost = allowedHosts(HOSTS, { trustProxy });
  const auth = authenticate(authOptions());
  const canRead = requireScopes(READ_SCOPE);
  const soap = soapEndpoint({ ...soapOptions(), path: SOAP_PATH, trustProxy });
  const readBody = parseBody(BODY);
  // A refusal in front of the SOAP endpoint (429, 401) is a fault there (`soapFaults`).
  const sendError = errorResponder(ERRORS);

  /** OPTIONS → 204 with `Allow`; another method a 405 with the same `Allow`, as `allowedMethods` on Express. */
  const allowed = (req: IncomingMessage, res: ServerResponse, methods: readonly string[]) => {
    const all = [...methods, "OPTIONS"];
    if (req.method !== "OPTIONS") throw methodNotAllowedError(req, all);
    res.writeHead(204, { Allow: all.join(", ") }).end();
  };
  const body = async (req: IncomingMessage, res: ServerResponse) => {
    const value = await readBody(req, res);
    Object.assign(req, { body: value });
    return value;
  };

  const dispatch = async (req: IncomingMessage, res: ServerResponse) => {
    const ready = await svc.prepare(req, res);
    if (await cors(req, res)) return;
    await limit(req, res);
    await checkHost(req, res);
    const context = await auth(req);
    if (await soap(req, res)) return;
    const by = requestState(req).principal?.id;
    const target = req.url ?? "/";
    const query = target.includes("?") ? target.slice(target.indexOf("?") + 1) : "";
    const { path } = ready;
    const item = /^\/employees\/([^/]+)$/.exec(path);
    if (path === "/employees") {
      if (req.method === "GET" || req.method === "HEAD")
        return svc.respond(req, res, () => service.list(query, target, baseUrl(req, { trustProxy })));
      if (req.method === "POST") {
        const value = await body(req, res);
        return svc.respond(req, res, () => service.create(value, by));
      }
      return allowed(req, res, COLLECTION_METHODS);
    }
    if (item !== null) {
      const id = decoded(item[1] as string);
      const self = () => hrefFor(req, versionedPath(ready, `/employees/${id}`), { trustProxy });
      if (req.method === "GET" || req.method === "HEAD")
        return svc.respond(req, res, (ctx) => service.one(id, self(), ctx.version));
      if (req.method === "PUT") {
        const value = await body(req, res);
        return svc.respond(req, res, async (ctx) => {
          await svc.preconditions(req, service.current(id, self(), ctx.version));
          return service.update(id, value, self(), ctx.version);
        });
      }
      return allowed(req, res, ITEM_METHODS);
    }
    if (path === "/orders") {
      if (req.method !== "POST") return allowed(req, res, ORDER_METHODS);
      const value = await body(req, res);
      return svc.respond(req, res, () => service.order(value, by), keys);
    }
    if (path === "/me") {
      if (req.method !== "GET" && req.method !== "HEAD") return allowed(req, res, ME_METHODS);
      await limitPrincipal(req, res);
      await canRead(context, req);
      return svc.respond(req, res, () => service.me(requestState(req).principal));
    }
    if (path === "/whoami") {
      if (req.method !== "GET" && req.method !== "HEAD") return allowed(req, res, WHOAMI_METHODS);
      // This dispatch is the router: it tells the kernel which route it matched.
      recordRouteTemplate(req, "/whoami");
      return svc.respond(req, res, () => service.whoami(requestState(req)));
    }
    throw notFoundError(req);
  };

  return (req, res) => {
    dispatch(req, res).catch((err: unknown) => sendError(err, req, res));
  };
}

/** A path segment decoded, as a router decodes a parameter; a malformed escape (`%ZZ`) is a 400. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw HttpError.badRequest("Bad Request");
  }
}
