import type { IncomingHttpHeaders } from "node:http";
import {
  addVary,
  type Coder,
  createPipeline,
  fieldText,
  type Pipeline,
  type PipelineRequest,
  type Prepared,
  reply,
} from "@svc/kernel";
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

/** Nothing is decided before routing for a SOAP endpoint: it has no versions. */
export const NOT_PREPARED: Prepared = Object.freeze({ version: undefined, refusal: undefined });

/**
 * The pipeline an answer to a message goes through: the coding step alone. The answer to one
 * message is never stored (RFC 9111 §5.2.2.5, `no-store`), so it has no validators to compute.
 */
export function messagePipeline(coder: Coder): Pipeline {
  return createPipeline({ coding: coder });
}

/**
 * An answer to a message (made by `complete`) through `pipeline`: coded as the coding step decides
 * for this request, `Accept-Encoding` joining its `vary` when the choice read it. An empty answer
 * (a one-way 202) has nothing to code.
 */
export async function coded(
  pipeline: Pipeline,
  input: CodedRequest,
  response: SoapResponse,
): Promise<SoapResponse> {
  const body = response.body;
  if (body.length === 0) return response;
  const headers = response.headers;
  const value = await pipeline.respond(
    pipelineRequest(input),
    NOT_PREPARED,
    reply.bytes(toBytes(body), contentTypeOf(headers), { status: response.status, headers }),
  );
  const vary = [...(response.vary ?? [])];
  addVary(vary, ...value.vary);
  const coding = fieldText(value.fields["content-encoding"]);
  if (coding === undefined)
    return vary.length === (response.vary?.length ?? 0) ? response : { ...response, vary };
  const sent = value.body;
  if (!(sent instanceof Uint8Array)) throw new TypeError(`The ${coding} coder did not return bytes`);
  return {
    ...response,
    headers: { ...headers, "Content-Encoding": coding, "Content-Length": String(sent.byteLength) },
    vary,
    body: sent,
  };
}

/** A response's `Content-Type`, its name in any case (RFC 9110 §5.1). */
function contentTypeOf(headers: Readonly<Record<string, string>>): string {
  for (const name in headers) if (name.toLowerCase() === "content-type") return headers[name] as string;
  return "application/octet-stream";
}

function toBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === "string" ? utf8Bytes(body) : body;
}
