/**
 * The `next` callback of a connect-style middleware (Express 4/5, `connect`, `router`), typed
 * without depending on any framework: every `@svc` middleware takes this one type.
 *
 * @example
 * function handler(req: IncomingMessage, res: ServerResponse, next: NextFunction) { next(); }
 * @see https://expressjs.com/en/guide/writing-middleware.html
 */
export type NextFunction = (err?: unknown) => void;
