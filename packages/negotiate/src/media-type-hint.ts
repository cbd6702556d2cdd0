import { MEDIA_TYPE, matchMediaType } from "@svc/kernel";
import { BoundedMemo } from "@svc/kernel/internal";
import { essence } from "./headers.js";

/** The kernel's key under which data names its own media type (a HAL resource's `application/hal+json`). */
export { MEDIA_TYPE };

/**
 * Hints checked, by the value a body names (a HAL resource's `application/hal+json`, a problem's
 * `application/problem+json`): the types of the application's own classes, a handful, each
 * checked once. Bounded all the same: at most 64 values of at most 256 characters (a longer one
 * is checked each time and never held); a 65th clears it. `null`: no structured-suffix type.
 */
const checkedHints = new BoundedMemo(
  // RFC 6838 §4.2.8: `type/name+suffix` is also processable as `type/suffix`.
  (hint: string): string | null =>
    /^[a-z0-9!#$&^_.-]+\/[a-z0-9!#$&^_.-]+\+[a-z0-9!#$&^_.-]+$/i.test(hint) ? hint.toLowerCase() : null,
  { limit: 64, maxKeyLength: 256 },
);

/** How many hints {@link mediaTypeHint} holds now, for tests of the bound. @internal */
export function hintCacheSize(): number {
  return checkedHints.size;
}

/** The structured-suffix media type a body names for itself, or undefined. */
export function mediaTypeHint(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const hint = (body as { [MEDIA_TYPE]?: unknown })[MEDIA_TYPE];
  return typeof hint === "string" ? (checkedHints.get(hint) ?? undefined) : undefined;
}

/**
 * The label for a body serialized as `base` (`application/json`) that names `hint`
 * ({@link mediaTypeHint}) for itself: the hint when it is a `+suffix` of `base` and the client
 * accepts it at least as much as `base` (RFC 9110 §12.5.1), otherwise undefined. The bytes are the
 * same; only `Content-Type` changes.
 */
export function hintedLabel(
  accept: string | undefined,
  base: string,
  hint: string | undefined,
): string | undefined {
  if (hint === undefined) return undefined;
  const plus = hint.lastIndexOf("+");
  if (`${hint.slice(0, hint.indexOf("/"))}/${hint.slice(plus + 1)}` !== essence(base)) return undefined;
  const own = matchMediaType(accept, [hint], false);
  if (own === undefined) return undefined;
  const generic = matchMediaType(accept, [base], false);
  return generic === undefined || own.q >= generic.q ? hint : undefined;
}
