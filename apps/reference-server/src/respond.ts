import type { Request, Response } from "express";

/**
 * Sends `data` in the representation the client negotiated (@svc/negotiate): JSON, HAL+JSON,
 * XML, CSV for pages, text or HTML.
 */
export function send(_req: Request, res: Response, data: unknown, status = 200): Promise<void> {
  res.status(status);
  return res.represent(data);
}
