import type { ServerResponse } from "node:http";
import { BoundedPairMemo } from "./bounded-memo.js";
import { valueFor } from "./value-for.js";

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

/** Whether `field` is one of `names`, compared as field names are (ASCII case-insensitively). */
export function listed(names: readonly string[], field: string): boolean {
  // The same string first: the packages add their names from constants.
  for (const name of names) if (name === field || sameName(name, field)) return true;
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

/** `text` with `field` appended, `null` when nothing changes (see {@link steps}). */
function workedOut(text: string, field: string): string | null {
  const names = memberNames(text);
  if (names.includes("*")) return null;
  if (field === "*") return "*";
  if (listed(names, field)) return null;
  return names.length === 0 ? field : `${text}, ${field}`;
}

/**
 * A `Vary` value with one field added, by value and field: `null` when the field is listed
 * already (or the value is `*`). Responses of one server go through the same few values (each
 * package that varies on a request field appends its names, several times a response, always
 * the same ones in the same order), so each step is worked out once and then only looked up: no
 * parse, no array and no string built per response. The values are the server's own field names,
 * not what clients send; still bounded: at most 256 steps held, each value and field of at most
 * 1024 characters (a longer one is worked out each time and never held), so some 1 MB at worst; a
 * step past the bound clears them.
 */
const steps = new BoundedPairMemo(workedOut, { limit: 256, maxKeyLength: 1024 });

/** How many steps {@link appendVary} and {@link mergeVary} hold now, for tests of the bound. @internal */
export function varyStepCount(): number {
  return steps.size;
}

/**
 * {@link varyWith} of a frozen list of names, by list and value: a gate's names are one frozen
 * list (the version's fields, `Origin`), added to the same few values, so the whole step is one
 * look-up. At most 64 values held per list, each of at most 1024 characters (a longer one is
 * worked out each time); a list that is garbage takes its values with it.
 */
const byList = new WeakMap<readonly string[], Map<string, string | null>>();
const newValues = () => new Map<string, string | null>();

function varyWithList(text: string, fields: readonly string[]): string | undefined {
  if (!Object.isFrozen(fields) || text.length > 1024) return varyWith(text, fields);
  const known = valueFor(byList, fields, newValues);
  let value = known.get(text);
  if (value === undefined) {
    value = varyWith(text, fields) ?? null;
    if (known.size >= 64) known.clear();
    known.set(text, value);
  }
  return value ?? undefined;
}

/** `current` with `fields` added, or `undefined` when nothing changes. */
function varyWith(text: string, fields: readonly string[]): string | undefined {
  let value = text;
  let changed = false;
  for (const field of fields) {
    const next = steps.get(value, field);
    if (next === null) continue;
    value = next;
    changed = true;
    if (next === "*") return "*";
  }
  return changed ? value : undefined;
}

function varyText(current: string | readonly string[] | number | null | undefined): string {
  return typeof current === "string"
    ? current
    : Array.isArray(current)
      ? current.join(", ")
      : current == null
        ? ""
        : String(current);
}

/**
 * Adds field names to the response's `Vary` header, keeping what is there, never duplicating a
 * name (case-insensitive), and leaving `Vary: *` alone (RFC 9110 §12.5.5).
 *
 * @example appendVary(res, "Accept")
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function appendVary(res: ServerResponse, ...fields: string[]): void {
  appendVaryList(res, fields);
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
  return varyWithList(varyText(current), fields);
}

/**
 * {@link appendVary} of a list of names, without a copy of it: a frozen list (a gate's own) is
 * added in one look-up.
 *
 * @internal For the kernel's adapters.
 */
export function appendVaryList(res: ServerResponse, fields: readonly string[]): void {
  const value = varyWithList(varyText(res.getHeader("vary")), fields);
  if (value !== undefined) res.setHeader("Vary", value);
}

/**
 * Adds a `Vary` value made by {@link mergeVary} (several names, comma-separated) to the response's
 * `Vary` header: set as it is on a response without one, else merged as {@link appendVary} does.
 *
 * @internal For the kernel's adapters: the names held for a request, set in one field.
 */
export function appendVaryValue(res: ServerResponse, value: string): void {
  const current = res.getHeader("vary");
  if (current === undefined) {
    if (value !== "") res.setHeader("Vary", value);
    return;
  }
  const merged = varyWith(varyText(current), memberNames(value));
  if (merged !== undefined) res.setHeader("Vary", merged);
}
