/**
 * `@svc/auth/fastify`: authentication and authorization on Fastify 5. A plugin authenticates in a
 * hook and leaves the {@link AuthContext} on `request.auth`; the guards are hooks for a route's
 * options (`onRequest`, `preParsing` or `preHandler`). A refusal is thrown to Fastify's error handler (`errorPlugin` of
 * `@svc/errors/fastify`), with its challenge in its headers. Nothing is decided here: the core
 * (`createAuthenticator`, the guards of `@svc/auth`) decides.
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
  type Principal,
  predicateCheck,
  recordedAuthContext,
  roleCheck,
  scopeCheck,
} from "@svc/auth";
import { exchangeOf, type RequestView, recordAuthentication } from "@svc/kernel";
import { appWide, fastifyView, setReplyPassage } from "@svc/kernel/fastify";
import { checkBooleanOption, pluginOptions, refusedOption, writeRequestProperty } from "@svc/kernel/internal";
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  preHandlerHookHandler,
  preParsingHookHandler,
} from "fastify";

export type { AuthContext, AuthenticateOptions, AuthorizePredicate };

declare module "fastify" {
  interface FastifyRequest {
    /**
     * Set by `@svc/auth/fastify`'s plugin: who made the request (`principal`) and the realm the
     * guards challenge in; `null` where the plugin does not apply.
     */
    auth: AuthContext | null;
    /**
     * Set by `@svc/auth/fastify`'s plugin under its `requestProperty` compatibility option:
     * `request.auth.principal`, `null` without one. Read the principal with
     * `requestState(request).principal` of `@svc/kernel`; no package reads this property.
     */
    principal?: Principal | null;
  }
}

/** The options of {@link auth}: those of `authenticate()`, and the hook it runs in. */
export interface AuthPluginOptions extends AuthenticateOptions {
  /**
   * The hook that authenticates: `"onRequest"` refuses before the body is read or parsed;
   * `"preHandler"` runs after parsing, so an `access_token` in a form body is refused too
   * (RFC 6750 §2.2), as it is on Express behind a body parser.
   * @default "onRequest"
   */
  hook?: "onRequest" | "preHandler";
  /**
   * A compatibility option for applications written against 0.1 and 0.2: also set
   * `request.principal` (declared with `decorateRequest`). Handlers read the principal with
   * `requestState(request).principal` of `@svc/kernel`, on every framework, or `request.auth`.
   * @default false
   */
  requestProperty?: boolean;
}

/**
 * What the core reads of a Fastify request: the kernel's view of it (`fastifyView`, which records
 * Fastify's `trustProxy` for the client address), with the body Fastify parsed, when the hook runs
 * after parsing (`preHandler`), recorded in the request's exchange for the core's form-token check.
 */
function viewOf(request: FastifyRequest): RequestView {
  const view = fastifyView(request);
  if (request.body !== undefined) {
    const exchange = exchangeOf(request.raw);
    exchange.body ??= { value: request.body };
  }
  return view;
}

const plugin: FastifyPluginCallback<AuthPluginOptions> = (app: FastifyInstance, options, done) => {
  // Fastify's own registration options are not the authenticator's.
  const { hook = "onRequest", requestProperty = false, ...rest } = pluginOptions(options);
  let authenticator: ReturnType<typeof createAuthenticator>;
  try {
    if (hook !== "onRequest" && hook !== "preHandler")
      throw refusedOption("auth", "hook", hook, '"onRequest" or "preHandler"', "@svc/auth: hook");
    checkBooleanOption("auth", "requestProperty", requestProperty, "@svc/auth: requestProperty");
    authenticator = createAuthenticator(rest);
  } catch (err) {
    done(err as Error);
    return;
  }
  if (!app.hasRequestDecorator("auth")) app.decorateRequest("auth", null);
  if (requestProperty && !app.hasRequestDecorator("principal")) app.decorateRequest("principal", null);
  const realm = { realm: authenticator.realm, challenges: authenticator.challenges };
  const authenticated = (
    request: FastifyRequest,
    reply: FastifyReply,
    view: RequestView,
    principal: Principal | undefined,
  ): void => {
    request.auth = { principal, realm: realm.realm, challenges: realm.challenges };
    recordAuthentication(request.raw, principal, realm);
    if (requestProperty) writeRequestProperty(request, "principal", principal, null);
    if (principal !== undefined)
      request.log.debug({ principal: principal.id, scheme: principal.scheme }, "authenticated");
    // The fields of the response to an authenticated request (a fresh DPoP-Nonce).
    const passage = authenticator.passage(view);
    if (passage !== undefined) setReplyPassage(reply, passage);
  };
  // A callback hook: a principal decided at once (a cached Bearer token, no credentials) goes on
  // in the same turn, with no promise.
  app.addHook(
    hook,
    function svcAuthenticate(request: FastifyRequest, reply: FastifyReply, next: (err?: Error) => void) {
      let decided: Principal | undefined | Promise<Principal | undefined>;
      const view = viewOf(request);
      try {
        decided = authenticator.decide(view, request);
      } catch (err) {
        next(err as Error);
        return;
      }
      if (!(decided instanceof Promise)) {
        authenticated(request, reply, view, decided);
        next();
        return;
      }
      decided.then((principal) => authenticated(request, reply, view, principal)).then(() => next(), next);
    },
  );
  done();
};

/**
 * The Fastify plugin: `app.register(auth, { realm, bearer, basic })`. It authenticates every
 * request of the context it is registered in (and of that context's children: it is not
 * encapsulated in its own, like a plugin wrapped with `fastify-plugin`), sets `request.auth`, and
 * throws the 401 (with its `WWW-Authenticate` challenges), 400, 429 or 503 to the error handler.
 * Register it inside a plugin of your own to protect only that plugin's routes.
 *
 * @example
 * await app.register(auth, { realm: "api", bearer: { secret, algorithms: ["HS256"] } });
 * app.get("/me", (request) => request.auth?.principal);
 * @see https://www.rfc-editor.org/rfc/rfc6750
 * @see https://www.rfc-editor.org/rfc/rfc7617
 */
export const auth: FastifyPluginCallback<AuthPluginOptions> = appWide("@svc/auth", plugin);

/**
 * A guard as a route's hook, in any of three places: `onRequest` or `preParsing`, where a refused
 * request's body is never read (the plugin's default `hook: "onRequest"` has set `request.auth` by
 * then), or `preHandler`, after the body was parsed (needed with `hook: "preHandler"`). As
 * `preParsing` it leaves the body stream as it is. A callback hook: a decision taken at once (the
 * scopes, the roles, a predicate that answers with a boolean) calls `done` in the same turn, with
 * no promise; a predicate that answers with a promise makes the hook return one.
 */
export type GuardHook = onRequestHookHandler & preParsingHookHandler & preHandlerHookHandler;

/** Resolves to let the request through; rejects with the refusal. */
function refused(refusal: Error | undefined): undefined {
  if (refusal !== undefined) throw refusal;
  return undefined;
}

/**
 * A core decision as a route hook reading what authentication recorded in the request's exchange.
 * Fastify calls a hook with `done` last: third as `onRequest` or `preHandler`, fourth (after the
 * body stream) as `preParsing`.
 */
function hookOf(check: AuthCheck | PredicateCheck<FastifyRequest>): GuardHook {
  return function svcAuthorize(
    request: FastifyRequest,
    _reply: FastifyReply,
    payloadOrDone?: unknown,
    done?: unknown,
  ): Promise<undefined> | undefined {
    const decided = check(recordedAuthContext(request.raw), request);
    const next = typeof done === "function" ? done : payloadOrDone;
    if (decided instanceof Promise || typeof next !== "function")
      return Promise.resolve(decided).then(refused);
    (next as (err?: Error) => void)(decided);
    return undefined;
  } as GuardHook;
}

/**
 * A route hook ({@link GuardHook}) that lets a request through only when `request.auth`'s principal
 * holds every listed OAuth scope; otherwise 403 with `Bearer error="insufficient_scope",
 * scope="..."`, or 401 without a principal.
 *
 * @example app.post("/employees", { onRequest: requireScopes("employees:write") }, create);
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export function requireScopes(...scopes: string[]): GuardHook {
  return hookOf(scopeCheck(scopes, "requireScopes"));
}

/**
 * A route hook ({@link GuardHook}) that lets a request through only when its principal holds one
 * of the listed roles; otherwise 403, or 401 without a principal.
 *
 * @example app.delete("/employees/:id", { onRequest: requireRoles("admin") }, remove);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function requireRoles(...roles: string[]): GuardHook {
  return hookOf(roleCheck(roles, "requireRoles"));
}

/**
 * A route hook ({@link GuardHook}) that lets a request through when `predicate(principal, request)`
 * is true; otherwise 403, 401 without a principal, 500 when the predicate throws.
 *
 * @example
 * app.put("/employees/:id", { onRequest: authorize((p, request) => p.id === idOf(request)) }, update);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function authorize(predicate: AuthorizePredicate<FastifyRequest>): GuardHook {
  return hookOf(predicateCheck(predicate));
}
