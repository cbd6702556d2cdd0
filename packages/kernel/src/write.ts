import type { IncomingMessage, ServerResponse } from "node:http";
import {
  appendVaryList,
  appendVaryValue,
  type Body,
  type Exchange,
  exchangeIfAny,
  type FieldValue,
  mergeVary,
  type ResponseValue,
  reasonPhrase,
} from "@svc/kernel";
import { fieldName } from "./field-name.js";
import { releaseBody } from "./release.js";
import { settleUnreadBody } from "./settle-body.js";

export { fieldName };

function isStream(body: Body): body is NodeJS.ReadableStream {
  return typeof (body as NodeJS.ReadableStream).pipe === "function";
}

/**
 * Pipes a streamed body into the response, settling when the response is done. A response closed
 * before the body was all read (the client went away mid-download) destroys the body: `pipe` only
 * unpipes it, and a paused file stream or cursor nobody reads again keeps its descriptor open.
 */
function sendStream(res: ServerResponse, body: NodeJS.ReadableStream): Promise<void> {
  const stream = body as NodeJS.ReadableStream & { readonly readableEnded?: boolean };
  return new Promise<void>((resolve, reject) => {
    stream.once("error", reject);
    res.once("finish", resolve);
    res.once("close", () => {
      if (stream.readableEnded !== true) releaseBody(stream);
      resolve();
    });
    stream.pipe(res);
  });
}

/**
 * Appends a response's `Link` to the links set in front of the pipeline (a preload hint, a
 * version's deprecation link) instead of putting it in their place.
 * @see https://www.rfc-editor.org/rfc/rfc8288#section-3.5 — several Link field lines, or one
 *   comma-separated list, carry all their links.
 */
function appendLink(res: ServerResponse, field: FieldValue): void {
  const before = res.getHeader("link");
  if (before === undefined) {
    res.setHeader("Link", field as string | string[]);
    return;
  }
  const lines = (list: FieldValue | number): string[] =>
    typeof list === "string" || typeof list === "number" ? [String(list)] : [...list];
  res.setHeader("Link", [...lines(before), ...lines(field)].join(", "));
}

/** Adds `names` to the `Vary` names a `chain` holds for the request (`Exchange.heldVary`). */
export function holdVary(exchange: Exchange, names: readonly string[]): void {
  const held = exchange.heldVary ?? "";
  exchange.heldVary = mergeVary(held, names) ?? held;
}

/**
 * Sets the `Vary` names held for the request (`Exchange.heldVary`, while a `chain` holds them)
 * after any the response carries, in one field, and holds nothing more.
 */
export function releaseVary(res: ServerResponse, exchange: Exchange): void {
  const held = exchange.heldVary;
  if (held === undefined) return;
  exchange.heldVary = undefined;
  if (held !== "" && !res.headersSent) appendVaryValue(res, held);
}

/**
 * `writeResponse` of `@svc/kernel/node`, without a promise when the write is done at once (whole
 * bytes, or none): `undefined` then, so that an adapter waits for nothing (a resolved promise
 * still costs its reader a turn of the microtask queue). A promise for a stream, or the rejection
 * of a response that has already started.
 */
export function writeValue(
  res: ServerResponse,
  value: ResponseValue,
  method: string,
): Promise<void> | undefined {
  if (res.headersSent) return Promise.reject(new Error("@svc/kernel: the response has already started"));
  // A response to content not read whole follows the refused-body policy (the default bounds,
  // unless a package settled it first with its own).
  const req = (res as ServerResponse & { req?: IncomingMessage }).req;
  if (req !== undefined) settleUnreadBody(req, res);
  res.statusCode = value.status;
  // RFC 9112 §4: the reason-phrase describes the status code. Node's `writeHead` falls back on
  // `http.STATUS_CODES`, whose 413 and 422 keep their RFC 7231 names ("Unprocessable Entity"):
  // RFC 9110's, as the error record's `error` says (§15.5.14 "Content Too Large", §15.5.21
  // "Unprocessable Content"). Set for every status, so one a handler set earlier is not kept either.
  res.statusMessage = reasonPhrase(value.status);
  const fields = value.fields;
  for (const name in fields) {
    const field = fields[name];
    if (field === null || field === undefined) res.removeHeader(name);
    else if (name === "link") appendLink(res, field);
    else res.setHeader(fieldName(name), field as string | string[]);
  }
  const exchange = req === undefined ? undefined : exchangeIfAny(req);
  // A `Vary` of the response's own fields replaces what was set in front, the held names too.
  if (exchange !== undefined && "vary" in fields) exchange.heldVary = undefined;
  if (exchange?.heldVary !== undefined) {
    holdVary(exchange, value.vary);
    releaseVary(res, exchange);
  } else if (value.vary.length > 0) appendVaryList(res, value.vary);
  const body = value.body;
  if (body === undefined) {
    // RFC 9110 §15.3.6: a 205 has no content, and says so with Content-Length: 0 (Node would
    // otherwise frame it as chunked).
    if (value.status === 205) res.setHeader("Content-Length", 0);
    res.end();
    return undefined;
  }
  if (isStream(body)) {
    res.removeHeader("content-length");
    if (method === "HEAD") {
      // The GET would be chunked: no length either (RFC 9110 §8.6 lets HEAD leave it out).
      releaseBody(body);
      res.end();
      return undefined;
    }
    return sendStream(res, body);
  }
  res.setHeader("Content-Length", body.byteLength);
  if (method === "HEAD") res.end();
  else res.end(body);
  return undefined;
}
