/**
 * `@svc/auth/express`: authentication and authorization as Express (4 and 5) middleware. The
 * decisions are the main entry's (`createAuthenticator`, `scopeCheck`, `roleCheck`); this file
 * reads Express's request and calls `next`. `authenticate` records the principal and the realm in
 * the request's exchange, where the handlers read it (`requestState(req).principal` of
 * `@svc/kernel`) and the guards check it, so a principal recorded by any step
 * (`recordAuthentication` of `@svc/kernel`) is the one checked, and a `req.principal` the
 * application set itself is not.
 *
 * @packageDocumentation
 */
import type { ServerResponse } from "node:http";
import {
  type AuthenticateOptions,
  type AuthorizePredicate,
  type AuthRequest,
  createAuthenticator,
  type Principal,
  predicateCheck,
  recordedAuthContext,
  roleCheck,
  scopeCheck,
} from "@svc/auth";
import type { NextFunction } from "@svc/errors";
import { exchangeOf, headlessMiddleware, recordAuthentication } from "@svc/kernel";
import { expressView } from "@svc/kernel/express";
import { checkBooleanOption, writeRequestProperty } from "@svc/kernel/internal";
import { setPassage } from "@svc/kernel/node";

export type { AuthenticateOptions, AuthorizePredicate, AuthRequest } from "@svc/auth";

declare global {
  // Express's own augmentation point: `req.principal` is typed in every Express handler without
  // this package depending on @types/express.
  namespace Express {
    interface Request {
      /**
       * Written by `authenticate` under its `requestProperty` compatibility option once the
       * credentials are verified; read the principal with `requestState(req).principal` of
       * `@svc/kernel`, which the guards check.
       */
      principal?: Principal;
    }
  }
}

/** The options of {@link authenticate}: those of `createAuthenticator`, and the compatibility option. */
export interface ExpressAuthenticateOptions extends AuthenticateOptions {
  /**
   * A compatibility option for applications written against 0.1 and 0.2: also set
   * `req.principal` to the verified principal (and remove one an earlier step left). Handlers read
   * it with `requestState(req).principal` of `@svc/kernel`, on every framework, and no package
   * reads the property.
   * @default false
   */
  requestProperty?: boolean;
}

/** `options` without `requestProperty`, and whether it is on; a value that is no boolean is refused. */
function requestPropertyOption(options: ExpressAuthenticateOptions): [AuthenticateOptions, boolean] {
  if (typeof options !== "object" || options === null || !("requestProperty" in options))
    return [options, false];
  const { requestProperty, ...rest } = options;
  checkBooleanOption("auth", "requestProperty", requestProperty, "@svc/auth: requestProperty");
  return [rest, requestProperty === true];
}

/**
 * Express middleware that authenticates every request from its `Authorization` header and records
 * the principal `{ id, issuer, roles, scopes, scheme }` and the realm in the request's exchange:
 * what the guards, the rate limit and the `Idempotency-Key` step read, and the handlers with
 * `requestState(req).principal` of `@svc/kernel`, on every framework. `requestProperty: true` also
 * sets `req.principal`, as 0.1 and 0.2 did.
 *
 * - No credentials (or an unsupported scheme): 401 with one `WWW-Authenticate` challenge per
 *   enabled scheme (`Bearer realm="..."`, `Basic realm="...", charset="UTF-8"`).
 * - A Bearer token that fails verification: 401 with `error="invalid_token"` and nothing that
 *   says why (RFC 6750 §3.1); a malformed Bearer header: 400 with `error="invalid_request"`.
 * - Bad Basic credentials: 401 with the Basic challenge. With `basic.failureLimit`, a client or
 *   user name over its failure budget: 429 with `Retry-After`, checked before any hashing (RFC
 *   6585 §4); all hashing slots and the queue taken: 503 with `Retry-After` (RFC 9110 §15.6.4).
 * - A remote JWKS that cannot be fetched: 503 with `Retry-After` (the server's fault, not the token's).
 * - With Bearer enabled, `access_token` in the query string or a parsed form body: 400, never
 *   accepted (RFC 6750 §2.3, §5.3: a token in a URI leaks into logs and browser history). With
 *   only Basic enabled it is ordinary data and passes through.
 * - Scheme names are case-insensitive (RFC 9110 §11.1). No sessions, no cookies.
 *
 * @example
 * app.use(authenticate({
 *   realm: "employees",
 *   bearer: { jwksUri: "https://issuer.example/jwks.json", algorithms: ["ES256"], issuer, audience },
 *   basic: {
 *     verify: async (user, password) => ((await checkUser(user, password)) ? { id: user } : null),
 *     failureLimit: { perClient: failures, perUsername: failures }, // createRateLimiter from @svc/ratelimit
 *   },
 * }));
 * @see https://www.rfc-editor.org/rfc/rfc6750
 * @see https://www.rfc-editor.org/rfc/rfc7617
 */
export function authenticate(options: ExpressAuthenticateOptions) {
  const [rest, property] = requestPropertyOption(options);
  const authenticator = createAuthenticator(rest);
  const realm = { realm: authenticator.realm, challenges: authenticator.challenges };
  // It writes no response of its own (a refusal goes to `next`): a `chain` may hold its `Vary`.
  return headlessMiddleware(function svcAuthenticate(
    req: AuthRequest,
    res: ServerResponse,
    next: NextFunction,
  ): void | Promise<void> {
    // The app's `trust proxy` in the exchange, for the Basic failure budget's client address.
    expressView(req);
    // A body parsed in front (express.json(), express.urlencoded()), for the form-token check.
    if (req.body !== undefined) {
      const exchange = exchangeOf(req);
      exchange.body ??= { value: req.body };
    }
    // Not one an earlier step left, whatever this request's decision comes to.
    if (property) writeRequestProperty(req, "principal", undefined);
    let decided: Principal | undefined | Promise<Principal | undefined>;
    try {
      decided = authenticator.decide(req);
    } catch (err) {
      next(err);
      return;
    }
    // A cached token is decided in this turn: no promise, no closure on the hot path.
    if (!(decided instanceof Promise)) {
      recordAuthentication(req, decided, realm);
      if (property) writeRequestProperty(req, "principal", decided);
      next();
      return;
    }
    return decided.then((principal) => {
      recordAuthentication(req, principal, realm);
      if (property) writeRequestProperty(req, "principal", principal);
      // The fields of the response to an authenticated request (a fresh DPoP-Nonce).
      const passage = authenticator.passage(req);
      if (passage !== undefined) setPassage(res, passage);
      next();
    }, next);
  });
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
  const check = scopeCheck(scopes, "requireScopes");
  return function svcRequireScopes(req: AuthRequest, _res: ServerResponse, next: NextFunction): void {
    next(check(recordedAuthContext(req), req));
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
  const check = roleCheck(roles, "requireRoles");
  return function svcRequireRoles(req: AuthRequest, _res: ServerResponse, next: NextFunction): void {
    next(check(recordedAuthContext(req), req));
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
  const check = predicateCheck(predicate);
  return function svcAuthorize(req: R, _res: ServerResponse, next: NextFunction): void | Promise<void> {
    const decided = check(recordedAuthContext(req), req);
    if (decided instanceof Promise) return decided.then(next);
    next(decided);
  };
}
