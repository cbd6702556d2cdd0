import { type DecisionChannel, decisionChannel, publishDecision } from "@svc/kernel/internal";
import type { SoapVersion } from "../wsdl/contract.js";
import type { SoapResponse } from "./types.js";

/** What `svc:soap` says of one message: the operation that answered it, or the fault it got. */
export type SoapDiagnostic =
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      /** The operation ran and answered (200, or 202 for a one-way operation). */
      readonly decision: "operation";
      /** The operation's name in the contract (`getCustomer`). */
      readonly operation: string;
      /** The SOAP version of the message. */
      readonly soapVersion: SoapVersion;
      /** A one-way operation (no output): answered 202 without an envelope. */
      readonly oneWay: boolean;
      /**
       * For a message sent as an XOP package (SOAP MTOM): the parts its `xop:Include`s named and
       * their octets; absent for a plain envelope.
       */
      readonly attachments?: { readonly count: number; readonly bytes: number };
      /**
       * For an answer sent as an XOP package (the `mtom` option's `respond`): the parts it took
       * out of the envelope and their octets; absent for a plain envelope.
       */
      readonly responseAttachments?: { readonly count: number; readonly bytes: number };
    }
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      /** The message was answered with a fault. */
      readonly decision: "fault";
      /** The operation it was routed to, when it got that far. */
      readonly operation: string | undefined;
      /**
       * The fault's code as the wire names it: SOAP 1.2's `Sender`, `Receiver`, `MustUnderstand`,
       * `VersionMismatch`, `DataEncodingUnknown`; SOAP 1.1's `Client`, `Server`, `MustUnderstand`,
       * `VersionMismatch`; a WS-Security refusal's own code (`wsse:FailedCheck`,
       * `wsse:InvalidSecurity`, `wsu:MessageExpired`, ...).
       */
      readonly faultCode: string;
      /** The SOAP version the fault is answered in. */
      readonly soapVersion: SoapVersion;
    };

/**
 * The channel the endpoint's decisions are published on: its name and whether anyone listens.
 * Listen with `subscribeDiagnostics(soapChannel.name, listener)` of `@svc/kernel` (or
 * `node:diagnostics_channel`). A message is built only when it has a subscriber: without one, a
 * decision costs one property read.
 *
 * @see https://nodejs.org/api/diagnostics_channel.html
 */
export const soapChannel: DecisionChannel<SoapDiagnostic> = decisionChannel<SoapDiagnostic>("svc:soap");

/** The framework's request, as a message's `request`. */
function nativeOf(native: unknown): object | undefined {
  return typeof native === "object" && native !== null ? native : undefined;
}

/**
 * Publishes what `response` says of a message: its fault, or the operation that answered it
 * (`operation` undefined: not routed). Call it only when {@link soapChannel} has subscribers.
 */
export function reportAnswer(
  native: unknown,
  response: SoapResponse,
  operation: { readonly name: string; readonly output?: unknown } | undefined,
  version: SoapVersion,
  xop?: { readonly attachments: number; readonly attachmentBytes: number },
): void {
  const fault = response.fault;
  if (fault !== undefined) {
    publishDecision(soapChannel, {
      request: nativeOf(native),
      decision: "fault",
      operation: operation?.name,
      faultCode: fault.code,
      soapVersion: fault.version,
    });
    return;
  }
  if (operation === undefined || response.status >= 300) return;
  const sent = response.attachments;
  publishDecision(soapChannel, {
    request: nativeOf(native),
    decision: "operation",
    operation: operation.name,
    soapVersion: version,
    oneWay: operation.output === undefined,
    ...(xop !== undefined && { attachments: { count: xop.attachments, bytes: xop.attachmentBytes } }),
    ...(sent !== undefined && { responseAttachments: sent }),
  });
}
