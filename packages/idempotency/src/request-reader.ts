import type { IncomingMessage } from "node:http";
import type { RoutingRules } from "@svc/kernel";
import type { IdempotencyLogger, IdempotencyRequiredRule } from "./config.js";

/** The authenticated caller, as the auth layer leaves it on the request. */
export interface IdempotencyPrincipal {
  id: string;
}

/**
 * The parts of a `node:http` request (Express's is one, with the fields marked so) the step's
 * Express and `node:http` readers read, when the adapter hands it over as the pipeline request's
 * `native`.
 */
export interface IdempotencyRequest extends IncomingMessage {
  /** The parsed (or raw `Buffer`/string) body a body parser left; see "Order" in the README. */
  body?: unknown;
  /** Set by the auth layer (`@svc/auth`); absent for anonymous requests. */
  principal?: IdempotencyPrincipal | undefined;
  originalUrl?: string;
  /** pino-http's per-request logger, used when no `logger` option is given. */
  log?: IdempotencyLogger;
  /** Express: where the router that runs the route is mounted (the matched spelling). */
  baseUrl?: string;
  /** Express: the route being run. */
  route?: { path?: unknown } | undefined;
}

/**
 * Says which requests must carry a key: every one (`true`), none (`false`), those whose
 * canonical path is in a list, or those a predicate picks. Lists and predicates see the path the
 * way the router matches it (see {@link canonicalPath}), so `/Transfers/` is `/transfers`.
 */
export type IdempotencyRequired = IdempotencyRequiredRule<IdempotencyRequest>;

/** What the core reads of the request the router runs, beyond header strings. */
export interface IdempotencyRequestFacts {
  /** The request-target as sent (path and query). */
  target: string | undefined;
  /** The route the router runs (mount path and pattern), or undefined. */
  route: string | undefined;
  /** The route parameters as the router decoded them. */
  params: Readonly<Record<string, unknown>> | undefined;
  /** How the router compares paths. */
  routing: RoutingRules;
  log: IdempotencyLogger | undefined;
}

/**
 * Aborted when the client's connection closes while a duplicate waits for an in-flight request
 * (`waitMs`): it stops polling the store and gets the 409. Only the wait ends so; no claim is
 * ever released for a connection. `stop` removes the listener.
 */
export function connectionGone(req: IncomingMessage | undefined): { signal: AbortSignal; stop: () => void } {
  const gone = new AbortController();
  const socket = req?.socket;
  if (socket === undefined || socket === null || typeof socket.once !== "function") {
    return { signal: gone.signal, stop() {} };
  }
  if (socket.destroyed) gone.abort();
  const onClose = () => gone.abort();
  socket.once("close", onClose);
  return { signal: gone.signal, stop: () => socket.removeListener("close", onClose) };
}

/**
 * How the idempotency step reads a framework's request (`PipelineRequest.native`): the facts of
 * routing (target as sent, route, parameters, routing rules, logger) and the signal of a client
 * gone while it waits for a key in flight. One per framework entry; plain values out, so a
 * third-party adapter can write its own.
 */
export interface IdempotencyRequestReader<Req = unknown> {
  /** The routing facts of `request`; `routing` is the step's option as given (it wins). */
  facts(request: Req | undefined, routing: Partial<RoutingRules>): IdempotencyRequestFacts;
  /** A signal that aborts when the client goes away, and how to stop listening. */
  gone(request: Req | undefined): { signal: AbortSignal; stop: () => void };
}
