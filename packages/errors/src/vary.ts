import type { ServerResponse } from "node:http";

/**
 * Adds field names to the response's `Vary` header, keeping what is there, never duplicating a
 * name (case-insensitive), and leaving `Vary: *` alone (RFC 9110 §12.5.5).
 *
 * @example appendVary(res, "Accept")
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function appendVary(res: ServerResponse, ...fields: string[]): void {
  const current = res.getHeader("Vary");
  const existing = (Array.isArray(current) ? current.join(",") : current === undefined ? "" : String(current))
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean);
  if (existing.includes("*")) return;
  const seen = new Set(existing.map((f) => f.toLowerCase()));
  const next = [...existing];
  for (const field of fields) {
    if (field === "*") {
      res.setHeader("Vary", "*");
      return;
    }
    if (!seen.has(field.toLowerCase())) {
      seen.add(field.toLowerCase());
      next.push(field);
    }
  }
  if (next.length > 0) res.setHeader("Vary", next.join(", "));
}
