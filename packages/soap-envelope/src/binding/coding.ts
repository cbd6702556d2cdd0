import type { IncomingHttpHeaders } from "node:http";
import type { Coder, Fields, PipelineRequest, ResponseValue } from "@svc/kernel";
import { hasMembers, optionError } from "../options.js";
import { utf8Bytes } from "../xml/bytes.js";
import { targetPath } from "./request-target.js";
import type { SoapResponse } from "./service.js";

// RFC 9110 §8.4: the endpoint's responses in the content coding the kernel's coding step
// (`compression()` of @svc/negotiate) decides, by the rules it applies to every pipeline.

/** What the coding step reads of a request (the endpoint's `SoapHttpInput`). */
export interface CodedRequest {
  readonly method: string;
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readonly native?: object | undefined;
}

/** The `coding` option: a step of the kernel's `Coder` shape, or nothing. */
export function checkCoder(coding: unknown): Coder | undefined {
  if (coding === undefined) return undefined;
  if (!hasMembers(coding, { preflight: "function", choose: "function", encode: "function" }))
    throw optionError("coding", coding, "a content coding step: compression() of @svc/negotiate");
  return coding as Coder;
}

/** The request as the kernel's steps read it. */
export function pipelineRequest(input: CodedRequest, path = targetPath(input.target)): PipelineRequest {
  return {
    view: { method: input.method, url: input.target, headers: input.headers },
    path,
    native: input.native,
  };
}

/** `response` with its content in `coding`. */
export async function encoded(coder: Coder, coding: string, response: SoapResponse): Promise<SoapResponse> {
  const body = await coder.encode(coding, toBytes(response.body));
  if (!(body instanceof Uint8Array)) throw new TypeError(`The ${coding} coder did not return bytes`);
  return { ...response, headers: { ...response.headers, "Content-Length": String(body.byteLength) }, body };
}

/**
 * An answer to a message (made by {@link complete}) in the coding this request gets by the coding
 * step's rules; `Accept-Encoding` joins its `vary` when the answer could be coded for some client.
 */
export async function coded(
  coder: Coder,
  input: CodedRequest,
  response: SoapResponse,
): Promise<SoapResponse> {
  const body = response.body;
  if (body.length === 0) return response;
  const headers = response.headers;
  const vary = [...(response.vary ?? [])];
  const fields: Fields = {};
  for (const name in headers) fields[name.toLowerCase()] = headers[name] as string;
  const bytes = toBytes(body);
  const value: ResponseValue = { status: response.status, fields, vary, body: bytes };
  const coding = coder.choose(pipelineRequest(input), value, bytes.byteLength);
  if (coding === "identity")
    return vary.length === (response.vary?.length ?? 0) ? response : { ...response, vary };
  return encoded(coder, coding, {
    ...response,
    headers: { ...headers, "Content-Encoding": coding },
    vary,
    body: bytes,
  });
}

function toBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === "string" ? utf8Bytes(body) : body;
}
