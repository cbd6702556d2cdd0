import { isHttpError, WSU_NS } from "@svc/errors";
import { SoapFault, WSSE_NS } from "../envelope/fault.js";

// The mapping from a credential outcome to a SOAP fault, in one place: what the `authenticate`
// and `authorize` hooks of createSoapService throw or resolve to becomes the SOAP 1.2 Part 1 §5.4
// fault WS-Security names for it, so an application only wires a verifier.
// https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-SOAPMessageSecurity-v1.1.1-os.html (§12)

/** WS-Security 1.1 §12 fault codes (plus wsu:MessageExpired's local name, §10). */
const WSSE_FAULT_CODES: ReadonlySet<string> = new Set([
  "UnsupportedSecurityToken",
  "UnsupportedAlgorithm",
  "InvalidSecurity",
  "InvalidSecurityToken",
  "FailedAuthentication",
  "FailedCheck",
  "SecurityTokenUnavailable",
  "MessageExpired",
]);

// WS-Security 1.1 §12: "FailedAuthentication: The security token could not be authenticated or authorized".
const FAILED_AUTHENTICATION = "The security token could not be authenticated or authorized";

/** An absolute URI (RFC 3986 §4.3) an error may give as its code's namespace. */
const ABSOLUTE_URI = /^[a-z][a-z0-9+.-]*:\S+$/i;

/**
 * Thrown by an `authenticate` hook when the credentials are refused: a Sender fault with subcode
 * `wsse:<code>` (WS-Security 1.1 §12), `wsse:FailedAuthentication` by default.
 *
 * @example throw new SoapAuthenticationError("Unknown user");
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0.pdf
 */
export class SoapAuthenticationError extends Error {
  /** The WS-Security fault code. */
  readonly code: string;
  constructor(message = FAILED_AUTHENTICATION, code = "FailedAuthentication") {
    super(message);
    this.name = "SoapAuthenticationError";
    this.code = WSSE_FAULT_CODES.has(code) ? code : "FailedAuthentication";
  }
}

/**
 * What an exception of the `authenticate` (or `authorize`) hook means:
 * - a {@link SoapFault}: sent as it is;
 * - refused credentials (a {@link SoapAuthenticationError}, an error whose `code` is a §12 fault
 *   code, such as `@svc/auth`'s `SoapAuthError`, or an `HttpError` 401/403): a Sender fault (400)
 *   with subcode `wsse:<code>` (`wsu:MessageExpired`, §10, or the error's own `namespace`). Its
 *   Reason is the error's message when the error carries a §12 code and says the message is safe
 *   to send (`expose: true`), else the §12 FailedAuthentication text: nothing that says which
 *   check failed unless the thrower chose so;
 * - anything else is returned as it is, so it ends as an `HttpError` with its status or a logged
 *   Receiver fault (500) like any other failure of this node.
 */
export function credentialsFault(err: unknown): unknown {
  if (err instanceof SoapFault) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const wsse = typeof code === "string" && WSSE_FAULT_CODES.has(code);
  const refused =
    wsse ||
    err instanceof SoapAuthenticationError ||
    (isHttpError(err) && (err.status === 401 || err.status === 403));
  if (!refused) return err;
  const local = wsse ? (code as string) : "FailedAuthentication";
  const {
    namespace: named,
    expose,
    message,
  } = err as { namespace?: unknown; expose?: unknown; message?: unknown };
  const namespace =
    typeof named === "string" && ABSOLUTE_URI.test(named)
      ? named
      : local === "MessageExpired"
        ? WSU_NS
        : WSSE_NS;
  return new SoapFault({
    code: "Sender",
    subcode: { namespace, localName: local },
    reason: wsse && expose === true && typeof message === "string" ? message : FAILED_AUTHENTICATION,
    cause: err,
  });
}

/** The `authorize` hook said no: WS-Security 1.1 §12 FailedAuthentication covers "authorized". */
export function notAuthorizedFault(operation: string): SoapFault {
  return new SoapFault({
    code: "Sender",
    subcode: { namespace: WSSE_NS, localName: "FailedAuthentication" },
    reason: `Not authorized to invoke ${operation}`,
  });
}
