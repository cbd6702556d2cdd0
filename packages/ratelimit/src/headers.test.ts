import { describe, expect, it } from "vitest";
import { type HeaderSettings, policyText, reportDecision, tightestDecision } from "./headers.js";
import type { Decision, RateLimitPolicy } from "./types.js";

const policy: RateLimitPolicy = Object.freeze({
  algorithm: "fixed-window",
  limit: 100,
  windowMs: 60_000,
  burst: 100,
});

function decision(remaining: number, limit = 100): Decision {
  return { allowed: true, limit, remaining, resetAt: 1_060_000, retryAfterMs: 0, now: 1_000_000 };
}

function settings(standard: HeaderSettings["standard"], policyName = "default"): HeaderSettings {
  return { legacy: true, standard, resetFormat: "delta-seconds", policyName };
}

describe("the fields of one limiter", () => {
  it.each([
    [
      true,
      {
        "X-RateLimit-Limit": "100",
        "X-RateLimit-Remaining": "99",
        "X-RateLimit-Reset": "60",
        "RateLimit-Policy": '"default";q=100;w=60',
        RateLimit: '"default";r=99;t=60',
      },
    ],
    [
      "draft-7",
      {
        "X-RateLimit-Limit": "100",
        "X-RateLimit-Remaining": "99",
        "X-RateLimit-Reset": "60",
        "RateLimit-Policy": "100;w=60",
        RateLimit: "limit=100, remaining=99, reset=60",
      },
    ],
    [
      "draft-6",
      {
        "X-RateLimit-Limit": "100",
        "X-RateLimit-Remaining": "99",
        "X-RateLimit-Reset": "60",
        "RateLimit-Policy": "100;w=60",
        "RateLimit-Limit": "100",
        "RateLimit-Remaining": "99",
        "RateLimit-Reset": "60",
      },
    ],
  ] as const)("standard %s: every field, in the order written, on every response", (standard, fields) => {
    const set = settings(standard);
    for (let i = 0; i < 3; i++) {
      const written = reportDecision({}, decision(99), policy, set);
      expect(Object.entries(written ?? {})).toEqual(Object.entries(fields));
    }
  });

  it("2,000 policy names and limits on one policy: each response names its own, and the policy keeps the text of the last one only", () => {
    const first = settings(true, "name-0");
    const text = policyText(decision(5), policy, first, "name-0");
    expect(policyText(decision(4), policy, first, "name-0")).toBe(text);
    for (let i = 0; i < 2000; i++) {
      const name = `name-${i}`;
      const limit = 100 + (i % 7);
      const written = reportDecision({}, decision(1, limit), policy, settings(true, name));
      expect(written?.["RateLimit-Policy"]).toBe(`"${name}";q=${limit};w=60`);
      expect(written?.["X-RateLimit-Limit"]).toBe(String(limit));
      expect(written?.RateLimit).toBe(`"${name}";r=1;t=60`);
    }
    // The first name's text was not kept beside the 2,000 others: written anew.
    const again = policyText(decision(5), policy, first, "name-0");
    expect(again).not.toBe(text);
    expect(again).toEqual(text);
  });

  it("a frozen request as the owner: the reports of two limiters still add up", () => {
    const owner = Object.freeze({});
    const loose = decision(50);
    const tight = decision(3);
    reportDecision(owner, loose, policy, settings(true, "a"));
    const both = reportDecision(owner, tight, policy, settings(true, "b"));
    expect(both?.["RateLimit-Policy"]).toBe('"a";q=100;w=60, "b";q=100;w=60');
    expect(both?.["X-RateLimit-Remaining"]).toBe("3");
    expect(tightestDecision(owner)).toBe(tight);
  });
});
