import { fromBase64, toBase64, utf8Length } from "./bytes.js";
import { keptWithin, type StoredResponse } from "./store.js";

/**
 * A stored response as the shared stores keep it: JSON `{ s, h, o?, b }`, the body in base64
 * (RFC 4648 §4). `maxRecordBytes` of those stores bounds this text's UTF-8 bytes.
 * @see https://www.rfc-editor.org/rfc/rfc4648#section-4
 */
export function encodeRecord(response: StoredResponse): string {
  return JSON.stringify({
    s: response.status,
    h: response.headers,
    ...(response.bodyOmitted === true ? { o: 1 } : {}),
    b: toBase64(response.body),
  });
}

/**
 * The record of `response` in at most `maxRecordBytes` UTF-8 bytes, headers included: whole, else
 * without its body, else its status alone (each form encoded once).
 */
export function encodeRecordWithin(response: StoredResponse, maxRecordBytes: number): string {
  let last: [StoredResponse, string] | undefined;
  const encode = (form: StoredResponse): string => {
    if (last?.[0] !== form) last = [form, encodeRecord(form)];
    return last[1];
  };
  return encode(keptWithin(response, (form) => utf8Length(encode(form)) <= maxRecordBytes));
}

/** The response {@link encodeRecord} wrote, or undefined when `text` is not one. */
export function decodeRecord(text: string): StoredResponse | undefined {
  let parsed: { s?: unknown; h?: unknown; b?: unknown; o?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    return undefined;
  }
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    typeof parsed.s !== "number" ||
    typeof parsed.b !== "string" ||
    typeof parsed.h !== "object" ||
    !parsed.h
  ) {
    return undefined;
  }
  const response: StoredResponse = {
    status: parsed.s,
    headers: parsed.h as Record<string, string | string[]>,
    body: fromBase64(parsed.b),
  };
  if (parsed.o === 1) response.bodyOmitted = true;
  return response;
}
