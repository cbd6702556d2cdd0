import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { errorPlugin } from "@svc/errors/fastify";
import { notFoundHandler, onError } from "@svc/errors/fetch";
import { errorResponder } from "@svc/errors/node";
import { HttpError } from "@svc/kernel";
import { honoConnection } from "@svc/kernel/fetch";
import { type SoapEndpointOptions, soapFaults } from "@svc/soap-envelope";
import { soapEndpoint as expressEndpoint } from "@svc/soap-envelope/express";
import { soap } from "@svc/soap-envelope/fastify";
import { soapEndpoint as fetchEndpoint } from "@svc/soap-envelope/fetch";
import { soapEndpoint as nodeEndpoint } from "@svc/soap-envelope/node";
import { FRAMEWORKS, fallbackErrors, type Mounts } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { customerHandlers, expressSoapApp, FIXTURES, silentLogger } from "./helpers.js";

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
 * The frameworks the interop suites serve the endpoint on (`describe.each`): every one; in the
 * `(fastify 5.0)` project, which runs a suite that loads Fastify again on Fastify's floor, Fastify
 * alone, the others being the same there.
 */
export const SERVED_ON = process.env.FASTIFY_FLOOR === "1" ? (["fastify"] as const) : FRAMEWORKS;

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

/**
 * An endpoint at `path` on each framework as a team serves SOAP clients, every error of the path
 * a SOAP fault: the application's one error handler of `@svc/errors` on each (`errorHandler`,
 * `errorResponder`, `errorPlugin`, `onError`) with the `soapFaults` renderer; each trusting the
 * proxy in front (Express's `trust proxy`, Fastify's `trustProxy`, the other adapters'
 * `trustProxy` option). What is not the endpoint's path is a 404 record.
 */
export const faultMounts = (path: string, options: () => SoapEndpointOptions): Mounts => {
  const errors = () => ({ logger: silentLogger, renderers: [soapFaults({ path })] });
  return {
    express: () => expressSoapApp(path, options()),
    node() {
      const endpoint = nodeEndpoint({ ...options(), path, trustProxy: true });
      const sendError = errorResponder(errors());
      return (req: IncomingMessage, res: ServerResponse) => {
        endpoint(req, res).then(
          (answered) => {
            if (!answered) sendError(HttpError.notFound(), req, res);
          },
          (err: unknown) => sendError(err, req, res),
        );
      };
    },
    fastify() {
      const app = Fastify({ trustProxy: true });
      app.register(errorPlugin, errors());
      app.register(soap, { ...options(), prefix: path });
      return app;
    },
    fetch() {
      const endpoint = fetchEndpoint({ ...options(), trustProxy: true });
      const app = new Hono();
      app.all(path, (c) => endpoint(c.req.raw, honoConnection(c)));
      app.notFound(notFoundHandler(errors()));
      app.onError(onError(errors()));
      return app.fetch;
    },
  };
};

/** The customer endpoint at {@link PATH} on each framework, errors through `fallbackErrors`. */
export const soapMounts = (extra: Partial<SoapEndpointOptions> = {}): Mounts =>
  endpointMounts(PATH, () => options(extra));
