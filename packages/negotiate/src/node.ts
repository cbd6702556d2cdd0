/**
 * `@svc/negotiate/node`: the package on plain `node:http`. Body parsing and CORS as functions of
 * the request (`await`ed in the server's own dispatch), the pipeline steps (`representations`,
 * `compression`) for `nodeAdapter` of `@svc/kernel/node`. The decisions are the main entry's
 * (`bodyReader`, `crossOriginGate`); this module only reads `req` and writes `res`.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { exchangeOf } from "@svc/kernel";
import { resolveUnreadBody } from "@svc/kernel/internal";
import { nodeGate, settleUnreadBody } from "@svc/kernel/node";
import {
  bodyReader,
  type CrossOriginOptions,
  closesConnection,
  crossOriginGate,
  type ParseBodyOptions,
} from "@svc/negotiate";

export type { CrossOriginOptions, ParseBodyOptions, XmlBodySchema } from "@svc/negotiate";

/**
 * The body of a `node:http` request, read and parsed by `bodyReader(options)`: resolves to the
 * parsed value (`undefined` without content, or for a type outside `types`, left unread), rejects
 * with the `HttpError` to answer (415, 413, 400, 408). Given `res`, a refusal that left part of
 * the body unread follows the kernel's refused-body policy (`unreadBody`) on it.
 *
 * @example
 * const readJson = parseBody({ limit: "64kb" });
 * createServer(async (req, res) => {
 *   try {
 *     const body = await readJson(req, res);
 *     res.end(JSON.stringify({ got: body }));
 *   } catch (err) {
 *     sendError(req, res, err);
 *   }
 * });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.16
 */
export function parseBody(
  options: ParseBodyOptions = {},
): (req: IncomingMessage, res?: ServerResponse) => Promise<unknown> {
  const read = bodyReader(options);
  const unreadBody = resolveUnreadBody("negotiate", options.unreadBody, "parseBody");
  return async function readNodeBody(req, res) {
    try {
      const value = await read(req, req);
      // For the steps after this one (the pipeline's idempotency fingerprint).
      if (value !== undefined) exchangeOf(req).body = { value };
      return value;
    } catch (err) {
      if (res !== undefined && !res.headersSent) {
        if (closesConnection(err)) res.setHeader("Connection", "close");
        else settleUnreadBody(req, res, unreadBody);
      }
      throw err;
    }
  };
}

/**
 * CORS on `node:http` (`crossOriginGate`'s decision through `nodeGate` of `@svc/kernel/node`):
 * resolves `true` when it answered the request (a preflight's 204 is written), `false` when the
 * request goes on with the CORS fields set on `res`.
 *
 * @example
 * const cors = crossOrigin({ origins: ["https://app.example"] });
 * createServer(async (req, res) => {
 *   if (await cors(req, res)) return;
 *   res.end("hello");
 * });
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 */
export function crossOrigin(
  options: CrossOriginOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  return nodeGate(crossOriginGate(options));
}
