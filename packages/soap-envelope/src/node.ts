/**
 * `@svc/soap-envelope/node`: the SOAP endpoint on plain `node:http`. It reads the request into
 * the core's input ({@link createSoapEndpoint}) and writes the core's response; it decides nothing.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { fieldLines, requestFacts } from "@svc/kernel";
import { settleUnreadBody, writeValue } from "@svc/kernel/node";
import {
  createSoapEndpoint,
  type SoapEndpointOptions,
  type SoapService,
  soapResponseValue,
} from "@svc/soap-envelope";
import { type AdapterOptions, splitOptions } from "./binding/adapter-options.js";
import { targetPath } from "./binding/request-target.js";
import { optionError } from "./options.js";

/** Options of the `node:http` {@link soapEndpoint}: the endpoint's, its path, `trustProxy`. */
export type NodeSoapOptions<Operations = never> = SoapEndpointOptions<Operations> &
  AdapterOptions & {
    /**
     * The endpoint's path (`/ws/customer`): a request to another path is not answered (the
     * handler resolves `false`). A trailing slash is the same path.
     * @default undefined (every request is the endpoint's)
     */
    path?: string;
  };

/**
 * The endpoint as a `node:http` handler: resolves `true` once it has answered, `false` when the
 * request's path is not the endpoint's (nothing written). Rejects with an `HttpError` (a `Host`
 * that is no authority on `?wsdl`, an unknown `?xsd=`, a failed `If-Match`) for the
 * application's error handling: `errorResponder` of `@svc/errors/node`, which answers the
 * endpoint's errors as SOAP faults with `soapFaults` of the main entry in its `renderers`.
 */
export interface NodeSoapHandler {
  (req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** The compiled service (contract and message processor). */
  service: SoapService;
}

/**
 * A SOAP 1.2 and 1.1 endpoint on `node:http`: POSTed messages to the contract's handlers, `GET
 * ?wsdl` and `?xsd=` the contract with its address rewritten to the request's host, every other
 * method 405, as `soapEndpoint` of the main entry does on Express.
 *
 * @example
 * const soap = soapEndpoint({ path: "/ws/customer", wsdl: "contracts/customer.wsdl", handlers });
 * const sendError = errorResponder({ renderers: [soapFaults({ path: "/ws/customer" })] });
 * createServer(async (req, res) => {
 *   try {
 *     await limit(req, res); // a rate limit in front: its 429 is answered as a fault too
 *     if (!(await soap(req, res))) throw HttpError.notFound();
 *   } catch (err) {
 *     sendError(err, req, res);
 *   }
 * });
 * @see https://www.w3.org/TR/soap12-part2/#soapinhttp
 */
export function soapEndpoint<Operations = never>(
  options: NodeSoapOptions<NoInfer<Operations>>,
): NodeSoapHandler {
  const { soap, own, trust, family } = splitOptions(options, ["path"]);
  const endpoint = createSoapEndpoint(soap);
  if (own.path !== undefined && (typeof own.path !== "string" || !own.path.startsWith("/"))) {
    throw optionError("path", own.path, 'a path starting with "/"');
  }
  const path = own.path === undefined ? undefined : trimSlash(own.path);
  const handler = async function svcSoapEndpoint(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<boolean> {
    const target = req.url ?? "/";
    if (path !== undefined) {
      if (trimSlash(targetPath(target)) !== path) return false;
    }
    const response = await endpoint.answer({
      method: req.method ?? "GET",
      target,
      headers: req.headers,
      host: fieldLines(req.rawHeaders, "host"),
      httpVersion: req.httpVersion,
      encrypted: (req.socket as { encrypted?: boolean }).encrypted === true,
      facts: requestFacts(req, trust, family),
      body: req,
      http: req,
      native: req,
    });
    // The kernel writes the core's response; a message refused before it was read whole follows
    // its refused-body policy with the endpoint's `unreadBody` bounds.
    if (!res.headersSent) {
      settleUnreadBody(req, res, endpoint.unreadBody);
      await writeValue(res, soapResponseValue(response), req.method ?? "GET");
    }
    return true;
  } as NodeSoapHandler;
  handler.service = endpoint.service;
  return handler;
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
