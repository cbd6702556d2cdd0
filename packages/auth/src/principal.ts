import type { Principal as KernelPrincipal } from "@svc/kernel";

/**
 * Who made the request, as established by `authenticate` or {@link verifySoapCredentials}: the
 * kernel's `Principal` (what every package keys by) with what the guards check. It is derived from
 * verified credentials only, never from anything the client merely claims.
 *
 * @example
 * app.get("/me", authenticate({ bearer }), (req, res) => res.json(requestState(req).principal));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11
 */
export interface Principal extends KernelPrincipal {
  /** The subject: the JWT `sub`, or the user name Basic or SOAP credentials were checked for. */
  id: string;
  /**
   * Who vouches for `id`: the verified token's `iss` (Bearer, DPoP); `undefined` for Basic and SOAP
   * credentials, which the application's own `verify` checked. Two issuers' `alice` are two
   * users: compare principals, and key what you keep per principal, with `principalKey` of
   * `@svc/kernel`, which qualifies the id by its issuer.
   * @see https://openid.net/specs/openid-connect-core-1_0.html#ClaimStability `iss` and `sub` together identify a user.
   */
  issuer?: string | undefined;
  /** Roles, for `requireRoles`. */
  roles: string[];
  /** OAuth 2.0 scopes, for `requireScopes` (RFC 6749 §3.3). */
  scopes: string[];
  /** How the credentials arrived. */
  scheme: "bearer" | "dpop" | "basic" | "soap";
}

/**
 * What a `verify` callback (Basic, SOAP) returns for good credentials: the principal without
 * its `scheme`, which the caller fills in. `roles` and `scopes` default to empty lists.
 */
export interface PrincipalInit {
  /** The subject's stable identifier. */
  id: string;
  /**
   * The issuer whose subjects these users are, when the same users also arrive with that
   * issuer's tokens (your own token issuer's `iss`): Basic and Bearer then give one user one
   * `principalKey`. A Bearer principal's issuer is always its verified `iss`, never this.
   * @default undefined (the application's own users, apart from every issuer's subjects)
   */
  issuer?: string | undefined;
  /** @default [] */
  roles?: readonly string[];
  /** @default [] */
  scopes?: readonly string[];
}

/**
 * Freezes nothing, copies everything: a principal handed out never aliases caller arrays. `issuer`
 * is the verified token's `iss` for Bearer, the `verify` callback's `issuer` for Basic and SOAP.
 */
export function toPrincipal(
  init: PrincipalInit,
  scheme: Principal["scheme"],
  issuer: string | undefined,
): Principal {
  if (typeof init !== "object" || init === null || typeof init.id !== "string" || init.id === "") {
    throw new TypeError("A principal needs a non-empty string id");
  }
  if (issuer !== undefined && (typeof issuer !== "string" || issuer === "")) {
    throw new TypeError("A principal's issuer must be a non-empty string, or undefined");
  }
  return {
    id: init.id,
    issuer,
    roles: stringList(init.roles, "roles"),
    scopes: stringList(init.scopes, "scopes"),
    scheme,
  };
}

function stringList(value: readonly string[] | undefined, name: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw new TypeError(`A principal's ${name} must be an array of strings`);
  }
  return [...value];
}
