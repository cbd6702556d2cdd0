import { escapeXml } from "@svc/errors";
import { ENVELOPE_START, ENVELOPE11_START } from "../envelope/envelope.js";
import { AddressingFault, SoapFault } from "../envelope/fault.js";
import type { Contract, ContractOperation, SoapVersion } from "../wsdl/contract.js";
import { actionNotSupported, headerRequired, invalidHeader, quoted } from "./faults.js";
import { isAnonymous, isNone, type RequestAddressing, type SoapAddressing } from "./headers.js";
import { SOAP_FAULT_ACTION, WSA_ANONYMOUS, WSA_FAULT_ACTION, WSA_NS } from "./names.js";
import { type BindingAddressing, bindingAddressing, declaresAddressing } from "./wsdl-actions.js";

/**
 * A service's WS-Addressing 1.0: the actions of its bindings' messages, read from the contract
 * once, at construction when the WSDL declares addressing metadata (whether a binding requires
 * it must be known for every message), else when the first message with addressing headers
 * comes: a contract without them costs nothing more at start-up, nor a message without them.
 */
export class AddressingSupport {
  #contract: Contract;
  #bindings: Partial<Record<SoapVersion, BindingAddressing>> | undefined;
  /** Per version, whether its binding requires WS-Addressing (§3.1.1, `wsdl:required`). */
  readonly required: Readonly<Record<SoapVersion, boolean>>;

  constructor(contract: Contract) {
    this.#contract = contract;
    this.#bindings = declaresAddressing(contract) ? bindingAddressing(contract) : undefined;
    this.required = {
      "1.1": this.#bindings?.["1.1"]?.use === "required",
      "1.2": this.#bindings?.["1.2"]?.use === "required",
    };
  }

  /** The binding's actions in `version`. */
  of(version: SoapVersion): BindingAddressing | undefined {
    this.#bindings ??= bindingAddressing(this.#contract);
    return this.#bindings[version];
  }
}

/** How a message's `wsa:Action` routed it. */
export type ActionRoute =
  | { kind: "operation"; op: ContractOperation }
  /** Operations share the action: their Body element tells them apart. */
  | { kind: "shared"; ops: readonly ContractOperation[] }
  | { kind: "unknown" };

/** The operation(s) `action` names in the binding. */
export function routeByAction(binding: BindingAddressing | undefined, action: string): ActionRoute {
  const ops = binding?.byAction.get(action);
  if (ops === undefined) return { kind: "unknown" };
  return ops.length === 1 ? { kind: "operation", op: ops[0] as ContractOperation } : { kind: "shared", ops };
}

/**
 * The checks of a message that carries WS-Addressing headers, after the MustUnderstand check
 * and WS-Security's, first fault first: a header that could not be read (§6.4.1); no `wsa:Action` (Core §3.1: the
 * [action] is required; §6.4.2); an action the `SOAPAction` field or the `action` parameter
 * contradicts (SOAP Binding §4.2; RFC 3902's `action` names the same [action]: ActionMismatch); an
 * action no operation takes (§6.4.4);
 * no `wsa:MessageID` when a reply is expected (Core §3.4: "if the related message lacks a
 * [message id] property, the processor MUST fault"); a reply or fault endpoint this node cannot
 * send to (it answers on the connection: Metadata §3.1.2, `wsa:OnlyAnonymousAddressSupported`).
 *
 * @see https://www.w3.org/TR/ws-addr-soap/#faults
 */
export function checkAddressing(
  wsa: RequestAddressing,
  version: SoapVersion,
  httpAction: string | undefined,
  routed: ActionRoute | undefined,
  op: ContractOperation | undefined,
): void {
  if (wsa.problem !== undefined) throw wsa.problem;
  const action = wsa.action;
  if (action === undefined)
    throw headerRequired("Action", "every message with WS-Addressing headers names its action");
  // SOAP Binding §4.2 (SOAP 1.1): "The field-value of the SOAPAction HTTP request header MUST
  // either be the value of the [action] property enclosed in quotation marks, or the empty value
  // """; the SOAP 1.2 `action` parameter likewise carries the [action] when present.
  if (httpAction !== undefined && httpAction !== "" && httpAction !== action) {
    const field = version === "1.1" ? "the SOAPAction field" : "the action parameter";
    throw invalidHeader(
      "Action",
      `wsa:Action ${quoted(action)} is not ${field} ${quoted(httpAction)}`,
      "ActionMismatch",
    );
  }
  if (routed?.kind === "unknown") throw actionNotSupported(action);
  const replies = op !== undefined && op.output !== undefined && !isNone(wsa.replyTo?.address);
  if (replies && wsa.messageId === undefined) {
    throw headerRequired(
      "MessageID",
      "the operation answers, and its reply relates to the request's message id",
    );
  }
  if (replies && !isAnonymous(wsa.replyTo?.address) && !isNone(wsa.replyTo?.address)) {
    throw onlyAnonymous("ReplyTo", wsa.replyTo?.address ?? "");
  }
  if (!isAnonymous(wsa.faultTo?.address) && !isNone(wsa.faultTo?.address)) {
    throw onlyAnonymous("FaultTo", wsa.faultTo?.address ?? "");
  }
}

function onlyAnonymous(header: string, address: string): AddressingFault {
  return invalidHeader(
    header,
    `wsa:${header} names ${quoted(address)}; this node answers on the request's connection only, the anonymous address (${WSA_ANONYMOUS})`,
    "OnlyAnonymousAddressSupported",
  );
}

/** The properties handlers see as `context.addressing`. */
export function addressingView(wsa: RequestAddressing): SoapAddressing {
  return {
    action: wsa.action ?? "",
    messageId: wsa.messageId,
    to: wsa.to ?? WSA_ANONYMOUS,
    replyTo: wsa.replyTo?.address ?? WSA_ANONYMOUS,
    faultTo: wsa.faultTo?.address,
    from: wsa.from,
    relatesTo: wsa.relatesTo,
  };
}

/**
 * The [action] of a fault's message (SOAP Binding §6): WS-Addressing's own faults'; a fault the
 * operation declares (its detail names the `wsdl:fault`'s element), that fault's action (Metadata
 * §4.4); any other SOAP fault, `.../addressing/soap/fault`.
 */
export function faultAction(
  err: unknown,
  binding: BindingAddressing | undefined,
  op: ContractOperation | undefined,
): string {
  if (err instanceof AddressingFault) return WSA_FAULT_ACTION;
  if (err instanceof SoapFault && err.detail !== undefined && op !== undefined) {
    const actions = binding?.byOperation.get(op.name)?.faults;
    if (actions !== undefined && actions.size > 0) {
      for (const key of Object.keys(err.detail)) {
        for (const [element, action] of actions) {
          if (element === key || element.endsWith(`}${key}`)) return action;
        }
      }
    }
  }
  return SOAP_FAULT_ACTION;
}

/**
 * The header blocks of the reply to a message that used WS-Addressing (Core §3.4): its [action],
 * a fresh [message id], the [relationship] to the request's message id, and the reference
 * parameters of the endpoint replied to. Its [destination] is the anonymous address, which an
 * absent `wsa:To` implies (SOAP Binding §3.5), so none is written.
 */
export function replyHeaders(wsa: RequestAddressing, action: string, fault: boolean): string {
  const open = `xmlns:wsa="${WSA_NS}"`;
  let out = `<wsa:Action ${open}>${escapeXml(action)}</wsa:Action><wsa:MessageID ${open}>urn:uuid:${globalThis.crypto.randomUUID()}</wsa:MessageID>`;
  if (wsa.messageId !== undefined)
    out += `<wsa:RelatesTo ${open}>${escapeXml(wsa.messageId)}</wsa:RelatesTo>`;
  const endpoint = fault ? (wsa.faultTo ?? wsa.replyTo) : wsa.replyTo;
  return out + (endpoint?.parameters ?? "");
}

/** Whether the reply goes nowhere: the endpoint it would go to is `none` (Core §2.1: discarded). */
export function repliesToNone(wsa: RequestAddressing, fault: boolean): boolean {
  const endpoint = fault ? (wsa.faultTo ?? wsa.replyTo) : wsa.replyTo;
  return isNone(endpoint?.address);
}

/** An envelope this node wrote (a fault's), with `headerXml` first in its Header. */
export function withHeaders(text: string, version: SoapVersion, headerXml: string): string {
  const start = version === "1.1" ? ENVELOPE11_START : ENVELOPE_START;
  if (!text.startsWith(start)) return text;
  const prefix = version === "1.1" ? "SOAP-ENV" : "env";
  const header = `<${prefix}:Header>`;
  if (text.startsWith(header, start.length)) {
    const at = start.length + header.length;
    return `${text.slice(0, at)}${headerXml}${text.slice(at)}`;
  }
  return `${start}${header}${headerXml}</${prefix}:Header>${text.slice(start.length)}`;
}
