import { sha256Base64url } from "./digest.js";
import type { Principal } from "./principal.js";

/**
 * Most bytes (estimated by {@link principalBytes} and {@link ENTRY_BYTES}) one cache holds. A
 * principal is usually a few hundred bytes, so `max` (1000 by default) bounds a cache long before
 * this does; it is there for the principal that is not: one a `principal` mapping or a `verify`
 * callback fills with thousands of roles, say, which `max` entries of would otherwise hold
 * gigabytes. The least recently used entries leave to make room; a principal larger than this on
 * its own is not cached (it is verified on every request).
 */
export const CACHE_MAX_BYTES = 8 * 1024 * 1024;

/** Estimated bytes of an entry besides its principal: the 43-character key, the map entry, the deadline. */
const ENTRY_BYTES = 192;

/**
 * An estimate of a principal's heap bytes, on the high side: two bytes a character (V8 keeps
 * non-Latin-1 strings in UTF-16) and 32 more per string for its header and its array slot, shared
 * strings counted each time.
 */
export function principalBytes(principal: Principal): number {
  let bytes = 96 + 2 * principal.id.length + 2 * (principal.issuer?.length ?? 0);
  for (const role of principal.roles) bytes += 32 + 2 * role.length;
  for (const scope of principal.scopes) bytes += 32 + 2 * scope.length;
  return bytes;
}

/**
 * A bounded map of verified tokens to what they proved, keyed by the SHA-256 of the token (the
 * token itself is never kept as a key, so a heap dump does not hand out live credentials).
 * Entries expire at their own deadline; the least recently used entry leaves when the cache holds
 * `max` entries or `maxBytes` (estimated by `sizeOf`).
 */
export class VerifiedTokenCache<V> {
  readonly #max: number;
  readonly #maxBytes: number;
  readonly #sizeOf: (value: V) => number;
  readonly #entries = new Map<string, { value: V; expiresAt: number; bytes: number }>();
  #bytes = 0;
  #generation = 0;
  /** The most recently used entry: a hit on it is already in its place, nothing to move. */
  #newest: { value: V; expiresAt: number; bytes: number } | undefined;

  constructor(max: number, sizeOf: (value: V) => number, maxBytes = CACHE_MAX_BYTES) {
    this.#max = max;
    this.#sizeOf = sizeOf;
    this.#maxBytes = maxBytes;
  }

  /** The digest the cache is keyed by (on Node.js one `crypto.hash` call: no Hash object per request). */
  static keyOf(token: string): string {
    return sha256Base64url(token);
  }

  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.#delete(key);
      return undefined;
    }
    // Re-insert to mark as most recently used (Map keeps insertion order), unless it is already.
    if (entry !== this.#newest) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      this.#newest = entry;
    }
    return entry.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.#delete(key);
    const bytes = ENTRY_BYTES + this.#sizeOf(value);
    // Larger than the whole cache: kept, it would evict every other entry and then itself.
    if (this.#max <= 0 || bytes > this.#maxBytes) return;
    while (this.#entries.size >= this.#max || this.#bytes + bytes > this.#maxBytes) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#delete(oldest.value);
    }
    const entry = { value, expiresAt, bytes };
    this.#entries.set(key, entry);
    this.#newest = entry;
    this.#bytes += bytes;
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    if (entry === this.#newest) this.#newest = undefined;
    this.#bytes -= entry.bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The estimated bytes held, at most `maxBytes`. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Counts {@link clear} calls. A verification started before a `clear()` (a key revocation) and
   * finished after it was checked against what the clear was meant to forget; it compares the
   * generation it started in before {@link set}, so it cannot put its result back.
   */
  get generation(): number {
    return this.#generation;
  }

  clear(): void {
    this.#entries.clear();
    this.#newest = undefined;
    this.#bytes = 0;
    this.#generation++;
  }
}
