import { describe, expect, it } from "vitest";
import { redisMarkdown } from "../src/redis.mjs";

describe("redisMarkdown", () => {
  const run = {
    settings: { seconds: 3, warmupSeconds: 1, concurrency: 64, keys: 10_000 },
    machine: { node: "v20", cpus: 2, loadAverage: ["1.00", "1.00", "1.00"] },
    results: [
      { label: "one Redis node", perSecond: 8000, p50Ms: 4, p99Ms: 9, errors: 0 },
      { label: "3-master cluster", perSecond: 12000, p50Ms: 3, p99Ms: 8, errors: 0 },
    ],
  };
  it("one row per target, decisions/s with separators and the ratio to the single node", () => {
    const md: string = redisMarkdown(run);
    expect(md).toContain("| one Redis node | 8,000 | 4 | 9 | 0 | 1.00 |");
    expect(md).toContain("| 3-master cluster | 12,000 | 3 | 8 | 0 | 1.50 |");
    expect(md).toContain("64 concurrent decisions");
  });
});
