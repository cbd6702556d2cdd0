import type { IncomingMessage, ServerResponse } from "node:http";
import { appendVary, matchMediaType } from "@svc/errors";
import { MEDIA_TYPE } from "@svc/kernel";
import { essence, headerString } from "./headers.js";

/** The kernel's key under which data names its own media type (a HAL resource's `application/hal+json`). */
export { MEDIA_TYPE };

/** The structured-suffix media type a body names for itself, or undefined. */
export function mediaTypeHint(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const hint = (body as { [MEDIA_TYPE]?: unknown })[MEDIA_TYPE];
  if (typeof hint !== "string") return undefined;
  // RFC 6838 §4.2.8: `type/name+suffix` is also processable as `type/suffix`.
  return /^[a-z0-9!#$&^_.-]+\/[a-z0-9!#$&^_.-]+\+[a-z0-9!#$&^_.-]+$/i.test(hint)
    ? hint.toLowerCase()
    : undefined;
}

/**
 * The label for a body serialized as `base` (`application/json`): the body's own structured-suffix
 * type when it is a `+suffix` of `base` and the client accepts it at least as much as `base`
 * (RFC 9110 §12.5.1), otherwise undefined. The bytes are the same; only `Content-Type` changes.
 */
export function hintedLabel(accept: string | undefined, base: string, body: unknown): string | undefined {
  const hint = mediaTypeHint(body);
  if (hint === undefined) return undefined;
  const plus = hint.lastIndexOf("+");
  if (`${hint.slice(0, hint.indexOf("/"))}/${hint.slice(plus + 1)}` !== essence(base)) return undefined;
  const own = matchMediaType(accept, [hint], false);
  if (own === undefined) return undefined;
  const generic = matchMediaType(accept, [base], false);
  return generic === undefined || own.q >= generic.q ? hint : undefined;
}

/**
 * Wraps Express's `res.json` so a body naming its own `+json` type (a HAL resource) is sent with
 * that `Content-Type` when the handler set none and the client accepts it; `Vary: Accept` follows,
 * since the label then depends on it (RFC 9110 §12.5.5). A response without `json` (plain
 * `node:http`) is left alone.
 */
export function labelJsonBodies(req: IncomingMessage, res: ServerResponse): void {
  const target = res as JsonResponse;
  const json = target.json;
  // Mounted twice, the wrapper is already in place (wrapping itself would recurse).
  if (typeof json !== "function" || json === jsonWithOwnType) return;
  // One shared wrapper instead of a closure per request: the request and Express's own `json`
  // travel on the response.
  target[ORIGINAL_JSON] = json;
  target[REQUEST] = req;
  target.json = jsonWithOwnType;
}

const ORIGINAL_JSON = Symbol("@svc/negotiate res.json");
const REQUEST = Symbol("@svc/negotiate request");

type JsonResponse = ServerResponse & {
  json?: (...args: unknown[]) => unknown;
  [ORIGINAL_JSON]?: (...args: unknown[]) => unknown;
  [REQUEST]?: IncomingMessage;
};

function jsonWithOwnType(this: JsonResponse, ...args: unknown[]): unknown {
  // Express 4 still takes the deprecated `res.json(status, body)`.
  const body = args.length > 1 && typeof args[0] === "number" ? args[1] : args[0];
  if (mediaTypeHint(body) !== undefined && this.getHeader("content-type") === undefined) {
    appendVary(this, "Accept");
    const label = hintedLabel(headerString(this[REQUEST]?.headers.accept), "application/json", body);
    if (label !== undefined) this.setHeader("Content-Type", label);
  }
  return (this[ORIGINAL_JSON] as (...args: unknown[]) => unknown).apply(this, args);
}
