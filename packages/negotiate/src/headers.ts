import type { QItem } from "@svc/kernel";
import { BoundedMemo } from "@svc/kernel/internal";

// Not text/event-stream: HTML Living Standard §9.2 has the client dispatch each server-sent event
// as it arrives, over a response kept open between events, and a zlib coder holds small writes
// until its window fills or the response ends, so a coded event stream delivers nothing.
const COMPRESSIBLE =
  /^(?:text\/(?!event-stream$)|application\/(?:[a-z0-9.!#$&^_-]+\+)?(?:json|xml)$|application\/(?:javascript|csv|x-www-form-urlencoded)$|image\/svg\+xml$)/;

/** The media type of a `Content-Type` value, without parameters, lower-cased (RFC 9110 §8.3.1). */
export function essence(contentType: string): string {
  const semi = contentType.indexOf(";");
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** A header value as one string (a list's members joined with ", ", RFC 9110 §5.3). */
export function headerString(value: string | string[] | number | undefined): string | undefined {
  if (typeof value === "string" || value === undefined) return value;
  return Array.isArray(value) ? value.join(", ") : String(value);
}

/**
 * Answers by Content-Type value: a server sends a handful of them, asked several times per
 * response. Bounded all the same: at most 200 values of at most 256 characters (a longer one is
 * answered each time and never held), so a handler setting arbitrary types only ever costs a
 * `clear()`.
 */
const compressible = new BoundedMemo((contentType) => COMPRESSIBLE.test(essence(contentType)), {
  limit: 200,
  maxKeyLength: 256,
});

/** Whether a response of this type is worth a content coding (text, JSON, XML, SVG, CSV). */
export function isCompressible(contentType: string | undefined): boolean {
  return contentType !== undefined && compressible.get(contentType);
}

/** How many Content-Type values {@link isCompressible} holds now, for tests of the bound. @internal */
export function compressibleCacheSize(): number {
  return compressible.size;
}

/**
 * A one-entry memo of a header parse: a server sees the same `Accept-Encoding` or
 * `Accept-Language` value request after request, so only a new value is parsed. The results are
 * shared between requests and must not be changed.
 */
export function memoLast<T>(parse: (header: string) => T): (header: string) => T {
  let lastHeader: string | undefined;
  let last: T;
  return (header) => {
    if (header !== lastHeader) {
      last = parse(header);
      lastHeader = header;
    }
    return last;
  };
}

/** A weighted list (RFC 9110 §12.4.2), frozen so that memoized results stay as parsed. */
export function frozenQList(items: readonly QItem[]): readonly QItem[] {
  return Object.freeze(items.map((item) => Object.freeze(item)));
}

/**
 * A weighted list (RFC 9110 §12.4.2) with each value once, at its first place, with the lowest
 * weight the field gives it. RFC 9110 does not define a value listed twice; the lowest weight is
 * the most restrictive reading and does not depend on order, so a refusal (`q=0`, "not
 * acceptable") is never undone by a duplicate before or after it: `gzip;q=0, gzip` and
 * `gzip, gzip;q=0` both refuse gzip. `canonical` names values that are one (x-gzip is gzip).
 * Linear: one map over the list, which `parseQList` bounds.
 */
export function lowestWeights(
  items: readonly QItem[],
  canonical: (value: string) => string = (v) => v,
): QItem[] {
  const byValue = new Map<string, QItem>();
  for (const item of items) {
    const value = canonical(item.value);
    const seen = byValue.get(value);
    if (seen === undefined) byValue.set(value, { value, q: item.q });
    else if (item.q < seen.q) seen.q = item.q;
  }
  return [...byValue.values()];
}
