/**
 * `JSON.stringify` that also writes BigInts, as JSON numbers with every digit (RFC 8259 §6 puts no
 * limit on a number's digits; a 64-bit id beyond 2^53 must not reach a client rounded). Plain
 * `JSON.stringify` throws a `TypeError` on a BigInt; values without one take its fast path
 * unchanged. `undefined` (and a function) at the top becomes `null`, so the result is always a
 * JSON text.
 *
 * @example stringifyJson({ id: 9223372036854775807n }) // '{"id":9223372036854775807}'
 * @see https://www.rfc-editor.org/rfc/rfc8259#section-6
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
  // A marker no string in the data can carry (it is drawn afresh per call), put in place of each
  // BigInt and then replaced, quotes included, by the digits.
  const nonce = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) =>
    b.toString(16).padStart(2, "0"),
  );
  const marker = `bigint-${nonce.join("")}:`;
  const text =
    JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `${marker}${v.toString()}` : v)) ??
    "null";
  return text.replace(new RegExp(`"${marker}(-?\\d+)"`, "g"), "$1");
}
