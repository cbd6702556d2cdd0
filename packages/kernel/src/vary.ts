import type { ServerResponse } from "node:http";

function isSpace(code: number): boolean {
  return code === 32 || code === 9;
}

/** ASCII case-insensitive equality: field names are tokens (RFC 9110 §5.1), compared so. */
function sameName(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const lower = x | 32;
    if (lower !== (y | 32) || lower < 97 || lower > 122) return false;
  }
  return true;
}

function listed(names: readonly string[], field: string): boolean {
  for (const name of names) if (sameName(name, field)) return true;
  return false;
}

/**
 * The members of a comma-separated list of field names: optional whitespace around members,
 * empty members skipped (RFC 9110 §5.6.1).
 */
function memberNames(list: string): string[] {
  const names: string[] = [];
  let start = 0;
  while (start <= list.length) {
    let end = list.indexOf(",", start);
    if (end === -1) end = list.length;
    let from = start;
    let to = end;
    while (from < to && isSpace(list.charCodeAt(from))) from++;
    while (to > from && isSpace(list.charCodeAt(to - 1))) to--;
    if (to > from) names.push(list.slice(from, to));
    start = end + 1;
  }
  return names;
}

/**
 * What {@link appendVary} last wrote on a response: the value and the names it lists. While the
 * header is still that very string, the next call checks its fields against the names instead of
 * parsing the text again (each package that varies on a request field calls it, several times a
 * response); once anything else set `Vary`, the text is read afresh.
 */
const written = Symbol("svc.vary");
interface Written {
  value: string;
  names: string[];
}
type Tracked = ServerResponse & { [written]?: Written | undefined };

/**
 * Adds field names to the response's `Vary` header, keeping what is there, never duplicating a
 * name (case-insensitive), and leaving `Vary: *` alone (RFC 9110 §12.5.5).
 *
 * @example appendVary(res, "Accept")
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function appendVary(res: ServerResponse, ...fields: string[]): void {
  const tracked = res as Tracked;
  const current = res.getHeader("vary");
  let state = tracked[written];
  if (state === undefined || current !== state.value) {
    const text = Array.isArray(current) ? current.join(", ") : current === undefined ? "" : String(current);
    const names = memberNames(text);
    if (names.includes("*")) return;
    state = { value: names.length === 0 ? "" : text, names };
  }
  let changed = false;
  for (const field of fields) {
    if (field === "*") {
      res.setHeader("Vary", "*");
      tracked[written] = undefined;
      return;
    }
    if (listed(state.names, field)) continue;
    state.names.push(field);
    state.value = state.value === "" ? field : `${state.value}, ${field}`;
    changed = true;
  }
  if (!changed) return;
  res.setHeader("Vary", state.value);
  tracked[written] = state;
}

/**
 * A `Vary` value with `fields` added: `current` kept, no name twice (case-insensitive), `*` left
 * alone; `undefined` when nothing changes. {@link appendVary} on a response that is no
 * `node:http` one (Fastify's `reply`, a Fetch `Headers`).
 *
 * @example mergeVary("Accept", ["accept-encoding", "Accept"]) // "Accept, accept-encoding"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function mergeVary(
  current: string | readonly string[] | number | null | undefined,
  fields: readonly string[],
): string | undefined {
  const text =
    typeof current === "string"
      ? current
      : Array.isArray(current)
        ? current.join(", ")
        : current == null
          ? ""
          : String(current);
  const names = memberNames(text);
  if (names.includes("*")) return undefined;
  let value = names.length === 0 ? "" : text;
  let changed = false;
  for (const field of fields) {
    if (field === "*") return "*";
    if (listed(names, field)) continue;
    names.push(field);
    value = value === "" ? field : `${value}, ${field}`;
    changed = true;
  }
  return changed ? value : undefined;
}
