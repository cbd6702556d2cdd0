import { HttpError, isHttpError } from "@svc/errors";
import { Soap11EnvelopeError } from "../envelope/envelope.js";
import {
  fault11ToXml,
  faultCodeOf,
  faultToXml,
  SoapFault,
  senderFault,
  soap11VersionMismatchXml,
  writePlainDetail,
} from "../envelope/fault.js";
import type { ContractOperation, SoapVersion } from "../wsdl/contract.js";
import { XmlError } from "../xml/reader.js";
import {
  type MessageType,
  RESPONSE_CONTENT_TYPE,
  RESPONSE11_CONTENT_TYPE,
  type ServiceConfig,
} from "./config.js";
import type { SoapLogger, SoapResponse } from "./types.js";

/**
 * The SOAP version of a fault answered before (or without) reading the envelope: the request's
 * media type's (`text/xml` is SOAP 1.1's) when the contract has that version, else the contract's.
 */
export function answerVersion(config: ServiceConfig, type: MessageType | undefined): SoapVersion {
  const soap11 = type?.soap11 === true ? config.soap11 !== undefined : config.soap12 === undefined;
  return soap11 ? "1.1" : "1.2";
}

/** 415 naming the media types this endpoint accepts (RFC 9110 §15.5.16, `Accept-Post`). */
export function unsupportedMediaType(config: ServiceConfig, message?: string): HttpError {
  return HttpError.unsupportedMediaType(
    message ?? `Content-Type must be ${config.acceptPost.replace(", ", " or ")}`,
    {
      headers: { "Accept-Post": config.acceptPost },
    },
  );
}

/** A body that is not well-formed XML (or too large) is refused before any SOAP processing. */
export function parseFailure(config: ServiceConfig, err: unknown, version: SoapVersion): SoapResponse {
  if (err instanceof XmlError && err.kind === "too-large") {
    return refuse(config, HttpError.contentTooLarge(err.message), version);
  }
  if (err instanceof XmlError && err.kind === "timeout") {
    // RFC 9110 §15.5.9: 408 when the server "did not receive a complete request message within
    // the time that it was prepared to wait"; it "SHOULD send the \"close\" connection option",
    // as it has decided to close the connection rather than continue waiting.
    return refuse(config, new HttpError(408, err.message, { headers: { Connection: "close" } }), version);
  }
  if (err instanceof XmlError) {
    return faultResponse(config, senderFault(err.message), undefined, {}, undefined, version);
  }
  throw err;
}

/** A response decided before the SOAP processing: thrown by a step, answered as it is. */
export class Answer {
  constructor(readonly response: SoapResponse) {}
}

/** A VersionMismatch fault in `version`, its env:Upgrade block naming the versions served. */
export function versionMismatch(config: ServiceConfig, version: SoapVersion): SoapResponse {
  if (version === "1.1") {
    const names = config.versions.map((v) => `SOAP ${v}`);
    const supports = names.length === 1 ? `${names[0]} only` : names.join(" and ");
    // SOAP 1.1 §6.2: faults travel with 500 and text/xml.
    const response: SoapResponse = {
      status: 500,
      headers: { "Content-Type": RESPONSE11_CONTENT_TYPE },
      body: soap11VersionMismatchXml(config.upgrade, supports),
      fault: { code: "VersionMismatch", version: "1.1" },
    };
    return response;
  }
  return faultResponse(
    config,
    new SoapFault({
      code: "VersionMismatch",
      reason: "The message is not a SOAP 1.2 envelope",
      headerXml: config.upgrade,
    }),
    500,
    {},
    undefined,
    "1.2",
  );
}

/** What the `authenticate` hook threw, turned into a fault by the step after it. */
export class AuthenticationFailure {
  constructor(readonly error: unknown) {}
}

/**
 * What a step threw, as the response: an {@link Answer} as it is; a VersionMismatch; a
 * {@link SoapFault} with its Part 2 §7.5.2.2 status; an `HttpError` with its status and headers,
 * 4xx as Sender, 5xx as Receiver; anything else a Receiver fault (500), logged. In SOAP 1.1 every
 * fault is a 500 (SOAP 1.1 §6.2: "In case of a SOAP error while processing the request, the SOAP
 * HTTP server MUST issue an HTTP 500"), with the `HttpError`'s header fields.
 */
export function toFaultResponse(
  config: ServiceConfig,
  err: unknown,
  op: ContractOperation | undefined,
  correlationId: string | undefined,
  logger: SoapLogger,
  version: SoapVersion = "1.2",
  bodyFault = false,
): SoapResponse {
  if (err instanceof Answer) return err.response;
  if (err instanceof Soap11EnvelopeError) return versionMismatch(config, "1.1");
  const soap11 = version === "1.1";
  if (err instanceof SoapFault) {
    try {
      return faultResponse(config, err, soap11 ? 500 : err.httpStatus, {}, op, version, bodyFault);
    } catch (detailError) {
      return internalFault(config, logger, detailError, op, correlationId, 500, {}, version, bodyFault);
    }
  }
  if (isHttpError(err)) {
    if (err.status < 500) {
      return faultResponse(
        config,
        senderFault(err.expose ? err.message : err.reason),
        soap11 ? 500 : err.status,
        { ...err.headers },
        undefined,
        version,
        bodyFault,
      );
    }
    const status = soap11 ? 500 : err.status;
    return internalFault(
      config,
      logger,
      err,
      op,
      correlationId,
      status,
      { ...err.headers },
      version,
      bodyFault,
    );
  }
  return internalFault(config, logger, err, op, correlationId, 500, {}, version, bodyFault);
}

/** A failure of this node: logged with the correlation id, answered without internal detail. */
function internalFault(
  config: ServiceConfig,
  logger: SoapLogger,
  err: unknown,
  op: ContractOperation | undefined,
  correlationId: string | undefined,
  status = 500,
  headers: Record<string, string> = {},
  version: SoapVersion = "1.2",
  bodyFault = false,
): SoapResponse {
  logger.error({ err, operation: op?.name, correlationId }, "SOAP operation failed");
  return faultResponse(
    config,
    new SoapFault({ code: "Receiver", reason: "The service could not process the request" }),
    status,
    headers,
    undefined,
    version,
    bodyFault,
  );
}

/**
 * A fault as a response; its detail entries are encoded with the schema when it declares them.
 * In SOAP 1.1 (SOAP 1.1 §4.4), with 500 unless a transport refusal gives its own status.
 */
export function faultResponse(
  config: ServiceConfig,
  fault: SoapFault,
  status: number | undefined,
  headers: Record<string, string> = {},
  op?: ContractOperation,
  version: SoapVersion = "1.2",
  bodyFault = false,
): SoapResponse {
  const response: SoapResponse =
    version === "1.1"
      ? {
          status: status ?? 500,
          headers: { ...headers, "Content-Type": RESPONSE11_CONTENT_TYPE },
          body: fault11ToXml(
            fault,
            config.contract.targetNamespace,
            (detail) => writeDetail(config, op, detail),
            bodyFault,
          ),
        }
      : {
          status: status ?? fault.httpStatus,
          headers: { ...headers, "Content-Type": RESPONSE_CONTENT_TYPE },
          body: faultToXml(fault, config.contract.targetNamespace, (detail) =>
            writeDetail(config, op, detail),
          ),
        };
  // The step that holds the request publishes it (`svc:soap`), with this fault's code.
  response.fault = { code: faultCodeOf(fault, version), version };
  return response;
}

/** Detail entries as elements of the schema (an operation's declared faults first), else plain. */
function writeDetail(
  config: ServiceConfig,
  op: ContractOperation | undefined,
  detail: Readonly<Record<string, unknown>>,
): string {
  const schema = config.contract.schema;
  let out = "";
  for (const [key, value] of Object.entries(detail)) {
    const name = key.startsWith("{")
      ? key
      : (Object.values(op?.faults ?? {}).find((f) => f.endsWith(`}${key}`)) ??
        schema.elementNames.find((n) => n.endsWith(`}${key}`)));
    if (name && schema.hasElement(name)) out += schema.encode(name, value);
    else out += plainDetail(key, value);
  }
  return out;
}

/**
 * Any transport-level refusal as a fault with the error's status and headers: a refusal of the
 * HTTP request (405, 408, 413, 415) keeps its status in SOAP 1.1 too, which no SOAP processing
 * reached.
 */
export function errorResponse(
  config: ServiceConfig,
  err: HttpError,
  version: SoapVersion = "1.2",
): SoapResponse {
  return faultResponse(config, httpErrorToFault(err), err.status, { ...err.headers }, undefined, version);
}

/** A refusal before (all of) the body was read: the transport discards the rest. */
export function refuse(config: ServiceConfig, err: HttpError, version: SoapVersion): SoapResponse {
  return { ...errorResponse(config, err, version), unreadBody: true };
}

function plainDetail(key: string, value: unknown): string {
  return writePlainDetail({ [key]: value });
}

/** The HTTP status of a {@link HttpError} turned into a SOAP fault (used by the error middleware). */
export function httpErrorToFault(err: HttpError): SoapFault {
  const code = err.status < 500 ? "Sender" : "Receiver";
  return new SoapFault({ code, reason: err.expose ? err.message : err.reason });
}
