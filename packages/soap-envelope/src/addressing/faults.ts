import { escapeXml } from "@svc/errors";
import { AddressingFault } from "../envelope/fault.js";
import { shown } from "../xml/reader.js";
import { WSA_NS } from "./names.js";

// The faults WS-Addressing 1.0 SOAP Binding §6.4 defines, as this node sends them: every one a
// Sender fault, its Reason the binding's text and what was found, a client's spelling quoted
// within SHOWN characters.

/** Characters of a value the client sent (an action, an address) a Reason quotes. */
export const SHOWN = 64;

/** `"value"` cut to {@link SHOWN} characters, for a Reason. */
export function quoted(value: string): string {
  return `"${shown(value, SHOWN)}"`;
}

function problemHeader(local: string): string {
  return `<wsa:ProblemHeaderQName xmlns:wsa="${WSA_NS}">wsa:${local}</wsa:ProblemHeaderQName>`;
}

/**
 * §6.4.1 Invalid Addressing Header, [Subsubcode] `subsubcode` when given (`InvalidCardinality`,
 * `InvalidAddress`, `InvalidEPR`, `MissingAddressInEPR`, `ActionMismatch`,
 * `OnlyAnonymousAddressSupported`), [Details] the `wsa:ProblemHeaderQName` of header `local`.
 */
export function invalidHeader(local: string, why: string, subsubcode?: string): AddressingFault {
  return new AddressingFault(
    subsubcode === undefined ? ["InvalidAddressingHeader"] : ["InvalidAddressingHeader", subsubcode],
    `A header representing a Message Addressing Property is not valid and the message cannot be processed: ${why}`,
    problemHeader(local),
  );
}

/** §6.4.2 Message Addressing Header Required: header `local` is missing. */
export function headerRequired(local: string, why: string): AddressingFault {
  return new AddressingFault(
    ["MessageAddressingHeaderRequired"],
    `A required header representing a Message Addressing Property is not present: wsa:${local} (${why})`,
    problemHeader(local),
  );
}

/**
 * §6.4.4 Action Not Supported: [Details] the `wsa:ProblemAction` naming the action, as sent (at
 * most {@link MAX_IRI_LENGTH} characters, the longest action read).
 */
export function actionNotSupported(action: string): AddressingFault {
  return new AddressingFault(
    ["ActionNotSupported"],
    `The action ${quoted(action)} cannot be processed at the receiver: no operation of the contract takes it`,
    `<wsa:ProblemAction xmlns:wsa="${WSA_NS}"><wsa:Action>${escapeXml(action)}</wsa:Action></wsa:ProblemAction>`,
  );
}

/** The longest IRI read from a header (an action, an address, a message id); a longer one is refused. */
export const MAX_IRI_LENGTH = 1024;
