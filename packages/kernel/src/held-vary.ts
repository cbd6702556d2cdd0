import type { IncomingMessage, ServerResponse } from "node:http";
import { appendVary, exchangeIfAny, exchangeOf, type FieldValue, mergeVary } from "@svc/kernel";

type Answering = ServerResponse & { readonly req?: IncomingMessage };
type WriteHead = ServerResponse["writeHead"];

const NONE: readonly string[] = [];

/** The names of a `Vary` value set on the response by other code (RFC 9110 §5.6.1 list members). */
function namesOf(value: FieldValue | number): string[] {
  const names: string[] = [];
  for (const line of typeof value === "object" ? value : [String(value)]) {
    for (const member of line.split(",")) {
      const name = member.trim();
      if (name !== "") names.push(name);
    }
  }
  return names;
}

/**
 * Adds `names` to the `Vary` of `res` when its head is written, not now: each gate in front of a
 * response varies on its own request fields (the version's, `Origin`, ...), and setting the field
 * once for all of them spares Node.js's field checks for every gate but one. The names are held
 * in the request's exchange, and `res.writeHead` (which `end`, `write` and `flushHeaders` call) is
 * wrapped once to set them first; whatever `Vary` other code set on the response in the meantime
 * is kept, after them, as {@link appendVary} would have left it. A response without its request
 * (not a server's) or whose head is gone gets them at once.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5 — one list, names not repeated.
 */
export function holdVary(res: ServerResponse, names: readonly string[]): void {
  const req = (res as Answering).req;
  if (req === undefined || res.headersSent) {
    appendVary(res, ...names);
    return;
  }
  const exchange = exchangeOf(req);
  const held = exchange.heldVary;
  if (held !== undefined) {
    exchange.heldVary = mergeVary(held, names) ?? held;
    return;
  }
  exchange.heldVary = mergeVary("", names) ?? "";
  const writeHead: WriteHead = res.writeHead;
  res.writeHead = function writeHeadWithVary(this: ServerResponse, ...args: unknown[]) {
    writeVary(this, NONE);
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as WriteHead;
}

/**
 * Sets the `Vary` of `res` once: the names {@link holdVary} held, then those set on the response
 * by other code, then `names` (the response's own).
 */
export function writeVary(res: ServerResponse, names: readonly string[]): void {
  const req = (res as Answering).req;
  const exchange = req === undefined ? undefined : exchangeIfAny(req);
  const held = exchange?.heldVary;
  if (exchange === undefined || held === undefined || held === "") {
    if (names.length > 0) appendVary(res, ...names);
    return;
  }
  exchange.heldVary = "";
  const current = res.getHeader("vary");
  let value = current === undefined ? held : (mergeVary(held, namesOf(current)) ?? held);
  if (names.length > 0) value = mergeVary(value, names) ?? value;
  res.setHeader("Vary", value);
}

/**
 * Forgets the names {@link holdVary} held for `res`: a response value whose own fields set or
 * remove `Vary` replaces the one set in front of it, as it replaces any other field.
 */
export function dropHeldVary(res: ServerResponse): void {
  const req = (res as Answering).req;
  const exchange = req === undefined ? undefined : exchangeIfAny(req);
  if (exchange?.heldVary !== undefined) exchange.heldVary = "";
}
