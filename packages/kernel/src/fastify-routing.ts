/**
 * The routes and hooks of `expressRouting` (`@svc/kernel/fastify`): what Fastify's router needs
 * around an application's own routes to answer a path as Express's router and `route.all()` do.
 * The decisions are `method-routing.ts`'s; this file holds Fastify's side of them.
 */
import { METHODS } from "node:http";
import { HttpError } from "@svc/kernel";
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  RouteHandlerMethod,
  RouteOptions,
} from "fastify";
import {
  allowList,
  checkedAllow,
  checkedFields,
  emptyParameter,
  type RoutedTarget,
  refusedMethods,
} from "./method-routing.js";
import { optionError } from "./option-error.js";
import { malformedEscape } from "./target.js";

/** Every method Node's parser accepts but CONNECT, which Node.js answers apart: each is routed. */
const ROUTABLE: readonly string[] = Object.freeze(METHODS.filter((m) => m !== "CONNECT"));

/** The refusals `expressRouting` answers with, resolved: the application's, or `HttpError`'s. */
export interface Refusals {
  notFound(target: RoutedTarget): Error;
  methodNotAllowed(target: RoutedTarget, allowed: readonly string[]): Error;
}

/** What `allowedMethods` takes beside the path and its methods. */
export interface AllowedMethodsOptions {
  /**
   * Header fields of the OPTIONS answer (`Accept-Post`, `Accept-Patch`), beside `Allow`.
   * @default {}
   */
  fields?: Readonly<Record<string, string>> | undefined;
}

/**
 * The route options of a path's OPTIONS and 405 answers, for `app.route({ ...route, preParsing })`:
 * its own hooks from `preParsing` on (its `onRequest` is the refusal).
 */
export interface AllowedMethodsRoute {
  /** Every method the path refuses, and `OPTIONS`. */
  readonly method: string[];
  /** The path, as the context's routes name it. */
  readonly url: string;
  /** Its HEAD is refused or answered as any other method, never Fastify's own HEAD route. */
  readonly exposeHeadRoute: false;
  /** The 405 of every method but `OPTIONS`, before the body is read. */
  readonly onRequest: onRequestHookHandler;
  /** OPTIONS: 204 with `Allow` and the given fields. */
  readonly handler: RouteHandlerMethod;
}

/** The handlers of the routes this file adds, and whether the application placed each itself. */
const refusalHandlers = new WeakMap<object, { explicit: boolean }>();

/** A route the plugin saw, as Fastify hands it to `onRoute`. */
type SeenRoute = RouteOptions & { routePath?: string };

/** One path's routes, as the plugin has seen them. */
interface PathRoutes {
  /** The context of its first route, where its refusals run (its hooks, as a router's `all()`). */
  readonly context: FastifyInstance;
  /** Its path as that context names it, without the context's prefix. */
  readonly routePath: string;
  /** The methods of its routes, in the order they were added. */
  readonly methods: string[];
  /** Whether its refusals are added: by the application (`allowedMethods`) or after its routes. */
  refused?: ReadonlySet<string>;
}

/**
 * The route that answers a path's OPTIONS (204 with `Allow` and `fields`) and refuses each method
 * of `refused` (405 with `Allow`). The refusal is an `onRequest` hook: before the body is read, and
 * before Fastify's own 400 for a QUERY without `Content-Type` (draft-ietf-httpbis-safe-method-w-body
 * §2), which would hide the 405 (RFC 9110 §15.5.6).
 */
function refusalRoute(
  refusals: Refusals,
  path: string,
  allow: readonly string[],
  refused: readonly string[],
  options: { answersOptions: boolean; fields: ReadonlyArray<readonly [string, string]>; explicit: boolean },
): AllowedMethodsRoute {
  const header = allow.join(", ");
  const { answersOptions, fields } = options;
  const refuse = (request: FastifyRequest) =>
    refusals.methodNotAllowed({ method: request.method, url: request.originalUrl }, allow);
  const onRequest = function svcMethodNotAllowed(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: (err?: Error) => void,
  ) {
    if (answersOptions && request.method === "OPTIONS") done();
    else done(refuse(request));
  };
  const handler = function svcAllowedMethods(request: FastifyRequest, reply: FastifyReply) {
    if (request.method !== "OPTIONS") throw refuse(request);
    for (const [name, value] of fields) reply.header(name, value);
    reply.code(204).header("allow", header).send();
  };
  refusalHandlers.set(handler, { explicit: options.explicit });
  return {
    method: answersOptions ? [...refused, "OPTIONS"] : [...refused],
    url: path,
    exposeHeadRoute: false,
    onRequest: onRequest as onRequestHookHandler,
    handler: handler as RouteHandlerMethod,
  };
}

/**
 * The route options of a path's OPTIONS and 405 answers, with `allow` as its `Allow` list, for
 * `app.route(...)` in the context whose hooks they run behind: see `ExpressRouting.allowedMethods`.
 */
export function allowedMethodsRoute(
  refusals: Refusals,
  path: string,
  allow: readonly string[],
  options: AllowedMethodsOptions | undefined,
): AllowedMethodsRoute {
  const methods = checkedAllow(allow);
  const fields = checkedFields(options?.fields);
  return refusalRoute(refusals, path, methods, refusedMethods(ROUTABLE, methods), {
    answersOptions: true,
    fields,
    explicit: true,
  });
}

/**
 * The `onRequest` hook of a route with a `:name` parameter: a parameter that cannot be decoded is
 * a 400 (RFC 3986 §2.1, as Express's router answers it), an empty one is no match of the route (the
 * 404 of a path no route has).
 */
function parametersHook(refusals: Refusals): onRequestHookHandler {
  return function svcRouteParameters(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: (err?: Error) => void,
  ) {
    const url = request.originalUrl;
    if (malformedEscape(url)) done(HttpError.badRequest());
    else if (emptyParameter(request.params as Record<string, unknown>))
      done(refusals.notFound({ method: request.method, url }));
    else done();
  } as onRequestHookHandler;
}

/**
 * A route added for a path whose refusals are in place already: its method would be the refusals'
 * (Fastify refuses the second route of a method and path).
 */
function addedAfterRefusals(url: string, method: string): Error {
  return optionError(
    "kernel",
    "routeOrder",
    `expressRouting: the route ${method} ${url} comes after the 405 answers of ${url}, which refuse ${method}; add every route of a path before the plugin that adds them awaits a register (the path's 405 and OPTIONS routes are added once the routes added so far are loaded), or list the path's methods first, ${method} among them, with app.route(routing.allowedMethods(${JSON.stringify(url)}, [...]))`,
  );
}

function methodsOf(route: SeenRoute): string[] {
  return Array.isArray(route.method) ? [...route.method] : [route.method as string];
}

/** Prepends `hook` to the route's own `onRequest` hooks (the context's run before them). */
function prependOnRequest(route: SeenRoute, hook: onRequestHookHandler): void {
  const own = route.onRequest;
  route.onRequest = (own === undefined ? [hook] : [hook, ...(Array.isArray(own) ? own : [own])]) as never;
}

/**
 * The plugin's body: every method Node's parser accepts made routable (Fastify knows a few), and an
 * `onRoute` hook that, for each route added after it, in its context and the contexts below:
 * - makes a GET route answer HEAD through its own handler, as Express's router does (RFC 9110
 *   §9.3.2: the same fields as GET), unless the route says `exposeHeadRoute: false` or the path
 *   has a HEAD route already;
 * - puts `parametersHook` in front of a route with a `:name` parameter;
 * - once the routes added so far in the route's context are loaded, adds the path's OPTIONS and 405
 *   route there, its `Allow` the methods of the path's routes, unless `allowedMethods` gave them.
 * A route with `constraints` (a host, a version) is left to the application: a path's refusal
 * routes would answer every host.
 */
export function routingPlugin(refusals: Refusals): FastifyPluginCallback {
  return function svcExpressRouting(app: FastifyInstance, _options: unknown, done: (err?: Error) => void) {
    // With a body, as Express's body parsers read one whatever the method.
    for (const method of ROUTABLE)
      if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
    const paths = new Map<string, PathRoutes>();
    const parameters = parametersHook(refusals);
    const addRefusals = (path: PathRoutes) => {
      if (path.refused !== undefined) return;
      const allow = allowList(path.methods);
      const refused = refusedMethods(ROUTABLE, allow);
      const answersOptions = !path.methods.includes("OPTIONS");
      path.refused = new Set(answersOptions ? [...refused, "OPTIONS"] : refused);
      if (path.refused.size === 0) return;
      path.context.route(
        refusalRoute(refusals, path.routePath, allow, refused, {
          answersOptions,
          fields: [],
          explicit: false,
        }),
      );
    };
    app.addHook("onRoute", function svcRouted(this: FastifyInstance, route: SeenRoute) {
      const url = route.url;
      if (url.includes(":")) prependOnRequest(route, parameters);
      if (route.constraints !== undefined && Object.keys(route.constraints).length > 0) return;
      const own = refusalHandlers.get(route.handler);
      let path = paths.get(url);
      if (own !== undefined && !own.explicit) return;
      const methods = methodsOf(route);
      if (path?.refused !== undefined)
        for (const method of methods) if (path.refused.has(method)) throw addedAfterRefusals(url, method);
      if (path === undefined) {
        path = { context: this, routePath: route.routePath ?? url, methods: [] };
        paths.set(url, path);
        const seen = path;
        // A callback without parameters: an error of an earlier plugin stays Fastify's to report.
        this.after(() => addRefusals(seen));
      }
      if (own !== undefined) {
        path.refused = new Set(methods);
        return;
      }
      if (
        methods.includes("GET") &&
        !methods.includes("HEAD") &&
        !path.methods.includes("HEAD") &&
        route.exposeHeadRoute !== false
      ) {
        methods.push("HEAD");
        route.method = methods as RouteOptions["method"];
      }
      for (const method of methods) if (!path.methods.includes(method)) path.methods.push(method);
    });
    done();
  };
}
