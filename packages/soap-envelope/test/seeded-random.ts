/** A seeded generator of integers below `n` (a linear congruential one): the same cases on every run. */
export function seededRandom(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
}
