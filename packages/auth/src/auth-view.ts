import type { RequestView } from "@svc/kernel";

/**
 * What the authentication core reads of a request, on any framework: a kernel `RequestView`
 * (the `Authorization` field, its field lines as received, the request-target, the connection's
 * address) and what a framework may know besides. A `node:http` or Express request is one as is.
 */
export interface AuthView extends RequestView {
  /** The client's address as the framework resolved it behind its proxy setting (Express's `req.ip`; on Fastify, `requestFacts` of the kernel). */
  readonly ip?: string | undefined;
  /** The whole request-target when the framework rewrote `url` for routing (Express's `originalUrl`). */
  readonly originalUrl?: string | undefined;
  /** The parsed body, when one was parsed before authentication (an `access_token` in a form is refused). */
  readonly body?: unknown;
}
