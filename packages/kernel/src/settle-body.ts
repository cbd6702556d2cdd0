import type { IncomingMessage, ServerResponse } from "node:http";
import { UNREAD_BODY_DEFAULTS, type UnreadBodyBounds, unreadBodyAction } from "./unread-body.js";

/** Requests whose unread content has been settled: the first decision holds, with its bounds. */
const settled = new WeakSet<IncomingMessage>();

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(",") : value;
}

/**
 * Applies the refused-body policy ({@link UnreadBodyOptions}) to a `node:http` request answered
 * before its content was read whole, right before the response is written (Express's and
 * Fastify's `req.raw` are such requests). A remainder within `maxBytes` is read and discarded,
 * the connection kept; a larger or chunked one gets `Connection: close` on the response, so Node
 * closes the connection once the response is written and never parses what follows as a request.
 * Either way a client still sending `timeoutMs` after this call is disconnected. The first call
 * for a request decides; later ones (a package, then the adapter that writes) change nothing.
 *
 * @example settleUnreadBody(req, res, unreadBody); res.writeHead(413).end();
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-9.6 — `close` announces the server will
 *   close; a slow or unbounded remainder is not read to keep the connection.
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.14 — for a 413 "the server MAY close
 *   the connection".
 */
export function settleUnreadBody(
  req: IncomingMessage,
  res: ServerResponse,
  bounds: UnreadBodyBounds = UNREAD_BODY_DEFAULTS,
): void {
  if (req.complete || settled.has(req)) return;
  settled.add(req);
  const action = unreadBodyAction(
    single(req.headers["content-length"]),
    single(req.headers["transfer-encoding"]),
    bounds,
  );
  const socket = req.socket as IncomingMessage["socket"] | null;
  // An injected request (Fastify's `inject`) has no connection to keep or close.
  if (action === "keep" || typeof socket?.destroy !== "function") return;
  // Past the bound the connection goes, whether the client is still sending or still (not)
  // reading the response: a response not yet written says so first.
  const cut = () => {
    if (req.complete || socket.destroyed) return;
    if (!res.headersSent) res.setHeader("Connection", "close");
    if (res.writableFinished || res.headersSent) socket.destroy();
    else res.once("finish", () => socket.destroy());
  };
  const timer = setTimeout(cut, bounds.timeoutMs);
  timer.unref();
  // @see https://www.rfc-editor.org/rfc/rfc9112#section-9.3 — a kept-alive connection outlives
  //   the request: whichever of its end and the connection's close comes first takes both.
  const done = () => {
    clearTimeout(timer);
    req.off("end", done);
    socket.off("close", done);
  };
  req.once("end", done);
  socket.once("close", done);
  if (action === "close") {
    // Not read: Node discards what arrives while the response is written and closes after it.
    if (!res.headersSent) res.setHeader("Connection", "close");
    else res.once("finish", () => socket.destroy());
    return;
  }
  // At most `maxBytes` by its declared length, which Node's parser holds the message to.
  req.resume();
}
