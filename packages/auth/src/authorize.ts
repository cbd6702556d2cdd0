import { HttpError } from "@svc/errors";
import { exchangeIfAny, type Principal as KernelPrincipal } from "@svc/kernel";
import type { AuthContext, AuthRealm, AuthRequest } from "./authenticate.js";
import { challenge } from "./authorization-header.js";
import { publishGuardRefusal } from "./diagnostics.js";
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
  if ((principal.scheme === "bearer" || principal.scheme === "dpop") && realm && realm.realm !== "") {
    // RFC 6750 §3.1: insufficient_scope → 403, and the scope attribute MAY name what is needed;
    // RFC 9449 §7.1 answers a DPoP token with the same error codes in the DPoP challenge.
    headers["WWW-Authenticate"] = challenge(principal.scheme === "dpop" ? "DPoP" : "Bearer", {
      realm: realm.realm,
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
 * A framework-free authorization decision on a request's {@link AuthContext}: `undefined` to let
 * it through, else the `HttpError` to answer (401 with the realm's challenges without a principal,
 * 403 otherwise, `insufficient_scope` for a Bearer principal). Synchronous, for an adapter whose
 * framework calls on at once (Express's `next`). Given the framework's `request`, a refusal is
 * published on `svc:auth` (`refused`, `insufficient-scope` or `missing`) for it.
 */
export type AuthCheck = (context: AuthContext | undefined, request?: object) => HttpError | undefined;

function objectOrNone(value: unknown): object | undefined {
  return typeof value === "object" && value !== null ? value : undefined;
}

/** `refusal`, published for `request` on `svc:auth` when anyone listens. */
function told(refusal: HttpError, request: unknown, principal: Principal | undefined): HttpError {
  if (typeof request === "object" && request !== null)
    publishGuardRefusal(request, refusal, principal?.scheme);
  return refusal;
}

/**
 * The decision of `requireScopes` (every listed OAuth scope held); `option` names the function
 * a refused list is reported under.
 *
 * @example const refusal = scopeCheck(["employees:write"])(recordedAuthContext(request));
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export function scopeCheck(scopes: readonly string[], option = "scopeCheck"): AuthCheck {
  const needed = checkScopes(option, scopes);
  return holdingCheck(
    (principal) => needed.every((s) => principal.scopes.includes(s)),
    (context, principal) => forbiddenIn(context, principal, needed),
  );
}

/**
 * The decision of `requireRoles` (one of the listed roles held); `option` names the function a
 * refused list is reported under.
 *
 * @example const refusal = roleCheck(["admin"])(recordedAuthContext(request));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function roleCheck(roles: readonly string[], option = "roleCheck"): AuthCheck {
  const allowed = checkNames(option, roles);
  return holdingCheck(
    (principal) => allowed.some((r) => principal.roles.includes(r)),
    (context, principal) => forbiddenIn(context, principal),
  );
}

/**
 * The check that lets a request through when its principal `holds` what is asked; otherwise the
 * 403 `forbidden` makes, or 401 without a principal.
 */
function holdingCheck(
  holds: (principal: Principal) => boolean,
  forbidden: (context: AuthContext | undefined, principal: Principal) => HttpError,
): AuthCheck {
  return (context, request) => {
    const principal = context?.principal;
    if (!principal) return told(unauthenticatedIn(context), request, undefined);
    return holds(principal) ? undefined : told(forbidden(context, principal), request, principal);
  };
}

const NO_LIST: string[] = Object.freeze([]) as unknown as string[];

/** A list of strings as recorded, else none: a principal recorded without roles or scopes holds none. */
function stringsOf(value: unknown): string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : NO_LIST;
}

/**
 * The {@link AuthContext} of `request` as an authentication step recorded it in the request's
 * exchange (`recordAuthentication` of `@svc/kernel`: `@svc/auth`'s adapters, or the application),
 * on any framework, for the guards: `undefined` when none has run. A principal the application
 * recorded with an `id` only holds no roles and no scopes, so a role or scope guard answers 403;
 * a principal recorded without a realm gets no challenge with its 403.
 *
 * @example const context = recordedAuthContext(req); // then scopeCheck(["read"])(context)
 */
export function recordedAuthContext(request: object): AuthContext | undefined {
  const recorded = exchangeIfAny(request)?.authentication;
  if (recorded === undefined) return undefined;
  const principal = recorded.principal === undefined ? undefined : guardPrincipal(recorded.principal);
  const realm = recorded.realm;
  if (realm === undefined)
    return principal === undefined ? undefined : { principal, realm: "", challenges: "" };
  return { principal, realm: realm.realm, challenges: realm.challenges };
}

/** `principal` as the guards read it: `@svc/auth`'s own as it is, another with empty lists. */
function guardPrincipal(principal: KernelPrincipal): Principal {
  const p = principal as Partial<Principal>;
  if (Array.isArray(p.roles) && Array.isArray(p.scopes)) {
    const roles = stringsOf(p.roles);
    const scopes = stringsOf(p.scopes);
    if (roles === p.roles && scopes === p.scopes) return principal as Principal;
    return { ...(principal as Principal), roles, scopes };
  }
  return { ...(principal as Principal), roles: stringsOf(p.roles), scopes: stringsOf(p.scopes) };
}

/**
 * The framework-free `requireScopes`: resolves when the context's principal holds every
 * listed OAuth scope; rejects with 401 without a principal, 403 with
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` without them.
 *
 * @example
 * const canWrite = scopeGuard("employees:write");
 * await canWrite(await auth.authenticate(req), req);
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export function scopeGuard(...scopes: string[]): AuthGuard {
  const check = scopeCheck(scopes, "scopeGuard");
  return (context, request) => {
    const refusal = check(context, objectOrNone(request));
    return refusal === undefined ? Promise.resolve() : Promise.reject(refusal);
  };
}

/**
 * The framework-free `requireRoles`: resolves when the context's principal holds at least
 * one of the listed roles; rejects with 401 without a principal, 403 otherwise.
 *
 * @example
 * await roleGuard("admin")(context, request);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function roleGuard(...roles: string[]): AuthGuard {
  const check = roleCheck(roles, "roleGuard");
  return (context, request) => {
    const refusal = check(context, objectOrNone(request));
    return refusal === undefined ? Promise.resolve() : Promise.reject(refusal);
  };
}

/**
 * {@link AuthCheck}'s counterpart for a predicate, which may answer later: the refusal, or
 * `undefined` to let the request through, at once when the predicate answers with a boolean; a
 * promise of them (never rejected) only when it answers with a promise.
 */
export type PredicateCheck<R = unknown> = (
  context: AuthContext | undefined,
  request: R,
) => HttpError | undefined | Promise<HttpError | undefined>;

/**
 * The decision of `authorize`: 401 without a principal, 403 unless `predicate(principal, request)`
 * is `true`, 500 when it throws or rejects. A synchronous predicate is decided in the same turn,
 * so an adapter whose framework takes a callback (Express's `next`, a Fastify hook's `done`) goes
 * on without a promise and its microtask; `option` names the function a refused predicate is
 * reported under.
 *
 * @example
 * const decided = predicateCheck<Request>((p, req) => p.id === idOf(req))(recordedAuthContext(req), req);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function predicateCheck<R = unknown>(
  predicate: AuthorizePredicate<R>,
  option = "authorize.predicate",
): PredicateCheck<R> {
  if (typeof predicate !== "function")
    throw optionError(option, predicate, "a function (principal, request) => boolean");
  const failed = (err: unknown) => HttpError.internal("Authorization check failed", { cause: err });
  return (context, request) => {
    const principal = context?.principal;
    if (!principal) return told(unauthenticatedIn(context), request, undefined);
    let answer: unknown;
    try {
      answer = predicate(principal, request);
    } catch (err) {
      return failed(err);
    }
    // A boolean (the usual answer) has no `then` to look up on its prototype, and needs no
    // closure over the request to be decided later.
    if (typeof answer !== "boolean") {
      const then = (answer as { then?: unknown } | null | undefined)?.then;
      if (typeof then === "function")
        return Promise.resolve(answer).then(
          (allowed) => allowedOr(allowed, context, principal, request),
          failed,
        );
    }
    return allowedOr(answer, context, principal, request);
  };
}

/** `undefined` when a predicate answered `true`, else the 403 for `principal`. */
function allowedOr(
  allowed: unknown,
  context: AuthContext,
  principal: Principal,
  request: unknown,
): HttpError | undefined {
  return allowed === true ? undefined : told(forbiddenIn(context, principal), request, principal);
}

/**
 * The framework-free `authorize`: resolves when `predicate(principal, request)` is true;
 * rejects with 401 without a principal, 403 when false, 500 when the predicate throws.
 *
 * @example
 * const ownerOrAdmin = predicateGuard<Request>((p, req) => p.roles.includes("admin") || p.id === idOf(req));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function predicateGuard<R = unknown>(predicate: AuthorizePredicate<R>): AuthGuard<R> {
  const check = predicateCheck(predicate);
  return async (context, request) => {
    const refusal = await check(context, request);
    if (refusal !== undefined) throw refusal;
  };
}
