import type { Request, Response } from "express";

/** Sends a representation of `data`. */
export function send(_req: Request, res: Response, data: unknown, status = 200): void {
  res.status(status).json(data);
}
