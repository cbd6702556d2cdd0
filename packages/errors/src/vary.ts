import type { ServerResponse } from "node:http";

function lower(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9;
}

/**
 * Whether the comma-separated `list` names `field`: ASCII case-insensitive, optional whitespace
 * around members (RFC 9110 §5.6.1), without splitting the list into new strings.
 */
function listHas(list: string, field: string): boolean {
  let start = 0;
  while (start <= list.length) {
    let end = list.indexOf(",", start);
    if (end === -1) end = list.length;
    let from = start;
    let to = end;
    while (from < to && isSpace(list.charCodeAt(from))) from++;
    while (to > from && isSpace(list.charCodeAt(to - 1))) to--;
    if (to - from === field.length) {
      let i = 0;
      while (i < field.length && lower(list.charCodeAt(from + i)) === lower(field.charCodeAt(i))) i++;
      if (i === field.length) return true;
    }
    start = end + 1;
  }
  return false;
}

/**
 * Adds field names to the response's `Vary` header, keeping what is there, never duplicating a
 * name (case-insensitive), and leaving `Vary: *` alone (RFC 9110 §12.5.5).
 *
 * @example appendVary(res, "Accept")
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function appendVary(res: ServerResponse, ...fields: string[]): void {
  const current = res.getHeader("vary");
  let value = Array.isArray(current) ? current.join(", ") : current === undefined ? "" : String(current);
  if (value.trim() !== "" && listHas(value, "*")) return;
  let changed = false;
  for (const field of fields) {
    if (field === "*") {
      res.setHeader("Vary", "*");
      return;
    }
    if (value.trim() === "") {
      value = field;
      changed = true;
    } else if (!listHas(value, field)) {
      value = `${value}, ${field}`;
      changed = true;
    }
  }
  if (changed) res.setHeader("Vary", value);
}
