import {
  type DiagnosticRow,
  diagnosticsTable,
  type RowRequest,
  recording,
} from "@svc/test-utils/conformance";
import type { SoapDiagnostic } from "../src/processor/diagnostics.js";
import {
  ENV11,
  envelope,
  getCustomer,
  invalidGetCustomer as invalid,
  logEvent,
  mustUnderstandBlock as mustUnderstand,
  SOAP11,
  SOAP as SOAP12,
  type WithoutRequest,
} from "./helpers.js";
import { PATH, soapMounts } from "./mounts.js";

// `svc:soap` through listening servers of every framework: each message's decision, and its
// `request` the framework's own (Express's `req`, Fastify's `request`, the Fetch `Request`, the
// `node:http` request). The decisions themselves, row by row: src/processor/diagnostics.test.ts.

const post = (body: string, contentType = SOAP12, soapAction?: string): RowRequest => ({
  method: "POST",
  path: PATH,
  headers:
    soapAction === undefined
      ? { "Content-Type": contentType }
      : { "Content-Type": contentType, SOAPAction: soapAction },
  body,
});

const rows: DiagnosticRow<WithoutRequest<SoapDiagnostic>>[] = [
  {
    name: "SOAP 1.2 getCustomer → 200, operation",
    request: post(envelope(getCustomer("42"))),
    status: 200,
    message: { decision: "operation", operation: "getCustomer", soapVersion: "1.2", oneWay: false },
  },
  {
    name: "SOAP 1.1 getCustomer → 200, operation",
    request: post(envelope(getCustomer("42"), undefined, ENV11), SOAP11, '"getCustomer"'),
    status: 200,
    message: { decision: "operation", operation: "getCustomer", soapVersion: "1.1", oneWay: false },
  },
  {
    name: "SOAP 1.2 logEvent (one-way) → 202, operation",
    request: post(envelope(logEvent)),
    status: 202,
    message: { decision: "operation", operation: "logEvent", soapVersion: "1.2", oneWay: true },
  },
  {
    name: "SOAP 1.2 schema-invalid → 400, fault Sender",
    request: post(envelope(invalid)),
    status: 400,
    message: { decision: "fault", operation: "getCustomer", faultCode: "Sender", soapVersion: "1.2" },
  },
  {
    name: "SOAP 1.1 schema-invalid → 500, fault Client",
    request: post(envelope(invalid, undefined, ENV11), SOAP11, '"getCustomer"'),
    status: 500,
    message: { decision: "fault", operation: "getCustomer", faultCode: "Client", soapVersion: "1.1" },
  },
  {
    name: "a mustUnderstand block not understood → fault MustUnderstand",
    request: post(envelope(getCustomer("42"), mustUnderstand)),
    status: 500,
    message: { decision: "fault", operation: "getCustomer", faultCode: "MustUnderstand", soapVersion: "1.2" },
  },
  {
    name: "not XML → 400, fault Sender",
    request: post("<a"),
    status: 400,
    message: { decision: "fault", operation: undefined, faultCode: "Sender", soapVersion: "1.2" },
  },
  {
    name: "Content-Type: application/json → 415, fault Sender",
    request: post("{}", "application/json"),
    status: 415,
    message: { decision: "fault", operation: undefined, faultCode: "Sender", soapVersion: "1.2" },
  },
  {
    name: "GET ?wsdl → the contract, no message",
    request: { path: `${PATH}?wsdl` },
    status: 200,
    message: undefined,
  },
];

diagnosticsTable("svc:soap", (seen) => recording(soapMounts(), seen), rows);
