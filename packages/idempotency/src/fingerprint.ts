import { digest, utf8Bytes } from "@svc/kernel/internal";
import { utf8Length } from "./bytes.js";

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
  if (typeof body === "string") return digest("sha256", `${head}${field("raw")}${body}`, "hex");
  if (body instanceof Uint8Array) {
    const prefix = utf8Bytes(head + field("raw"));
    const bytes = new Uint8Array(prefix.byteLength + body.byteLength);
    bytes.set(prefix);
    bytes.set(body, prefix.byteLength);
    return digest("sha256", bytes, "hex");
  }
  return digest("sha256", `${head}${field("json")}${canonicalJson(body)}`, "hex");
}

function field(value: string): string {
  // Length-prefixed, so no choice of method/url/body can run into the next field.
  return `${utf8Length(value)}:${value}\n`;
}
