import type { ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import { HttpError } from "@svc/errors";
import { type AuthRequest, authContextOf } from "./authenticate.js";
import { challenge } from "./authorization-header.js";
import { optionError } from "./options.js";
import type { Principal } from "./principal.js";

/** Decides whether a principal may go on; may be async. `R` is the request type (Express's `Request`). */
export type AuthorizePredicate<R extends AuthRequest = AuthRequest> = (
  principal: Principal,
  req: R,
) => boolean | Promise<boolean>;

function unauthenticated(req: AuthRequest): HttpError {
  const context = authContextOf(req);
  if (!context) {
    // A route guarded without authenticate() in front is a wiring bug, not the client's fault.
    return HttpError.internal("Authorization guard used without authenticate()");
  }
  return HttpError.unauthorized("Authentication is required", {
    headers: { "WWW-Authenticate": context.challenges },
  });
}

function forbidden(req: AuthRequest, principal: Principal, scope?: readonly string[]): HttpError {
  const context = authContextOf(req);
  const headers: Record<string, string> = {};
  if (principal.scheme === "bearer" && context) {
    // RFC 6750 §3.1: insufficient_scope → 403, and the scope attribute MAY name what is needed.
    headers["WWW-Authenticate"] = challenge("Bearer", {
      realm: context.realm,
      error: "insufficient_scope",
      scope: scope && scope.length > 0 ? scope.join(" ") : undefined,
    });
  }
  return HttpError.forbidden("You are not permitted to do this", { code: "insufficient_scope", headers });
}

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

function checkNames(kind: string, names: readonly string[]): string[] {
  if (names.length === 0 || names.some((n) => typeof n !== "string" || n === "" || /\s|["\\]/.test(n))) {
    throw optionError(kind, names, "one or more names without spaces, quotes or backslashes");
  }
  return [...names];
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
  const needed = checkNames("requireScopes", scopes);
  // RFC 6750 §3: the scope attribute "MUST NOT include characters outside the set %x21 / %x23-5B
  // / %x5D-7E" (RFC 6749 §3.3 scope-token). A non-ASCII name went into every 403's challenge as
  // is; one above U+00FF made Node refuse the header, so the 403 became an error page.
  if (!needed.every((scope) => SCOPE_TOKEN.test(scope)))
    throw optionError(
      "requireScopes",
      scopes,
      "one or more OAuth scope-tokens (printable ASCII, no quotes or backslashes)",
    );
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
      const then = (answer as { then?: unknown } | null | undefined)?.then;
      if (typeof then === "function") pending = answer as PromiseLike<unknown>;
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
