import { WSU_NS } from "@svc/errors";
import { SoapFault, WSSE_NS } from "../envelope/fault.js";

/**
 * WS-Security 1.1 §12: the fault codes (QNames in the `wsse` namespace, `MessageExpired` in the
 * `wsu` one, as WS-Security 1.0 §12 lists it) and the fault string the standard gives each.
 * @see https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-SOAPMessageSecurity-v1.1.1-os.html (§12)
 */
const FAULT_STRINGS = {
  UnsupportedSecurityToken: "An unsupported token was provided",
  UnsupportedAlgorithm: "An unsupported signature or encryption algorithm was used",
  InvalidSecurity: "An error was discovered processing the <wsse:Security> header",
  InvalidSecurityToken: "An invalid security token was provided",
  FailedAuthentication: "The security token could not be authenticated or authorized",
  FailedCheck: "The signature or decryption was invalid",
  SecurityTokenUnavailable: "Referenced security token could not be retrieved",
  MessageExpired: "The message has expired",
} as const;

export type WsseFaultCode = keyof typeof FAULT_STRINGS;

/**
 * A Sender fault with subcode `wsse:<code>` (SOAP 1.1: the faultcode itself). Its Reason is the
 * §12 fault string followed by what was found wrong, which names parts of the sender's own
 * message and nothing of this node's keys or state.
 */
export function wsseFault(code: WsseFaultCode, why: string): SoapFault {
  return new SoapFault({
    code: "Sender",
    subcode: { namespace: code === "MessageExpired" ? WSU_NS : WSSE_NS, localName: code },
    reason: `${FAULT_STRINGS[code]}: ${why}`,
  });
}
