/** One element of a token list with q-values (`Accept-Language`, `Accept-Encoding`). */
export interface QItem {
  /** The token, lower-cased. */
  value: string;
  q: number;
}

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;
const LIMIT = 500;

/**
 * Parses `token;q=0.5, other` (RFC 9110 §12.4.2). Elements whose token fails `valid` or whose
 * weight is malformed (`q=2`) are dropped; parsed lists are cached per header value.
 */
export function parseQList(
  header: string,
  valid: RegExp,
  cache: Map<string, readonly QItem[]>,
): readonly QItem[] {
  const cached = cache.get(header);
  if (cached !== undefined) return cached;
  const items: QItem[] = [];
  for (const element of header.split(",")) {
    const parts = element.split(";");
    const value = (parts[0] ?? "").trim().toLowerCase();
    if (value === "" || !valid.test(value)) continue;
    let q = 1;
    let ok = true;
    for (const raw of parts.slice(1)) {
      const [name, weight] = raw.split("=").map((s) => s.trim().toLowerCase());
      if (name === "q") {
        if (weight === undefined || !QVALUE.test(weight)) ok = false;
        else q = Number(weight);
      }
    }
    if (ok) items.push({ value, q });
  }
  if (cache.size >= LIMIT) cache.clear();
  cache.set(header, items);
  return items;
}
