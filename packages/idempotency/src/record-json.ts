import { fromBase64, toBase64 } from "./bytes.js";
import type { StoredResponse } from "./store.js";

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
