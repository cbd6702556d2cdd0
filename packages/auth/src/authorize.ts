import type { ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import { HttpError } from "@svc/errors";
import { type AuthContext, type AuthRealm, type AuthRequest, authContextOf } from "./authenticate.js";
import { challenge } from "./authorization-header.js";
import { optionError } from "./options.js";
import type { Principal } from "./principal.js";

/**
 * Decides whether a principal may go on; may be async. `R` is the request type the framework
 * hands it (Express's `Request`, Fastify's `FastifyRequest`, a Fetch `Request`).
 */
export type AuthorizePredicate<R = AuthRequest> = (
  principal: Principal,
  req: R,
) => boolean | Promise<boolean>;

/**
 * A framework-free authorization check: the request's {@link AuthContext} (from
 * `createAuthenticator().authenticate()`) and the framework's request in; resolves to let it
 * through, rejects with the `HttpError` to answer (401 with the challenges without a principal,
 * 403 otherwise, `insufficient_scope` for a Bearer principal).
 */
export type AuthGuard<R = unknown> = (context: AuthContext | undefined, request: R) => Promise<void>;

/** No principal: 401 with the realm's challenges; no realm at all is a wiring bug, a 500. */
function unauthenticatedIn(realm: AuthRealm | undefined): HttpError {
  if (!realm) {
    // A route guarded without authenticate() in front is a wiring bug, not the client's fault.
    return HttpError.internal("Authorization guard used without authenticate()");
  }
  return HttpError.unauthorized("Authentication is required", {
    headers: { "WWW-Authenticate": realm.challenges },
  });
}

function forbiddenIn(
  realm: AuthRealm | undefined,
  principal: Principal,
  scope?: readonly string[],
): HttpError {
  const headers: Record<string, string> = {};
  if (principal.scheme === "bearer" && realm) {
    // RFC 6750 §3.1: insufficient_scope → 403, and the scope attribute MAY name what is needed.
    headers["WWW-Authenticate"] = challenge("Bearer", {
      realm: realm.realm,
      error: "insufficient_scope",
      scope: scope && scope.length > 0 ? scope.join(" ") : undefined,
    });
  }
  return HttpError.forbidden("You are not permitted to do this", { code: "insufficient_scope", headers });
}

function unauthenticated(req: AuthRequest): HttpError {
  return unauthenticatedIn(authContextOf(req));
}

function forbidden(req: AuthRequest, principal: Principal, scope?: readonly string[]): HttpError {
  return forbiddenIn(authContextOf(req), principal, scope);
}

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

function checkNames(kind: string, names: readonly string[]): string[] {
  if (names.length === 0 || names.some((n) => typeof n !== "string" || n === "" || /\s|["\\]/.test(n))) {
    throw optionError(kind, names, "one or more names without spaces, quotes or backslashes");
  }
  return [...names];
}

function checkScopes(kind: string, scopes: readonly string[]): string[] {
  const needed = checkNames(kind, scopes);
  // RFC 6750 §3: the scope attribute "MUST NOT include characters outside the set %x21 / %x23-5B
  // / %x5D-7E" (RFC 6749 §3.3 scope-token). A non-ASCII name went into every 403's challenge as
  // is; one above U+00FF made Node refuse the header, so the 403 became an error page.
  if (!needed.every((scope) => SCOPE_TOKEN.test(scope)))
    throw optionError(
      kind,
      scopes,
      "one or more OAuth scope-tokens (printable ASCII, no quotes or backslashes)",
    );
  return needed;
}

/**
 * Lets a request through only when its principal holds every listed OAuth scope; otherwise 403
 * with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` for Bearer tokens.
 * Without a principal: 401.
 *
 * @example
 * router.post("/employees", requireScopes("employees:write"), createEmployee);
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export function requireScopes(...scopes: string[]) {
  const needed = checkScopes("requireScopes", scopes);
  return function svcRequireScopes(req: AuthRequest, _res: ServerResponse, next: NextFunction): void {
    const principal = req.principal;
    if (!principal) next(unauthenticated(req));
    else if (needed.every((s) => principal.scopes.includes(s))) next();
    else next(forbidden(req, principal, needed));
  };
}

/**
 * Lets a request through only when its principal holds at least one of the listed roles;
 * otherwise 403. Without a principal: 401.
 *
 * @example
 * router.delete("/employees/:id", requireRoles("admin"), deleteEmployee);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function requireRoles(...roles: string[]) {
  const allowed = checkNames("requireRoles", roles);
  return function svcRequireRoles(req: AuthRequest, _res: ServerResponse, next: NextFunction): void {
    const principal = req.principal;
    if (!principal) next(unauthenticated(req));
    else if (allowed.some((r) => principal.roles.includes(r))) next();
    else next(forbidden(req, principal));
  };
}

/**
 * Lets a request through when `predicate(principal, req)` is true; otherwise 403. Without a
 * principal: 401. A predicate that throws is a 500, never a silent pass.
 *
 * @example
 * router.put(
 *   "/employees/:id",
 *   authorize<Request>((p, req) => p.roles.includes("admin") || p.id === req.params.id),
 *   update,
 * );
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function authorize<R extends AuthRequest = AuthRequest>(predicate: AuthorizePredicate<R>) {
  if (typeof predicate !== "function")
    throw optionError("authorize.predicate", predicate, "a function (principal, req) => boolean");
  const failed = (err: unknown) => HttpError.internal("Authorization check failed", { cause: err });
  return function svcAuthorize(req: R, _res: ServerResponse, next: NextFunction): void | Promise<void> {
    const principal = req.principal;
    if (!principal) return next(unauthenticated(req));
    let answer: unknown;
    let pending: PromiseLike<unknown> | undefined;
    try {
      answer = predicate(principal, req);
      // A boolean (the usual answer) has no `then` to look up on its prototype.
      if (typeof answer !== "boolean") {
        const then = (answer as { then?: unknown } | null | undefined)?.then;
        if (typeof then === "function") pending = answer as PromiseLike<unknown>;
      }
    } catch (err) {
      return next(failed(err));
    }
    // A synchronous predicate is decided in this turn: awaiting its boolean would cost every
    // guarded request a promise and a microtask hop before the handler runs.
    if (pending === undefined) return answer === true ? next() : next(forbidden(req, principal));
    return Promise.resolve(pending).then(
      (allowed) => (allowed === true ? next() : next(forbidden(req, principal))),
      (err: unknown) => next(failed(err)),
    );
  };
}

/**
 * The framework-free {@link requireScopes}: resolves when the context's principal holds every
 * listed OAuth scope; rejects with 401 without a principal, 403 with
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` without them.
 *
 * @example
 * const canWrite = scopeGuard("employees:write");
 * await canWrite(await auth.authenticate(req), req);
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export function scopeGuard(...scopes: string[]): AuthGuard {
  const needed = checkScopes("scopeGuard", scopes);
  return (context) => {
    const principal = context?.principal;
    if (!principal) return Promise.reject(unauthenticatedIn(context));
    if (needed.every((s) => principal.scopes.includes(s))) return Promise.resolve();
    return Promise.reject(forbiddenIn(context, principal, needed));
  };
}

/**
 * The framework-free {@link requireRoles}: resolves when the context's principal holds at least
 * one of the listed roles; rejects with 401 without a principal, 403 otherwise.
 *
 * @example
 * await roleGuard("admin")(context, request);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function roleGuard(...roles: string[]): AuthGuard {
  const allowed = checkNames("roleGuard", roles);
  return (context) => {
    const principal = context?.principal;
    if (!principal) return Promise.reject(unauthenticatedIn(context));
    if (allowed.some((r) => principal.roles.includes(r))) return Promise.resolve();
    return Promise.reject(forbiddenIn(context, principal));
  };
}

/**
 * The framework-free {@link authorize}: resolves when `predicate(principal, request)` is true;
 * rejects with 401 without a principal, 403 when false, 500 when the predicate throws.
 *
 * @example
 * const ownerOrAdmin = predicateGuard<Request>((p, req) => p.roles.includes("admin") || p.id === idOf(req));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function predicateGuard<R = unknown>(predicate: AuthorizePredicate<R>): AuthGuard<R> {
  if (typeof predicate !== "function")
    throw optionError("authorize.predicate", predicate, "a function (principal, request) => boolean");
  return async (context, request) => {
    const principal = context?.principal;
    if (!principal) throw unauthenticatedIn(context);
    let allowed: unknown;
    try {
      allowed = await predicate(principal, request);
    } catch (err) {
      throw HttpError.internal("Authorization check failed", { cause: err });
    }
    if (allowed !== true) throw forbiddenIn(context, principal);
  };
}
