/**
 * `@svc/negotiate/fastify`: the package on Fastify 5, as plugins. The pipeline steps
 * (`representations`, `compression`) run in `fastifyAdapter` of `@svc/kernel/fastify`; the
 * decisions are the main entry's (`bodyReader`, `crossOriginGate`).
 *
 * @packageDocumentation
 */
import type { IncomingMessage } from "node:http";
import { exchangeOf } from "@svc/kernel";
import { appWide, fastifyGate } from "@svc/kernel/fastify";
import { pluginOptions, resolveUnreadBody } from "@svc/kernel/internal";
import { settleUnreadBody } from "@svc/kernel/node";
import { bodyReader, type CrossOriginOptions, crossOriginGate, type ParseBodyOptions } from "@svc/negotiate";
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";

export type { CrossOriginOptions, ParseBodyOptions, XmlBodySchema } from "@svc/negotiate";

/**
 * Body parsing as a Fastify plugin: `app.register(parseBody, options)`. It replaces Fastify's own
 * content-type parsers (its JSON and text ones) in the context it is registered in (and the
 * contexts inside it: it is registered app-wide there, as `@fastify/formbody` is) by one catch-all
 * parser that reads through `bodyReader(options)`, so `request.body` and the refusals (415 with
 * `Accept-Post`, 413, 400, 408, as `HttpError`s for the error handler) are the ones the Express,
 * `node:http` and Fetch adapters give. A type outside `types` is left unread (`request.body`
 * undefined) unless `others: "refuse"`; a parser registered for it inside the context takes it.
 * A refusal that left part of the body unread follows the kernel's refused-body policy (`unreadBody`).
 *
 * @example
 * await app.register(parseBody, { limit: "64kb", others: "refuse" });
 * app.post("/orders", async (request) => ({ got: request.body }));
 * @see https://fastify.dev/docs/latest/Reference/ContentTypeParser/
 */
export const parseBody: FastifyPluginCallback<ParseBodyOptions> = appWide(
  "@svc/negotiate/parse-body",
  (app: FastifyInstance, options: ParseBodyOptions, done: (err?: Error) => void) => {
    const bodyOptions = pluginOptions(options);
    const read = bodyReader(bodyOptions);
    const unreadBody = resolveUnreadBody("negotiate", bodyOptions.unreadBody, "parseBody");
    const closing = new WeakSet<IncomingMessage>();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", async (request: FastifyRequest, payload: IncomingMessage) => {
      try {
        const value = await read(request.raw, payload, request);
        if (value !== undefined) exchangeOf(request.raw).body = { value };
        return value;
      } catch (err) {
        closing.add(request.raw);
        throw err;
      }
    });
    // A callback hook: every response of the context passes it, and an async one costs each a promise.
    // Before the head is written (the error handler may have settled it already: that stands).
    app.addHook("onSend", (request: FastifyRequest, reply: FastifyReply, payload: unknown, next) => {
      if (closing.has(request.raw)) settleUnreadBody(request.raw, reply.raw, unreadBody);
      next(null, payload);
    });
    done();
  },
);

/**
 * CORS as a Fastify plugin: `app.register(crossOrigin, { origins })`, an `onRequest` hook
 * (`fastifyGate` of `crossOriginGate`) for the context it is registered in and those inside it
 * (app-wide there, as `@fastify/cors` is). A preflight is answered 204 before routing, a route for
 * its path or not; any other request gets its CORS fields on the reply.
 *
 * @example await app.register(crossOrigin, { origins: ["https://app.example"], maxAge: 600 });
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 */
export const crossOrigin: FastifyPluginCallback<CrossOriginOptions> = appWide(
  "@svc/negotiate/cross-origin",
  (app: FastifyInstance, options: CrossOriginOptions, done: (err?: Error) => void) => {
    app.addHook("onRequest", fastifyGate(crossOriginGate(pluginOptions(options))));
    done();
  },
);
