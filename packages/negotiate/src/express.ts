/**
 * `@svc/negotiate/express`: the package on Express 4 and 5: the request body parser and CORS as
 * middleware (`parseBody`, `crossOrigin`), on the framework-free decisions of the main entry
 * (`bodyReader`, `crossOriginGate`). The pipeline steps (`representations`, `compression`) are
 * the main entry's, run by the kernel's Express adapter (`expressAdapter` of `@svc/kernel/express`).
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import {
  type Answer,
  exchangeOf,
  headlessMiddleware,
  isAnswer,
  type Passage,
  type RequestView,
} from "@svc/kernel";
import { resolveUnreadBody } from "@svc/kernel/internal";
import { setPassage, settleUnreadBody, writeResponse } from "@svc/kernel/node";
import {
  bodyReader,
  type CrossOriginOptions,
  closesConnection,
  crossOriginGate,
  type ParseBodyOptions,
  type ParsedBodyRequest,
} from "@svc/negotiate";

export type { CrossOriginOptions, ParseBodyOptions, ParsedBodyRequest, XmlBodySchema } from "@svc/negotiate";

/**
 * Request body middleware for JSON and XML (the @svc XML reader), in the service's error vocabulary:
 *
 * - a body of a type outside `types` (or without `Content-Type`) is left unread for what comes
 *   after, a SOAP endpoint's `application/soap+xml` included; with `others: "refuse"` → 415 naming
 *   the accepted types, with `Accept-Post` (POST) or `Accept-Patch` (PATCH) listing them (RFC 9110
 *   §15.5.16, RFC 5789 §3.1);
 * - a body in a content coding other than identity → 415 (RFC 9110 §15.5.16);
 * - longer than `limit` → 413; not UTF-8 or malformed → 400 `Malformed … body`; nested deeper than
 *   `depth`, or XML with a DOCTYPE (well-formed, refused by policy) → 400 `JSON body: …` /
 *   `XML body: … is not accepted`;
 * - a body stream that fails before its end (the client gone mid-body) → 400 `unreadable_body`.
 *
 * Requests without content pass untouched, with `req.body` undefined, however they are framed
 * (no body, `Content-Length: 0`, or `Transfer-Encoding: chunked` with no data). It is
 * `(req, res, next)` with nothing of Express: plain `node:http` calls it with a callback. The
 * decisions are `bodyReader`'s.
 *
 * @example app.use(parseBody({ limit: 64 * 1024 }));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.16
 */
export function parseBody(options: ParseBodyOptions = {}) {
  const read = bodyReader(options);
  const unreadBody = resolveUnreadBody("negotiate", options.unreadBody, "parseBody");
  return function parseBodyMiddleware(req: ParsedBodyRequest, res: ServerResponse, next: NextFunction): void {
    if (alreadyParsed(req) || !hasBody(req)) {
      next();
      return;
    }
    read(req, req).then(
      (value) => {
        if (value !== undefined) {
          // For the steps after this one (the idempotency fingerprint), on every framework; and
          // `req.body` for the application's own handlers.
          exchangeOf(req).body = { value };
          req.body = value;
        }
        next();
      },
      (err: unknown) => {
        // Before whatever answers the refusal writes: the rest follows the refused-body policy.
        if (closesConnection(err) && !res.headersSent) res.setHeader("Connection", "close");
        else settleUnreadBody(req, res, unreadBody);
        next(err);
      },
    );
  };
}

/**
 * CORS as Express (4 and 5) middleware, and from plain `node:http`
 * (`(req, res, next)`): the decision of `crossOriginGate`, its preflight answer written,
 * its fields set on the response before `next()`.
 *
 * @example
 * app.use(crossOrigin({ origins: ["https://app.example"], exposedHeaders: ["ETag"], maxAge: 600 }));
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 */
export function crossOrigin(options: CrossOriginOptions) {
  const gate = crossOriginGate(options);
  // It answers a preflight through `writeResponse` only: a `chain` may hold its `Vary`.
  return headlessMiddleware(function crossOriginMiddleware(
    req: IncomingMessage,
    res: ServerResponse,
    next: NextFunction,
  ): void {
    // Applied before `next`, as a header writer; a promise only where an origin function returns one.
    const apply = (outcome: Passage | Answer) => {
      if (isAnswer(outcome)) {
        writeResponse(res, outcome.answer, (req.method ?? "GET").toUpperCase()).catch(next);
        return;
      }
      setPassage(res, outcome);
      next();
    };
    const outcome = gate(req, req);
    if (outcome instanceof Promise) outcome.then(apply, next);
    else apply(outcome);
  });
}

/**
 * Whether another parser already took the body: body-parser marks the request `_body`; anything
 * else that read it leaves the stream ended, or a `req.body` of its own. body-parser 1 (Express
 * 4's `express.json()`, `express.urlencoded()`) also sets `req.body = {}` on requests it did not
 * parse: that empty placeholder is not a body.
 */
function alreadyParsed(req: ParsedBodyRequest): boolean {
  if ((req as { _body?: unknown })._body === true || req.readableEnded) return true;
  const { body } = req;
  if (body === undefined) return false;
  const placeholder =
    typeof body === "object" &&
    body !== null &&
    Object.getPrototypeOf(body) === Object.prototype &&
    Object.keys(body).length === 0;
  return !placeholder;
}

function hasBody(req: RequestView): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}
