/**
 * `@svc/auth/fetch`: authentication and authorization on the Fetch API (`Request` in, `Response`
 * out): Hono middleware, and `.wrap(handler)` for any Fetch server (Deno, Bun, workers,
 * `@hono/node-server`). The {@link AuthContext} of a request is `c.get("auth")` in Hono and
 * {@link authOf}`(request)` anywhere. A refusal is thrown, for Hono's `app.onError` or
 * `withErrors()` of `@svc/errors/fetch`, with its challenge in its headers. Nothing is decided
 * here: the core (`createAuthenticator`, the guards of `@svc/auth`) decides.
 *
 * @packageDocumentation
 */
import {
  type AuthCheck,
  type AuthContext,
  type AuthenticateOptions,
  type AuthorizePredicate,
  createAuthenticator,
  type PredicateCheck,
  predicateCheck,
  recordedAuthContext,
  roleCheck,
  scopeCheck,
} from "@svc/auth";
import { recordAuthentication } from "@svc/kernel";
import {
  addPassage,
  type ConnectionInfo,
  type FetchHandler,
  type FetchMiddleware,
  fetchView,
  type HonoContextLike,
  honoConnection,
  withPassages,
} from "@svc/kernel/fetch";

export type { AuthContext, AuthenticateOptions, AuthorizePredicate, FetchMiddleware };

/** Hono's variables this middleware sets: `new Hono<{ Variables: AuthVariables }>()` types `c.get("auth")`. */
export interface AuthVariables {
  auth: AuthContext;
}

/**
 * The context {@link authenticate} resolved for `request` (or that another step recorded in the
 * request's exchange), without Hono (or in a handler that
 * only has the `Request`).
 *
 * @example const principal = authOf(request)?.principal;
 */
export function authOf(request: Request): AuthContext | undefined {
  return recordedAuthContext(request);
}

/**
 * Authenticates every request from its `Authorization` header (RFC 6750 Bearer, RFC 7617 Basic),
 * with the options of `authenticate()` of the main entry, resolved once here: as Hono middleware
 * (`app.use(authenticate(options))`, then `c.get("auth")`), or around any Fetch handler
 * (`authenticate(options).wrap(handler)`, then `authOf(request)`). A repeated `Authorization` is
 * refused only where the field lines as received are known: on `@hono/node-server` they are read
 * from the connection; for `.wrap`, give them with `info`. The client address of the Basic failure
 * budget is the connection's (`info.address`). A form body is not read.
 *
 * @example
 * const app = new Hono<{ Variables: AuthVariables }>();
 * app.use(authenticate({ realm: "api", bearer: { secret, algorithms: ["HS256"] } }));
 * app.get("/me", (c) => c.json(c.get("auth").principal));
 * @see https://www.rfc-editor.org/rfc/rfc6750
 * @see https://www.rfc-editor.org/rfc/rfc7617
 */
export function authenticate(options: AuthenticateOptions): FetchMiddleware {
  const authenticator = createAuthenticator(options);
  const realm = { realm: authenticator.realm, challenges: authenticator.challenges };
  /**
   * The request's context; the fields every response to it carries (a fresh `DPoP-Nonce`) are
   * recorded in its exchange, for the route's response and an error's (`@svc/errors/fetch`).
   * Whether it recorded any.
   */
  const run = async (request: Request, info: ConnectionInfo | undefined) => {
    const view = fetchView(request, info);
    const context = await authenticator.authenticate(view, request);
    recordAuthentication(request, context.principal, realm);
    const passage = authenticator.passage(view);
    if (passage !== undefined) addPassage(request, passage);
    return { context, passage: passage !== undefined };
  };
  const middleware = async (c: HonoContextLike, next: () => Promise<void>): Promise<undefined> => {
    const request = c.req.raw;
    const { context, passage } = await run(request, honoConnection(c));
    (c as { set?: (key: string, value: unknown) => void }).set?.("auth", context);
    await next();
    if (passage) {
      // Hono's setter rebuilds the response: only for another one.
      const response = withPassages(c.res, request);
      if (response !== c.res) c.res = response;
    }
    return undefined;
  };
  return Object.assign(middleware, {
    wrap(handler: FetchHandler, info?: (request: Request) => ConnectionInfo | undefined): FetchHandler {
      return async (request: Request) => {
        const { passage } = await run(request, info?.(request));
        const response = await handler(request);
        return passage ? withPassages(response, request) : response;
      };
    },
  });
}

/**
 * A core decision as Fetch middleware over the context {@link authenticate} recorded: a decision
 * taken at once goes on to `next` (or the handler) without awaiting a promise of its own.
 */
function middlewareOf(check: AuthCheck | PredicateCheck<Request>): FetchMiddleware {
  const middleware = async (c: HonoContextLike, next: () => Promise<void>): Promise<undefined> => {
    const decided = check(recordedAuthContext(c.req.raw), c.req.raw);
    const refusal = decided instanceof Promise ? await decided : decided;
    if (refusal !== undefined) throw refusal;
    await next();
    return undefined;
  };
  return Object.assign(middleware, {
    wrap(handler: FetchHandler): FetchHandler {
      return async (request: Request) => {
        const decided = check(recordedAuthContext(request), request);
        const refusal = decided instanceof Promise ? await decided : decided;
        if (refusal !== undefined) throw refusal;
        return handler(request);
      };
    },
  });
}

/**
 * Lets a request through only when its principal holds every listed OAuth scope; otherwise 403
 * with `Bearer error="insufficient_scope", scope="..."`, or 401 without a principal.
 *
 * @example app.post("/employees", requireScopes("employees:write"), create);
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export function requireScopes(...scopes: string[]): FetchMiddleware {
  return middlewareOf(scopeCheck(scopes, "requireScopes"));
}

/**
 * Lets a request through only when its principal holds one of the listed roles; otherwise 403,
 * or 401 without a principal.
 *
 * @example app.delete("/employees/:id", requireRoles("admin"), remove);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function requireRoles(...roles: string[]): FetchMiddleware {
  return middlewareOf(roleCheck(roles, "requireRoles"));
}

/**
 * Lets a request through when `predicate(principal, request)` is true; otherwise 403, 401
 * without a principal, 500 when the predicate throws.
 *
 * @example app.put("/employees/:id", authorize((p, request) => p.id === idOf(request)), update);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function authorize(predicate: AuthorizePredicate<Request>): FetchMiddleware {
  return middlewareOf(predicateCheck(predicate));
}
