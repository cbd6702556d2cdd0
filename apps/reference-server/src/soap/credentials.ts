import {
  createSoapCredentialsVerifier,
  type NonceStore,
  type Principal,
  type PrincipalInit,
} from "@svc/auth";
import { type SoapContext, SoapFault } from "@svc/soap-envelope";
import type { Config } from "../config.js";
import type { Security } from "../security.js";

/**
 * The endpoints' `authenticate` hook (spec part 5 rule 5): credentials in the SOAP Header
 * (`Authentication/Username/Password` or WS-Security `UsernameToken`), else those of the HTTP
 * `Authorization` header, checked against the same users as the resource API. @svc/auth's
 * verifier decides, and @svc/soap-envelope turns its refusals into Sender faults with a `wsse`
 * subcode: this only wires the users in.
 *
 * Header credentials go through the same Basic verifier as HTTP Basic and `POST /auth/token`
 * (`security.basic`, from `guardBasic`): one failure budget per client address and per user name
 * across REST, tokens and SOAP, checked before any hashing (spent: a Sender fault with 429 and
 * `Retry-After`), the same bounded hashing (full: a Receiver fault with 503 and `Retry-After`),
 * and the same cache of verified credentials (spec part 8).
 */
export function soapAuthenticator(
  config: Config,
  security: Security,
  nonceStore: NonceStore,
  namespace: string,
) {
  // A demo user's principal, computed (one scrypt) once per user: a digest check costs no hashing.
  const principals = new Map<string, Promise<PrincipalInit | null>>();
  const getPassword = async (username: string) => {
    // PasswordDigest needs the clear password: only the demo users' are known.
    const user = config.demoUsers.find((u) => u.username === username);
    if (!user) return undefined;
    let principal = principals.get(user.username);
    if (principal === undefined) {
      principal = security.verify(user.username, user.password);
      principals.set(user.username, principal);
      // A failed lookup (thrown) is not remembered.
      principal.catch(() => principals.delete(user.username));
    }
    const init = await principal;
    return init ? { ...init, password: user.password } : undefined;
  };
  // Only the Authentication block the contract declares (`{namespace}Authentication`) carries
  // credentials: SOAP 1.2 Part 1 §5.2.1 identifies a header block by its qualified name, so one of
  // another namespace is another block, addressed to someone else, never this service's login.
  const authenticationNamespace = namespace;
  return createSoapCredentialsVerifier(
    security.basic
      ? { verifier: security.basic, getPassword, nonceStore, authenticationNamespace }
      : { verify: security.verify, getPassword, nonceStore, authenticationNamespace },
  ).authenticate;
}

/** Operations that only read; every other operation of the contracts writes. */
const READ_OPERATIONS: ReadonlySet<string> = new Set(["getCustomer", "GetPrice"]);

/**
 * The endpoints' `authorize` hook (spec part 5 rule 4, "a known user without permission"):
 * reads are open to every authenticated user, every other operation needs the `write` scope,
 * as on the resource API. It runs before the Body is decoded, so a reader's createCustomer is
 * refused whatever its payload holds, without a schema check of it. An operation added to a
 * contract is a write until it is listed in READ_OPERATIONS.
 *
 * @example soapEndpoint({ wsdl, handlers, authenticate, authorize: authorizeSoap })
 */
export function authorizeSoap(context: SoapContext): boolean {
  if (READ_OPERATIONS.has(context.operation)) return true;
  const principal = context.principal as Principal | undefined;
  if (principal?.scopes.includes("write")) return true;
  throw new SoapFault({
    code: "Sender",
    subcode: "NotPermitted",
    reason: `${principal?.id ?? "This user"} may not call ${context.operation}: it needs write permission`,
  });
}
