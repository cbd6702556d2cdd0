/**
 * A matcher for the XSD patterns most schemas use: one sequence of character sets, each with a
 * quantifier (`[A-Z]{3}`, `\d{5}(-\d{4})?` is not one, `[^@\s]+@[^@\s]+\.[^@\s]+` is). It runs
 * the pattern's position automaton (Glushkov's construction: one state per character-set
 * occurrence, no ε-moves) over the value as a bit set of the states reached, so every value takes
 * time linear in its length, as with RE2, in about half the time re2js takes on the email
 * pattern above. Patterns that need more than {@link MAX_POSITIONS} states, groups or alternatives
 * are left to RE2.
 *
 * XML Schema 1.0 Part 2 Appendix F: a pattern matches a whole value, so there are no anchors.
 */

/** A code point range, both ends included. */
export interface CodePointRange {
  lo: number;
  hi: number;
}

/** One piece of the sequence: a character set (sorted, disjoint ranges) repeated `min`..`max` times. */
export interface SequenceStep {
  ranges: readonly CodePointRange[];
  min: number;
  /** `Infinity` for `*`, `+` and `{n,}`. */
  max: number;
}

/** States fit in one 31-bit integer, the bit operations' fast path. */
const MAX_POSITIONS = 31;

/**
 * The deterministic states a pattern caches for ASCII input (a 128-byte row each, so 4 KiB a
 * pattern at most); under 127 so a state's number fits the row's signed bytes.
 */
const MAX_CACHED_STATES = 32;

/** Whether `cp` falls in one of the sorted, disjoint `ranges` (binary search). */
function inRanges(ranges: readonly CodePointRange[], cp: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const r = ranges[mid] as CodePointRange;
    if (cp < r.lo) hi = mid - 1;
    else if (cp > r.hi) lo = mid + 1;
    else return true;
  }
  return false;
}

/**
 * The whole-value test for a sequence, or undefined when it needs more states than fit (long
 * bounded repetitions such as `\d{40}`).
 */
export function compileSequence(steps: readonly SequenceStep[]): ((value: string) => boolean) | undefined {
  // Expand each step into positions: `min` required ones, then one repeating position for an
  // unbounded maximum or `max - min` optional ones.
  /** Each position's character set (copies of one step share it). */
  const positions: (readonly CodePointRange[])[] = [];
  const optional: boolean[] = [];
  const loops: boolean[] = [];
  for (const step of steps) {
    const count =
      step.min + (step.max === Number.POSITIVE_INFINITY ? (step.min === 0 ? 1 : 0) : step.max - step.min);
    if (positions.length + count > MAX_POSITIONS) return undefined;
    const p = step.ranges;
    for (let i = 0; i < step.min; i++) {
      positions.push(p);
      optional.push(false);
      // `S+` is `S S*` folded: its one required position also repeats.
      loops.push(step.max === Number.POSITIVE_INFINITY && i === step.min - 1);
    }
    if (step.max === Number.POSITIVE_INFINITY) {
      if (step.min === 0) {
        positions.push(p);
        optional.push(true);
        loops.push(true);
      }
    } else {
      for (let i = step.min; i < step.max; i++) {
        positions.push(p);
        optional.push(true);
        loops.push(false);
      }
    }
  }
  const n = positions.length;
  // The positions that can come next after position i (or at the start, i = -1): the following
  // ones up to and including the first required one, plus i itself when it repeats.
  const reach = (from: number): number => {
    let mask = 0;
    for (let j = from + 1; j < n; j++) {
      mask |= 1 << j;
      if (!optional[j]) break;
    }
    return mask;
  };
  const first = reach(-1);
  const follow = positions.map((_, i) => reach(i) | (loops[i] ? 1 << i : 0));
  // Accepting: every position after it is optional.
  let last = 0;
  for (let i = n - 1; i >= 0; i--) {
    last |= 1 << i;
    if (!optional[i]) break;
  }
  const acceptsEmpty = optional.every(Boolean);
  // The ASCII membership of every position in one flat table (four 32-bit words a position), so
  // the common case is one load and a mask.
  const ascii = new Uint32Array(n * 4);
  positions.forEach((ranges, i) => {
    for (const r of ranges) {
      for (let c = r.lo; c <= Math.min(r.hi, 127); c++) {
        const word = i * 4 + (c >>> 5);
        ascii[word] = (ascii[word] as number) | (1 << (c & 31));
      }
    }
  });
  const followOf = Int32Array.from(follow);

  // The automaton made deterministic lazily over ASCII (state = the positions the last character
  // reached): a value's characters then cost one table load each once the states it visits are
  // known. At most MAX_CACHED_STATES states are kept (the table is MAX_CACHED_STATES × 128
  // bytes, made at the first match); past that a value goes on with the bit-set steps above, so
  // every value still takes time linear in its length and memory stays bounded.
  let table: Int8Array | undefined;
  const stateNext = new Int32Array(MAX_CACHED_STATES);
  const stateAccepts = new Uint8Array(MAX_CACHED_STATES);
  const stateOf = new Map<number, number>();
  /** The state for the positions `reached` (-1 at the start), or -1 when the cache is full. */
  const intern = (reached: number, next: number): number => {
    const known = stateOf.get(reached);
    if (known !== undefined) return known;
    const id = stateOf.size;
    if (id >= MAX_CACHED_STATES) return -1;
    stateOf.set(reached, id);
    stateNext[id] = next;
    stateAccepts[id] = (reached === -1 ? acceptsEmpty : (reached & last) !== 0) ? 1 : 0;
    return id;
  };

  return (value: string): boolean => {
    if (value.length === 0) return acceptsEmpty;
    if (table === undefined) {
      table = new Int8Array(MAX_CACHED_STATES * 128);
      intern(-1, first);
    }
    const cache = table;
    // `state` is the cached state, or -1 once outside the cache; `next` and `reached` are kept
    // only while outside it.
    let state = 0;
    let next = first;
    let reached = 0;
    for (let k = 0; k < value.length; k++) {
      let cp = value.charCodeAt(k);
      if (cp < 128 && state >= 0) {
        const to = cache[state * 128 + cp] as number;
        if (to > 0) {
          state = to - 1;
          continue;
        }
        if (to < 0) return false;
      }
      if (cp >= 0xd800 && cp <= 0xdbff && k + 1 < value.length) {
        const low = value.charCodeAt(k + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          cp = (cp - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
          k++;
        }
      }
      const from = state;
      if (from >= 0) next = stateNext[from] as number;
      reached = 0;
      if (cp < 128) {
        const word = cp >>> 5;
        const bit = 1 << (cp & 31);
        for (let bits = next; bits !== 0; bits &= bits - 1) {
          const i = 31 - Math.clz32(bits & -bits);
          if (((ascii[i * 4 + word] as number) & bit) !== 0) reached |= 1 << i;
        }
      } else {
        for (let bits = next; bits !== 0; bits &= bits - 1) {
          const i = 31 - Math.clz32(bits & -bits);
          if (inRanges(positions[i] as readonly CodePointRange[], cp)) reached |= 1 << i;
        }
      }
      if (reached === 0) {
        if (from >= 0 && cp < 128) cache[from * 128 + cp] = -1;
        return false;
      }
      next = 0;
      for (let bits = reached; bits !== 0; bits &= bits - 1)
        next |= followOf[31 - Math.clz32(bits & -bits)] as number;
      state = intern(reached, next);
      if (from >= 0 && cp < 128 && state >= 0) cache[from * 128 + cp] = state + 1;
    }
    return state >= 0 ? stateAccepts[state] === 1 : (reached & last) !== 0;
  };
}
