import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { HttpError } from "@svc/kernel";
import { honoConnection } from "@svc/kernel/fetch";
import type { SoapEndpointOptions } from "@svc/soap-envelope";
import { soapEndpoint as expressEndpoint } from "@svc/soap-envelope/express";
import { soap } from "@svc/soap-envelope/fastify";
import { soapEndpoint as fetchEndpoint } from "@svc/soap-envelope/fetch";
import { soapEndpoint as nodeEndpoint } from "@svc/soap-envelope/node";
import { fallbackErrors, type Mounts } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { customerHandlers, FIXTURES, silentLogger } from "./helpers.js";

/** The contract with a SOAP 1.2 and a SOAP 1.1 binding of the same port type. */
const options = (extra: Partial<SoapEndpointOptions>) => ({
  wsdl: join(FIXTURES, "customer-both.wsdl"),
  handlers: customerHandlers(),
  logger: silentLogger,
  limits: { maxBytes: 8192 },
  ...extra,
});

export const PATH = "/ws/customer";

/**
 * An endpoint at `path` on each framework, built from `options`, errors through `fallbackErrors`.
 */
export const endpointMounts = (path: string, options: () => SoapEndpointOptions): Mounts => ({
  express() {
    const app = express();
    app.disable("x-powered-by");
    app.use(path, expressEndpoint(options()));
    app.use(fallbackErrors.express);
    return app;
  },
  node() {
    const endpoint = nodeEndpoint({ ...options(), path });
    return (req: IncomingMessage, res: ServerResponse) => {
      endpoint(req, res).then(
        (answered) => {
          if (!answered) fallbackErrors.node(HttpError.notFound(), req, res);
        },
        (err: unknown) => fallbackErrors.node(err, req, res),
      );
    };
  },
  fastify() {
    const app = Fastify();
    app.register(soap, { ...options(), prefix: path });
    app.setErrorHandler(fallbackErrors.fastify);
    return app;
  },
  fetch() {
    const endpoint = fetchEndpoint(options());
    const app = new Hono();
    app.all(path, (c) => endpoint(c.req.raw, honoConnection(c)));
    app.onError((err, c) => fallbackErrors.fetch(err, c));
    return app.fetch;
  },
});

/** The customer endpoint at {@link PATH} on each framework, errors through `fallbackErrors`. */
export const soapMounts = (extra: Partial<SoapEndpointOptions> = {}): Mounts =>
  endpointMounts(PATH, () => options(extra));
