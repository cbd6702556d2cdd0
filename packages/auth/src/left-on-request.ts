import type { IncomingMessage } from "node:http";
import type { AuthView } from "./auth-view.js";
import type { Principal } from "./principal.js";

/**
 * What an adapter authenticated, left on the `node:http` request for code handed only that
 * request: Express's `req.principal` and `req.ip` show it on Express; Fastify keeps its own request
 * object (`request.raw` is what `@svc/soap-envelope` gives the SOAP hooks) and `node:http` has no
 * place for it. A registered symbol, so the ESM and CJS copies of the package agree.
 */
const LEFT = Symbol.for("@svc/auth.authenticated");

/** The principal an adapter found (none on an anonymous request) and the client address it read. */
export interface Authenticated {
  readonly principal: Principal | undefined;
  /** The client's address as the adapter read it (on Fastify, `requestFacts` behind its `trustProxy`). */
  readonly ip: string | undefined;
}

type Carrier = IncomingMessage & { [LEFT]?: Authenticated };

/** Leaves `value` on `req` for {@link authenticatedOn}. */
export function leaveAuthenticated(req: IncomingMessage, value: Authenticated): void {
  (req as Carrier)[LEFT] = value;
}

/** What an adapter left on `req`, if any. */
export function authenticatedOn(req: IncomingMessage): Authenticated | undefined {
  return (req as Carrier)[LEFT];
}

/**
 * `req` as the verifier's `clientAddress` reads it: with the address the adapter resolved when
 * `req` has no `ip` of its own (a `node:http` request under Fastify), else `req` itself.
 */
export function clientView(req: IncomingMessage & { ip?: string | undefined }): AuthView {
  const ip = req.ip === undefined ? authenticatedOn(req)?.ip : undefined;
  if (ip === undefined) return req;
  return {
    method: req.method,
    url: req.url,
    headers: req.headers,
    rawHeaders: req.rawHeaders,
    socket: req.socket,
    ip,
  };
}
