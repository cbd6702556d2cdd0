import {
  createSoapCredentialsVerifier,
  type NonceStore,
  type Principal,
  type PrincipalInit,
  SoapAuthError,
} from "@svc/auth";
import {
  type SoapAuthContext,
  type SoapContext,
  SoapFault,
  WSSE_NS,
  type XmlElement,
} from "@svc/soap-envelope";
import type { Request } from "express";
import type { Config } from "../config.js";
import type { Security } from "../security.js";

function hasHeaderCredentials(blocks: readonly XmlElement[]): boolean {
  return blocks.some(
    (b) => (b.namespace === WSSE_NS && b.localName === "Security") || b.localName === "Authentication",
  );
}

/** WS-Security 1.0 §12 fault, with the subcode namespace @svc/auth names (wsse, or wsu for MessageExpired). */
function securityFault(code: string, namespace: string, reason: string, cause?: unknown): SoapFault {
  return new SoapFault({
    code: "Sender",
    subcode: { namespace, localName: code },
    reason,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The endpoints' `authenticate` hook (spec part 5 rule 5): credentials in the SOAP Header
 * (`Authentication/Username/Password` or WS-Security `UsernameToken`), else those of the HTTP
 * `Authorization` header, checked against the same users as the resource API. None, or wrong
 * ones, are a Sender fault with a `wsse` subcode.
 *
 * Header credentials go through the same Basic verifier as HTTP Basic and `POST /auth/token`
 * (`security.basic`, from `guardBasic`): one failure budget per client address and per user name
 * across REST, tokens and SOAP, checked before any hashing (spent: a Sender fault with 429 and
 * `Retry-After`), the same bounded hashing (full: a Receiver fault with 503 and `Retry-After`),
 * and the same cache of verified credentials (spec part 8).
 */
export function soapAuthenticator(config: Config, security: Security, nonceStore: NonceStore) {
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
  const credentials = createSoapCredentialsVerifier(
    security.basic
      ? { verifier: security.basic, getPassword, nonceStore }
      : { verify: security.verify, getPassword, nonceStore },
  );
  return async function authenticateSoap(
    headerBlocks: readonly XmlElement[],
    context: SoapAuthContext,
  ): Promise<Principal> {
    // The principal of the HTTP Authorization header (Basic or Bearer), verified by @svc/auth's
    // `authenticate` in front of the endpoint; the endpoint hands the HTTP request over as `http`.
    const fromHttp = (context.http as Request | undefined)?.principal;
    if (hasHeaderCredentials(headerBlocks)) {
      let principal: Principal;
      try {
        principal = await credentials.verify(headerBlocks, { request: context.http as Request | undefined });
      } catch (err) {
        if (err instanceof SoapAuthError) {
          throw securityFault(err.code, err.namespace, err.message, err);
        }
        throw err;
      }
      // Two different users in one request: whose request it is would be a guess.
      if (fromHttp && fromHttp.id !== principal.id) {
        throw securityFault(
          "InvalidSecurity",
          WSSE_NS,
          "The SOAP header and the Authorization header name different users",
        );
      }
      return principal;
    }
    if (fromHttp) return fromHttp;
    throw securityFault(
      "FailedAuthentication",
      WSSE_NS,
      "Credentials are required: a SOAP Authentication or wsse:Security header, or HTTP Authorization",
    );
  };
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
