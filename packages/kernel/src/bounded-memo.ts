/** The bound of a {@link BoundedMemo} or {@link BoundedPairMemo}. @internal */
export interface MemoBound {
  /** The most entries held; the entry that would pass it clears all of them first. */
  limit: number;
  /** The longest key held, in characters: a longer key is computed each time and never held. */
  maxKeyLength: number;
}

function checkedBound(bound: MemoBound): MemoBound {
  const { limit, maxKeyLength } = bound;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`A memo's limit is a whole number of entries from 1, not ${limit}`);
  if (!Number.isSafeInteger(maxKeyLength) || maxKeyLength < 0)
    throw new RangeError(`A memo's maxKeyLength is a whole number of characters from 0, not ${maxKeyLength}`);
  return bound;
}

/**
 * `compute` remembered by its string key, for decisions made on the per-request path from a value
 * a server sends again and again (a `Content-Type`, a media type a body names): the first call
 * computes, later ones only look up.
 *
 * Bounded, whatever keys come: at most `limit` entries, each key of at most `maxKeyLength`
 * characters (a longer key is computed on every call and never held), so the keys take at most
 * `limit` × `maxKeyLength` characters. A new key when `limit` are held clears them all, then is held:
 * keys that do not repeat cost a `clear()` now and then, never memory.
 *
 * `compute` depends on its key alone (what it throws goes to the caller, and nothing is held). Its
 * answer may be `null`, which is held like any other; `undefined` is what a lookup gives for "not
 * held", so it is no answer `compute` may give. A hit is one `Map` lookup: no allocation.
 *
 * @example
 * const compressible = new BoundedMemo((type) => /json|xml|^text\//.test(type), { limit: 200, maxKeyLength: 256 });
 * compressible.get("application/json") // true, computed; held from now on
 *
 * @internal
 */
export class BoundedMemo<V extends NonNullable<unknown> | null> {
  private readonly entries = new Map<string, V>();
  private readonly compute: (key: string) => V;
  private readonly limit: number;
  private readonly maxKeyLength: number;

  constructor(compute: (key: string) => V, bound: MemoBound) {
    const { limit, maxKeyLength } = checkedBound(bound);
    this.compute = compute;
    this.limit = limit;
    this.maxKeyLength = maxKeyLength;
  }

  /** `compute(key)`: held, or computed (and held when the key is short enough). */
  get(key: string): V {
    let value = this.entries.get(key);
    if (value !== undefined) return value;
    value = this.compute(key);
    if (key.length > this.maxKeyLength) return value;
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }

  /** How many entries are held now: at most `limit` (for tests of the bound). */
  get size(): number {
    return this.entries.size;
  }
}

/**
 * {@link BoundedMemo} by two string keys (a `Vary` value and a field name, an offer and a media
 * type), held in a `Map` of `Map`s, so no key is built from the two and `("a", "bc")` and
 * `("ab", "c")` are two entries.
 *
 * Bounded the same way: at most `limit` entries (pairs) in all, each key of the pair of at most
 * `maxKeyLength` characters (a pair with a longer key is computed on every call and never held),
 * so the keys take at most 2 × `limit` × `maxKeyLength` characters. A new pair when `limit` are held
 * clears them all, then is held. `compute` depends on the two keys alone; `null` is held like any
 * other answer, `undefined` is none. A hit is two `Map` lookups: no allocation.
 *
 * @example
 * const steps = new BoundedPairMemo((vary, field) => workedOut(vary, field), { limit: 256, maxKeyLength: 1024 });
 * steps.get("Accept", "Origin")
 *
 * @internal
 */
export class BoundedPairMemo<V extends NonNullable<unknown> | null> {
  private readonly entries = new Map<string, Map<string, V>>();
  private count = 0;
  private readonly compute: (first: string, second: string) => V;
  private readonly limit: number;
  private readonly maxKeyLength: number;

  constructor(compute: (first: string, second: string) => V, bound: MemoBound) {
    const { limit, maxKeyLength } = checkedBound(bound);
    this.compute = compute;
    this.limit = limit;
    this.maxKeyLength = maxKeyLength;
  }

  /** `compute(first, second)`: held, or computed (and held when both keys are short enough). */
  get(first: string, second: string): V {
    let byFirst = this.entries.get(first);
    let value = byFirst?.get(second);
    if (value !== undefined) return value;
    value = this.compute(first, second);
    if (first.length > this.maxKeyLength || second.length > this.maxKeyLength) return value;
    if (this.count >= this.limit) {
      this.entries.clear();
      this.count = 0;
      byFirst = undefined;
    }
    if (byFirst === undefined) {
      byFirst = new Map();
      this.entries.set(first, byFirst);
    }
    byFirst.set(second, value);
    this.count++;
    return value;
  }

  /** How many pairs are held now: at most `limit` (for tests of the bound). */
  get size(): number {
    return this.count;
  }
}
