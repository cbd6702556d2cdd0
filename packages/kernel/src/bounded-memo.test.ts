import { describe, expect, it } from "vitest";
import { BoundedMemo, BoundedPairMemo } from "./bounded-memo.js";

const bound = { limit: 4, maxKeyLength: 8 };
const long = "x".repeat(9);
const eight = "y".repeat(8);

/** A key starting with "n" answers null; any other its upper case. */
const answer = (key: string): string | null => (key.startsWith("n") ? null : key.toUpperCase());

/** `keys` asked in turn of a fresh memo: the answers, how many were computed, how many are held. */
function ask(keys: readonly string[]) {
  let computed = 0;
  const memo = new BoundedMemo((key) => {
    computed++;
    return answer(key);
  }, bound);
  const answers = keys.map((key) => memo.get(key));
  return { answers, computed, held: memo.size };
}

/** `pairs` asked in turn of a fresh pair memo, likewise. */
function askPairs(pairs: readonly (readonly [string, string])[]) {
  let computed = 0;
  const memo = new BoundedPairMemo((first, second) => {
    computed++;
    return answer(`${first}|${second}`);
  }, bound);
  const answers = pairs.map(([first, second]) => memo.get(first, second));
  return { answers, computed, held: memo.size };
}

describe("BoundedMemo (limit 4, keys of at most 8 characters)", () => {
  it.each([
    { asked: "one key twice", keys: ["a", "a"], answers: ["A", "A"], computed: 1, held: 1 },
    {
      asked: "a null answer, three times",
      keys: ["n1", "n1", "n1"],
      answers: [null, null, null],
      computed: 1,
      held: 1,
    },
    {
      asked: "a 9-character key, three times",
      keys: [long, long, long],
      answers: [long.toUpperCase(), long.toUpperCase(), long.toUpperCase()],
      computed: 3,
      held: 0,
    },
    {
      asked: "an 8-character key, twice",
      keys: [eight, eight],
      answers: [eight.toUpperCase(), eight.toUpperCase()],
      computed: 1,
      held: 1,
    },
    {
      asked: "a 5th key when 4 are held, then the 1st again",
      keys: ["a", "b", "c", "d", "e", "a"],
      answers: ["A", "B", "C", "D", "E", "A"],
      computed: 6,
      held: 2,
    },
    {
      asked: "4 keys, then 2 of them again",
      keys: ["a", "b", "c", "d", "a", "b"],
      answers: ["A", "B", "C", "D", "A", "B"],
      computed: 4,
      held: 4,
    },
    {
      asked: "a long key when 4 are held",
      keys: ["a", "b", "c", "d", long, "a"],
      answers: ["A", "B", "C", "D", long.toUpperCase(), "A"],
      computed: 5,
      held: 4,
    },
  ])("$asked → computed $computed times, $held held", ({ keys, answers, computed, held }) => {
    expect(ask(keys)).toEqual({ answers, computed, held });
  });

  it("100,000 distinct keys → each answered as computed, never more than 4 held", () => {
    const memo = new BoundedMemo(answer, bound);
    let wrong = 0;
    let most = 0;
    for (let i = 0; i < 100_000; i++) {
      if (memo.get(`k${i}`) !== `K${i}`) wrong++;
      most = Math.max(most, memo.size);
    }
    expect({ wrong, most }).toEqual({ wrong: 0, most: 4 });
  });
});

describe("BoundedPairMemo (limit 4 pairs, keys of at most 8 characters each)", () => {
  it.each([
    {
      asked: "one pair twice",
      pairs: [
        ["a", "b"],
        ["a", "b"],
      ],
      answers: ["A|B", "A|B"],
      computed: 1,
      held: 1,
    },
    {
      asked: '("a", "bc") and ("ab", "c"), twice',
      pairs: [
        ["a", "bc"],
        ["ab", "c"],
        ["a", "bc"],
        ["ab", "c"],
      ],
      answers: ["A|BC", "AB|C", "A|BC", "AB|C"],
      computed: 2,
      held: 2,
    },
    {
      asked: "one first key with two second keys",
      pairs: [
        ["a", "b"],
        ["a", "c"],
        ["a", "b"],
      ],
      answers: ["A|B", "A|C", "A|B"],
      computed: 2,
      held: 2,
    },
    {
      asked: "a null answer, three times",
      pairs: [
        ["n", "x"],
        ["n", "x"],
        ["n", "x"],
      ],
      answers: [null, null, null],
      computed: 1,
      held: 1,
    },
    {
      asked: "a 9-character first key, twice",
      pairs: [
        [long, "a"],
        [long, "a"],
      ],
      answers: [`${long.toUpperCase()}|A`, `${long.toUpperCase()}|A`],
      computed: 2,
      held: 0,
    },
    {
      asked: "a 9-character second key, twice",
      pairs: [
        ["a", long],
        ["a", long],
      ],
      answers: [`A|${long.toUpperCase()}`, `A|${long.toUpperCase()}`],
      computed: 2,
      held: 0,
    },
    {
      asked: "8-character keys, twice",
      pairs: [
        [eight, eight],
        [eight, eight],
      ],
      answers: [
        `${eight.toUpperCase()}|${eight.toUpperCase()}`,
        `${eight.toUpperCase()}|${eight.toUpperCase()}`,
      ],
      computed: 1,
      held: 1,
    },
    {
      asked: "a 5th pair when 4 are held (one first key), then the 1st again",
      pairs: [
        ["a", "1"],
        ["a", "2"],
        ["a", "3"],
        ["a", "4"],
        ["a", "5"],
        ["a", "1"],
      ],
      answers: ["A|1", "A|2", "A|3", "A|4", "A|5", "A|1"],
      computed: 6,
      held: 2,
    },
    {
      asked: "a 5th pair when 4 are held (four first keys), then the 1st again",
      pairs: [
        ["a", "1"],
        ["b", "1"],
        ["c", "1"],
        ["d", "1"],
        ["e", "1"],
        ["a", "1"],
      ],
      answers: ["A|1", "B|1", "C|1", "D|1", "E|1", "A|1"],
      computed: 6,
      held: 2,
    },
    {
      asked: "4 pairs, then 2 of them again",
      pairs: [
        ["a", "1"],
        ["b", "1"],
        ["a", "2"],
        ["b", "2"],
        ["a", "1"],
        ["b", "2"],
      ],
      answers: ["A|1", "B|1", "A|2", "B|2", "A|1", "B|2"],
      computed: 4,
      held: 4,
    },
  ] as const)("$asked → computed $computed times, $held held", ({ pairs, answers, computed, held }) => {
    expect(askPairs(pairs)).toEqual({ answers, computed, held });
  });

  it("100,000 distinct pairs → each answered as computed, never more than 4 held", () => {
    const memo = new BoundedPairMemo((first, second) => answer(`${first}|${second}`), bound);
    let wrong = 0;
    let most = 0;
    for (let i = 0; i < 100_000; i++) {
      if (memo.get(`k${i % 317}`, `${i}`) !== `K${i % 317}|${i}`) wrong++;
      most = Math.max(most, memo.size);
    }
    expect({ wrong, most }).toEqual({ wrong: 0, most: 4 });
  });
});

describe("a memo's bound", () => {
  it.each([
    { limit: 0, maxKeyLength: 8 },
    { limit: 1.5, maxKeyLength: 8 },
    { limit: Number.POSITIVE_INFINITY, maxKeyLength: 8 },
    { limit: 4, maxKeyLength: -1 },
    { limit: 4, maxKeyLength: Number.NaN },
  ])("limit $limit, maxKeyLength $maxKeyLength → RangeError", (bad) => {
    expect(() => new BoundedMemo(answer, bad)).toThrow(RangeError);
    expect(() => new BoundedPairMemo((a, b) => a + b, bad)).toThrow(RangeError);
  });
});
