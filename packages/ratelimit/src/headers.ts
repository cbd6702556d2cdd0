import type { ServerResponse } from "node:http";
import type { Decision, RateLimitPolicy } from "./types.js";

/**
 * How `X-RateLimit-Reset` is written.
 * @example
 * rateLimit({ limit: 100, resetFormat: "delta-seconds" });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
 */
export type ResetFormat = "epoch-seconds" | "delta-seconds";

/**
 * Which headers {@link setRateLimitHeaders} writes.
 * @example
 * const settings: HeaderSettings = { legacy: true, standard: false, resetFormat: "epoch-seconds", policyName: "api" };
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export interface HeaderSettings {
  /** `X-RateLimit-Limit` / `-Remaining` / `-Reset` (de facto headers, no standard). */
  legacy: boolean;
  /** The IETF draft's `RateLimit-Policy` and `RateLimit` (revision 10 syntax). */
  standard: boolean;
  resetFormat: ResetFormat;
  /** The policy name in the IETF headers (an RFC 8941 string). */
  policyName: string;
}

/** Whole seconds, rounded up, never negative: a client waiting this long never comes back early. */
export function ceilSeconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}

/** RFC 8941 §3.3.3 sf-string: DQUOTE, with `\` and `"` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * Writes the rate limit headers of one decision (before the response or the error is sent).
 *
 * @example
 * setRateLimitHeaders(res, decision, limiter.policy, { legacy: true, standard: true,
 *   resetFormat: "epoch-seconds", policyName: "default" });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export function setRateLimitHeaders(
  res: ServerResponse,
  decision: Decision,
  policy: RateLimitPolicy,
  settings: HeaderSettings,
): void {
  if (res.headersSent) return;
  const resetIn = ceilSeconds(decision.resetAt - decision.now);
  if (settings.legacy) {
    res.setHeader("X-RateLimit-Limit", String(decision.limit));
    res.setHeader("X-RateLimit-Remaining", String(decision.remaining));
    res.setHeader(
      "X-RateLimit-Reset",
      String(settings.resetFormat === "epoch-seconds" ? Math.ceil(decision.resetAt / 1000) : resetIn),
    );
  }
  if (settings.standard) {
    // draft-10 §2: RateLimit-Policy: "name";q=<quota>;w=<window seconds>
    // draft-10 §3: RateLimit: "name";r=<remaining>;t=<seconds until reset>
    const name = sfString(settings.policyName);
    res.setHeader("RateLimit-Policy", `${name};q=${decision.limit};w=${ceilSeconds(policy.windowMs)}`);
    res.setHeader("RateLimit", `${name};r=${decision.remaining};t=${resetIn}`);
  }
}
