import type { IncomingMessage, ServerResponse } from "node:http";
import { appendVary } from "@svc/kernel";
import type { SoapResponse } from "../envelope/service.js";

/**
 * Writes a {@link SoapResponse} on a `node:http` response (Express's too): its status and fields
 * in one `writeHead` (fields set in front stay, these replacing one of the same name), its `vary`
 * appended to the `Vary` set in front, its body in one write.
 */
export function writeSoapResponse(res: ServerResponse, req: IncomingMessage, response: SoapResponse): void {
  if (res.headersSent) return;
  if (!req.complete) {
    // The body was refused before all of it arrived (RFC 9112 §9.3: a server may answer before
    // the request is complete). Discard the rest rather than close at once: closing a socket
    // with unread data resets the connection and the client loses the response. A client that
    // keeps sending is cut off a few seconds later.
    req.resume();
    res.once("finish", () => {
      setTimeout(() => {
        if (!req.complete) req.socket.destroy();
      }, 5000).unref();
    });
  }
  const vary = response.vary;
  if (vary !== undefined && vary.length > 0) appendVary(res, ...vary);
  res.writeHead(response.status, response.headers);
  res.end(response.body || undefined);
}
