import { createHash, type Hash } from "node:crypto";

/**
 * JSON with object keys sorted (by UTF-16 code units, as RFC 8785 orders them) and no
 * insignificant whitespace, so `{"b":1,"a":2}` and `{ "a": 2, "b": 1 }` are one payload.
 * Values JSON cannot carry (`undefined`, functions) are dropped as `JSON.stringify` drops them.
 *
 * @example canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 * @see https://www.rfc-editor.org/rfc/rfc8785#section-3.2.3
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, new Set())) ?? "null";
}

function sortKeys(value: unknown, seen: Set<object>): unknown {
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) throw new TypeError("canonicalJson: circular structure");
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return sortKeys((value as { toJSON: () => unknown }).toJSON(), seen);
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => sortKeys(v, seen) ?? null);
    if (ArrayBuffer.isView(value)) return value;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = sortKeys((value as Record<string, unknown>)[key], seen);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** What the fingerprint is computed over. */
export interface FingerprintInput {
  /** The request method, upper case. */
  method: string;
  /** The request target (path and query). */
  url: string;
  /**
   * The request body as a body parser left it: a parsed value (hashed in canonical JSON form),
   * a raw `Buffer`/`Uint8Array` or string (hashed byte for byte), or `undefined` for none.
   */
  body: unknown;
}

/**
 * SHA-256 over the method, the request target and the body in canonical form: same key with a
 * different fingerprint is a misuse of the key (draft-ietf-httpapi-idempotency-key-header §2.2,
 * "the resource server SHOULD ... fingerprint the request"; §2.7: 422).
 *
 * @example requestFingerprint({ method: "POST", url: "/orders", body: { qty: 1 } }) // hex digest
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.2
 */
export function requestFingerprint(input: FingerprintInput): string {
  const hash = createHash("sha256");
  field(hash, input.method.toUpperCase());
  field(hash, input.url);
  const { body } = input;
  if (body === undefined) {
    field(hash, "none");
  } else if (typeof body === "string") {
    field(hash, "raw");
    hash.update(body, "utf8");
  } else if (body instanceof Uint8Array) {
    field(hash, "raw");
    hash.update(body);
  } else {
    field(hash, "json");
    hash.update(canonicalJson(body), "utf8");
  }
  return hash.digest("hex");
}

function field(hash: Hash, value: string): void {
  // Length-prefixed, so no choice of method/url/body can run into the next field.
  hash.update(`${Buffer.byteLength(value)}:${value}\n`);
}
