import { createHash, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { WSU_NS } from "@svc/errors";
import type { Framework } from "@svc/test-utils/conformance";
import { DOMParser } from "@xmldom/xmldom";
import * as soap from "soap";
import { ExclusiveCanonicalization } from "xml-crypto";
import type { SoapContext, SoapServiceOptions } from "../src/binding/service.js";
import { WSSE_NS } from "../src/envelope/fault.js";
import { customerHandlers, ENV, FIXTURES, getCustomer, startCustomerService } from "./helpers.js";

// Messages for the WS-Security suites, signed by real signers: node-soap's WSSecurityCert (with
// xml-crypto underneath) and, where a message must say what no signer writes (an external
// reference, ECDSA), SignedInfo signed with node:crypto over xml-crypto's canonical form.

const WSSE = join(FIXTURES, "wsse");
export const pem = (name: string) => readFileSync(join(WSSE, name), "utf8");
export const CA = pem("ca.pem");
export const PARTNER = { key: pem("partner.key"), cert: pem("partner.pem") };
export const EC = { key: pem("ec.key"), cert: pem("ec.pem") };
export const STRANGER = { key: pem("stranger.key"), cert: pem("stranger.pem") };
export { WSSE_NS, WSU_NS };
export const DS_NS = "http://www.w3.org/2000/09/xmldsig#";
export const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
export const ECDSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256";

/** xsd:dateTime of now plus `ms`. */
export const at = (ms: number) => new Date(Date.now() + ms).toISOString();

export function timestamp(created: string | undefined, expires?: string, id = "TS-1"): string {
  return `<wsu:Timestamp xmlns:wsu="${WSU_NS}" wsu:Id="${id}">${created === undefined ? "" : `<wsu:Created>${created}</wsu:Created>`}${expires === undefined ? "" : `<wsu:Expires>${expires}</wsu:Expires>`}</wsu:Timestamp>`;
}

export function security(content: string, attributes = ""): string {
  return `<wsse:Security xmlns:wsse="${WSSE_NS}"${attributes}>${content}</wsse:Security>`;
}

/** The request envelope node-soap would send, before its security plug-in runs. */
export function unsigned(id = "42", header = ""): string {
  return `<soap:Envelope xmlns:soap="${ENV}"><soap:Header>${header}</soap:Header><soap:Body><c:GetCustomerRequest xmlns:c="http://svc.example.com/ws/customer/v1"><c:customerId>${id}</c:customerId></c:GetCustomerRequest></soap:Body></soap:Envelope>`;
}

/**
 * `xml` signed by node-soap's WSSecurityCert (BinarySecurityToken, Timestamp and Body signed),
 * its IDs as `wsu:Id`: by default xml-crypto writes an unqualified `Id` on env:Body, which
 * SOAP 1.2 Part 1 §5.3 (and SOAP 1.1 §4.1) does not allow there.
 */
export function signWithNodeSoap(
  xml: string,
  signer: { key: string; cert: string } = PARTNER,
  options: Record<string, unknown> = {},
): string {
  const wss = new soap.WSSecurityCert(signer.key, signer.cert, "", {
    signatureAlgorithm: RSA_SHA256,
    signerOptions: { idMode: "wssecurity" },
    ...options,
  });
  return wss.postProcess(xml, "soap");
}

/**
 * `xml` with a `ds:Signature` appended to its `wsse:Security` block, over the elements whose
 * Ids `references` names (`#id`, or any URI with the digest of `digestOf`'s element), signed
 * with `signer` by `algorithm`, the certificate as a BinarySecurityToken.
 */
export function signByHand(
  xml: string,
  references: readonly { uri: string; digestOf?: string }[],
  signer: { key: string; cert: string } = PARTNER,
  algorithm = RSA_SHA256,
): string {
  const doc = parseDom(xml);
  const refs = references
    .map(({ uri, digestOf }) => {
      const id = digestOf ?? uri.slice(1);
      const element = findById(doc, id);
      const canon = new ExclusiveCanonicalization().process(element, {});
      const value = createHash("sha256").update(canon).digest("base64");
      return `<ds:Reference URI="${uri}"><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"></ds:Transform></ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"></ds:DigestMethod><ds:DigestValue>${value}</ds:DigestValue></ds:Reference>`;
    })
    .join("");
  // Written in its canonical form: the text signed is the text sent.
  const signedInfo = `<ds:SignedInfo xmlns:ds="${DS_NS}"><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"></ds:CanonicalizationMethod><ds:SignatureMethod Algorithm="${algorithm}"></ds:SignatureMethod>${refs}</ds:SignedInfo>`;
  const value = sign("sha256", Buffer.from(signedInfo), {
    key: signer.key,
    ...(algorithm === ECDSA_SHA256 && { dsaEncoding: "ieee-p1363" as const }),
  }).toString("base64");
  const der = signer.cert.replace(/-----[^-]+-----|\s/g, "");
  const token = `<wsse:BinarySecurityToken xmlns:wsu="${WSU_NS}" wsu:Id="X509-1" EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary" ValueType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3">${der}</wsse:BinarySecurityToken>`;
  const signature = `<ds:Signature xmlns:ds="${DS_NS}">${signedInfo}<ds:SignatureValue>${value}</ds:SignatureValue><ds:KeyInfo><wsse:SecurityTokenReference><wsse:Reference URI="#X509-1" ValueType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3"/></wsse:SecurityTokenReference></ds:KeyInfo></ds:Signature>`;
  return xml.replace("</wsse:Security>", `${token}${signature}</wsse:Security>`);
}

/** The order n of P-256, the curve of {@link EC} (SEC 2 §2.4.2). */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/**
 * `signed` (by {@link EC}) with its ds:SignatureValue (r‖s, XML-DSig 1.1 §6.4.3) rewritten as
 * (r, n − s): another value that verifies over the same ds:SignedInfo (ECDSA is malleable).
 */
export function withNegatedS(signed: string): string {
  return signed.replace(/(<ds:SignatureValue>)([^<]+)(<\/ds:SignatureValue>)/, (_, open, value, close) => {
    const bytes = Buffer.from(value, "base64");
    const half = bytes.length / 2;
    const s = BigInt(`0x${bytes.subarray(half).toString("hex")}`);
    const negated = Buffer.from((P256_ORDER - s).toString(16).padStart(half * 2, "0"), "hex");
    return `${open}${Buffer.concat([bytes.subarray(0, half), negated]).toString("base64")}${close}`;
  });
}

/** A request envelope with a Timestamp (`TS-1`) and a Body (`Body-1`) to sign by hand. */
export function stamped(id = "42", extraHeader = "", created = at(0), expires = at(300_000)): string {
  return `<soap:Envelope xmlns:soap="${ENV}"><soap:Header>${security(timestamp(created, expires))}${extraHeader}</soap:Header><soap:Body xmlns:wsu="${WSU_NS}" wsu:Id="Body-1"><c:GetCustomerRequest xmlns:c="http://svc.example.com/ws/customer/v1"><c:customerId>${id}</c:customerId></c:GetCustomerRequest></soap:Body></soap:Envelope>`;
}

function parseDom(xml: string) {
  return new DOMParser().parseFromString(xml, "text/xml");
}

function findById(doc: ReturnType<typeof parseDom>, id: string) {
  const stack = [doc.documentElement];
  while (stack.length > 0) {
    const el = stack.pop();
    if (el === undefined || el === null) continue;
    const attrs = el.attributes;
    for (let i = 0; i < attrs.length; i++) {
      const a = attrs.item(i);
      if (a !== null && a.localName.toLowerCase() === "id" && a.value === id) return el;
    }
    for (let n = el.firstChild; n !== null; n = n.nextSibling) {
      if (n.nodeType === 1) stack.push(n as typeof el);
    }
  }
  throw new Error(`no element with Id ${id}`);
}

/** The customer service with `wsSecurity` on `framework`, recording each handler's `context.security`. */
export async function startSecuredService(
  wsSecurity: NonNullable<SoapServiceOptions["wsSecurity"]>,
  extra: Partial<SoapServiceOptions> = {},
  framework: Framework = "express",
) {
  const seen: SoapContext["security"][] = [];
  const handlers = customerHandlers() as Record<string, (p: never, c: SoapContext) => unknown>;
  const getCustomerHandler = handlers.getCustomer as (p: never, c: SoapContext) => unknown;
  const svc = await startCustomerService(
    {
      handlers: {
        ...handlers,
        getCustomer: (payload: never, ctx: SoapContext) => {
          seen.push(ctx.security);
          return getCustomerHandler(payload, ctx);
        },
      },
      wsSecurity,
      ...extra,
    },
    framework,
  );
  return { ...svc, seen };
}

export { getCustomer };
