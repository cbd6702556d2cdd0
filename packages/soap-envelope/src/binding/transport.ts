import type { IncomingMessage } from "node:http";
import { evaluatePreconditions } from "@svc/conditional";
import { HttpError } from "@svc/errors";
import { fieldLines, refuseRequest } from "@svc/kernel";
import { xopEnvelopeType } from "../mtom/xop.js";
import {
  type MessageType,
  type ServiceConfig,
  SOAP11_MEDIA_TYPE,
  SOAP12_MEDIA_TYPE,
} from "../processor/config.js";
import { unsupportedMediaType } from "../processor/faults.js";
import type { SoapRequest } from "../processor/types.js";
import { SUPPORTED_CHARSETS, shown } from "../xml/reader.js";
import { hostRefusal } from "./endpoint-address.js";
import { readMediaType } from "./media-type.js";

/**
 * The checks SOAP 1.2 Part 2 §7.5.2.2 leaves to HTTP, made before any of the body is read: 400
 * for the request's `Host` (RFC 9112 §3.2, when `request.http` is given); then, as the kernel's
 * `refuseRequest` decides them for any route, 405 with `Allow: POST` for any method but POST
 * (RFC 9110 §15.5.6), 415 with `Accept-Encoding: identity` for coded content (§8.4.1, §12.5.3)
 * and 415 with `Accept-Post` for a media type that names no SOAP message (§15.5.16); then this
 * binding's own 415s (a parameter named twice, XOP without `mtom`, a charset); 413 (§15.5.14)
 * decided on `Content-Length`; `text/xml` for SOAP 1.1 at a node without a SOAP 1.1 binding (its
 * VersionMismatch, {@link soap11Answer}); the preconditions.
 */
export function checkTransport(
  config: ServiceConfig,
  request: SoapRequest,
  type: MessageType | undefined,
): HttpError | typeof SOAP11_MEDIA_TYPE | undefined {
  const limits = config.limits;
  const http = request.http;
  if (request.host !== undefined || http !== undefined) {
    // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
    // request message that lacks a Host header field and to any request message that contains
    // more than one Host header field line or a Host header field with an invalid field value."
    // A message in such a request is not processed, whatever it holds; SOAP 1.2 Part 2
    // §7.5.2.2 leaves the refusal to HTTP (a Sender fault with the 400).
    const refusal =
      request.host !== undefined
        ? hostRefusal(request.host, request.httpVersion)
        : hostRefusal(fieldLines((http as IncomingMessage).rawHeaders, "host"), http?.httpVersion);
    if (refusal !== undefined) return refusal;
  }
  // SOAP 1.2 Part 2 §7.4: the request-response exchange this node serves is an HTTP POST (the
  // SOAP response MEP's GET carries no envelope to process). A transport that hands every
  // request to handle() must not get a GET, PUT or DELETE with an envelope processed as a POST:
  // GET is safe (RFC 9110 §9.2.1). The media types this binding reads for answers of its own
  // (`text/xml` where no SOAP 1.1 binding is offered: its VersionMismatch; `multipart/related`:
  // XOP; `application/soap+xml` where only SOAP 1.1 is) and a parameter given twice are decided
  // below; any other type is one no SOAP node reads, refused naming the versions' types.
  const generic = type === undefined || (type.repeated === undefined && !READ_TYPES.has(type.media.type));
  const refusal = refuseRequest(request, generic ? config.postedAs : config.posted);
  if (refusal !== undefined || type === undefined) return refusal ?? unsupportedMediaType(config);
  if (type.repeated !== undefined) {
    // RFC 6838 §4.3: "It is an error for a specific parameter to be specified more than once."
    // Which of two `action`s or `charset`s counts is up to each reader: RFC 3902 §3 lets a
    // firewall filter on `action`, and one reading the last would pass a message this node routes
    // by the first. Refused as a media type this endpoint does not take (RFC 9110 §15.5.16).
    return unsupportedMediaType(
      config,
      `Content-Type names the ${shown(type.repeated, 40)} parameter more than once (RFC 6838 §4.3)`,
    );
  }
  const { media, charset } = type;
  const soap11 = type.soap11;
  if (type.xop && config.mtom === undefined) return unsupportedMediaType(config);
  if (!soap11 && media.type !== SOAP12_MEDIA_TYPE && !type.xop) return unsupportedMediaType(config);
  // SOAP 1.1 at a node that serves it is read as SOAP 1.2 is; at one that does not, only far
  // enough for its VersionMismatch.
  const served = !soap11 || config.soap11 !== undefined;
  if (served && charset !== undefined && !SUPPORTED_CHARSETS.has(charset)) {
    return unsupportedMediaType(config, `charset "${shown(charset, 40)}" is not supported`);
  }
  // RFC 9110 §15.5.14: a body larger than the server will process is a 413 whatever its media
  // type; a SOAP 1.1 message is read (for its VersionMismatch) only within the same limit.
  const declared = request.contentLength === undefined ? undefined : Number(request.contentLength);
  if (declared !== undefined && declared > limits.maxBytes) {
    return HttpError.contentTooLarge(`The message is larger than ${limits.maxBytes} bytes`);
  }
  if (!served) return SOAP11_MEDIA_TYPE;
  if (request.ifMatch !== undefined || request.ifNoneMatch !== undefined) return checkPreconditions(request);
  return undefined;
}

/**
 * RFC 9110 §13.1.1: "An origin server that receives an If-Match field MUST evaluate the condition
 * as per Section 13.2 prior to performing the method" (§13.1.2 the same of If-None-Match), here
 * before any of the message is read. The endpoint exists (`*` matches it) and has no entity tag
 * (no listed tag does): `If-Match: "x"` is false, 412 by §13.2.2 step 1; `If-None-Match: *` is
 * false, 412 for a POST by step 3. It has no modification date either, so If-Unmodified-Since is
 * ignored (§13.1.4: "A recipient MUST ignore the If-Unmodified-Since header field if the resource
 * does not have a modification date available"). Called after the 415 and 413 checks: §13.2.1
 * has preconditions ignored when the answer without them would not be a 2xx; a text/xml (SOAP
 * 1.1) message at a node without a SOAP 1.1 binding is never answered 2xx. SOAP 1.2 Part 2 §7.5.2.2 leaves such statuses to HTTP: the
 * 412 is a Sender fault, as every transport refusal.
 */
function checkPreconditions(request: SoapRequest): HttpError | undefined {
  const outcome = evaluatePreconditions(
    "POST",
    { "if-match": request.ifMatch, "if-none-match": request.ifNoneMatch },
    EXISTING_ENDPOINT,
  );
  if (outcome !== 412) return undefined;
  return HttpError.preconditionFailed(
    request.ifMatch !== undefined
      ? "If-Match names no current entity tag of this endpoint, which has none"
      : "If-None-Match: * is false: this endpoint exists",
  );
}

/** The endpoint as a target resource: it exists, with no entity tag and no modification date. */
const EXISTING_ENDPOINT = Object.freeze({});

/** The media types of a message this binding reads itself, whatever versions and `mtom` it serves. */
const READ_TYPES = new Set([SOAP12_MEDIA_TYPE, SOAP11_MEDIA_TYPE, "multipart/related"]);

const MESSAGE_TYPES = new Map<string, MessageType | null>();

const MESSAGE_TYPE_CACHE_SIZE = 256;

/**
 * {@link readMediaType} remembered per header value: clients repeat the same `Content-Type`
 * on every call. The cache is bounded (cleared when full) and its entries are frozen.
 */
export function cachedMessageType(value: string | undefined): MessageType | undefined {
  if (value === undefined || value.length > 512) return messageType(value);
  const cached = MESSAGE_TYPES.get(value);
  if (cached !== undefined) return cached ?? undefined;
  const type = messageType(value);
  if (MESSAGE_TYPES.size >= MESSAGE_TYPE_CACHE_SIZE) MESSAGE_TYPES.clear();
  MESSAGE_TYPES.set(value, type ?? null);
  return type;
}

function messageType(value: string | undefined): MessageType | undefined {
  const read = readMediaType(value);
  if (read === undefined) return undefined;
  const media = read.media;
  Object.freeze(media.parameters);
  Object.freeze(media);
  // SOAP MTOM §3: the version and the action are the root part's, named in `start-info`.
  const xop = media.type === "multipart/related" ? xopEnvelopeType(media.parameters) : undefined;
  return Object.freeze({
    media,
    charset: xop ? undefined : media.parameters.charset?.toLowerCase(),
    action: xop ? xop.action : media.parameters.action,
    soap11: xop ? xop.soap11 : media.type === SOAP11_MEDIA_TYPE,
    xop: xop !== undefined,
    repeated: read.repeated,
  });
}
