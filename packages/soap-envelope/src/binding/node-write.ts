import type { IncomingMessage, ServerResponse } from "node:http";
import { appendVary, type UnreadBodyBounds } from "@svc/kernel";
import { settleUnreadBody } from "@svc/kernel/node";
import type { SoapResponse } from "../envelope/service.js";

/**
 * Writes a {@link SoapResponse} on a `node:http` response (Express's too): its status and fields
 * in one `writeHead` (fields set in front stay, these replacing one of the same name), its `vary`
 * appended to the `Vary` set in front, its body in one write. A message refused before it was
 * read whole (RFC 9112 §9.3: a server may answer before the request is complete) follows the
 * kernel's refused-body policy with the endpoint's `unreadBody` bounds.
 */
export function writeSoapResponse(
  res: ServerResponse,
  req: IncomingMessage,
  response: SoapResponse,
  unreadBody: UnreadBodyBounds,
): void {
  if (res.headersSent) return;
  settleUnreadBody(req, res, unreadBody);
  const vary = response.vary;
  if (vary !== undefined && vary.length > 0) appendVary(res, ...vary);
  res.writeHead(response.status, response.headers);
  res.end(response.body || undefined);
}
