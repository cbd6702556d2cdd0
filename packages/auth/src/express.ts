/**
 * `@svc/auth/express`: authentication and authorization as Express (4 and 5) middleware, the
 * same functions the main entry exports (`req.principal`, refusals to `next(err)`).
 *
 * @packageDocumentation
 */
export {
  type AuthenticateOptions,
  type AuthorizePredicate,
  type AuthRequest,
  authenticate,
  authorize,
  requireRoles,
  requireScopes,
} from "@svc/auth";
