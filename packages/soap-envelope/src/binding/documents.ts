import { validators } from "@svc/conditional";
import { HttpError } from "@svc/errors";
import {
  type Coder,
  createPipeline,
  fieldText,
  type Pipeline,
  type ResponseValue,
  reply,
  splitList,
  type Validators,
} from "@svc/kernel";
import type { SoapResponse } from "../processor/types.js";
import type { Contract } from "../wsdl/contract.js";
import { utf8Bytes } from "../xml/bytes.js";
import { shown } from "../xml/shown.js";
import { type CodedRequest, NOT_PREPARED, pipelineRequest } from "./coding.js";
import { type AddressInput, endpointAddress } from "./endpoint-address.js";

// The WSDL and its schemas are resources of the endpoint's URI (`?wsdl`, `?xsd=`), answered as
// any resource is: by the kernel's pipeline, whose steps in their fixed order tag the bytes
// served, evaluate the preconditions on that tag and apply the content coding.

/** A WSDL or schema document, rendered for one request, for {@link serveDocument}. */
export interface SoapDocument {
  /** The document's path as routed: the endpoint's, without the query. */
  readonly path: string;
  /** Its `Content-Type`: `application/wsdl+xml` for a WSDL, `application/xml` for a schema. */
  readonly contentType: string;
  /** The document with its locations pointing at the endpoint's address. */
  readonly text: string;
  /**
   * The request fields the address was read from beside `Host` (RFC 9110 §12.5.5): those of the
   * forwarded family a trusted peer sets.
   */
  readonly vary: readonly string[];
}

/** The request as the endpoint reads it for a document: its fields, its connection, its target. */
export type DocumentRequest = CodedRequest & Omit<AddressInput, "path" | "target">;

/**
 * GET / HEAD `?wsdl` or `?xsd=<path>`: the document, its address the one clients reach the
 * endpoint at. A `Host` (or trusted forwarded host) that is no authority is the 400 of RFC 9112
 * §3.2, a schema the contract does not import a 404, both thrown with the fields they read.
 */
export function renderDocument(
  contract: Contract,
  input: DocumentRequest,
  path: string,
  xsd: string | null,
): SoapDocument {
  const address = endpointAddress({
    host: input.host,
    httpVersion: input.httpVersion,
    facts: input.facts,
    encrypted: input.encrypted,
    path,
    target: input.target,
  });
  const text = contract.render(address.url, xsd ?? undefined);
  if (text === undefined) {
    throw HttpError.notFound(`No schema "${shown(String(xsd))}" belongs to this contract`, {
      ...(address.vary.length > 0 && { headers: { Vary: address.vary.join(", ") } }),
    });
  }
  const contentType =
    xsd === null || xsd.endsWith(".wsdl")
      ? "application/wsdl+xml; charset=utf-8"
      : "application/xml; charset=utf-8";
  return { path, contentType, text, vary: address.vary };
}

/**
 * The documents' pipeline: validators (`validators()` of `@svc/conditional`: a strong tag of the
 * bytes sent, weak once coded, RFC 9110 §8.8.3; 304 and 412 by §13.2.2) and the endpoint's
 * content coding, whose 406 for a request refusing every coding is decided before the document
 * is rendered.
 */
export function documentPipeline(coder: Coder | undefined): Pipeline {
  return createPipeline({ coding: coder, validators: documentValidators() });
}

/**
 * `validators()`, its 412 naming the fields the document was chosen by (RFC 9110 §12.5.5): the
 * tag it carries is the one of the representation this request would get.
 */
function documentValidators(): Validators {
  const steps = validators();
  return {
    ...steps,
    failed(value) {
      const failed = steps.failed(value);
      const vary = varyOf(value);
      if (vary.length === 0) return failed;
      return new HttpError(412, failed.message, {
        ...(failed.code !== undefined && { code: failed.code }),
        headers: { ...failed.headers, Vary: vary.join(", ") },
      });
    },
  };
}

/** The names a response value varies by: its own `Vary` field's, then those the steps added. */
function varyOf(value: ResponseValue): string[] {
  const own = fieldText(value.fields.vary);
  return own === undefined ? [...value.vary] : [...(splitList(own) ?? []), ...value.vary];
}

/**
 * The document through `pipeline`: `Cache-Control: no-cache` (RFC 9111 §5.2.2.4: a redeployed
 * contract is picked up at the next revalidation), its `ETag`, a 304 or 412 in its place, its
 * coding. Rejects with the 412.
 */
export async function serveDocument(
  pipeline: Pipeline,
  input: CodedRequest,
  document: SoapDocument,
): Promise<SoapResponse> {
  const headers: Record<string, string> = { "cache-control": "no-cache" };
  if (document.vary.length > 0) headers.vary = document.vary.join(", ");
  const value = await pipeline.respond(
    pipelineRequest(input, document.path),
    NOT_PREPARED,
    reply.bytes(utf8Bytes(document.text), document.contentType, { headers }),
  );
  return documentResponse(value, input.method);
}

/**
 * The pipeline's response value as the endpoint's response: its fields, the names it varies by,
 * its bytes; a HEAD's `Content-Length` the GET's (RFC 9110 §9.3.2), known only for identity.
 */
function documentResponse(value: ResponseValue, method: string): SoapResponse {
  const headers: Record<string, string> = {};
  for (const name in value.fields) {
    const field = value.fields[name];
    if (name !== "vary" && field !== null && field !== undefined) headers[name] = fieldText(field) as string;
  }
  const body = value.body instanceof Uint8Array ? value.body : undefined;
  if (method === "HEAD" && body !== undefined) headers["content-length"] = String(body.byteLength);
  return {
    status: value.status,
    headers,
    body: method === "HEAD" || body === undefined ? "" : body,
    vary: varyOf(value),
  };
}
