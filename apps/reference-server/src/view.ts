import type { IncomingHttpHeaders } from "node:http";
import type { HandlerContext, RequestState, RouteOptions } from "@svc/kernel";

/** Builds absolute hrefs from the URL the client used (proxy-aware through @svc/hal, see links.ts). */
export type Href = (path: string) => string;

/**
 * What the service's handlers read of a request, whichever framework serves it (Express or
 * Fastify): each composition makes one per routed request, so the business code (routes/*.ts)
 * never depends on a framework's request type.
 */
export interface RequestView {
  /** The method, upper case (`HEAD` for a HEAD that runs the GET handler). */
  readonly method: string;
  /** The route's path parameters (`:id`, `:parentId`, `:productId`). */
  readonly params: Readonly<Record<string, string | undefined>>;
  /** The parsed query (`parseQueryString`): a repeated name is an array. */
  readonly query: Readonly<Record<string, unknown>>;
  /** The parsed JSON body of a write; `undefined` without one. */
  readonly body: unknown;
  readonly headers: IncomingHttpHeaders;
  /** The request target as the client sent it, a `/v<N>` prefix included. */
  readonly originalUrl: string;
  /**
   * What the @svc packages decided about the request (`requestState` of @svc/kernel): its
   * principal and principal key, the API version it selected (spec part 9; `undefined` on neutral
   * routes), its route and rate limit.
   */
  readonly state: RequestState;
  /**
   * Links on the origin the client used, under the `/v<N>` prefix it named (links.ts). Made on the
   * first call; the forwarded fields it read go into the response's `Vary`.
   */
  hrefs(): Href;
  /**
   * RFC 9110 §13.2.2 before a write, on the resource's current data (the response pipeline's
   * `preconditions`): rejects with the 412.
   */
  preconditions(current: { data: unknown; lastModified?: Date | undefined } | undefined): Promise<void>;
}

/** A route handler of the service: data or a `reply(...)` from a request view. */
export type ViewHandler = (req: RequestView, context: HandlerContext) => unknown;

/** The methods a route may have handlers for; OPTIONS and the 405s are the composition's. */
export type RouteMethod = "get" | "post" | "put" | "patch" | "delete";
export const ROUTE_METHODS: readonly RouteMethod[] = ["get", "post", "put", "patch", "delete"];

/** One route of the resource API, as the compositions mount it. */
export interface RouteSpec {
  /** The path with `:name` parameters (`/products/:parentId/reviews`); both frameworks read it. */
  path: string;
  /** Each method's handler and its pipeline options (its Idempotency-Key step). */
  handlers: Partial<Record<RouteMethod, { handle: ViewHandler; options?: RouteOptions | undefined }>>;
  /**
   * The `Allow` list: OPTIONS answers it (204, behind the permission check like the other
   * methods), every method the route lacks is a 405 carrying it (routing, before permission).
   */
  allow: readonly string[];
  /** Header fields of the OPTIONS answer (`Accept-Post`, `Accept-Patch`). */
  optionsFields?: Readonly<Record<string, string>> | undefined;
}

/**
 * Where a resource module mounts its routes. Each composition decides what runs in front of a
 * handler: routing first (a path no route has is a 404, a method the route lacks a 405), then the
 * permission check, then a write's body, then the pipeline with its Idempotency-Key step.
 */
export type Routes = (route: RouteSpec) => void;
