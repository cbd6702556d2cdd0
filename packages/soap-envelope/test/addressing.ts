import { join } from "node:path";
import type { SoapContext, SoapServiceOptions } from "../src/binding/service.js";
import { SoapFault } from "../src/envelope/fault.js";
import { type ParsedElement, parseXmlString, resolveLimits } from "../src/xml/reader.js";

/** The WS-Addressing 1.0 namespace and the names of its predefined addresses and actions. */
export const WSA = "http://www.w3.org/2005/08/addressing";
export const ANONYMOUS = `${WSA}/anonymous`;
export const NONE = `${WSA}/none`;

export const QUOTES_WSDL = join(import.meta.dirname, "fixtures/addressing/quotes.wsdl");
export const QNS = "http://quotes.example/ws/v1";
export const GET_QUOTE = `${QNS}/Quotes/GetQuote`;
export const GET_QUOTE_RESPONSE = `${QNS}/Quotes/GetQuoteResponse`;
export const UNKNOWN_SYMBOL = `${QNS}/Quotes/GetQuote/Fault/UnknownSymbol`;
/** Metadata §4.4.4: the default action of ping's input and output (WSDL 1.1 §2.4.5 names). */
export const PING = `${QNS}/Quotes/pingRequest`;
export const PING_RESPONSE = `${QNS}/Quotes/pingResponse`;
export const TRADE = `${QNS}/Quotes/Trade`;

/** What the quotes handlers saw, newest last. */
export const seen: { operation: string; addressing: SoapContext["addressing"] }[] = [];

export function quotesHandlers(): SoapServiceOptions["handlers"] {
  return {
    getQuote: ({ symbol }: { symbol: string }, ctx: SoapContext) => {
      seen.push({ operation: "getQuote", addressing: ctx.addressing });
      if (symbol === "NONE") {
        throw new SoapFault({
          code: "Sender",
          subcode: "UnknownSymbol",
          reason: `No quote for ${symbol}`,
          detail: { UnknownSymbol: { symbol } },
        });
      }
      return { price: "12.50" };
    },
    ping: ({ text }: { text: string }, ctx: SoapContext) => {
      seen.push({ operation: "ping", addressing: ctx.addressing });
      return { text };
    },
    trade: (_: unknown, ctx: SoapContext) => {
      seen.push({ operation: "trade", addressing: ctx.addressing });
    },
  } as SoapServiceOptions["handlers"];
}

export const getQuote = (symbol = "ACME") =>
  `<q:GetQuote xmlns:q="${QNS}"><q:symbol>${symbol}</q:symbol></q:GetQuote>`;
export const ping = `<q:Ping xmlns:q="${QNS}"><q:text>hi</q:text></q:Ping>`;
export const trade = `<q:Trade xmlns:q="${QNS}"><q:symbol>ACME</q:symbol></q:Trade>`;

/** A WS-Addressing header block, prefixed `wsa`. */
export const wsa = (local: string, content: string, attributes = "") =>
  `<wsa:${local} xmlns:wsa="${WSA}"${attributes}>${content}</wsa:${local}>`;

/**
 * The headers a WCF client sends (SOAP 1.2, WSHttpBinding): `wsa:Action` and `wsa:To` with
 * `mustUnderstand="1"`, a `urn:uuid:` message id, an anonymous `wsa:ReplyTo`.
 */
export function wcfHeaders(
  action: string,
  messageId = "urn:uuid:6f1c2d0e-8a51-4d5c-9d7e-000000000001",
  to = "http://localhost/ws/quotes",
  env = "s",
) {
  return (
    `<a:Action ${env}:mustUnderstand="1" xmlns:a="${WSA}">${action}</a:Action>` +
    `<a:MessageID xmlns:a="${WSA}">${messageId}</a:MessageID>` +
    `<a:ReplyTo xmlns:a="${WSA}"><a:Address>${ANONYMOUS}</a:Address></a:ReplyTo>` +
    `<a:To ${env}:mustUnderstand="1" xmlns:a="${WSA}">${to}</a:To>`
  );
}

/** A WCF-style envelope: `s:` for the envelope's namespace, the header blocks given. */
export function wcfEnvelope(headers: string, body: string, version: "1.1" | "1.2" = "1.2"): string {
  const ns =
    version === "1.2"
      ? "http://www.w3.org/2003/05/soap-envelope"
      : "http://schemas.xmlsoap.org/soap/envelope/";
  return `<s:Envelope xmlns:s="${ns}"><s:Header>${headers}</s:Header><s:Body>${body}</s:Body></s:Envelope>`;
}

/** The WS-Addressing header blocks of a response: local name → text (the last one of a name). */
export interface ReplyView {
  headers: Record<string, string>;
  /** The reference parameters written back (header blocks with `wsa:IsReferenceParameter="true"`). */
  parameters: ParsedElement[];
  /** Every header block's local name, in order. */
  names: string[];
}

export function replyHeaders(text: string): ReplyView {
  const root = parseXmlString(text, resolveLimits());
  const header = root.children.find((c) => c.localName === "Header");
  const headers: Record<string, string> = {};
  const parameters: ParsedElement[] = [];
  for (const block of header?.children ?? []) {
    if (block.namespace === WSA) headers[block.localName] = block.text;
    if (block.attributes[`{${WSA}}IsReferenceParameter`] === "true") parameters.push(block);
  }
  return { headers, parameters, names: (header?.children ?? []).map((c) => c.localName) };
}

/** The text of the first element named `local` anywhere in `element`. */
export function textOf(element: ParsedElement | undefined, local: string): string | undefined {
  if (element === undefined) return undefined;
  if (element.localName === local) return element.text;
  for (const child of element.children) {
    const found = textOf(child, local);
    if (found !== undefined) return found;
  }
  return undefined;
}
