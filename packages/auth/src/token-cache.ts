import { hash } from "node:crypto";

/**
 * A bounded map of verified tokens to what they proved, keyed by the SHA-256 of the token (the
 * token itself is never kept as a key, so a heap dump does not hand out live credentials).
 * Entries expire at their own deadline; the least recently used entry leaves when full.
 */
export class VerifiedTokenCache<V> {
  readonly #max: number;
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  #generation = 0;

  constructor(max: number) {
    this.#max = max;
  }

  /** The digest the cache is keyed by (one `crypto.hash` call: no Hash object per request). */
  static keyOf(token: string): string {
    return hash("sha256", token, "base64url");
  }

  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    // Re-insert to mark as most recently used (Map keeps insertion order).
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    if (this.#max <= 0) return;
    this.#entries.delete(key);
    while (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expiresAt });
  }

  get size(): number {
    return this.#entries.size;
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
    this.#generation++;
  }
}
