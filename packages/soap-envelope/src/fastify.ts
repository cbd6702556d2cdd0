/**
 * `@svc/soap-envelope/fastify`: the SOAP endpoint as a Fastify 5 plugin. It reads the request into
 * the core's input ({@link createSoapEndpoint}) and sends the core's response through `reply`; it
 * decides nothing.
 *
 * @packageDocumentation
 */

import {
  type ForwardedHeaders,
  fieldLines,
  requestFacts,
  type TrustHop,
  type UnreadBodyBounds,
} from "@svc/kernel";
import { fastifyView, sendValue } from "@svc/kernel/fastify";
import { settleUnreadBody } from "@svc/kernel/node";
import {
  createSoapEndpoint,
  type SoapEndpoint,
  type SoapEndpointOptions,
  type SoapResponse,
  soapResponseValue,
} from "@svc/soap-envelope";
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from "fastify";
import { type AdapterOptions, splitOptions } from "./binding/adapter-options.js";

/** Options of the {@link soap} plugin: the endpoint's, `trustProxy` and `forwardedHeaders` (and Fastify's `prefix`). */
export type FastifySoapOptions<Operations = never> = SoapEndpointOptions<Operations> & AdapterOptions;

/** What Fastify's `register` takes beside a plugin's own options; not the endpoint's. */
const REGISTER_OPTIONS = ["prefix", "logLevel", "logSerializers"] as const;

/**
 * A SOAP 1.2 and 1.1 endpoint as a Fastify plugin: `app.register(soap, { prefix: "/ws/customer",
 * wsdl, handlers })` serves the prefix itself, every method (the core answers `GET ?wsdl` and
 * `?xsd=`, processes a POST, refuses anything else with 405 and `Allow`). Encapsulated: its
 * content-type parser applies to its own route only, and reads nothing; the core reads the body
 * within the endpoint's size limit and `bodyTimeoutMs`, once the request's fields are accepted
 * (a refused media type, coding or declared length is answered unread). Handler failures are
 * logged with `request.log` unless a `logger` is given; what the core refuses with an `HttpError`
 * goes to Fastify's error handler (`errorPlugin` of `@svc/errors/fastify`), which answers it, and
 * what hooks in front threw for the endpoint's requests, as a SOAP fault with `soapFaults` of the
 * main entry in its `renderers`.
 *
 * @example
 * await app.register(errorPlugin, { renderers: [soapFaults({ path: "/ws/customer" })] });
 * await app.register(rateLimit, { limit: 100, windowMs: 60_000 }); // its 429 a fault on /ws/customer
 * await app.register(soap, { prefix: "/ws/customer", wsdl: "contracts/customer.wsdl", handlers });
 * @see https://www.w3.org/TR/soap12-part2/#soapinhttp
 */
export const soap: FastifyPluginCallback<FastifySoapOptions> = function svcSoap(
  instance: FastifyInstance,
  options: FastifySoapOptions,
  done: (err?: Error) => void,
): void {
  let endpoint: SoapEndpoint;
  /** The `trustProxy` option compiled; none given: Fastify's own `trustProxy` (`fastifyView`). */
  let trust: TrustHop | undefined;
  let family: ForwardedHeaders;
  try {
    const split = splitOptions(options, REGISTER_OPTIONS);
    trust = split.own.trustProxy === undefined ? undefined : split.trust;
    family = split.family;
    endpoint = createSoapEndpoint(split.soap);
  } catch (refused) {
    // A refused option fails `register` (and so `ready`/`listen`) with its coded TypeError.
    done(refused as Error);
    return;
  }
  // No body is read by Fastify: the core reads the request's own stream, once the checks on
  // its fields (method, Host, media type, coding, declared length, preconditions) let it through,
  // as on every other framework.
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser("*", (_request: FastifyRequest, _payload: unknown, parsed) =>
    parsed(null, undefined),
  );
  instance.route({
    method: instance.supportedMethods,
    url: "/",
    bodyLimit: endpoint.maxBytes,
    exposeHeadRoute: false,
    handler: async function svcSoapRoute(request: FastifyRequest, reply: FastifyReply) {
      const raw = request.raw;
      const response = await endpoint.answer({
        method: raw.method ?? request.method,
        target: raw.url ?? request.url,
        headers: raw.headers,
        host: fieldLines(raw.rawHeaders, "host"),
        httpVersion: raw.httpVersion,
        encrypted: (raw.socket as { encrypted?: boolean }).encrypted === true,
        facts:
          trust === undefined
            ? requestFacts(fastifyView(request), undefined, family)
            : requestFacts(raw, trust, family),
        body: raw,
        http: raw,
        native: request,
        logger: request.log,
      });
      return sendSoapResponse(reply, response, endpoint.unreadBody);
    },
  });
  done();
};

/**
 * The core's response through `reply`, sent by the kernel (`sendValue`): its status, its fields
 * over those set in front, `Vary` appended. A message refused before it was read whole follows
 * the kernel's refused-body policy, with the endpoint's `unreadBody` bounds.
 */
function sendSoapResponse(
  reply: FastifyReply,
  response: SoapResponse,
  unreadBody: UnreadBodyBounds,
): FastifyReply {
  const raw = reply.request.raw;
  settleUnreadBody(raw, reply.raw, unreadBody);
  return sendValue(reply, soapResponseValue(response), raw.method ?? reply.request.method);
}
(soap as unknown as Record<symbol, unknown>)[Symbol.for("fastify.display-name")] = "@svc/soap-envelope";
