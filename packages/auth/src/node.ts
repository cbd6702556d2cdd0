/**
 * `@svc/auth/node`: authentication and authorization on plain `node:http`. `authenticate(options)`
 * resolves to the request's {@link AuthContext} or rejects with the `HttpError` to answer (for
 * `errorResponder()` of `@svc/errors/node`); the guards check a context the same way.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type AuthContext,
  type AuthenticateOptions,
  type AuthGuard,
  type AuthorizePredicate,
  createAuthenticator,
  predicateGuard,
  recordedAuthContext,
  roleGuard,
  scopeGuard,
} from "@svc/auth";
import { recordAuthentication } from "@svc/kernel";
import { setPassage } from "@svc/kernel/node";

export type { AuthContext, AuthenticateOptions, AuthGuard, AuthorizePredicate };

/**
 * The context {@link authenticate} resolved for `req` (or that another step recorded in the
 * request's exchange), for code that was not handed it.
 *
 * @example const principal = authOf(req)?.principal;
 */
export function authOf(req: IncomingMessage): AuthContext | undefined {
  return recordedAuthContext(req);
}

/**
 * Authenticates `node:http` requests from their `Authorization` header (RFC 6750 Bearer, RFC 7617
 * Basic), with the options of `authenticate()` of the main entry, resolved once here. Resolves
 * to the {@link AuthContext} (its `principal`); rejects with the 401 (with its challenges), 400,
 * 429 or 503 `HttpError` to answer. Given `res`, the fields every response to an authenticated
 * request carries are set on it: with `dpop.nonce`, a fresh `DPoP-Nonce` (RFC 9449 §9).
 *
 * @example
 * const auth = authenticate({ realm: "api", bearer: { secret, algorithms: ["HS256"] } });
 * createServer(async (req, res) => {
 *   try {
 *     const { principal } = await auth(req, res);
 *     res.end(`hello ${principal?.id}`);
 *   } catch (err) {
 *     respondError(err, req, res);
 *   }
 * });
 * @see https://www.rfc-editor.org/rfc/rfc6750
 * @see https://www.rfc-editor.org/rfc/rfc7617
 */
export function authenticate(
  options: AuthenticateOptions,
): (req: IncomingMessage, res?: ServerResponse) => Promise<AuthContext> {
  const authenticator = createAuthenticator(options);
  const realm = { realm: authenticator.realm, challenges: authenticator.challenges };
  return async function svcAuthenticate(req, res) {
    const context = await authenticator.authenticate(req);
    recordAuthentication(req, context.principal, realm);
    if (res !== undefined) {
      const passage = authenticator.passage(req);
      if (passage !== undefined) setPassage(res, passage);
    }
    return context;
  };
}

/**
 * Resolves when the context's principal holds every listed OAuth scope; rejects with 401, or 403
 * with `Bearer error="insufficient_scope", scope="..."`.
 *
 * @example await requireScopes("employees:write")(await auth(req), req);
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export function requireScopes(...scopes: string[]): AuthGuard<IncomingMessage> {
  return scopeGuard(...scopes);
}

/**
 * Resolves when the context's principal holds one of the listed roles; rejects with 401 or 403.
 *
 * @example await requireRoles("admin")(context, req);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function requireRoles(...roles: string[]): AuthGuard<IncomingMessage> {
  return roleGuard(...roles);
}

/**
 * Resolves when `predicate(principal, req)` is true; rejects with 401, 403, or 500 when the
 * predicate throws.
 *
 * @example await authorize((p, req) => p.id === ownerOf(req))(context, req);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4
 */
export function authorize<R extends IncomingMessage = IncomingMessage>(
  predicate: AuthorizePredicate<R>,
): AuthGuard<R> {
  return predicateGuard(predicate);
}
