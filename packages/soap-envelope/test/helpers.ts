import { join } from "node:path";
import type { ErrorLogger } from "@svc/errors";
import { errorHandler } from "@svc/errors/express";
import { listen } from "@svc/test-utils";
import type { Framework } from "@svc/test-utils/conformance";
import express from "express";
import { soapFaults } from "../src/binding/fault-renderer.js";
import type { SoapServiceOptions } from "../src/binding/service.js";
import { SoapFault } from "../src/envelope/fault.js";
import { soapEndpoint } from "../src/express.js";
import type { SoapVersion } from "../src/wsdl/contract.js";
import {
  type ParsedElement,
  parseXmlString,
  resolveLimits,
  resolveQName,
  type XmlElement,
} from "../src/xml/reader.js";

export const FIXTURES = join(import.meta.dirname, "../src/__fixtures__");
export const CUSTOMER_WSDL = join(FIXTURES, "customer.wsdl");
export const PRICE_WSDL = join(FIXTURES, "price.wsdl");
export const TNS = "http://svc.example.com/ws/customer/v1";
export const ENV = "http://www.w3.org/2003/05/soap-envelope";
export const SOAP = "application/soap+xml; charset=utf-8";

export interface Customer {
  id: bigint;
  name: string;
  email: string;
}

/** Received one-way messages, for assertions. */
export const received: unknown[] = [];

export function customerHandlers(): SoapServiceOptions["handlers"] {
  const customers = new Map<bigint, Customer>([
    [42n, { id: 42n, name: "Ada Lovelace", email: "ada@example.com" }],
  ]);
  return {
    getCustomer: async (payload: { customerId: bigint }) => {
      const customer = customers.get(payload.customerId);
      if (payload.customerId === 500n) throw new Error("database password=hunter2 unreachable");
      if (payload.customerId === 501n) return { customer: { id: 501n, name: "", email: "broken" } };
      if (!customer) {
        throw new SoapFault({
          code: "Sender",
          subcode: "CustomerNotFound",
          reason: `Customer ${payload.customerId} does not exist`,
          detail: { CustomerNotFound: { customerId: payload.customerId } },
        });
      }
      return { customer };
    },
    createCustomer: async (payload: { customer: Customer }) => {
      customers.set(payload.customer.id, payload.customer);
      return { customerId: payload.customer.id };
    },
    logEvent: async (payload: unknown) => {
      received.push(payload);
    },
    sendNotification: async (payload: unknown) => {
      received.push(payload);
    },
  } as SoapServiceOptions["handlers"];
}

export const silentLogger = {
  errors: [] as unknown[],
  error(obj: object) {
    this.errors.push(obj);
  },
  info() {},
};

/**
 * The application's error handler on Express as the README mounts it behind SOAP endpoints: the
 * errors of requests to `path` as SOAP faults (`soapFaults`), every other path's as the record.
 */
export function soapErrors(
  path: string | readonly string[],
  options: { versions?: readonly SoapVersion[]; logger?: ErrorLogger } = {},
) {
  const { versions, logger } = options;
  return errorHandler({
    ...(logger !== undefined && { logger }),
    renderers: [soapFaults({ path, ...(versions !== undefined && { versions }) })],
  });
}

/** An Express app with a SOAP endpoint at `path` and the error handler, trusting the proxy in front. */
export function expressSoapApp(path: string, options: SoapServiceOptions): express.Express {
  const app = express();
  app.set("trust proxy", true);
  app.use(path, soapEndpoint(options));
  app.use(soapErrors(path));
  return app;
}

/**
 * A SOAP endpoint at `path` on a real listening server of `framework` (Express 5 by default), its
 * errors SOAP faults as each framework's adapter answers them (`faultMounts` of `./mounts.js`).
 */
export async function startSoapService(
  options: SoapServiceOptions,
  path = "/ws/customer",
  framework: Framework = "express",
) {
  const withLogger = (): SoapServiceOptions => ({ logger: silentLogger, ...options });
  if (framework === "express") {
    const server = await listen(expressSoapApp(path, withLogger()));
    return { ...server, framework, endpoint: `${server.url}${path}` };
  }
  // Loaded for the suites that ask for another framework only: a suite on Express alone does not
  // load Fastify, so it does not run again in the `(fastify 5.0)` project (vitest.config.ts).
  const [{ serve }, { faultMounts }] = await Promise.all([
    import("@svc/test-utils/conformance"),
    import("./mounts.js"),
  ]);
  const server = await serve(framework, faultMounts(path, withLogger));
  return { ...server, framework, endpoint: `${server.url}${path}` };
}

/** The customer service on a real listening server of `framework` (Express 5 by default). */
export function startCustomerService(
  extra: Partial<SoapServiceOptions> = {},
  framework: Framework = "express",
) {
  return startSoapService(
    { wsdl: CUSTOMER_WSDL, handlers: customerHandlers(), ...extra },
    undefined,
    framework,
  );
}

export function envelope(body: string, header?: string, ns = ENV): string {
  return `<?xml version="1.0" encoding="utf-8"?><env:Envelope xmlns:env="${ns}">${header === undefined ? "" : `<env:Header>${header}</env:Header>`}<env:Body>${body}</env:Body></env:Envelope>`;
}

/** A diagnostics message's members but its `request`, for each kind of message. */
export type WithoutRequest<T> = T extends unknown ? Omit<T, "request"> : never;

/** SOAP 1.1's media type and envelope namespace. */
export const SOAP11 = "text/xml; charset=utf-8";
export const ENV11 = "http://schemas.xmlsoap.org/soap/envelope/";

/** A one-way `logEvent` message body. */
export const logEvent = `<c:LogEventRequest xmlns:c="${TNS}"><c:event><c:type>audit</c:type><c:severity>WARN</c:severity><c:message>m</c:message></c:event></c:LogEventRequest>`;
/** A `getCustomer` body the schema refuses. */
export const invalidGetCustomer = `<c:GetCustomerRequest xmlns:c="${TNS}"><c:nope/></c:GetCustomerRequest>`;
/** A header block no one understands, that must be understood. */
export const mustUnderstandBlock = `<x:Unknown xmlns:x="urn:x" env:mustUnderstand="true" xmlns:env="${ENV}"/>`;

export const getCustomer = (id: string) =>
  `<c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>${id}</c:customerId></c:GetCustomerRequest>`;

export async function post(
  url: string,
  body: string | Uint8Array,
  contentType = SOAP,
  headers: Record<string, string> = {},
) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": contentType, ...headers },
    body,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The parts of a fault response the tables assert on. */
export interface FaultView {
  envelopeNs: string;
  code: string | undefined;
  subcodes: string[];
  reason: string | undefined;
  lang: string | undefined;
  notUnderstood: string[];
  upgrade: string[];
  detail: XmlElement | undefined;
  order: string[];
}

export function readFault(text: string): FaultView {
  const root = parseXmlString(text, resolveLimits());
  const find = (el: ParsedElement | undefined, name: string) =>
    el?.children.find((c) => c.localName === name);
  const header = find(root, "Header");
  const body = find(root, "Body");
  const fault = find(body, "Fault");
  const qn = (el: ParsedElement, value: string) => {
    const q = resolveQName(value, el.scope);
    return q ? `{${q.namespace}}${q.localName}` : `?${value}`;
  };
  const code = find(fault, "Code");
  const subcodes: string[] = [];
  let sub = find(code, "Subcode");
  while (sub) {
    const v = find(sub, "Value");
    if (v) subcodes.push(qn(v, v.text));
    sub = find(sub, "Subcode");
  }
  const value = find(code, "Value");
  const faultcode = find(fault, "faultcode");
  const reasonText = find(find(fault, "Reason"), "Text");
  return {
    envelopeNs: root.namespace,
    code: value ? qn(value, value.text) : faultcode ? qn(faultcode, faultcode.text) : undefined,
    subcodes,
    reason: reasonText?.text,
    lang: reasonText?.attributes["{http://www.w3.org/XML/1998/namespace}lang"],
    notUnderstood: (header?.children ?? [])
      .filter((h) => h.localName === "NotUnderstood")
      .map((h) => qn(h, h.attributes.qname ?? "")),
    upgrade: (header?.children ?? [])
      .filter((h) => h.localName === "Upgrade")
      .flatMap((h) => h.children.map((s) => qn(s, s.attributes.qname ?? ""))),
    detail: find(fault, "Detail")?.children[0],
    order: (fault?.children ?? []).map((c) => c.localName),
  };
}

/** A response's content as text: an envelope's, or an MTOM package's octets read as UTF-8. */
export function textOf(body: string | Uint8Array): string {
  return typeof body === "string" ? body : new TextDecoder().decode(body);
}
