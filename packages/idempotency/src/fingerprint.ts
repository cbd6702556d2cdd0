import type { IncomingHttpHeaders } from "node:http";
import { digest, utf8Bytes } from "@svc/kernel/internal";
import { utf8Length } from "./bytes.js";
import { NOTHING, parseJsonPointer, selectJsonPointer } from "./json-pointer.js";
import { optionError } from "./option-error.js";

/**
 * JSON with object keys sorted (by UTF-16 code units, as RFC 8785 orders them) and no
 * insignificant whitespace, so `{"b":1,"a":2}` and `{ "a": 2, "b": 1 }` are one payload.
 * Values JSON cannot carry (`undefined`, functions) are dropped as `JSON.stringify` drops them.
 *
 * Written without recursion: a body parser accepts JSON nested far deeper than the call stack
 * goes (`JSON.parse` does not recurse; a 6 KB body of `[` nests 3000 deep), and the fingerprint
 * of such a request must not turn it into a 500. A `"__proto__"` member is a member like any
 * other (`JSON.parse` makes it an own property), so it is part of the payload.
 *
 * @example canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 * @see https://www.rfc-editor.org/rfc/rfc8785#section-3.2.3
 */
export function canonicalJson(value: unknown): string {
  const ancestors = new Set<object>();
  const root = resolve(value, ancestors);
  if (absent(root)) return "null";
  const out: string[] = [];
  // Work left to do, last first: text to write, an object or array to write, or one whose
  // members are all written (it stops being an ancestor, for the circularity check).
  const todo: (string | { value: object } | { leave: object })[] = [later(root)];
  for (let task = todo.pop(); task !== undefined; task = todo.pop()) {
    if (typeof task === "string") {
      out.push(task);
      continue;
    }
    if ("leave" in task) {
      ancestors.delete(task.leave);
      continue;
    }
    const v = task.value;
    if (ancestors.has(v)) throw new TypeError("canonicalJson: circular structure");
    ancestors.add(v);
    todo.push({ leave: v });
    if (Array.isArray(v)) {
      todo.push("]");
      for (let i = v.length - 1; i >= 0; i--) {
        todo.push(later(resolve(v[i], ancestors)));
        if (i > 0) todo.push(",");
      }
      todo.push("[");
      continue;
    }
    const members: [string, unknown][] = [];
    for (const key of memberOrder(v)) {
      const member = resolve((v as Record<string, unknown>)[key], ancestors);
      if (!absent(member)) members.push([key, member]);
    }
    todo.push("}");
    for (let i = members.length - 1; i >= 0; i--) {
      const [key, member] = members[i] as [string, unknown];
      const name = `${i > 0 ? "," : ""}${JSON.stringify(key)}:`;
      const next = later(member);
      if (typeof next === "string") todo.push(name + next);
      else todo.push(next, name);
    }
    todo.push("{");
  }
  return out.join("");
}

/** A primitive as its JSON text (a function or undefined in an array is null), else a task. */
function later(value: unknown): string | { value: object } {
  if (value !== null && typeof value === "object") return { value };
  return JSON.stringify(value) ?? "null";
}

/** An array index name (ECMA-262 §6.1.7): a canonical integer below 2^32 - 1. */
const INDEX = /^(?:0|[1-9][0-9]{0,9})$/;

/**
 * The member names of `value` in the order its canonical form lists them: as `JSON.stringify`
 * enumerates an object whose members were added in sorted order, array-index names first
 * (ascending), then the others sorted, so fingerprints stay those of the sorted-object form.
 * `Object.keys` already lists the index names first, ascending.
 */
function memberOrder(value: object): string[] {
  const keys = Object.keys(value);
  let indices = 0;
  while (indices < keys.length && isIndex(keys[indices] as string)) indices++;
  if (indices === 0) return keys.sort();
  return keys.slice(0, indices).concat(keys.slice(indices).sort());
}

function isIndex(key: string): boolean {
  return INDEX.test(key) && Number(key) < 4_294_967_295;
}

/** `value` after its `toJSON` (as `JSON.stringify` calls it), checked against its ancestors. */
function resolve(value: unknown, ancestors: ReadonlySet<object>): unknown {
  if (value === null || typeof value !== "object") return value;
  if (ancestors.has(value)) throw new TypeError("canonicalJson: circular structure");
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  return typeof toJSON === "function" ? toJSON.call(value) : value;
}

/** What `JSON.stringify` leaves out of an object (and writes as null in an array). */
function absent(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
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
  const head = field(input.method.toUpperCase()) + field(input.url);
  const { body } = input;
  if (body === undefined) return digest("sha256", head + field("none"), "hex");
  if (typeof body === "string" || body instanceof Uint8Array) return hashed(head + field("raw"), body);
  return digest("sha256", `${head}${field("json")}${canonicalJson(body)}`, "hex");
}

/** SHA-256 of `prefix` followed by `value` (its UTF-8 bytes, or the bytes as they are). */
function hashed(prefix: string, value: string | Uint8Array): string {
  if (typeof value === "string") return digest("sha256", prefix + value, "hex");
  const head = utf8Bytes(prefix);
  const bytes = new Uint8Array(head.byteLength + value.byteLength);
  bytes.set(head);
  bytes.set(value, head.byteLength);
  return digest("sha256", bytes, "hex");
}

function field(value: string): string {
  // Length-prefixed, so no choice of method/url/body can run into the next field.
  return `${utf8Length(value)}:${value}\n`;
}

/** What the `fingerprint` option's function is given: the request as the core read it. */
export interface FingerprintRequest {
  /** The request method, upper case. */
  readonly method: string;
  /** The request target as the key compares it: the canonical path and the query as sent. */
  readonly target: string;
  /** The request header fields (lower-case names). */
  readonly fields: IncomingHttpHeaders;
  /** The body as the body parser left it (parsed value, `Buffer`/`Uint8Array`, string), or `undefined`. */
  readonly body: unknown;
}

/**
 * What makes two requests with one key "the same request": a list of JSON Pointers (RFC 6901)
 * into the parsed JSON body, hashed with the method and the target; or a function answering the
 * string or bytes to hash (and nothing else: the method and target only count if it returns them).
 *
 * @example idempotency({ fingerprint: ["/amount", "/currency", "/to"] })
 * @example idempotency({ fingerprint: (r) => `${r.method} ${r.target} ${String(r.fields["x-account"])}` })
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.2
 */
export type FingerprintOption = readonly string[] | ((request: FingerprintRequest) => string | Uint8Array);

/** Which fingerprint a key is compared by: published with a `mismatch`. */
export type FingerprintKind = "default" | "pointers" | "function";

/** The `fingerprint` option, resolved: its kind and the hex digest it makes of a request. */
export interface ResolvedFingerprint {
  readonly kind: FingerprintKind;
  readonly of: (request: FingerprintRequest) => string;
}

/** Checks the `fingerprint` option once: every pointer's syntax, or the function. */
export function resolveFingerprint(option: FingerprintOption | undefined): ResolvedFingerprint {
  if (option === undefined)
    return {
      kind: "default",
      of: (r) => requestFingerprint({ method: r.method, url: r.target, body: r.body }),
    };
  if (typeof option === "function") {
    return {
      kind: "function",
      of(request) {
        const value: unknown = option(request);
        if (typeof value !== "string" && !(value instanceof Uint8Array))
          throw new TypeError(
            `idempotency: the fingerprint function answered ${typeof value}; it must answer a string or a Uint8Array`,
          );
        return hashed(field("function"), value);
      },
    };
  }
  const accepted =
    'a non-empty array of JSON Pointers (RFC 6901: "" or "/a/b", ~ only as ~0 or ~1), or a function (request) => string | Uint8Array';
  if (!Array.isArray(option) || option.length === 0)
    throw optionError("idempotency", "fingerprint", option, accepted);
  const pointers = option.map((pointer: unknown) => {
    const tokens = parseJsonPointer(pointer as string);
    if (tokens === undefined) throw optionError("idempotency", "fingerprint", pointer, accepted);
    return { pointer: pointer as string, tokens };
  });
  return {
    kind: "pointers",
    of(r) {
      const { body } = r;
      // Only a parsed body has members to point at: bytes or text are hashed whole, as by default.
      if (typeof body === "string" || body instanceof Uint8Array)
        return requestFingerprint({ method: r.method, url: r.target, body });
      // Each pointer with its value, or alone when it selects nothing: absent is not null.
      const parts = pointers.map(({ pointer, tokens }) => {
        const value = body === undefined ? NOTHING : selectJsonPointer(body, tokens);
        return value === NOTHING ? [pointer] : [pointer, value];
      });
      const head = field(r.method) + field(r.target);
      return digest("sha256", `${head}${field("pointers")}${canonicalJson(parts)}`, "hex");
    },
  };
}
